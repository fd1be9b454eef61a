//===- runtime/StepperBase.cpp - Shared machinery of the steppers ----------===//

#include "StepperBase.h"

#include "DenseEnclosure.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hbg::runtime {

namespace {
/// The first of v[0..n) that is not finite, or n. The common case, all
/// finite, is one pass without a branch per value, which vectorises: the
/// exponent field of an infinity or a NaN is all ones, and adding one to it
/// alone carries into the sign bit.
std::size_t firstNonFinite(const double *v, std::size_t n) {
  constexpr std::uint64_t Exponent = 0x7ff0000000000000, ExponentOne = std::uint64_t(1) << 52;
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, &v[i], sizeof bits);
    carry |= (bits & Exponent) + ExponentOne;
  }
  if (!(carry >> 63))
    return n;
  std::size_t i = 0;
  while (std::isfinite(v[i]))
    ++i;
  return i;
}
/// ratio[i] = |err[i]| / max(weight(i, x[i], xNew[i]), DBL_MIN), written
/// so that the loop vectorises (each maximum a comparison the compiler
/// turns into a select; a weight is never NaN, the states being finite, so
/// a zero error gives 0).
void weightedErrors(std::size_t n, double *__restrict ratio, const double *__restrict x,
                    const double *__restrict xNew, const double *__restrict err,
                    const double *__restrict nominal, double atol, double rtol) {
  for (std::size_t i = 0; i < n; ++i)
    ratio[i] = std::abs(err[i]) / stateWeight(nominal[i], x[i], xNew[i], atol, rtol);
}
} // namespace

bool StepperBase::eval(double t, const double *x, double *xdot) {
  ++rhsCalls_;
  sys_.rhs(t, x, xdot);
  std::size_t i = firstNonFinite(xdot, n_);
  if (i == n_)
    return true;
  nonFinite_ = {i, /*derivative=*/true, t};
  return false;
}

bool StepperBase::checkState(double t, const std::vector<double> &x) {
  std::size_t i = firstNonFinite(x.data(), n_);
  if (i == n_)
    return true;
  nonFinite_ = {i, /*derivative=*/false, t};
  return false;
}

void StepperBase::start(double t0, const double *x0, std::vector<double> &f0) {
  t_ = tPrev_ = t0;
  x_.assign(x0, x0 + n_);
  f0.resize(n_);
  accepted_ = rejected_ = rhsCalls_ = jacobianCalls_ = factorisations_ = 0;
  nonFinite_ = {};
  badStart_ = !checkState(t0, x_) || !eval(t0, x_.data(), f0.data());
}

void AdaptiveStepper::startAdaptive() {
  nominal_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i)
    nominal_[i] = std::abs(x_[i]);
  xStart_ = x_;
  scaleCollapse_ = {};
  err_.resize(n_);
  hNext_ = opts_.step > 0 ? std::min(opts_.step, opts_.maxStep) : 0;
}

double AdaptiveStepper::errorNorm(const std::vector<double> &xNew) {
  // The weighted errors in one pass that vectorises, then the largest and
  // where it is.
  ratio_.resize(n_);
  weightedErrors(n_, ratio_.data(), x_.data(), xNew.data(), err_.data(), nominal_.data(),
                 opts_.atol, opts_.rtol);
  const double *ratio = ratio_.data();
  double worst = -1;
  for (std::size_t i = 0; i < n_; ++i) {
    double r = ratio[i];
    if (r > worst) {
      worst = r;
      errorLeader_ = i;
    } else if (std::isnan(r)) { // a non-finite estimate rejects the step
      errorLeader_ = i;
      return r;
    }
  }
  if (errorLeader_ < n_) {
    // The leader's error is judged against a value that vanishes with the
    // step, not against its scale, when it has not grown since the start
    // and its weight is zero or comes from where the trial took it rather
    // than from its floor and its value at the step's start: a state
    // growing from zero, whose floor is too small for how it grows. (A
    // state that has grown and blows up is judged against its value.)
    std::size_t i = errorLeader_;
    double start = weight(i, x_[i], x_[i]), reached = weight(i, x_[i], xNew[i]);
    scaleCollapse_.leader = i;
    scaleCollapse_.floor = std::max(opts_.atol, opts_.rtol * nominal_[i]);
    scaleCollapse_.vanishing = std::abs(x_[i]) <= 2 * std::abs(xStart_[i]) &&
                               (reached == 0 || start < 0.5 * reached);
  }
  return n_ ? worst : 0;
}

