//===- hbg/runtime/Integrator.h - ODE integrators with dense output -------===//
//
// The continuous part of a simulation: dx/dt = f(t, x). Steppers advance one
// step at a time and can interpolate inside the last accepted step, so the
// caller can sample outputs on a grid and (for hybrid models) locate events
// without ever integrating across one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace hbg::runtime {

/// Where a sparse n x n matrix may be non-zero, compressed by column:
/// rows[colStart[j]] .. rows[colStart[j + 1] - 1] are column j's rows, in
/// ascending order (colStart has n + 1 entries).
struct SparsePattern {
  std::vector<std::uint32_t> colStart, rows;
  std::size_t nonZeros() const { return rows.size(); }
};

/// Which parts of an OdeSystem's Jacobian are constant
/// (OdeSystem::jacobianConstancy).
struct JacobianConstancy {
  /// df/dx, and df/dt.
  bool dfdx = false, dfdt = false;
};

/// The right-hand side of an ODE system dx/dt = f(t, x).
class OdeSystem {
public:
  virtual ~OdeSystem() = default;
  /// Number of continuous states.
  virtual std::size_t numStates() const = 0;
  /// Writes f(t, x) into `xdot` (numStates() doubles).
  virtual void rhs(double t, const double *x, double *xdot) = 0;
  /// The structural non-zeros of df/dx when the system can evaluate its
  /// Jacobian; null (the default) when a stepper must difference f. The
  /// first call may compile code; the pattern stays fixed after it.
  virtual const SparsePattern *jacobianPattern() { return nullptr; }
  /// df/dx at (t, x), in the pattern's order, into `values`, and df/dt
  /// into `dfdt` (numStates() doubles). False when it could not be
  /// evaluated.
  virtual bool jacobian(double t, const double *x, double *values, double *dfdt) {
    (void)t, (void)x, (void)values, (void)dfdt;
    return false;
  }
  /// Which parts of jacobian() read neither t nor x, and so stay the same
  /// until the system's parameters change (a linear mode with constant
  /// coefficients; driven by constant sources, df/dt too). Valid after
  /// jacobianPattern(). A stepper may keep such a part from one reset()
  /// to the next: whoever changes the parameters resets it.
  virtual JacobianConstancy jacobianConstancy() { return {}; }
};

/// The integration methods hbg offers: fixed-step Euler and RK4, adaptive
/// Dormand-Prince 5(4), and for stiff systems the linearly implicit
/// Rosenbrock method RODAS4 of Hairer and Wanner (adaptive, order 4(3),
/// L-stable, with the system's Jacobian when it has one). Auto starts
/// with dopri5 and switches to the Rosenbrock method where its steps are
/// held back by stability rather than accuracy, and back where they no
/// longer are (as LSODA switches between Adams and BDF).
enum class Method { Euler, RK4, DormandPrince, Rosenbrock, Auto };

/// True for the methods with error control.
inline bool isAdaptive(Method m) {
  return m == Method::DormandPrince || m == Method::Rosenbrock || m == Method::Auto;
}

/// Parses "euler", "rk4", "dopri5", "rosenbrock" or "auto"; false on an
/// unknown name.
bool parseMethod(const std::string &name, Method &out);
/// The command-line name of a method ("euler", "rk4", "dopri5",
/// "rosenbrock", "auto").
const char *methodName(Method m);

/// A stretch of a run integrated by one method: the accepted steps it
/// took from `from` to `to`.
struct MethodSpan {
  Method method;
  double from = 0, to = 0;
  std::size_t steps = 0;
};
/// Extends the last span by an accepted step [from, to] of `method`, or
/// starts a new one when the method changed.
void recordSpan(std::vector<MethodSpan> &spans, Method method, double from, double to);

