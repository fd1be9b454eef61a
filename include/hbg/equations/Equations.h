//===- hbg/equations/Equations.h - State equations from a causal graph ----===//
//
// Given the causality of every bond, each bond's effort and flow follow from
// the element that sets them: sources give their value, storage its
// constitutive law of the state, R its law of the other variable, junctions
// their balance, TF and GY their ratios. Resolving these recursively yields
// the state derivatives and outputs as expressions of time, states and
// parameters only; shared subexpressions come out shared in the DAG.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/equations/Options.h"

#include "hbg/causality/Causality.h"
#include "hbg/runtime/Integrator.h"
#include "hbg/bondgraph/BondGraph.h"
#include "hbg/support/Diagnostics.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hbg::eq {

/// A continuous state: x[slot] with its initial value and derivative.
struct State {
  std::string name;        ///< "capacitor.q", "x1.integral"
  sym::SymbolId symbol;    ///< kind State, slot = index in `states`
  sym::ExprId initial;     ///< of parameters only
  sym::ExprId derivative;  ///< of time, states and parameters
  /// Of parameters only: the magnitude its absolute tolerance scales with
  /// (stateNominals).
  sym::ExprId nominal;
};

/// A model parameter: p[slot] and its default (of other parameters).
struct Parameter {
  std::string name;
  sym::SymbolId symbol;
  sym::ExprId defaultValue;
  bool structural = false; ///< bg::Parameter::structural
  bool input = false;      ///< bg::Parameter::input
};

/// A recorded output.
struct Output {
  std::string name;
  sym::ExprId value;
};

/// The power port of an R element or a source (Se, Sf, MSe, MSf): the
/// power at its one bond, e * f of that bond times `sign`, is the power
/// dissipated in an R element and the power a source delivers into the
/// model.
struct PowerPort {
  std::string name; ///< the element's path: "load.r", "supply.s"
  std::string kind; ///< "R", "Se", "Sf", "MSe", "MSf"
  std::uint32_t bond = 0;
  double sign = 1;
};

/// A storage element in derivative causality: no state of its own, its
/// energy variable follows from the independent states and sources.
struct DependentState {
  std::string name;   ///< "c2.q"
  /// Of time, states and parameters; a nonlinear law's Newton unknown.
  sym::ExprId value;
  /// How an impulse into this element moves the independent states: entry
  /// i is d(dx_i/dt) / d(rate of this element's stored quantity), of time,
  /// states and parameters. Conservation of state at a mode change:
  /// x+ - x- = sum over dependent k of impulse_k (d_k+ - d_k-).
  std::vector<sym::ExprId> impulse;
};

/// An algebraic loop: the equations closing on a set of tearing variables.
struct AlgebraicLoop {
  /// Elements and bonds on the loop, as text: `r1 -b3- 1:j -b4- r2`.
  std::string path;
  /// Tearing variables by name ("r2.f", "c2.f").
  std::vector<std::string> tearing;
  /// Linear loops: each tearing variable's solved expression.
  std::vector<sym::ExprId> solution;
  bool linear = true;
  /// Linear: solved in closed form (true) or by a generated LU.
  bool closedForm = true;
  /// Solved at run time (nonlinear loops, and linear ones too large for a
  /// generated solution): the unknowns' indices in EquationSystem::unknowns.
  std::vector<std::uint32_t> unknowns;
};


/// An algebraic unknown solved by Newton's method at run time.
struct Unknown {
  std::string name;
  sym::SymbolId symbol; ///< kind Algebraic, slot = number of states + index
};

/// A kink: `sign`, `abs`, `min` or `max` of values that change in time.
/// Its branch is a value b in {-1, 0, 1} held fixed between events, like a
/// held value: `sign(c)` is b, `abs(c)` is b c, `min(u, v)` is u where b is
/// 1 (c = v - u) and v where b is -1, `max` likewise with c = u - v; b = 0
/// (c held at zero) gives 0, 0 and the mean. The runtime sets b from the
/// sign of c at every event and makes a crossing of c an event, so no step
/// integrates across a kink (Modelica's event-generating functions).
struct Kink {
  /// The call, resolved in this mode: `sign(v - mass.p / m)`.
  std::string text;
  /// c: positive where b = 1 is the branch taken.
  sym::ExprId argument;
  /// b: a Parameter symbol after the parameters and held values.
  sym::SymbolId branch;
  /// A `floor` kink: b is the integer floor(c) instead of c's sign, and the
  /// event comes where c leaves [b, b + 1).
  bool floor = false;
  /// b enters every expression linearly (`sign` as a value, `abs` as b c),
  /// so a value between -1 and 1 is the Filippov combination of the two
  /// branches: the kink may slide. Not for `min`, `max` or a `sign` that
  /// picks an `if`'s branch.
  bool linear = true;
};

