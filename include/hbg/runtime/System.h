//===- hbg/runtime/System.h - What a simulation needs of a model ----------===//
//
// The narrow interface between the simulation loop and a compiled model.
// The driver implements it over JIT-compiled code; tests implement it over
// hand-written functions. A model runs as a sequence of modes: each mode
// integrates its independent states, computes its dependent storage from
// them, and evaluates the two sides of every guard comparison. A model
// without switched junctions is one mode with no comparisons.
//
// The full state holds every storage element and integrator of every mode
// (Model::stateNames()); a mode's states and dependent storage sit at
// known slots in it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Guards.h"
#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/Interval.h"
#include "hbg/support/Diagnostics.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace hbg::runtime {

/// A run-time failure of the simulation, thrown inside the runtime and
/// caught by simulate(): what failed, in which mode and when.
struct RunError {
  RunError(DiagKind kind, double t, std::string mode, std::initializer_list<DiagArg> args = {})
      : diagnostic(runDiagnostic(kind, t, std::move(mode), args)) {}
  RunDiagnostic diagnostic;
};

/// Why a mode's function could not be evaluated: the loops solved at run
/// time did not converge.
struct LoopFailure {
  /// `Newton's method stalled (residual 1)`.
  std::string reason;
  /// The loops' paths, joined by "; " (DiagArg::loop).
  std::string loops;
  double time = 0;
};

/// The time of a RunDiagnostic that is not at a time.
inline constexpr double kNoTime = std::numeric_limits<double>::quiet_NaN();

/// The slot of dependent storage that has no place in the full state: the
/// stand-ins for short-circuited sources (Mode::shortCircuit()).
inline constexpr std::uint32_t kNoSlot = UINT32_MAX;

/// An element whose power the modes compute (Mode::powers()): an R
/// element, whose power is what it dissipates, or a source (Se, Sf, MSe,
/// MSf), whose power is what it delivers into the model.
struct PowerElement {
  std::string path; ///< "load.r", "supply.s"
  std::string kind; ///< "R", "Se", "Sf", "MSe", "MSf"
};

/// One mode's functions. Every function reads the parameter array the
/// System was given (parameters, then held values) and returns false when
/// it could not be evaluated (a loop that did not converge); failure()
/// then says why, naming the loop and the time.
class Mode {
public:
  virtual ~Mode() = default;
  /// `contact=on, valve=off`; empty for a model without switched junctions.
  virtual const std::string &name() const = 0;
  /// Slots of the independent states and of the dependent storage in the
  /// full state.
  virtual const std::vector<std::uint32_t> &stateSlots() const = 0;
  virtual const std::vector<std::uint32_t> &dependentSlots() const = 0;
  /// Non-empty for a mode in which sources short-circuit each other
  /// through ON junctions: why (the causal conflict's diagnostics). Such a
  /// mode carries an unbounded flow (effort) and can only be passed
  /// through; its dependent storage at kNoSlot stands in for the sources,
  /// and its jump, measured from zero, is the short circuit's impulse.
  virtual const std::string &shortCircuit() const;
  /// Names of the independent states, in the order of x.
  virtual const std::string &stateName(std::size_t i) const = 0;

  virtual bool rhs(double t, const double *x, double *xdot) = 0;
  /// The Jacobian of rhs() (OdeSystem::jacobianPattern and jacobian):
  /// null and false by default, when the mode cannot evaluate it.
  virtual const SparsePattern *jacobianPattern() { return nullptr; }
  virtual bool jacobian(double t, const double *x, double *values, double *dfdt) {
    (void)t, (void)x, (void)values, (void)dfdt;
    return false;
  }
  /// OdeSystem::jacobianConstancy: none by default.
  virtual JacobianConstancy jacobianConstancy() { return {}; }
  virtual bool outputs(double t, const double *x, double *y) = 0;
  /// The power of each of System::powerElements() at (t, x): e * f of its
  /// bond, dissipated (R) or delivered (sources); 0 for an element this
  /// mode switches off. Then, where the mode has dependent storage (nd =
  /// dependentSlots().size()), out[np + p * nd + k] is the work element p
  /// does per unit jump of dependent storage k into this mode (a source
  /// driving a capacitor it is switched across; 0 for R elements): np (1
  /// + nd) values for np elements. False when the mode cannot compute them
  /// (the default) or its loops could not be solved.
  virtual bool powers(double t, const double *x, double *out) {
    (void)t, (void)x, (void)out;
    return false;
  }
  /// Both sides of every comparison of the model, then of one comparison
  /// per kink of this mode: 2 * (numComparisons + numKinks()) values.
  virtual bool guards(double t, const double *x, double *sides) = 0;
  /// Enclosures of the guards over a box: out[3k], out[3k + 1] and
  /// out[3k + 2] enclose comparison k's lhs, rhs and lhs - rhs for every t
  /// in `t` and x in `x` (only the states guardStates() names are read),
  /// kinks included.
  /// False when the mode cannot enclose its guards (they read values that
  /// only a run-time solve gives): its events are then found by sampling.
  virtual bool encloseGuards(Interval t, const Interval *x, Interval *out) = 0;
  /// As encloseGuards(), and outDot[3k + j] encloses the time derivative
  /// of out[3k + j] along any trajectory through the box whose states'
  /// derivatives lie in `xdot`. False when the mode cannot (then only the
  /// enclosures are used).
  virtual bool encloseGuardSlopes(Interval t, const Interval *x, const Interval *xdot,
                                  Interval *out, Interval *outDot);
  /// The independent states the guards read, sorted.
  virtual const std::vector<std::uint32_t> &guardStates() const = 0;
  /// The comparisons (kinks numbered after the guards') that read only
  /// time, parameters and held values: time events, which steps end on.
  virtual const std::vector<std::uint32_t> &timeComparisons() const;
  /// The values `pre(...)` holds, in this mode.
  virtual bool held(double t, const double *x, double *values) = 0;
  /// Dependent storage from the independent states, and its Jacobian
  /// (row-major, dependent x state).
  virtual bool dependent(double t, const double *x, double *d) = 0;
  virtual bool dependentJacobian(double t, const double *x, double *jac) = 0;
  /// The impulse matrix B (row-major, state x dependent): how the
  /// independent states change per unit of impulse into dependent storage.
  virtual bool impulse(double t, const double *x, double *b) = 0;
  /// The impulse each guard side carries when the state jumps into this
  /// mode: out[s * nd + k] is side s's Dirac strength per unit jump of
  /// dependent storage k (nd = dependentSlots().size(); the guards' sides
  /// only, not the kinks'). False when none can (no dependent storage, or
  /// no side reads it): the default.
  virtual bool guardImpulses(double t, const double *x, double *out);
  virtual const LoopFailure &failure() const = 0;

