//===- runtime/DenseEnclosure.h - Bounds of a step's dense output ----------===//
//
// Internal to hbg_runtime: enclosures of a stepper's dense output and of
// its time derivative over part of the last step, from the coefficients
// Stepper::densePolynomial() gives. Stepper::enclose() and encloseSlope()
// are these; the event locator, which encloses the same states over many
// intervals of one step, takes the coefficients once per step and calls
// them directly, with the same results.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdlib>
#include <limits>

namespace hbg::runtime {

/// Bounds of c[0] + c[1] s + ... + c[4] s^4 over s in [sa, sb], widened
/// by far more than the rounding of evaluating it either way.
inline void enclosePolynomial(const double c[5], double sa, double sb, double &lo, double &hi) {
  // The Taylor coefficients at the middle m of [sa, sb]: p(m + u) =
  // sum d_k u^k with |u| <= r. Odd powers of u range over [-r^k, r^k],
  // even ones over [0, r^k]; the result overestimates the range by O(r^2).
  double m = 0.5 * (sa + sb), r = 0.5 * (sb - sa);
  double d[5] = {c[0], c[1], c[2], c[3], c[4]};
  for (int k = 0; k < 5; ++k) // synthetic division by (s - m), repeatedly
    for (int j = 3; j >= k; --j)
      d[j] += m * d[j + 1];
  lo = hi = d[0];
  double rk = 1, size = 0;
  for (int k = 1; k < 5; ++k) {
    rk *= r;
    double term = d[k] * rk;
    if (k % 2) {
      lo -= std::abs(term);
      hi += std::abs(term);
    } else if (term > 0) {
      hi += term;
    } else {
      lo += term;
    }
  }
  // interpolate() rounds differently (and so do the sums above): widen by
  // far more than either, still far below any guard's tolerance.
  for (int k = 0; k < 5; ++k)
    size += std::abs(c[k]);
  double widen = 1e-14 * size + std::numeric_limits<double>::denorm_min();
  lo -= widen;
  hi += widen;
}

/// The dense output with coefficients `c` over [ta, tb] inside the step
/// [tPrev, t] (Stepper::enclose).
inline void encloseDense(const double c[5], double tPrev, double t, double ta, double tb,
                         double &lo, double &hi) {
  double h = t - tPrev;
  double sa = h > 0 ? (ta - tPrev) / h : 0, sb = h > 0 ? (tb - tPrev) / h : 0;
  enclosePolynomial(c, sa, sb, lo, hi);
}

/// Its time derivative there (Stepper::encloseSlope): the whole line for a
/// step of no length.
inline void encloseDenseSlope(const double c[5], double tPrev, double t, double ta, double tb,
                              double &lo, double &hi) {
  double h = t - tPrev;
  if (!(h > 0)) {
    lo = -std::numeric_limits<double>::infinity();
    hi = std::numeric_limits<double>::infinity();
    return;
  }
  // d/dtau p((tau - tPrev) / h) = p'(s) / h.
  double dc[5] = {c[1] / h, 2 * c[2] / h, 3 * c[3] / h, 4 * c[4] / h, 0};
  enclosePolynomial(dc, (ta - tPrev) / h, (tb - tPrev) / h, lo, hi);
}

} // namespace hbg::runtime