/// Settings shared by all steppers.
struct IntegratorOptions {
  Method method = Method::Auto;
  /// Fixed step for euler and rk4; the first trial step for the adaptive
  /// methods (0 picks one).
  double step = 1e-3;
  /// Error tolerances of the adaptive method, in each state's own unit:
  /// err_i <= max(atol, rtol * nominal_i) + rtol * |x_i|, where nominal_i
  /// is the largest of the nominal magnitude the stepper was given
  /// (Stepper::setNominal) and every |x_i| it has accepted since. `atol`
  /// is an absolute floor (0: none), so that rtol alone sets the accuracy
  /// whatever the units.
  double rtol = 1e-6;
  double atol = 0;
  /// Upper bound on any step.
  double maxStep = std::numeric_limits<double>::infinity();
  /// Bound on the number of accepted plus rejected steps of one integrate() call.
  std::size_t maxSteps = 50'000'000;
  /// The stiff method keeps a nonlinear mode's Jacobian and LU over steps,
  /// stepping by the W-method ROS34PW2 (order 3) instead of RODAS4 (order
  /// 4) with J evaluated every step. Off by default: on the models
  /// measured the lower order cost more steps than the Jacobians saved
  /// (docs/numerics.md).
  bool keepJacobian = false;
};

/// Why a step failed.
enum class StepStatus { Ok, StepSizeUnderflow, NonFinite };

/// What a StepStatus::NonFinite step ran into: the value of state `index`, or
/// its derivative, at time `t`. With `jacobian`, the stiff method's
/// Jacobian of state `index`'s derivative was not finite; index SIZE_MAX
/// then means the system could not evaluate its Jacobian (`derivative`
/// false) or the implicit linear system was singular at every step size
/// (`derivative` true).
struct NonFiniteInfo {
  std::size_t index = 0;
  bool derivative = false;
  double t = 0;
  bool jacobian = false;
};

/// What the error leader's weight said in an adaptive method's last trial
/// step (Stepper::scaleCollapse), which tells why step sizes collapse.
struct ScaleCollapse {
  /// The leader, and its floor max(atol, rtol nominal).
  std::size_t leader = static_cast<std::size_t>(-1);
  double floor = 0;
  /// It has not grown since the last reset(), and its weight is zero or
  /// set by the value the trial reached rather than by its floor and its
  /// value at the step's start: its error is judged
  /// against a value that vanishes with the step (it grows from zero, and
  /// its floor is too small for how it grows).
  bool vanishing = false;
};

/// A one-step method with dense output over its last accepted step.
class Stepper {
public:
  Stepper() = default;
  Stepper(const Stepper &) = delete; // state_ points into the object
  Stepper &operator=(const Stepper &) = delete;
  virtual ~Stepper() = default;
  /// Starts integration at (t0, x0).
  virtual void reset(double t0, const double *x0) = 0;
  /// Adaptive steppers: the step the next step() tries first (0 before
  /// one is chosen), and a proposal for it, made after reset(): a run
  /// restarting after an event goes on with the step size it had reached
  /// rather than from the initial trial step. Fixed steppers ignore both.
  virtual double proposedStep() const { return 0; }
  virtual void proposeStep(double) {}
  /// Adaptive steppers: the nominal magnitude of each state, after
  /// reset(), which its absolute tolerance scales with (grown to the
  /// largest |x_i| accepted). Fixed steppers ignore it.
  virtual void setNominal(const double *) {}
  /// The nominal magnitudes as grown so far (null for fixed steppers).
  virtual const double *nominal() const { return nullptr; }
  /// Adaptive steppers: what the last trial step says about the error
  /// leader's weight.
  virtual ScaleCollapse scaleCollapse() const { return {}; }
  /// Advances by one accepted step, never past `tLimit` (the step is clipped
  /// to land on it exactly). Adaptive steppers retry rejected steps inside.
  virtual StepStatus step(double tLimit) = 0;
  /// Time and state after the last accepted step.
  double t() const { return t_; }
  const std::vector<double> &x() const { return *state_; }
  /// Start of the last accepted step.
  double tPrev() const { return tPrev_; }
  /// Writes the interpolated state at `tau` in [tPrev(), t()] into `out`.
  virtual void interpolate(double tau, double *out) const = 0;
  /// Component i of the dense output over the last step as a polynomial
  /// c[0] + c[1] s + ... + c[4] s^4 in s = (tau - tPrev()) / (t() - tPrev()).
  virtual void densePolynomial(std::size_t i, double c[5]) const = 0;
  /// Bounds [lo, hi] of component i of the dense output over
  /// [ta, tb] within the last step, widened to cover the rounding of
  /// interpolate(): every interpolate(tau)[i] with tau in [ta, tb] lies in
  /// them. Overestimates by O((tb - ta)^2), so subdividing tightens them.
  void enclose(std::size_t i, double ta, double tb, double &lo, double &hi) const;
  /// Bounds of the time derivative of the same polynomial over [ta, tb]
  /// (not of the right-hand side: of the curve interpolate() follows).
  void encloseSlope(std::size_t i, double ta, double tb, double &lo, double &hi) const;
  /// Accepted and rejected steps and right-hand-side evaluations so far.
  std::size_t acceptedSteps() const { return accepted_; }
  std::size_t rejectedSteps() const { return rejected_; }
  std::size_t rhsCalls() const { return rhsCalls_; }
  /// Implicit methods: Jacobian evaluations (not differenced ones) and LU
  /// factorisations so far.
  std::size_t jacobianCalls() const { return jacobianCalls_; }
  std::size_t factorisations() const { return factorisations_; }
  /// The method that took the last accepted step (auto: the one it
  /// chose).
  virtual Method method() const { return method_; }
  /// Adaptive methods: an estimate of h times the largest magnitude of
  /// the Jacobian's eigenvalues over the last accepted step (what bounds
  /// an explicit method's step; 0 when unknown). Valid between a step()
  /// and the next.
  virtual double stiffness() const { return 0; }
  /// Details of the last StepStatus::NonFinite failure.
  const NonFiniteInfo &nonFinite() const { return nonFinite_; }
  /// Adaptive methods: the component with the largest weighted error in
  /// the last trial step (what drives the step size down), or SIZE_MAX.
  std::size_t errorLeader() const { return errorLeader_; }

protected:
  friend std::unique_ptr<Stepper> makeStepper(OdeSystem &sys, const IntegratorOptions &opts);
  double t_ = 0, tPrev_ = 0;
  std::vector<double> x_;
  /// What x() returns: x_, or (auto) the state of the method it runs, which
  /// it need not copy after every step.
  const std::vector<double> *state_ = &x_;
  std::size_t accepted_ = 0, rejected_ = 0, rhsCalls_ = 0;
  std::size_t jacobianCalls_ = 0, factorisations_ = 0;
  Method method_ = Method::DormandPrince;
  NonFiniteInfo nonFinite_;
  std::size_t errorLeader_ = static_cast<std::size_t>(-1);
};

