//===- runtime/StepperBase.cpp - Shared machinery of the steppers ----------===//

#include "StepperBase.h"

#include <cmath>

namespace hbg::runtime {

bool StepperBase::eval(double t, const double *x, double *xdot) {
  ++rhsCalls_;
  sys_.rhs(t, x, xdot);
  for (std::size_t i = 0; i < n_; ++i) {
    if (!std::isfinite(xdot[i])) {
      nonFinite_ = {i, /*derivative=*/true, t};
      return false;
    }
  }
  return true;
}

bool StepperBase::checkState(double t, const std::vector<double> &x) {
  for (std::size_t i = 0; i < n_; ++i) {
    if (!std::isfinite(x[i])) {
      nonFinite_ = {i, /*derivative=*/false, t};
      return false;
    }
  }
  return true;
}

void StepperBase::start(double t0, const double *x0, std::vector<double> &f0) {
  t_ = tPrev_ = t0;
  x_.assign(x0, x0 + n_);
  f0.resize(n_);
  accepted_ = rejected_ = rhsCalls_ = 0;
  nonFinite_ = {};
  badStart_ = !checkState(t0, x_) || !eval(t0, x_.data(), f0.data());
}

void hermite(double theta, double h, const std::vector<double> &x0, const std::vector<double> &x1,
             const std::vector<double> &f0, const std::vector<double> &f1, double *out) {
  // Written as x0 + a (x1 - x0) + h (b f0 + c f1) so that the state weights
  // cannot drift apart in rounding.
  double s = theta, r = 1 - theta;
  double a = s * s * (3 - 2 * s), b = s * r * r, c = -s * s * r;
  for (std::size_t i = 0; i < x0.size(); ++i)
    out[i] = x0[i] + a * (x1[i] - x0[i]) + h * (b * f0[i] + c * f1[i]);
}

} // namespace hbg::runtime
