//===- hbg/bondgraph/BondGraph.h - The flat, checked bond graph ----------------===//
//
// What sema produces and every later stage reads: elements and bonds in
// vectors addressed by typed ids, and every expression of the model
// (source values, constitutive laws, signals, outputs) as nodes of one
// symbolic DAG. Expressions refer to model variables through symbols of kind
// Variable (a bond's effort or flow, a storage element's state, a signal, an
// integrator's state); the equations stage replaces them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/StateMachine.h"
#include "hbg/support/Source.h"
#include "hbg/symbolic/Expr.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hbg::bg {

/// A typed index into one of the bond graph's vectors.
template <typename Tag> struct Id {
  std::uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(Id a, Id b) { return a.index == b.index; }
  friend bool operator!=(Id a, Id b) { return a.index != b.index; }
};
using ElementId = Id<struct ElementTag>;
using BondId = Id<struct BondTag>;

/// Element kinds. Junctions are elements too.
enum class ElementKind { Se, Sf, MSe, MSf, C, I, R, TF, GY, MTF, MGY, Zero, One };

/// "Se", "C", "0", ... as written in .hbg files.
const char *kindName(ElementKind k);
bool isSource(ElementKind k);
bool isStorage(ElementKind k);
bool isJunction(ElementKind k);
bool isTwoPort(ElementKind k);

/// How a C, I or R element's law is given.
enum class LawForm {
  Linear,    ///< by one parameter: capacitance, inertance, resistance
  EffortLaw, ///< `e = expr` (C: of q; R: of f)
  FlowLaw,   ///< `f = expr` (I: of p; R: of e)
};

/// One element.
struct Element {
  ElementKind kind;
  std::string name;
  SourceRange range; ///< the name in the declaration
  /// Bonds in declaration order. Two-ports: [in, out].
  std::vector<BondId> bonds;
  /// Sources: the value. Linear C/I/R: the parameter. TF/GY: the modulus.
  sym::ExprId value;
  /// Nonlinear C/I/R: the law, in terms of `lawArg` (the element's own
  /// port variable or state: q for C, p for I, f or e for R).
  LawForm law = LawForm::Linear;
  sym::ExprId lawExpr;
  sym::SymbolId lawArg;
  /// Storage: the state symbol (kind Variable) and its initial value.
  sym::SymbolId state;
  sym::ExprId initial;
  /// Where the initial value was written (invalid when defaulted to 0).
  SourceRange initialRange;
  /// Storage: `nominal = ...`, the magnitude its state's absolute tolerance
  /// scales with (invalid when not given).
  sym::ExprId nominal;
  /// Switched junctions: the finite state machine.
  std::optional<Fsm> fsm;
  /// Part of a pseudo bond graph (temperature and heat flow): its effort
  /// times its flow is no power, and it stores no energy. Every element
  /// bonded, directly or through others, to a junction declared `pseudo`.
  bool pseudo = false;
};

/// One bond. Power is positive from `from` to `to`.
struct Bond {
  std::string name;
  SourceRange range;
  ElementId from, to;
  /// Variable symbols of its effort and flow.
  sym::SymbolId effort, flow;
};

/// A model parameter: a Parameter symbol (slot = its index) and its default.
struct Parameter {
  std::string name;
  SourceRange range;
  sym::SymbolId symbol;
  sym::ExprId defaultValue; ///< may use other parameters
  /// `for` loops, `if` blocks or indices were computed from it: its default is the
  /// value the model was built with, which runs cannot change.
  bool structural = false;
  /// `input u;`: set between steps (its default is its value until then).
  bool input = false;
};

/// A signal: a Variable symbol standing for its expression.
struct Signal {
  std::string name;
  SourceRange range;
  sym::SymbolId symbol;
  sym::ExprId value;
};

/// An `integral(input)` inside a signal: a state starting at 0.
struct Integrator {
  std::string name; ///< e.g. "x1.integral"
  SourceRange range;
  sym::SymbolId state;
  sym::ExprId input;
};

/// A value the run holds between events, in a parameter slot after the
/// model's parameters (slot parameters.size() + its index in `held`):
/// - `pre(expr)`: `expr` held from the a priori values of the last event
///   (the initial values before the first one);
/// - a discrete value (`discrete x(x0) when sample(T) = update;`): x0 until
///   its clock first ticks, then the update's a priori value at each tick;
/// - a clock: the number of its last tick, so that a tick is told from
///   other events;
/// - `started`: 0 until the run's first event (its start), then 1.
struct Held {
  /// Edge, Armed, Settle and Fired serve `when edge(b)`: the run calls the
  /// held function a second time once an event has settled (Settle 1),
  /// and edge-clocked discrete values update then (eq::heldUpdates).
  enum class Kind : std::uint8_t { Pre, Discrete, Clock, Started, Edge, Armed, Settle, Fired };
  Kind kind = Kind::Pre;
  std::string name;  ///< the source text of the call, e.g. "pre(ball.f)"; a discrete value's name
  SourceRange range; ///< the call; the discrete value's name
  sym::SymbolId symbol;
  /// Pre: `expr`, in the graph's Variable symbols like any signal.
  /// Discrete: its update. Clock: its phase, (time - start) / period,
  /// whose floor is the number of its last tick. Edge: the Boolean signal
  /// b of `edge(b)`, whose value when the last event settled it holds.
  sym::ExprId value;
  sym::ExprId initial;     ///< Discrete: the value before the first tick
  std::uint32_t clock = 0; ///< Discrete: the index in `held` of its clock
  /// Clock: stands for the number of the tick the clock is at, the branch
  /// of its phase's floor kink in each mode (eq::extractKinks puts it in).
  /// Edge: stands for b with the branches of its kinks in each mode.
  sym::SymbolId tick;
};

