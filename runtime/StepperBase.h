//===- runtime/StepperBase.h - Shared machinery of the steppers ------------===//
//
// Internal to hbg_runtime: right-hand-side bookkeeping common to all steppers,
// the fixed-step base with cubic Hermite dense output, and the factories that
// makeStepper() dispatches to.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"

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

} // namespace hbg::runtime