/// The model as an ODE system dx/dt = f(t, x, p), y = g(t, x, p).
struct EquationSystem {
  std::shared_ptr<sym::ExprContext> ctx;
  std::string modelName;
  std::vector<Parameter> parameters;
  /// The model's run defaults (expressions of the parameters).
  bg::Experiment experiment;
  /// How many `pre(...)` values (bg::BondGraph::held) follow the parameters:
  /// Parameter symbols with slots from parameters.size() up to
  /// parameters.size() + numHeld are held values, which the runtime passes
  /// after the parameters.
  std::size_t numHeld = 0;
  std::vector<State> states;
  std::vector<Output> outputs;
  std::vector<DependentState> dependent;
  std::vector<AlgebraicLoop> loops;
  /// Loops solved at run time (nonlinear loops, and linear ones above
  /// kRunTimeLoopMin tearing variables): unknowns, residuals r(t, x, z) = 0
  /// and the Jacobian dr/dz, all solved together. The Jacobian is sparse:
  /// its values over jacobianPattern (compressed columns, column k for
  /// unknown k, rows ascending).
  std::vector<Unknown> unknowns;
  std::vector<sym::ExprId> residuals;
  runtime::SparsePattern jacobianPattern;
  std::vector<sym::ExprId> jacobian;
  /// Every loop solved at run time is linear: Newton's first full step
  /// solves it (runtime::NewtonOptions::linear).
  bool loopsLinear() const;
  /// Switched models: every guard comparison of every transition (in
  /// guardComparisons order) as two entries, its left and right side,
  /// resolved in this mode.
  std::vector<sym::ExprId> guards;
  /// The impulse each guard side carries when the state jumps into this
  /// mode: entry (side s, dependent k), row-major guards.size() by
  /// dependent.size(), is the side's Dirac strength per unit jump of
  /// dependent storage k's stored quantity (d side / d rate of it, through
  /// the junction structure), of time, states and parameters. Empty when
  /// the mode has no dependent storage or no guards.
  std::vector<sym::ExprId> guardImpulse;
  /// Each held value of the graph (bg::BondGraph::held order), resolved in
  /// this mode: its new value at an event, from the a priori values (and
  /// the held values before it). `pre(expr)`: `expr`; a discrete value:
  /// its update where its clock has ticked, else its value; a clock: the
  /// number of its last tick (heldUpdates in Sampled.cpp).
  std::vector<sym::ExprId> heldValues;
  /// Each clock: its phase, (time - start) / period, is a floor kink of
  /// every mode, so that steps end on its ticks, named after the clock;
  /// its `tick` symbol in heldValues stands for that kink's branch.
  struct Clock {
    std::string name;
    sym::ExprId phase;
    sym::SymbolId tick;
  };
  std::vector<Clock> clocks;
  /// Each `edge(b)`: b, whose kinks are kinks of every mode (so that the
  /// event locator finds where b jumps); its `value` symbol in heldValues
  /// stands for b with those kinks' branches.
  struct Edge {
    sym::ExprId b;
    sym::SymbolId value;
  };
  std::vector<Edge> edges;
  /// The kinks of the right-hand side, outputs, loops and dependent
  /// storage (not of guards, which are judged exactly): their branches
  /// follow the held values in the parameter array.
  std::vector<Kink> kinks;
  /// Every bond's effort and flow (for `explain`), by bond index.
  std::vector<std::string> bondNames;
  std::vector<sym::ExprId> bondEffort, bondFlow;
  /// Every R element and source of the graph, in element order: the same
  /// in every mode (an element a mode switches off has power 0 there).
  std::vector<PowerPort> powerPorts;
  /// The work each power port does through a jump into this mode, per
  /// unit jump of each dependent storage's stored quantity (row-major:
  /// port x dependent): a source's finite effort (flow) times the Dirac
  /// strength of its flow (effort); 0 for R elements. Of time, states
  /// and parameters; empty when the mode has no dependent storage.
  std::vector<sym::ExprId> sourceWork;

  /// Parameter indices in an order where each default uses only earlier ones.
  std::vector<std::uint32_t> parameterOrder() const;
  /// Checks that every expression uses only Time, State, Algebraic and
  /// Parameter symbols with slots in range. Returns "" or the first violation.
  std::string verify() const;
  /// The equations as text (`--emit=equations`, `hbgc explain`).
  std::string dump() const;
};

/// Every comparison of every switched junction's transitions, in element,
/// transition and depth-first order: the order of EquationSystem::guards.
std::vector<const bg::Guard *> guardComparisons(const bg::BondGraph &g);
/// The comparisons of one guard, in depth-first order (a run of the above).
std::vector<const bg::Guard *> guardComparisons(const bg::Guard &guard);