/// Creates the stepper for `opts.method` on `sys` (which must outlive it).
std::unique_ptr<Stepper> makeStepper(OdeSystem &sys, const IntegratorOptions &opts);

/// Output sample times t0, t0 + dt, t0 + 2 dt, ... and finally tEnd,
/// computed rather than accumulated so they do not drift; a time within
/// rounding of tEnd is replaced by tEnd itself.
class OutputGrid {
public:
  OutputGrid(double t0, double tEnd, double dt)
      : t0_(t0), tEnd_(tEnd), dt_(dt), tol_(1e-12 * std::max(std::abs(t0), std::abs(tEnd))) {}
  /// The k-th sample time.
  double at(std::size_t k) const {
    double ts = k == 0 ? t0_ : t0_ + static_cast<double>(k) * dt_;
    return ts < tEnd_ - tol_ ? ts : tEnd_;
  }

private:
  double t0_, tEnd_, dt_, tol_;
};

/// The result of integrate().
struct IntegrationStatus {
  StepStatus status = StepStatus::Ok;
  /// Time reached (tEnd on success, the last good time otherwise).
  double t = 0;
  /// Readable reason on failure, empty on success.
  std::string message;
  /// Which state went bad when status is NonFinite (for naming it).
  NonFiniteInfo nonFinite;
  /// Work done: accepted and rejected steps, right-hand-side calls.
  std::size_t acceptedSteps = 0, rejectedSteps = 0, rhsCalls = 0;
  /// Failures that are not a step's fault (too many steps, bad arguments)
  /// keep status Ok, so success is judged by the message.
  bool ok() const { return message.empty(); }
};

/// Integrates from (t0, x0) to tEnd and calls `sample(t, x)` at
/// t0, t0 + dtOut, t0 + 2 dtOut, ... and finally exactly at tEnd. Adaptive
/// steps are sampled through dense output; fixed steps are clipped so that
/// every sample time is a mesh point. Returns early with a message on failure
/// (non-finite state, step-size underflow, too many steps), after sampling
/// everything up to the last good step.
IntegrationStatus integrate(OdeSystem &sys, double t0, const std::vector<double> &x0,
                            double tEnd, double dtOut, const IntegratorOptions &opts,
                            const std::function<void(double t, const double *x)> &sample);

} // namespace hbg::runtime