/// A recorded output.
struct Output {
  std::string name;
  SourceRange range;
  sym::ExprId value;
};

/// The model's `experiment { ... }` block: defaults of a run, which the
/// command line and the API override. Numeric settings are expressions
/// of parameters (invalid when not given); `method` is the method's name
/// ("" when not given).
struct Experiment {
#define HBG_SETTING(Id, name, field, positive) sym::ExprId field;
#include "hbg/runtime/ExperimentSettings.def"
  std::string method;
  /// Where each given setting is written, by name, for errors found when
  /// its value is known (a non-positive `dt_out`, say).
  std::vector<std::pair<std::string, SourceRange>> ranges;
};

/// A numeric setting of `experiment`: its name, where Experiment keeps it,
/// and whether it must be positive (t_start and t_end need not be).
struct ExperimentSetting {
  const char *name;
  sym::ExprId Experiment::*field;
  bool positive;
};
/// The numeric settings (`method` is the other one), in the documented order.
const std::vector<ExperimentSetting> &experimentSettings();

/// What a Variable symbol stands for.
struct VariableInfo {
  /// ActiveState: `activeState(j.s)`, 1 while switched junction `index` is
  /// in its FSM state `state`, else 0. StateIndex: `stateIndex(j)`, the
  /// number of its current state (1 for the first declared). Both are
  /// constants of a mode, which then records those junctions' FSM states
  /// (Mode::state).
  enum Kind { None, Effort, Flow, State, Signal, Integrator, ActiveState, StateIndex } kind = None;
  std::uint32_t index = 0; ///< bond, element, signal or integrator index
  std::uint32_t state = 0; ///< ActiveState: the FSM state
};

/// The flat bond graph of one model.
class BondGraph {
public:
  BondGraph() : ctx(std::make_shared<sym::ExprContext>()) {}

  std::string modelName;
  std::shared_ptr<sym::ExprContext> ctx;
  std::vector<Element> elements;
  std::vector<Bond> bonds;
  std::vector<Parameter> parameters; ///< in declaration order (slot = index)
  std::vector<Signal> signals;
  std::vector<Integrator> integrators;
  /// Every distinct `pre(expr)` (calls with the same `expr` share one), in
  /// order of first appearance.
  std::vector<Held> held;
  std::vector<Output> outputs;
  Experiment experiment;
  /// Indexed by symbol index (entries for non-Variable symbols are None).
  std::vector<VariableInfo> variables;

  const Element &element(ElementId id) const { return elements[id.index]; }
  const Bond &bond(BondId id) const { return bonds[id.index]; }
  /// The element at the other end of `b` from `e`.
  ElementId otherEnd(BondId b, ElementId e) const;
  /// +1 when `b` points at `e`, -1 when it points away.
  int sign(BondId b, ElementId e) const;
  /// What a symbol stands for (None for Time, State, Parameter).
  VariableInfo variable(sym::SymbolId s) const;
  /// The held value `s` stands for, or null when it is not one.
  const Held *heldOf(sym::SymbolId s) const;

  /// Adds an element / bond and returns its id (used by sema and by tests
  /// that build graphs by hand). Bonds register themselves on both ends and
  /// create their effort and flow symbols.
  ElementId addElement(ElementKind kind, std::string name, SourceRange range = {});
  BondId addBond(ElementId from, ElementId to, std::string name = {}, SourceRange range = {});
  /// Creates a Variable symbol and records what it stands for.
  sym::SymbolId addVariable(std::string name, VariableInfo info);

  /// Checks the structural invariants (bond ends valid and registered, two-
  /// ports ordered in/out, symbols mapped, held values in their slots after
  /// the parameters). Returns "" or a description of the first violation.
  std::string verify() const;
  /// A readable listing (`--emit=bondgraph`).
  std::string dump() const;
};

/// Every parameter's default value, by parameter index, each evaluated
/// after those it reads (NaN for a parameter on a cycle, which sema
/// rejects).
std::vector<double> defaultParameterValues(const BondGraph &g);

} // namespace hbg::bg
