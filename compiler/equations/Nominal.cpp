//===- compiler/equations/Nominal.cpp - Nominal magnitudes of states ------===//
//
// Each state's absolute tolerance scales with a nominal magnitude, so that
// a relative tolerance means the same for a 1 pF capacitor's charge and a
// vehicle's momentum. The model knows a scale before the run: the sources'
// amplitudes, the energy it starts with and the elements' parameters. This
// file derives it as an expression of parameters, so that parameter
// overrides move it too.
//
// Every state gets one. A state with no scale is controlled only relative
// to its own value, and a state that grows like t^n from zero (the far end
// of a struck chain of masses) has a relative error that does not shrink
// with the step: the step collapses at t = 0 (docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace hbg::eq {

using namespace hbg::bg;

namespace {

using Magnitude = std::optional<sym::ExprId>;

/// Whether `e` reads nothing but the model's parameters (held values are
/// parameters too, past the model's own, and change at events).
bool ofParameters(const BondGraph &g, sym::ExprId e) {
  const sym::ExprContext &ctx = *g.ctx;
  for (sym::SymbolId s : ctx.symbolsOf(e)) {
    const sym::Symbol &sy = ctx.symbol(s);
    if (sy.kind != sym::SymbolKind::Parameter || sy.slot >= g.parameters.size())
      return false;
  }
  return true;
}

/// `a` where it is positive, else `b` (both of parameters, non-negative).
sym::ExprId orElse(sym::ExprContext &ctx, sym::ExprId a, sym::ExprId b) {
  if (ctx.isConst(a))
    return ctx.node(a).value > 0 ? a : b;
  return ctx.select(a, a, b);
}

/// The larger of two optional magnitudes. A magnitude that folded to zero
/// (a wall's `Sf(0)`) says nothing and is dropped.
Magnitude larger(sym::ExprContext &ctx, Magnitude a, Magnitude b) {
  if (a && ctx.isConst(*a, 0))
    a.reset();
  if (b && ctx.isConst(*b, 0))
    b.reset();
  if (!a)
    return b;
  if (!b)
    return a;
  return ctx.max(*a, *b);
}

/// Derives the magnitudes. States' nominals are filled in as they are
/// found, so that the amplitude of a source that reads a state (a
/// controlled source, a filter written with `integral`) bounds it by the
/// state's nominal.
class Nominals {
public:
  explicit Nominals(const BondGraph &g)
      : g_(g), ctx_(*g.ctx), storage_(g.elements.size()), integrators_(g.integrators.size()) {}

  StateNominals run();
  /// Fills the nominals of the storage in the pseudo bond graph (`pseudo`)
  /// or out of it, from the scales of that part's elements.
  void scale(bool pseudo);

private:
  Magnitude amplitude(sym::ExprId e, int depth = 0);
  Magnitude amplitudeOf(sym::ExprId e, int depth);
  Magnitude variableAmplitude(sym::SymbolId s, int depth);
  /// The parameter of a C (capacitance) or I (inertance): the linear one,
  /// or a nonlinear law's slope inverted at the initial state. Nothing
  /// when it is not of parameters or the slope may be zero there.
  Magnitude linearParameter(const Element &e);

