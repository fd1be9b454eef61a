//===- runtime/RootFind.cpp - The Illinois method -------------------------===//

#include "hbg/runtime/RootFind.h"

#include <cmath>

namespace hbg::runtime {

Bracket locateSignChange(const std::function<double(double)> &f, double a, double fa, double b,
                         double fb, double tol) {
  // Invariant: f(lo) on a's side (nonzero, sign of fa), f(hi) on b's side
  // (zero or the sign of fb).
  Bracket br{a, b, fa, fb, 0};
  bool aNegative = fa < 0;
  auto onASide = [aNegative](double v) { return v != 0 && (v < 0) == aNegative; };
  int side = 0;        // which end the last two secant steps kept: +1 lo, -1 hi
  int stalled = 0;     // steps in a row that did not halve the bracket
  while (br.hi - br.lo > tol) {
    double width = br.hi - br.lo;
    double m;
    if (stalled >= 2) {
      m = 0.5 * (br.lo + br.hi);
      stalled = 0;
    } else {
      m = (br.lo * br.fhi - br.hi * br.flo) / (br.fhi - br.flo);
      // Stay strictly inside, at least a fraction of tol from the ends.
      double guard = 0.25 * tol;
      if (!(m > br.lo + guard) || !(m < br.hi - guard) || !std::isfinite(m))
        m = 0.5 * (br.lo + br.hi);
    }
    double fm = f(m);
    ++br.evaluations;
    if (onASide(fm)) {
      br.lo = m;
      br.flo = fm;
      if (side == 1)
        br.fhi *= 0.5; // Illinois: the retained end's value is halved
      side = 1;
    } else {
      br.hi = m;
      br.fhi = fm;
      if (fm == 0) {
        // An exact zero: b's side; close the bracket from the left too
        // only as far as the tolerance needs.
        side = 0;
      } else {
        if (side == -1)
          br.flo *= 0.5;
        side = -1;
      }
    }
    stalled = br.hi - br.lo > 0.5 * width ? stalled + 1 : 0;
    if (br.fhi == 0 && br.hi - br.lo > tol) {
      // With f(hi) = 0 the secant would stay at hi: bisect instead.
      stalled = 2;
    }
  }
  return br;
}

} // namespace hbg::runtime
