//===- runtime/StepperBase.h - Shared machinery of the steppers ------------===//
//
// Internal to hbg_runtime: right-hand-side bookkeeping common to all steppers,
// the fixed-step base with cubic Hermite dense output, and the factories that
// makeStepper() dispatches to.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace hbg::runtime {

/// Owns the system and counts and checks every right-hand-side evaluation.
class StepperBase : public Stepper {
protected:
  explicit StepperBase(OdeSystem &sys) : sys_(sys), n_(sys.numStates()) {}

  /// Evaluates f(t, x) into `xdot`; on a non-finite component records it in
  /// nonFinite_ and returns false.
  bool eval(double t, const double *x, double *xdot);
  /// Checks a state about to be accepted at time `t`, recording the first
  /// non-finite component.
  bool checkState(double t, const std::vector<double> &x);
  /// Common part of reset(): stores (t0, x0) as a zero-length last step, sizes
  /// the buffers and evaluates f(t0, x0) into `f0`. A non-finite start makes
  /// every later step() fail with NonFinite.
  void start(double t0, const double *x0, std::vector<double> &f0);

  OdeSystem &sys_;
  std::size_t n_;
  /// The starting point was not finite; there is nothing to step from.
  bool badStart_ = false;
};

/// max(atol, rtol nominal) + rtol max(|a|, |b|), at least DBL_MIN: a
/// state's error weight (AdaptiveStepper::weight), written with selects
/// rather than std::max so that loops over the states vectorise.
inline double stateWeight(double nominal, double a, double b, double atol, double rtol) {
  constexpr double Tiny = std::numeric_limits<double>::min();
  double floor = rtol * nominal;
  floor = floor > atol ? floor : atol;
  a = std::abs(a);
  b = std::abs(b);
  double sc = floor + rtol * (a > b ? a : b);
  return sc > Tiny ? sc : Tiny;
}

/// Methods with error control: per-state error weights scaled by nominal
/// magnitudes (IntegratorOptions), the step-size loop with rejections,
/// and the proposal carried between steps. A method supplies its first
/// step, its trial step and what accepting one swaps.
class AdaptiveStepper : public StepperBase {
public:
  double proposedStep() const override { return hNext_; }
  void proposeStep(double h) override {
    if (h > 0)
      hNext_ = std::min(h, opts_.maxStep);
  }
  void setNominal(const double *nominal) override {
    std::copy(nominal, nominal + n_, nominal_.begin());
  }
  const double *nominal() const override { return nominal_.data(); }
  ScaleCollapse scaleCollapse() const override { return scaleCollapse_; }
  /// Advances by one accepted step: trial steps shrink after a rejection
  /// (or a non-finite trial) until one is accepted; the next proposal
  /// grows by the error estimate, of order `order`.
  StepStatus step(double tLimit) override;

protected:
  AdaptiveStepper(OdeSystem &sys, const IntegratorOptions &opts, int order, double safety,
                  double maxGrow)
      : StepperBase(sys), opts_(opts), exponent_(-1.0 / order), safety_(safety),
        maxGrow_(maxGrow) {}
  /// The part of reset() after start(): nominal magnitudes from x_, the
  /// proposal from opts.step.
  void startAdaptive();
  /// The error weight of state i between values a and b:
  /// max(atol, rtol nominal_i) + rtol max(|a|, |b|).
  double weight(std::size_t i, double a, double b) const {
    return std::max(opts_.atol, opts_.rtol * nominal_[i]) +
           opts_.rtol * std::max(std::abs(a), std::abs(b));
  }
  /// The largest over the states of |err_[i]| weighted between x_ and
  /// `xNew` (NaN when an estimate is), recording the error leader.
  double errorNorm(const std::vector<double> &xNew);
  /// The first trial step, when nothing proposed one.
  virtual double firstStep(double tLimit) = 0;
  /// Once per step() call, before its first trial at size h; false when
  /// something is not finite.
  virtual bool beginStep(double h) {
    (void)h;
    return true;
  }
  /// A trial step of h ending at tNew: its error norm, or a negative value
  /// when anything was not finite.
  virtual double trial(double h, double tNew) = 0;
  /// Makes the trial the last accepted step (time, state, dense output).
  virtual void accept(double tNew) = 0;
  /// What to do after a rejected trial.
  enum class Retry { Shorter, Same, Fail };
  /// After a rejected trial, before the retry: Shorter by the error
  /// estimate, as usual; Same, at the same h, when the method renewed an
  /// approximation the trial rested on (a Jacobian kept from an earlier
  /// step); Fail when something is not finite.
  virtual Retry rejected() { return Retry::Shorter; }
  /// The order of the error estimate the controller scales by: the next
  /// proposal grows by err^(-1 / order).
  void setOrder(int order) { exponent_ = -1.0 / order; }