  /// Kinks: `sign`, `abs`, `min` and `max` of values that change in time.
  /// Each has a branch b in {-1, 0, 1}, held between events, and an
  /// argument c that is positive where b = 1 is right. Kink k's comparison
  /// (number numComparisons + k in guards()) is `lhs <= rhs`, reached where
  /// c has left the branch's side: b c <= 0 for b = +-1, c != 0 for b = 0.
  /// A `floor` kink (kinkFloor) has the integer branch b = floor(c) and
  /// its comparison is reached where c leaves [b, b + 1).
  virtual std::size_t numKinks() const { return 0; }
  virtual bool kinkFloor(std::size_t k) const;
  /// Whether kink k's branch enters the mode's functions linearly, so that
  /// it may slide (runtime/Sliding.h); false by default.
  virtual bool kinkSlides(std::size_t k) const;
  /// The call, for messages and the event log: `sign(v - mass.p / m)`.
  virtual const std::string &kinkText(std::size_t k) const;
  virtual bool kinkArguments(double t, const double *x, double *c);
  virtual double branch(std::size_t k) const;
  virtual void setBranch(std::size_t k, double b);
};

/// A compiled model as the simulation sees it.
class System {
public:
  virtual ~System() = default;
  virtual const std::string &modelName() const = 0;
  /// The full state's names and the output names.
  virtual const std::vector<std::string> &stateNames() const = 0;
  virtual const std::vector<std::string> &outputNames() const = 0;
  std::size_t numOutputs() const { return outputNames().size(); }
  /// The R elements and sources whose power Mode::powers() computes, in
  /// the model's element order; none by default.
  virtual const std::vector<PowerElement> &powerElements() const;
  /// The switched junctions (none for a plain model).
  virtual const Switching &switching() const = 0;
  /// Number of values `pre(...)` holds, and sets them (every mode reads them
  /// from then on).
  virtual std::size_t numHeld() const = 0;
  virtual void setHeld(const double *values) = 0;
  /// The discrete values of sampled control (state of their own, not
  /// functions of the state), by name, with their held slots: none by
  /// default.
  virtual const std::vector<std::pair<std::string, std::uint32_t>> &discretes() const;
  /// Whether the model has discrete values.
  bool sampled() const { return !discretes().empty(); }
  /// `when edge(b)`: the held slot the run sets to 1 for a second call of
  /// the held function once an event has settled (its modes, kinks and
  /// jumps chosen), where edge-clocked discrete values update; the slot
  /// after it is then 1 or more where one did. -1: the model has no edge.
  virtual std::int64_t settleSlot() const { return -1; }
  /// The slots of the full state that are `integral(...)` signals (an
  /// angle, a running energy): none by default.
  virtual const std::vector<std::uint32_t> &integralStates() const;
  /// The mode of FSM states `q`, analysed and compiled on first use. Null
  /// when there is none: `why` then completes "entering mode M at t = T,
  /// which ..." (`cannot be analysed:` and the diagnostics).
  virtual Mode *mode(const std::vector<std::uint32_t> &q, std::string &why) = 0;
  /// The energy each slot of the full state `X` holds at time t: a storage
  /// element's (Energy.h), 0 for an integrator, NaN where the law cannot
  /// be evaluated. False when the model cannot say (the default): events
  /// then carry no energy audit.
  virtual bool storedEnergy(double t, const double *X, double *energy);
  /// A run from t0 to tEnd begins (a simulation to its end; the step API
  /// does not know its end). A compiled system weighs the cost of
  /// compiling its code against the run's length.
  virtual void runSpan(double /*t0*/, double /*tEnd*/) {}
};

/// The error for a function of `m` that failed (returned false) while
/// evaluating `what` (`guards`, `outputs`, ...): m.failure(). `evaluated`
/// names m when it is not the mode the run is in (one an event passes
/// through or enters), as the event log does.
RunError loopError(const LoopFailure &f, const Mode &m, const char *what,
                   const std::string *evaluated = nullptr);
/// Throws loopError(m.failure(), m, what, evaluated) unless `ok`.
void call(bool ok, Mode &m, const char *what, const std::string *evaluated = nullptr);

} // namespace hbg::runtime