/// The nominal magnitude of every state, as an expression of parameters
/// that is positive whatever their values: each storage element's energy
/// variable (by element index; invalid for other elements) and each
/// integrator's state (by integrator index). docs/numerics.md gives the
/// rules: a `nominal` attribute where the model gives one; else the larger
/// of a magnitude from the sources' amplitudes (an element's capacitance or
/// inertance times the effort or flow scale) and one from the energy the
/// model starts with, each times kDerivedNominalFraction; else
/// kDefaultNominal. Amplitudes bound a source over all time (|sin| <= 1);
/// a source that reads states bounds each state by its nominal.
struct StateNominals {
  std::vector<sym::ExprId> storage;
  std::vector<sym::ExprId> integrators;
};
StateNominals stateNominals(const bg::BondGraph &g);
/// A magnitude derived from sources is where a state may go, not where it
/// must: a capacitor behind a divider sees a fraction of the source. The
/// derived nominal is therefore this fraction of it, a floor that running
/// maxima raise.
inline constexpr double kDerivedNominalFraction = 1e-3;
/// The nominal of a state nothing in the model gives a magnitude to (an
/// integral of a signal, storage with no source and no initial energy),
/// in its own unit, as Modelica tools default a variable's nominal to 1.
inline constexpr double kDefaultNominal = 1;

/// Builds the state equations. Algebraic loops close on tearing variables:
/// the inputs of R elements SCAP gave a causality by choice, the outputs of
/// storage in derivative causality, and any variable a modulated element
/// feeds back to itself. Linear loops are solved symbolically; nonlinear ones
/// become residuals for Newton's method. Singular loops, non-differentiable
/// sources driving dependent storage and the like are reported to `diags`;
/// the result is then empty.
///
/// In `mode` (which must be the mode `ca` was assigned in), an OFF 0-junction's
/// effort on each of its bonds is the constant 0 and an OFF 1-junction's flow
/// is 0; the other variable of each such bond comes from its other end. The
/// junction's own balance is not enforced while it is OFF.
std::optional<EquationSystem> buildEquations(const bg::BondGraph &g,
                                             const causality::CausalAssignment &ca,
                                             const bg::Mode &mode, DiagnosticEngine &diags,
                                             const EquationOptions &opts = {});
/// Replaces every kink of `sys` whose argument changes in time (not only
/// with parameters and held values) by its branch (see Kink), filling
/// `sys.kinks`. Calls sharing an argument share a branch: abs(c) and the
/// sign(c) of its derivative, min(u, v) and max(v, u). Select conditions
/// (pivoting in generated linear solves) are left as they are.
void extractKinks(EquationSystem &sys);
/// Each held value's new value at an event (EquationSystem::heldValues),
/// from `resolved`, each held value's bg::Held::value resolved in a mode.
std::vector<sym::ExprId> heldUpdates(const bg::BondGraph &g, sym::ExprContext &ctx,
                                     const std::vector<sym::ExprId> &resolved);

/// The derivatives of a mode's right-hand side f(t, x, z), where z are
/// the Newton unknowns of its nonlinear loops (residuals r(t, x, z) = 0),
/// as sparse entries: only the derivatives by symbols an expression reads,
/// and not those that simplify to zero. The Jacobian of the states'
/// derivatives is fx + fz dz/dx with dz/dx = -(dr/dz)^-1 rx, and their
/// time derivative dfdt + fz dz/dt with dz/dt = -(dr/dz)^-1 drdt; dr/dz
/// is EquationSystem::jacobian.
struct StateJacobian {
  struct Entry {
    std::uint32_t row, col;
    sym::ExprId value;
  };
  /// d f_row / d x_col, d f_row / d z_col, d r_row / d x_col.
  std::vector<Entry> fx, fz, rx;
  /// d f_i / dt and d r_k / dt, partial (states and unknowns held).
  std::vector<sym::ExprId> dfdt, drdt;
};
StateJacobian stateJacobian(const EquationSystem &sys);

/// A linear model dx/dt = A x + B u, y = C x + D u of the equations of
/// one mode about an operating point, from their symbolic derivatives.
/// Inputs are the sources' values (an effort source's effort, a flow
/// source's flow, modulated or not), perturbed additively; outputs the
/// model's outputs. Matrices are row-major.
struct StateSpace {
  std::vector<std::string> states, inputs, outputs;
  std::vector<double> a, b, c, d;
  /// The eigenvalues of A, real and imaginary parts, sorted by real part
  /// then imaginary part.
  std::vector<double> eigenRe, eigenIm;
};

/// Linearises `g` in `mode` at time t, with parameter values `params`
/// (by parameter index) and state values `stateValue(name)` (held values
/// `pre(...)` at 0). Nonlinear loops are solved there by Newton's method
/// (from zero, as Model::rhs does) and differentiated implicitly. Empty,
/// with the reason in `why` (a Linearize* kind at t in the mode), when
/// the mode has no causal assignment or equations, a loop has no solution
/// or a singular Jacobian there, or the state matrix is not finite.
/// Diagnostics of the mode go to `diags`.
std::optional<StateSpace> linearize(const bg::BondGraph &g, const bg::Mode &mode,
                                    const std::vector<double> &params, double t,
                                    const std::function<double(const std::string &)> &stateValue,
                                    DiagnosticEngine &diags, std::optional<RunDiagnostic> &why);

/// buildEquations in the mode `ca` was assigned in.
std::optional<EquationSystem> buildEquations(const bg::BondGraph &g,
                                             const causality::CausalAssignment &ca,
                                             DiagnosticEngine &diags,
                                             const EquationOptions &opts = {});

} // namespace hbg::eq
