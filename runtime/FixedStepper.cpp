//===- runtime/FixedStepper.cpp - Common part of the fixed-step methods ----===//

#include "StepperBase.h"

#include <algorithm>

namespace hbg::runtime {

FixedStepper::FixedStepper(OdeSystem &sys, const IntegratorOptions &opts)
    : StepperBase(sys), h_(std::min(opts.step, opts.maxStep)) {}

void FixedStepper::reset(double t0, const double *x0) {
  start(t0, x0, f_);
  xPrev_ = x_;
  fPrev_ = f_;
  xNew_.resize(n_);
  fNew_.resize(n_);
  anchor_ = t0;
  sinceAnchor_ = 0;
}

StepStatus FixedStepper::step(double tLimit) {
  if (badStart_)
    return StepStatus::NonFinite;
  if (!(tLimit > t_))
    return StepStatus::Ok;
  double tNew = anchor_ + static_cast<double>(sinceAnchor_ + 1) * h_;
  // A mesh point within rounding of tLimit is tLimit: better a step longer by
  // a hair than a sliver step.
  bool landing = tNew >= tLimit - 1e-6 * h_;
  if (landing)
    tNew = tLimit;
  else if (!(tNew > t_))
    return StepStatus::StepSizeUnderflow;

  if (!advance(tNew) || !checkState(tNew, xNew_) || !eval(tNew, xNew_.data(), fNew_.data()))
    return StepStatus::NonFinite;
  tPrev_ = t_;
  t_ = tNew;
  xPrev_.swap(x_);
  x_.swap(xNew_);
  fPrev_.swap(f_);
  f_.swap(fNew_);
  ++accepted_;
  if (landing) {
    anchor_ = tNew;
    sinceAnchor_ = 0;
  } else {
    ++sinceAnchor_;
  }
  return StepStatus::Ok;
}

void FixedStepper::interpolate(double tau, double *out) const {
  double h = t_ - tPrev_;
  if (h > 0)
    hermite((tau - tPrev_) / h, h, xPrev_, x_, fPrev_, f_, out);
  else
    std::copy(x_.begin(), x_.end(), out);
}

void FixedStepper::densePolynomial(std::size_t i, double c[5]) const {
  hermitePolynomial(i, t_ - tPrev_, xPrev_, x_, fPrev_, f_, c);
}

} // namespace hbg::runtime