StepStatus AdaptiveStepper::step(double tLimit) {
  constexpr double MinShrink = 0.2;
  if (badStart_)
    return StepStatus::NonFinite;
  if (!(tLimit > t_))
    return StepStatus::Ok;
  if (hNext_ <= 0)
    hNext_ = firstStep(tLimit);
  // Below this a step no longer moves t by more than rounding noise.
  double hMin = 1e-14 * (t_ != 0 ? std::abs(t_) : std::abs(tLimit));
  bool retry = false, lastNonFinite = false, begun = false;
  for (;;) {
    double h = std::min(hNext_, opts_.maxStep);
    double remaining = tLimit - t_;
    // Stretch by up to 1% rather than leave a tiny last step before tLimit.
    bool landing = remaining <= std::min(1.01 * h, opts_.maxStep);
    if (landing)
      h = remaining;
    // Also catches a NaN step from degenerate tolerances, and a step that
    // no longer moves t at all (near t = 0, where hMin underflows), which
    // would retry forever.
    else if (!(h >= hMin) || !(t_ + h > t_))
      return lastNonFinite ? StepStatus::NonFinite : StepStatus::StepSizeUnderflow;
    double tNew = landing ? tLimit : t_ + h;
    if (!begun) {
      if (!beginStep(h))
        return StepStatus::NonFinite;
      begun = true;
    }
    double err = trial(h, tNew);
    bool finite = err >= 0;
    if (finite && err <= 1) {
      double fac = err == 0 ? maxGrow_
                            : std::clamp(safety_ * std::pow(err, exponent_), MinShrink, maxGrow_);
      // Growing right after a rejection tends to be rejected again; a
      // small growth is not worth a new factorisation (holdGrowthUpTo_).
      if (retry || fac <= holdGrowthUpTo_)
        fac = std::min(fac, 1.0);
      // A step shortened to land on tLimit says little about the step size the
      // solution allows, so it does not lower the proposal.
      hNext_ = landing ? std::max(h * fac, hNext_) : h * fac;
      accept(tNew);
      for (std::size_t i = 0; i < n_; ++i)
        nominal_[i] = std::max(nominal_[i], std::abs(x_[i]));
      ++accepted_;
      return StepStatus::Ok;
    }
    // Rejected. A non-finite trial (say, a stage overshooting into a region
    // where f is undefined) is retried shorter too, so that the eventual
    // failure pinpoints where things go wrong.
    ++rejected_;
    retry = true;
    lastNonFinite = !finite;
    Retry retryAs = rejected();
    if (retryAs == Retry::Fail)
      return StepStatus::NonFinite;
    if (retryAs == Retry::Same)
      continue; // the same h again
    hNext_ = h * (finite ? std::max(MinShrink, safety_ * std::pow(err, exponent_)) : MinShrink);
  }
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

void hermitePolynomial(std::size_t i, double h, const std::vector<double> &x0,
                       const std::vector<double> &x1, const std::vector<double> &f0,
                       const std::vector<double> &f1, double c[5]) {
  // x0 + (3s^2 - 2s^3) d + h f0 (s - 2s^2 + s^3) + h f1 (s^3 - s^2).
  double d = x1[i] - x0[i], a = h * f0[i], b = h * f1[i];
  c[0] = x0[i];
  c[1] = a;
  c[2] = 3 * d - 2 * a - b;
  c[3] = -2 * d + a + b;
  c[4] = 0;
}

void Stepper::enclose(std::size_t i, double ta, double tb, double &lo, double &hi) const {
  double c[5];
  densePolynomial(i, c);
  encloseDense(c, tPrev_, t_, ta, tb, lo, hi);
}

void Stepper::encloseSlope(std::size_t i, double ta, double tb, double &lo, double &hi) const {
  double c[5];
  densePolynomial(i, c);
  encloseDenseSlope(c, tPrev_, t_, ta, tb, lo, hi);
}

} // namespace hbg::runtime
