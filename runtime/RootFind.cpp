//===- runtime/RootFind.cpp - The Illinois method -------------------------===//

#include "hbg/runtime/RootFind.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hbg::runtime {

namespace {
/// Evaluations the budget allows beyond ceil(log2((b - a) / tol)): one to
/// finish at tol/2, out of reach of rounding, and two for Illinois steps
/// that do not pay off.
constexpr int kSlack = 3;
} // namespace

Bracket locateSignChange(FunctionRef<double(double)> f, double a, double fa, double b,
                         double fb, double tol) {
  if (fb == 0)
    return {b, b, 0, 0, 0};
  if (fa == 0)
    return {a, a, 0, 0, 0};
  const bool aNegative = fa < 0;
  if (aNegative == (fb < 0) && !std::isnan(fb))
    return {a, b, fa, fb, 0}; // no sign change: the precondition is broken
  auto onASide = [aNegative](double v) { return aNegative ? v < 0 : v > 0; };

  Bracket br{a, b, fa, fb, 0};
  // The values the secant is drawn through: f(lo) and f(hi), the one at an
  // end kept twice in a row halved each time (the Illinois modification),
  // so that the end plain regula falsi gets stuck at is pulled in.
  double wlo = fa, whi = fb;
  int kept = 0; // the end the last step kept: -1 lo, +1 hi, 0 neither yet
  bool keptTwice = false; // the last two steps kept the same end

  // The budget: after each evaluation the bracket is at most `cap` wide,
  // cap halving from tol/2 * 2^(ceil(log2((b - a) / tol)) + kSlack), so
  // that it is tol/2 after that many evaluations. A trial point within
  // (cap/2 - width/2) of the middle keeps the promise whatever f does.
  double cap = std::numeric_limits<double>::infinity();
  if (tol > 0) {
    cap = tol;
    while (cap < b - a)
      cap *= 2;
    cap *= 0.5 * (1 << kSlack);
  }
  // Bisect when two Illinois steps in a row have not halved the bracket.
  bool bisect = false;
  int steps = 0; // Illinois steps since `widthBefore` was taken
  double widthBefore = b - a;

  while (br.hi - br.lo > tol) {
    double width = br.hi - br.lo;
    double mid = br.lo + 0.5 * width;
    double m = mid;
    if (!bisect) {
      double t = std::fabs(wlo) / (std::fabs(wlo) + std::fabs(whi));
      if (std::isfinite(t))
        m = br.lo + t * width;
      // Step a little towards the middle, by an amount shrinking with the
      // square of the bracket (as ITP does): once the secant point is that
      // close to the root, the step lands beyond it and closes the bracket
      // from the far side, which Illinois alone does only slowly. The first
      // step is left alone: it finds the zero of a linear f exactly (a
      // guard on time, say), and later steps then keep hi there.
      if (br.evaluations > 0) {
        double nudge = 0.2 * width * (width / (b - a));
        m += std::copysign(std::min(nudge, std::fabs(mid - m)), mid - m);
      }
      // Keep at least tol/2 from either end, and within the budget.
      double edge = tol > 0 ? 0.5 * tol : 0.0;
      double reach = std::max(0.0, 0.5 * (cap - width));
      m = std::min(std::max(m, std::max(br.lo + edge, mid - reach)),
                   std::min(br.hi - edge, mid + reach));
    }
    cap *= 0.5;
    if (!(br.lo < m && m < br.hi)) {
      m = mid;
      if (!(br.lo < m && m < br.hi))
        break; // lo and hi are neighbouring doubles
    }

    double fm = f(m);
    ++br.evaluations;
    if (fm == 0)
      return {m, m, 0, 0, br.evaluations};
    int keeps = onASide(fm) ? 1 : -1;
    keptTwice = keeps == kept;
    kept = keeps;
    if (keeps == 1) {
      br.lo = m;
      br.flo = wlo = fm;
      if (keptTwice)
        whi *= 0.5;
    } else {
      br.hi = m;
      br.fhi = whi = fm;
      if (keptTwice)
        wlo *= 0.5;
    }

    if (bisect) {
      bisect = false;
      steps = 0;
      widthBefore = br.hi - br.lo;
    } else if (++steps == 2) {
      bisect = br.hi - br.lo > 0.5 * widthBefore;
      steps = 0;
      widthBefore = br.hi - br.lo;
    }
  }
  return br;
}

} // namespace hbg::runtime