  IntegratorOptions opts_;
  /// Proposed next step; 0 until the first step() picks one.
  double hNext_ = 0;
  /// Nominal magnitudes, grown to the largest |x_i| accepted.
  std::vector<double> nominal_;
  /// Local error estimates of the last trial.
  std::vector<double> err_;
  std::vector<double> ratio_; ///< errorNorm's weighted errors
  /// A proposed growth of the step by a factor from 1 to this is not
  /// taken: the step stays as it is (1: every growth is taken). A method
  /// that can reuse its factorisation while the step stays sets it above
  /// 1, as RADAU5 and CVODE do.
  double holdGrowthUpTo_ = 1;

private:
  double exponent_, safety_, maxGrow_;
  /// The error leader of the last errorNorm() and what its weight says,
  /// and the state at the last reset() it is compared with.
  ScaleCollapse scaleCollapse_;
  std::vector<double> xStart_;
};

/// Fixed-step methods: steps of opts.step (capped by opts.maxStep), clipped to
/// land on tLimit, with cubic Hermite interpolation between mesh points.
class FixedStepper : public StepperBase {
public:
  FixedStepper(OdeSystem &sys, const IntegratorOptions &opts);
  void reset(double t0, const double *x0) override;
  StepStatus step(double tLimit) override;
  void interpolate(double tau, double *out) const override;
  void densePolynomial(std::size_t i, double c[5]) const override;

protected:
  /// Writes the state at tNew into xNew_, given f_ = f(t_, x_). Returns false
  /// if an intermediate stage is not finite.
  virtual bool advance(double tNew) = 0;

  double h_;
  /// Mesh times are computed as anchor + k h rather than accumulated, so that
  /// long runs do not drift off the grid and leave slivers before tLimit.
  double anchor_ = 0;
  std::size_t sinceAnchor_ = 0;
  /// Derivatives at tPrev_ and t_ are the Hermite data; f_ doubles as the
  /// first stage of the next step, so dense output costs no extra calls.
  std::vector<double> xPrev_, fPrev_, f_, xNew_, fNew_;
};

/// Writes the cubic Hermite interpolant of (x0, f0) at s = 0 and (x1, f1) at
/// s = h, evaluated at s = theta * h, into `out`.
void hermite(double theta, double h, const std::vector<double> &x0, const std::vector<double> &x1,
             const std::vector<double> &f0, const std::vector<double> &f1, double *out);

/// The cubic Hermite interpolant of component i as a polynomial in theta
/// (see Stepper::densePolynomial), with c[4] = 0.
void hermitePolynomial(std::size_t i, double h, const std::vector<double> &x0,
                       const std::vector<double> &x1, const std::vector<double> &f0,
                       const std::vector<double> &f1, double c[5]);

std::unique_ptr<Stepper> makeEulerStepper(OdeSystem &sys, const IntegratorOptions &opts);
std::unique_ptr<Stepper> makeRungeKutta4Stepper(OdeSystem &sys, const IntegratorOptions &opts);
std::unique_ptr<Stepper> makeDormandPrinceStepper(OdeSystem &sys, const IntegratorOptions &opts);
std::unique_ptr<Stepper> makeRosenbrockStepper(OdeSystem &sys, const IntegratorOptions &opts);
std::unique_ptr<Stepper> makeAutoStepper(OdeSystem &sys, const IntegratorOptions &opts);

} // namespace hbg::runtime