  const BondGraph &g_;
  sym::ExprContext &ctx_;
  std::vector<sym::ExprId> storage_, integrators_;
  /// Amplitudes found in this pass of scale(), by expression: a DAG that
  /// shares subexpressions (a PI's update reads its error twice) is
  /// walked once, not once per path.
  std::unordered_map<std::uint32_t, Magnitude> memo_;
  /// The held values whose amplitude is being found: a discrete value
  /// whose update reads itself (an integrator's sum) has none.
  std::vector<std::uint32_t> visiting_;
};

/// An expression of parameters bounding |e| for every time, or nothing
/// when e grows with time or reads what has no magnitude yet (a bond's
/// effort or flow, a state whose nominal is not known). Deep expressions
/// give up rather than recurse without bound.
Magnitude Nominals::amplitude(sym::ExprId e, int depth) {
  if (depth > 64)
    return std::nullopt;
  auto known = memo_.find(e.index);
  if (known != memo_.end())
    return known->second;
  Magnitude m = amplitudeOf(e, depth);
  memo_[e.index] = m;
  return m;
}

Magnitude Nominals::amplitudeOf(sym::ExprId e, int depth) {
  if (ofParameters(g_, e))
    return ctx_.unary(sym::Op::Abs, e);
  // A copy: building the amplitudes below adds nodes, which may move the
  // node array.
  const sym::Node n = ctx_.node(e);
  auto sub = [&](sym::ExprId a) { return amplitude(a, depth + 1); };
  switch (n.op) {
  case sym::Op::Symbol:
    return variableAmplitude(n.symbol, depth + 1);
  case sym::Op::Sin:
  case sym::Op::Cos:
  case sym::Op::Tanh:
  case sym::Op::Sign:
    return ctx_.constant(1);
  case sym::Op::Neg:
  case sym::Op::Abs:
    return sub(n.lhs);
  case sym::Op::Sqrt: {
    Magnitude a = sub(n.lhs);
    return a ? Magnitude(ctx_.unary(sym::Op::Sqrt, *a)) : std::nullopt;
  }
  case sym::Op::Floor: {
    Magnitude a = sub(n.lhs);
    return a ? Magnitude(ctx_.add(*a, ctx_.constant(1))) : std::nullopt;
  }
  case sym::Op::Add:
  case sym::Op::Sub:
  case sym::Op::Mul:
  case sym::Op::Min:
  case sym::Op::Max: {
    Magnitude a = sub(n.lhs), b = sub(n.rhs);
    if (!a || !b)
      return std::nullopt;
    if (n.op == sym::Op::Mul)
      return ctx_.mul(*a, *b);
    if (n.op == sym::Op::Min || n.op == sym::Op::Max)
      return ctx_.max(*a, *b);
    return ctx_.add(*a, *b);
  }
  case sym::Op::Div: {
    Magnitude a = sub(n.lhs);
    if (!a || !ofParameters(g_, n.rhs))
      return std::nullopt;
    return ctx_.div(*a, ctx_.unary(sym::Op::Abs, n.rhs));
  }
  case sym::Op::Select: {
    Magnitude a = sub(n.rhs), b = sub(n.third);
    if (!a || !b)
      return std::nullopt;
    return ctx_.max(*a, *b);
  }
  default:
    return std::nullopt; // exp, log and powers of what changes
  }
}

Magnitude Nominals::variableAmplitude(sym::SymbolId s, int depth) {
  VariableInfo v = g_.variable(s);
  switch (v.kind) {
  case VariableInfo::Signal:
    return amplitude(g_.signals[v.index].value, depth);
  case VariableInfo::Integrator:
    if (integrators_[v.index].valid())
      return integrators_[v.index];
    return std::nullopt;
  case VariableInfo::State:
    if (storage_[v.index].valid())
      return storage_[v.index];
    return std::nullopt;
  case VariableInfo::ActiveState:
    return ctx_.constant(1);
  case VariableInfo::StateIndex:
    return ctx_.constant(static_cast<double>(g_.elements[v.index].fsm->states.size()));
  default:
    break;
  }
  if (const Held *h = g_.heldOf(s)) {
    if (std::find(visiting_.begin(), visiting_.end(), s.index) != visiting_.end())
      return std::nullopt;
    visiting_.push_back(s.index);
    Magnitude m = amplitude(h->value, depth);
    visiting_.pop_back();
    return m;
  }
  return std::nullopt; // time, a bond's effort or flow
}

Magnitude Nominals::linearParameter(const Element &e) {
  if (e.law == LawForm::Linear)
    return ofParameters(g_, e.value) ? Magnitude(ctx_.unary(sym::Op::Abs, e.value))
                                     : std::nullopt;
  // e = phi(q) or f = psi(p): near the initial state the element acts as
  // one of parameter 1 / |phi'(x0)|.
  if (!e.lawExpr.valid() || !e.lawArg.valid())
    return std::nullopt;
  sym::ExprId slope = ctx_.derivative(e.lawExpr, e.lawArg);
  sym::ExprId x0 = e.initial.valid() ? e.initial : ctx_.constant(0);
  slope = ctx_.unary(sym::Op::Abs, ctx_.substitute(slope, {{e.lawArg.index, x0}}));
  if (!ofParameters(g_, slope) || ctx_.isConst(slope, 0))
    return std::nullopt;
  if (ctx_.isConst(slope))
    return ctx_.constant(1 / ctx_.node(slope).value);
  // A slope of zero at x0 (a cubic spring at rest) gives no parameter;
  // 0 here is "none" to orElse below.
  return ctx_.select(slope, ctx_.div(ctx_.constant(1), slope), ctx_.constant(0));
}

void Nominals::scale(bool pseudo) {
  memo_.clear();
  // The energy the model starts with, in its linear storage. Without
  // sources it bounds every state for all time; with them it is one more
  // floor.
  Magnitude energy;
  for (const Element &e : g_.elements) {
    if (e.pseudo != pseudo || !isStorage(e.kind) || e.law != LawForm::Linear || !e.initial.valid() ||
        !ofParameters(g_, e.value) || !ofParameters(g_, e.initial))
      continue;
    // q0^2 / (2 C), p0^2 / (2 I)
    sym::ExprId w = ctx_.div(ctx_.mul(e.initial, e.initial),
                             ctx_.mul(ctx_.constant(2), ctx_.unary(sym::Op::Abs, e.value)));
    if (!ctx_.isConst(w, 0))
      energy = energy ? ctx_.add(*energy, w) : w;
  }

  // The effort and flow scales: the largest amplitudes of the sources, and
  // the resistances that turn one into the other.
  Magnitude effort, flow, rMin, rMax;
  for (const Element &e : g_.elements) {
    if (e.pseudo != pseudo)
      continue;
    switch (e.kind) {
    case ElementKind::Se:
    case ElementKind::MSe:
      effort = larger(ctx_, effort, amplitude(e.value));
      break;
    case ElementKind::Sf:
    case ElementKind::MSf:
      flow = larger(ctx_, flow, amplitude(e.value));
      break;
    case ElementKind::R:
      if (e.law == LawForm::Linear && ofParameters(g_, e.value)) {
        sym::ExprId r = ctx_.unary(sym::Op::Abs, e.value);
        rMin = rMin ? ctx_.min(*rMin, r) : r;
        rMax = rMax ? ctx_.max(*rMax, r) : r;
      }
      break;
    default:
      break;
    }
  }
  // A flow scale from the effort scale through the largest resistance (the
  // smallest current it drives), and dually. Where both scales are
  // expressions, one of them may still be zero for some parameters.
  Magnitude effortScale = effort, flowScale = flow;
  if (effort && rMax)
    flowScale = flow ? orElse(ctx_, *flow, ctx_.div(*effort, *rMax)) : ctx_.div(*effort, *rMax);
  if (flow && rMin)
    effortScale = effort ? orElse(ctx_, *effort, ctx_.mul(*flow, *rMin)) : ctx_.mul(*flow, *rMin);

  sym::ExprId fraction = ctx_.constant(kDerivedNominalFraction);
  sym::ExprId fallback = ctx_.constant(kDefaultNominal);
  for (std::size_t i = 0; i < g_.elements.size(); ++i) {
    const Element &e = g_.elements[i];
    if (e.pseudo != pseudo || !isStorage(e.kind) || storage_[i].valid())
      continue;
    Magnitude parameter = linearParameter(e);
    Magnitude derived;
    if (parameter) {
      Magnitude scale = e.kind == ElementKind::C ? effortScale : flowScale;
      if (scale)
        derived = ctx_.mul(*parameter, *scale);
      // |q| <= sqrt(2 C W) while the stored energy stays below W.
      if (energy && e.law == LawForm::Linear)
        derived = larger(ctx_, derived,
                         ctx_.unary(sym::Op::Sqrt,
                                    ctx_.mul(ctx_.constant(2), ctx_.mul(*parameter, *energy))));
    }
    storage_[i] = derived ? orElse(ctx_, ctx_.mul(fraction, *derived), fallback) : fallback;
  }
}

StateNominals Nominals::run() {
  // Integrals of signals first: nothing in the model bounds them but the
  // unit default, and sources may read them (a filter driving an MSe).
  for (std::size_t i = 0; i < g_.integrators.size(); ++i)
    integrators_[i] = ctx_.constant(kDefaultNominal);

  // Explicit nominals are known before any source is looked at.
  for (std::size_t i = 0; i < g_.elements.size(); ++i)
    if (isStorage(g_.elements[i].kind) && g_.elements[i].nominal.valid())
      storage_[i] = ctx_.unary(sym::Op::Abs, g_.elements[i].nominal);
  // A pseudo bond graph (temperatures and heat flows) has scales of its
  // own: a 300 K ambient is no 300 V source, and a heat capacitor's U^2 /
  // 2C no stored energy for a coil's current to be bounded by.
  scale(false);
  scale(true);
  return {std::move(storage_), std::move(integrators_)};
}

} // namespace

StateNominals stateNominals(const BondGraph &g) { return Nominals(g).run(); }

} // namespace hbg::eq
