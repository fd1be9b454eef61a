//===- compiler/equations/Equations.cpp - State equations -----------------===//
//
// Resolves every bond variable along its causal definition, tearing the
// algebraic loops on the way (see Loops.h), then closes the loops and
// substitutes their solutions everywhere.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include "hbg/bondgraph/Path.h"

#include "Loops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace hbg::eq {

using namespace hbg::bg;
using causality::CausalAssignment;

namespace {

/// Whether `e` reads nothing but time and parameters (held values
/// included: they are constant between events).
bool ofTimeAndParameters(const sym::ExprContext &ctx, sym::ExprId e) {
  for (sym::SymbolId s : ctx.symbolsOf(e)) {
    sym::SymbolKind k = ctx.symbol(s).kind;
    if (k != sym::SymbolKind::Time && k != sym::SymbolKind::Parameter)
      return false;
  }
  return true;
}

/// A non-smooth function of time inside `e` whose switching argument also
/// reads what changes with the solution (states, a loop's unknowns), and
/// which then has no time derivative at its switching, or an invalid id.
/// A piecewise function of time and parameters alone (`if time < 1`,
/// `step`, `pulse`, `floor(f * time)`) is differentiated branch by branch:
/// its branches switch at time events, where dependent storage it drives
/// jumps by the exact remap.
sym::ExprId nonSmoothInTime(const sym::ExprContext &ctx, sym::ExprId e) {
  std::vector<sym::ExprId> todo{e};
  std::unordered_set<std::uint32_t> seen;
  while (!todo.empty()) {
    sym::ExprId id = todo.back();
    todo.pop_back();
    if (!seen.insert(id.index).second)
      continue;
    const sym::Node &n = ctx.node(id);
    bool nonSmooth = n.op == sym::Op::Sign || n.op == sym::Op::Floor || n.op == sym::Op::Abs ||
                     n.op == sym::Op::Min ||
                     n.op == sym::Op::Max || n.op == sym::Op::Select;
    if (nonSmooth && ctx.dependsOn(id, ctx.timeSymbol())) {
      // What decides the branch: a select's condition, the operands of
      // the others.
      bool piecewiseInTime =
          ofTimeAndParameters(ctx, n.lhs) &&
          (n.op == sym::Op::Select || !(n.op == sym::Op::Min || n.op == sym::Op::Max) ||
           ofTimeAndParameters(ctx, n.rhs));
      if (!piecewiseInTime)
        return id;
    }
    sym::forEachOperand(n, [&todo](sym::ExprId o) { todo.push_back(o); });
  }
  return {};
}

/// True when `part` is a subexpression of `e` (expressions are hash-consed).
bool contains(const sym::ExprContext &ctx, sym::ExprId e, sym::ExprId part) {
  std::vector<sym::ExprId> todo{e};
  std::unordered_set<std::uint32_t> seen;
  while (!todo.empty()) {
    sym::ExprId id = todo.back();
    todo.pop_back();
    if (id.index == part.index)
      return true;
    if (!seen.insert(id.index).second)
      continue;
    sym::forEachOperand(ctx.node(id), [&todo](sym::ExprId o) { todo.push_back(o); });
  }
  return false;
}

/// Resolves Variable symbols into expressions of time, states, parameters
/// and tearing variables, memoised per symbol. Recursion follows the causal
/// order, so its depth is the longest causal path, not the model size.
class Resolver {
public:
  Resolver(const BondGraph &g, const CausalAssignment &ca, const Mode &mode,
           sym::ExprContext &ctx)
      : g_(g), ca_(ca), mode_(mode), ctx_(ctx) {}

  /// Replaces every Variable symbol in `e` by its resolution.
  sym::ExprId resolve(sym::ExprId e);
  sym::ExprId variable(sym::SymbolId s) { return resolveSymbol(s); }
  sym::ExprId effort(BondId b) { return resolveSymbol(g_.bond(b).effort); }
  sym::ExprId flow(BondId b) { return resolveSymbol(g_.bond(b).flow); }
  /// The causal definition of a bond variable, bypassing the memo (for
  /// closing a loop on a variable that was torn).
  sym::ExprId defineEffort(BondId b) { return computeEffort(b, effortSetter(b)); }
  sym::ExprId defineFlow(BondId b) { return computeFlow(b, g_.otherEnd(b, effortSetter(b))); }
  /// Binds a variable (storage state, integrator) to a fixed expression.
  void bind(sym::SymbolId variable, sym::ExprId value) { memo(variable) = value; }
  /// Replaces `variable` by a new tearing variable; the caller adds the
  /// residual that closes the loop.
  sym::ExprId tear(sym::SymbolId variable, const std::string &name) {
    sym::SymbolId z = ctx_.addSymbol(name, sym::SymbolKind::Variable, 0);
    memo(variable) = ctx_.ref(z);
    markTearing(z);
    return ctx_.ref(z);
  }
  /// Loops found as cycles during resolution (a modulated element fed by a
  /// variable it sets), torn where the cycle closed.
  std::vector<TornVariable> &cycles() { return cycles_; }
  sym::ExprId applyLaw(const Element &e, sym::ExprId arg) {
    return resolve(ctx_.substitute(e.lawExpr, {{e.lawArg.index, arg}}));
  }
  sym::ExprId sign(BondId b, ElementId e, sym::ExprId x) {
    return g_.sign(b, e) > 0 ? x : ctx_.neg(x);
  }

private:
  sym::ExprId resolveSymbol(sym::SymbolId s);
  sym::ExprId computeEffort(BondId b, ElementId setter);
  sym::ExprId computeFlow(BondId b, ElementId setter);
  ElementId effortSetter(BondId b) const {
    const Bond &bd = g_.bond(b);
    return ca_.setsEffort(g_, b, bd.from) ? bd.from : bd.to;
  }
  /// What a variable is called in messages: bond variables by the one-port
  /// element they belong to where there is one (`source.f`, not `b1.f`).
  std::string displayName(sym::SymbolId s) const;

  const BondGraph &g_;
  const CausalAssignment &ca_;
  Mode mode_;
  sym::ExprContext &ctx_;
  /// The resolution of a symbol, by its index.
  sym::ExprId &memo(sym::SymbolId s) {
    if (memo_.size() <= s.index)
      memo_.resize(ctx_.numSymbols());
    return memo_[s.index];
  }
  /// Marks `z` as a tearing variable, which resolution leaves as it is.
  void markTearing(sym::SymbolId z) {
    if (tearing_.size() <= z.index)
      tearing_.resize(ctx_.numSymbols());
    tearing_[z.index] = true;
  }
  bool isTearing(sym::SymbolId s) const { return s.index < tearing_.size() && tearing_[s.index]; }

  /// Resolutions by symbol index (invalid: not resolved yet), grown as
  /// symbols are added.
  std::vector<sym::ExprId> memo_;
  std::vector<std::uint32_t> stack_; ///< symbols being resolved
  std::unordered_map<std::uint32_t, sym::SymbolId> cycleTear_;
  /// Whether a symbol is a tearing variable, by symbol index.
  std::vector<bool> tearing_;
  std::vector<TornVariable> cycles_;
};

std::string Resolver::displayName(sym::SymbolId s) const {
  VariableInfo info = g_.variable(s);
  if (info.kind == VariableInfo::Effort || info.kind == VariableInfo::Flow) {
    const Bond &b = g_.bonds[info.index];
    for (ElementId end : {b.from, b.to}) {
      const Element &e = g_.element(end);
      if (!isJunction(e.kind) && !isTwoPort(e.kind))
        return e.name + (info.kind == VariableInfo::Effort ? ".e" : ".f");
    }
  }
  return ctx_.symbol(s).name;
}

sym::ExprId Resolver::resolve(sym::ExprId e) {
  if (!e.valid())
    return e;
  // Most values are a number or a single name (a parameter, a bond's
  // variable): resolved without walking the expression.
  const sym::Node &n = ctx_.node(e);
  if (n.op == sym::Op::Const)
    return e;
  if (n.op == sym::Op::Symbol) {
    sym::SymbolId s = n.symbol;
    return ctx_.symbol(s).kind == sym::SymbolKind::Variable && !isTearing(s) ? resolveSymbol(s) : e;
  }
  std::unordered_map<std::uint32_t, sym::ExprId> map;
  for (sym::SymbolId s : ctx_.symbolsOf(e))
    if (ctx_.symbol(s).kind == sym::SymbolKind::Variable && !isTearing(s))
      map[s.index] = resolveSymbol(s);
  return map.empty() ? e : ctx_.substitute(e, map);
}

sym::ExprId Resolver::resolveSymbol(sym::SymbolId s) {
  if (s.index < memo_.size() && memo_[s.index].valid())
    return memo_[s.index];
  auto onStack = std::find(stack_.begin(), stack_.end(), s.index);
  if (onStack != stack_.end()) {
    // The variable depends on itself: tear it here. Its definition, still
    // being computed further up, will close the loop.
    auto torn = cycleTear_.find(s.index);
    if (torn == cycleTear_.end()) {
      sym::SymbolId z = ctx_.addSymbol(displayName(s), sym::SymbolKind::Variable, 0);
      markTearing(z);
      torn = cycleTear_.emplace(s.index, z).first;
      std::string path;
      for (auto p = onStack; p != stack_.end(); ++p)
        path += displayName(sym::SymbolId{*p}) + " -> ";
      path += displayName(s);
      VariableInfo info = g_.variable(s);
      SourceRange at;
      if (info.kind == VariableInfo::Signal)
        at = g_.signals[info.index].range;
      else if (info.kind == VariableInfo::Effort || info.kind == VariableInfo::Flow)
        at = g_.bonds[info.index].range;
      cycles_.push_back({displayName(s), z, {}, path, at});
    }
    return ctx_.ref(torn->second);
  }
  stack_.push_back(s.index);
  VariableInfo info = g_.variable(s);
  sym::ExprId r;
  switch (info.kind) {
  case VariableInfo::Effort:
    r = defineEffort(BondId{info.index});
    break;
  case VariableInfo::Flow:
    r = defineFlow(BondId{info.index});
    break;
  case VariableInfo::Signal:
    r = resolve(g_.signals[info.index].value);
    break;
  case VariableInfo::ActiveState:
  case VariableInfo::StateIndex: {
    // Constants of the mode, which records the junction's FSM state.
    std::uint32_t st = mode_.stateOf(ElementId{info.index});
    if (st == Mode::kNoState)
      throw InternalError("mode without the FSM state of `" + g_.elements[info.index].name + "`");
    r = ctx_.constant(info.kind == VariableInfo::StateIndex ? double(st) + 1
                      : st == info.state                   ? 1.0
                                                           : 0.0);
    break;
  }
  case VariableInfo::State:
  case VariableInfo::Integrator:
  case VariableInfo::None:
    throw InternalError("unbound variable `" + ctx_.symbol(s).name + "`");
  }
  stack_.pop_back();
  auto torn = cycleTear_.find(s.index);
  if (torn != cycleTear_.end()) {
    // Close the cycle: z = definition(z).
    for (TornVariable &t : cycles_)
      if (t.symbol == torn->second)
        t.residual = ctx_.sub(ctx_.ref(torn->second), r);
    r = ctx_.ref(torn->second);
  }
  memo(s) = r;
  return r;
}

sym::ExprId Resolver::computeEffort(BondId b, ElementId setter) {
  const Element &e = g_.element(setter);
  switch (e.kind) {
  case ElementKind::Se:
  case ElementKind::MSe:
    return resolve(e.value);
  case ElementKind::C:
    if (e.law == LawForm::EffortLaw)
      return resolve(e.lawExpr);
    return ctx_.div(resolveSymbol(e.state), resolve(e.value));
  case ElementKind::R: {
    sym::ExprId inflow = sign(b, setter, flow(b));
    if (e.law == LawForm::EffortLaw)
      return applyLaw(e, inflow);
    return ctx_.mul(resolve(e.value), inflow);
  }
  case ElementKind::TF:
  case ElementKind::MTF: {
    sym::ExprId n = resolve(e.value);
    if (b == e.bonds[1]) // e2 = e1 / n
      return ctx_.div(effort(e.bonds[0]), n);
    return ctx_.mul(n, effort(e.bonds[1])); // e1 = n e2
  }
  case ElementKind::GY:
  case ElementKind::MGY: {
    sym::ExprId r = resolve(e.value);
    BondId other = b == e.bonds[0] ? e.bonds[1] : e.bonds[0];
    return ctx_.mul(r, flow(other)); // e1 = r f2, e2 = r f1
  }
  case ElementKind::Zero:
    if (ca_.imposesZero(setter)) // an OFF 0-junction imposes zero effort
      return ctx_.constant(0);
    for (BondId k : e.bonds)
      if (!ca_.setsEffort(g_, k, setter))
        return effort(k);
    break;
  case ElementKind::One: {
    // sum of s_i e_i = 0 over the junction's bonds, solved for e_b.
    sym::ExprId sum = ctx_.constant(0);
    for (BondId k : e.bonds)
      if (k != b)
        sum = g_.sign(k, setter) > 0 ? ctx_.add(sum, effort(k)) : ctx_.sub(sum, effort(k));
    return g_.sign(b, setter) > 0 ? ctx_.neg(sum) : sum;
  }
  case ElementKind::Sf:
  case ElementKind::MSf:
  case ElementKind::I: // in derivative causality: torn before resolution
    break;
  }
  throw InternalError(std::string(kindName(e.kind)) + " `" + e.name + "` cannot set an effort");
}

sym::ExprId Resolver::computeFlow(BondId b, ElementId setter) {
  const Element &e = g_.element(setter);
  switch (e.kind) {
  case ElementKind::Sf:
  case ElementKind::MSf:
    return resolve(e.value);
  case ElementKind::I: {
    sym::ExprId v = e.law == LawForm::FlowLaw ? resolve(e.lawExpr)
                                              : ctx_.div(resolveSymbol(e.state), resolve(e.value));
    return sign(b, setter, v);
  }
  case ElementKind::R: {
    sym::ExprId v = e.law == LawForm::FlowLaw ? applyLaw(e, effort(b))
                                              : ctx_.div(effort(b), resolve(e.value));
    return sign(b, setter, v);
  }
  case ElementKind::TF:
  case ElementKind::MTF: {
    sym::ExprId n = resolve(e.value);
    if (b == e.bonds[0]) // f1 = f2 / n
      return ctx_.div(flow(e.bonds[1]), n);
    return ctx_.mul(n, flow(e.bonds[0])); // f2 = n f1
  }
  case ElementKind::GY:
  case ElementKind::MGY: {
    sym::ExprId r = resolve(e.value);
    BondId other = b == e.bonds[0] ? e.bonds[1] : e.bonds[0];
    return ctx_.div(effort(other), r); // f1 = e2 / r, f2 = e1 / r
  }
  case ElementKind::One:
    if (ca_.imposesZero(setter)) // an OFF 1-junction imposes zero flow
      return ctx_.constant(0);
    for (BondId k : e.bonds)
      if (ca_.setsEffort(g_, k, setter))
        return flow(k);
    break;
  case ElementKind::Zero: {
    sym::ExprId sum = ctx_.constant(0);
    for (BondId k : e.bonds)
      if (k != b)
        sum = g_.sign(k, setter) > 0 ? ctx_.add(sum, flow(k)) : ctx_.sub(sum, flow(k));
    return g_.sign(b, setter) > 0 ? ctx_.neg(sum) : sum;
  }
  case ElementKind::Se:
  case ElementKind::MSe:
  case ElementKind::C: // in derivative causality: torn before resolution
    break;
  }
  throw InternalError(std::string(kindName(e.kind)) + " `" + e.name + "` cannot set a flow");
}

/// Builds one model's equations; see buildEquations.
class Builder {
public:
  Builder(const BondGraph &g, const CausalAssignment &ca, const Mode &mode,
          DiagnosticEngine &diags, const EquationOptions &opts)
      : g_(g), ca_(ca), diags_(diags), opts_(opts), ctx_(*g.ctx), r_(g, ca, mode, ctx_) {
    sys_.ctx = g.ctx;
    sys_.modelName = g.modelName;
  }
  std::optional<EquationSystem> run();

  /// Resolution recurses along chains of signals (`s2 = s1 + 1`, ...),
  /// one level per signal. Where a chain is longer than kSignalChain, the
  /// signals are resolved first in dependency order (an iterative
  /// depth-first search), so that each finds the ones it reads resolved.
  /// Shorter chains resolve on demand as before, and where any loop through
  /// them is torn does not change.
  void resolveLongSignalChains() {
    constexpr std::size_t kSignalChain = 200;
    std::size_t n = g_.signals.size();
    std::vector<std::vector<std::uint32_t>> reads(n);
    for (std::size_t i = 0; i < n; ++i)
      for (sym::SymbolId s : ctx_.symbolsOf(g_.signals[i].value)) {
        VariableInfo info = g_.variable(s);
        if (info.kind == VariableInfo::Signal && info.index != i)
          reads[i].push_back(info.index);
      }
    // Post-order over the reads, and the longest chain below each signal.
    std::vector<std::uint32_t> order, depth(n, 0);
    std::vector<std::uint8_t> state(n, 0); // 0 new, 1 open, 2 done
    std::size_t longest = 0;
    for (std::uint32_t root = 0; root < n; ++root) {
      if (state[root])
        continue;
      std::vector<std::pair<std::uint32_t, std::size_t>> stack{{root, 0}};
      state[root] = 1;
      while (!stack.empty()) {
        auto &[v, next] = stack.back();
        if (next < reads[v].size()) {
          std::uint32_t w = reads[v][next++];
          if (state[w] == 0) {
            state[w] = 1;
            stack.push_back({w, 0});
          }
          continue; // an open one is a cycle: left to resolution's tearing
        }
        for (std::uint32_t w : reads[v])
          if (state[w] == 2)
            depth[v] = std::max(depth[v], depth[w] + 1);
        longest = std::max<std::size_t>(longest, depth[v]);
        state[v] = 2;
        order.push_back(v);
        stack.pop_back();
      }
    }
    if (longest <= kSignalChain)
      return;
    for (std::uint32_t i : order)
      r_.variable(g_.signals[i].symbol);
  }

private:
  /// A storage element in derivative causality, torn on its output.
  struct Dependent {
    ElementId element;
    BondId bond;
    sym::ExprId output; ///< the tearing variable (C: bond flow; I: bond effort)
    sym::ExprId input;  ///< the port variable imposed on it (C: effort; I: port flow)
    std::string path;
    /// Nonlinear law: the tearing variable standing for the stored quantity
    /// d (q or p), closed by law(d) - input = 0.
    sym::ExprId stored;
  };

  void tearChoices();
  void tearDependentStorage();
  void tearInvertedLaws();
  void bindDependentStates();
  /// Whether `e`, of parameters only, is 0 with every parameter at its
  /// default (nothing when it reads anything else).
  std::optional<bool> zeroAtDefaults(sym::ExprId e);
  std::vector<double> defaults_;
  bool closeDependentStorage(const std::vector<sym::ExprId> &derivatives);
  /// Fills EquationSystem::guardImpulse from the resolved guard sides.
  void guardImpulses();
  /// Fills EquationSystem::powerPorts and sourceWork from the resolved
  /// bonds (before the loops are closed: the work reads the tearing
  /// variables of dependent storage).
  void powerPorts();
  std::string loopUsedBy(sym::ExprId e, sym::ExprId except);
  bool differentiable(const Dependent &d, sym::ExprId x, const char *what, sym::ExprId own = {});

  const BondGraph &g_;
  const CausalAssignment &ca_;
  DiagnosticEngine &diags_;
  const EquationOptions opts_;
  sym::ExprContext &ctx_;
  Resolver r_;
  EquationSystem sys_;
  std::vector<Dependent> dependent_;
  std::vector<TornVariable> torn_;
  std::vector<std::function<void()>> closers_; ///< residuals built after resolution
};

void Builder::tearChoices() {
  // Borutzky: an R given its causality by choice has its input torn; the
  // causal path it starts closes the loop back on that input.
  for (const causality::Choice &c : ca_.choices) {
    BondId b = c.bond;
    bool tearEffort;
    if (c.element.valid()) {
      // The R's input: flow when it sets the effort, effort otherwise.
      tearEffort = !ca_.setsEffort(g_, b, c.element);
    } else {
      tearEffort = true; // a loop of junctions alone: tear the chosen bond's effort
    }
    const Bond &bd = g_.bond(b);
    std::string name = (c.element.valid() ? g_.element(c.element).name : bd.name) +
                       (tearEffort ? ".e" : ".f");
    sym::SymbolId variable = tearEffort ? bd.effort : bd.flow;
    sym::ExprId z = r_.tear(variable, name);
    SourceRange at = c.element.valid() ? g_.element(c.element).range : bd.range;
    std::string path = pathText(g_, c.path);
    closers_.push_back([this, b, z, tearEffort, name, path, at] {
      sym::ExprId def = tearEffort ? r_.defineEffort(b) : r_.defineFlow(b);
      torn_.push_back({name, ctx_.node(z).symbol, ctx_.sub(z, def), path, at});
    });
  }
}

void Builder::tearInvertedLaws() {
  // A nonlinear R whose law gives the variable its causality needs as input
  // is inverted numerically: its output is torn and the law is the residual.
  for (std::uint32_t i = 0; i < g_.elements.size(); ++i) {
    ElementId id{i};
    const Element &e = g_.elements[i];
    if (e.kind != ElementKind::R || e.law == LawForm::Linear || e.bonds.size() != 1)
      continue;
    BondId b = e.bonds[0];
    bool setsEffort = ca_.setsEffort(g_, b, id);
    if (setsEffort == (e.law == LawForm::EffortLaw))
      continue;
    const Bond &bd = g_.bond(b);
    // Given e = law(f) but needing f from e (or the reverse).
    bool tornFlow = e.law == LawForm::EffortLaw;
    std::string name = e.name + (tornFlow ? ".f" : ".e");
    sym::ExprId z = r_.tear(tornFlow ? bd.flow : bd.effort, name);
    std::string path = e.name;
    SourceRange at = e.range;
    closers_.push_back([this, id, b, z, tornFlow, name, path, at] {
      const Element &el = g_.element(id);
      sym::ExprId residual =
          tornFlow ? ctx_.sub(r_.applyLaw(el, r_.sign(b, id, z)), r_.effort(b))
                   : ctx_.sub(r_.sign(b, id, r_.applyLaw(el, z)), r_.flow(b));
      torn_.push_back({name, ctx_.node(z).symbol, residual, path, at});
    });
  }
}

void Builder::tearDependentStorage() {
  for (const causality::DerivativeStorage &d : ca_.derivative) {
    const Element &e = g_.element(d.element);
    BondId b = e.bonds[0];
    const Bond &bd = g_.bond(b);
    // C in derivative causality sets its flow, I its effort.
    bool isC = e.kind == ElementKind::C;
    std::string name = e.name + (isC ? ".f" : ".e");
    sym::ExprId z = r_.tear(isC ? bd.flow : bd.effort, name);
    dependent_.push_back({d.element, b, z, {}, pathText(g_, d.path), {}});
    // A nonlinear law gives the input of the stored quantity d, not d of
    // the input: d is torn too, and law(d) = input closes its loop (by
    // Newton's method unless the law is linear in d after all). Torn before
    // any input is resolved, so that inputs reading d see the tearing
    // variable. The name by value: addSymbol can move the symbol table.
    if (e.law != LawForm::Linear)
      dependent_.back().stored = r_.tear(e.state, std::string(ctx_.symbol(e.state).name));
  }
}

/// The path of the first loop whose tearing variable `e` uses, other than
/// `except` (a dependent element's own stored quantity); "" when none.
std::string Builder::loopUsedBy(sym::ExprId e, sym::ExprId except) {
  std::vector<sym::SymbolId> used = ctx_.symbolsOf(e);
  auto uses = [&](sym::SymbolId z) {
    return !(except.valid() && ctx_.node(except).symbol == z) &&
           std::find(used.begin(), used.end(), z) != used.end();
  };
  for (const std::vector<TornVariable> *list : {&torn_, &r_.cycles()})
    for (const TornVariable &t : *list)
      if (uses(t.symbol))
        return t.path;
  for (const Dependent &other : dependent_)
    for (sym::ExprId z : {other.output, other.stored})
      if (z.valid() && uses(ctx_.node(z).symbol))
        return other.path;
  return "";
}

/// Reports when `x` (the input or the law of dependent storage `d`) has no
/// time derivative: it uses a loop's tearing variable (other than `own`),
/// whose value only the loop's solution gives, or a non-smooth function of
/// time. `what` names `x` in the message.
bool Builder::differentiable(const Dependent &d, sym::ExprId x, const char *what, sym::ExprId own) {
  const Element &e = g_.element(d.element);
  if (std::string loop = loopUsedBy(x, own); !loop.empty()) {
    diags_.report(DiagKind::DerivativeThroughLoop, e.range, {kindName(e.kind), e.name, what, loop});
    return false;
  }
  if (sym::ExprId fn = nonSmoothInTime(ctx_, x); fn.valid()) {
    const sym::Node &n = ctx_.node(fn);
    diags_.report(DiagKind::NotDifferentiable, e.range,
                  {kindName(e.kind), e.name, what,
                   n.op == sym::Op::Select ? "select" : sym::functionName(n.op)});
    // The elements whose value brings the function in (directly or
    // through signals).
    for (const Element &src : g_.elements)
      if (src.value.valid() && !isStorage(src.kind) && contains(ctx_, r_.resolve(src.value), fn))
        diags_.note(DiagKind::DrivingSource, src.range, {src.name});
    return false;
  }
  return true;
}

bool Builder::closeDependentStorage(const std::vector<sym::ExprId> &derivatives) {
  // The total time derivative of an expression of time and the independent
  // states (tearing variables held fixed).
  auto total = [&](sym::ExprId x) {
    sym::ExprId rate = ctx_.derivative(x, ctx_.timeSymbol());
    for (const State &s : sys_.states)
      rate = ctx_.add(rate, ctx_.mul(ctx_.derivative(x, s.symbol), derivatives[s.symbol.index]));
    return rate;
  };
  for (Dependent &d : dependent_) {
    const Element &e = g_.element(d.element);
    bool isC = e.kind == ElementKind::C;
    if (!differentiable(d, d.input, isC ? "effort" : "flow"))
      return false;
    sym::ExprId rate; // of the stored quantity
    if (e.law == LawForm::Linear) {
      // q = C e (p = I f): the rate is C de/dt (I df/dt).
      rate = ctx_.mul(r_.resolve(e.value), total(d.input));
    } else {
      // law(d) = input, differentiated in time: law'(d) dd/dt = d input/dt,
      // less the law's own dependence on time and the states, if any.
      sym::ExprId law = r_.resolve(e.lawExpr);
      if (!differentiable(d, law, "law", d.stored))
        return false;
      sym::SymbolId ds = ctx_.node(d.stored).symbol;
      sym::ExprId slope = ctx_.derivative(law, ds);
      std::string name = ctx_.symbol(e.state).name;
      if (ctx_.isConst(slope, 0)) {
        // The law does not involve its own q (p): nothing determines it.
        diags_.report(DiagKind::SingularLoop, e.range, {d.path, "`" + name + "`"});
        return false;
      }
      rate = ctx_.div(ctx_.sub(total(d.input), total(law)), slope);
      torn_.push_back({name, ds, ctx_.sub(law, d.input), d.path, e.range});
    }
    // C: the port flow is dq/dt, the bond flow carries the sign. I: the
    // bond effort is dp/dt.
    sym::ExprId output = isC ? r_.sign(d.bond, d.element, rate) : rate;
    // The rate of the stored quantity is the tearing variable itself (I: the
    // port effort) or the port flow s z (C).
    sym::SymbolId z = ctx_.node(d.output).symbol;
    std::vector<sym::ExprId> impulse;
    for (const State &s : sys_.states) {
      sym::ExprId di = ctx_.derivative(derivatives[s.symbol.index], z);
      impulse.push_back(isC ? r_.sign(d.bond, d.element, di) : di);
    }
    for (DependentState &ds : sys_.dependent)
      if (ds.name == ctx_.symbol(e.state).name)
        ds.impulse = std::move(impulse);
    torn_.push_back({e.name + (isC ? ".f" : ".e"), z, ctx_.sub(d.output, output), d.path, e.range});
  }
  return true;
}

void Builder::powerPorts() {
  std::vector<const Dependent *> byState;
  for (const DependentState &ds : sys_.dependent)
    for (const Dependent &d : dependent_)
      if (ctx_.symbol(g_.element(d.element).state).name == ds.name)
        byState.push_back(&d);
  for (std::uint32_t i = 0; i < g_.elements.size(); ++i) {
    const Element &e = g_.elements[i];
    bool resistor = e.kind == ElementKind::R;
    // A pseudo bond graph's elements carry no power (a heat flow source).
    if ((!resistor && !isSource(e.kind)) || e.bonds.size() != 1 || e.pseudo)
      continue;
    // Power flows along a bond's arrow: into an R element, out of a source.
    BondId b = e.bonds[0];
    int into = g_.sign(b, ElementId{i});
    double sign = resistor ? into : -into;
    sys_.powerPorts.push_back({e.name, kindName(e.kind), b.index, sign});
    // A source's work through a jump: a jump of dependent storage k by D
    // is a Dirac in its tearing variable z_k (see guardImpulses), which
    // reaches the source's flow (effort) with strength d f / d z_k times
    // D; times the source's finite effort (flow) that is its work.
    // An R element carries no impulse (it would dissipate without bound).
    sym::ExprId effort = r_.effort(b), flow = r_.flow(b);
    for (const Dependent *d : byState) {
      if (resistor) {
        sys_.sourceWork.push_back(ctx_.constant(0));
        continue;
      }
      sym::SymbolId z = ctx_.node(d->output).symbol;
      sym::ExprId w = ctx_.add(ctx_.mul(effort, ctx_.derivative(flow, z)),
                               ctx_.mul(flow, ctx_.derivative(effort, z)));
      if (sign < 0)
        w = ctx_.neg(w);
      bool isC = g_.element(d->element).kind == ElementKind::C;
      sys_.sourceWork.push_back(isC ? r_.sign(d->bond, d->element, w) : w);
    }
  }
  if (byState.size() != sys_.dependent.size())
    throw InternalError("source work: a dependent state without its element");
}

void Builder::guardImpulses() {
  // A jump of dependent storage k's stored quantity by D is the Dirac
  // D delta(t) in the rate of it, which its tearing variable z_k carries
  // (I: the port effort, dp/dt; C: the port flow, the bond's sign times
  // dq/dt). The junction structure is linear in z_k, so a guard side's
  // Dirac strength is d side / d z_k times that (the same sensitivity
  // that gives DependentState::impulse).
  if (sys_.dependent.empty() || sys_.guards.empty())
    return;
  std::vector<const Dependent *> byState;
  for (const DependentState &ds : sys_.dependent)
    for (const Dependent &d : dependent_)
      if (ctx_.symbol(g_.element(d.element).state).name == ds.name)
        byState.push_back(&d);
  if (byState.size() != sys_.dependent.size())
    throw InternalError("guard impulses: a dependent state without its element");
  for (sym::ExprId side : sys_.guards)
    for (const Dependent *d : byState) {
      sym::ExprId di = ctx_.derivative(side, ctx_.node(d->output).symbol);
      bool isC = g_.element(d->element).kind == ElementKind::C;
      sys_.guardImpulse.push_back(isC ? r_.sign(d->bond, d->element, di) : di);
    }
}

std::optional<bool> Builder::zeroAtDefaults(sym::ExprId e) {
  if (!ctx_.isParametric(e))
    return std::nullopt;
  if (defaults_.empty()) {
    defaults_.resize(sys_.parameters.size());
    for (std::uint32_t i : sys_.parameterOrder()) {
      defaults_[i] = ctx_.evaluate(sys_.parameters[i].defaultValue, [&](sym::SymbolId s) {
        std::uint32_t slot = ctx_.symbol(s).slot;
        return slot < defaults_.size() ? defaults_[slot] : std::nan("");
      });
    }
  }
  double v = ctx_.evaluate(e, [&](sym::SymbolId s) {
    std::uint32_t slot = ctx_.symbol(s).slot;
    return slot < defaults_.size() ? defaults_[slot] : std::nan(""); // held values: unknown
  });
  return v == 0;
}

void Builder::bindDependentStates() {
  for (Dependent &d : dependent_) {
    const Element &e = g_.element(d.element);
    // The imposed port variable: C takes the bond effort, I the port flow.
    d.input = e.kind == ElementKind::C ? r_.effort(d.bond)
                                        : r_.sign(d.bond, d.element, r_.flow(d.bond));
    // A written 0 says nothing the dependent state contradicts worth a
    // warning; nor does a component's `p0 = L * i0` left at i0 = 0.
    if (e.initialRange.valid() && !(ctx_.isConst(e.initial, 0)) && zeroAtDefaults(e.initial) != true)
      diags_.report(DiagKind::IgnoredInitialValue, e.initialRange,
                    {e.kind == ElementKind::C ? "q0" : "p0", e.name});
    if (d.stored.valid()) {
      // Torn already: the value is the tearing variable, which closing the
      // loops replaces by its Newton unknown (or its solution, should the
      // law be linear in d after all).
      sys_.dependent.push_back({ctx_.symbol(e.state).name, d.stored, {}});
      continue;
    }
    // The stored quantity follows the input: q = C e, p = I f.
    sym::ExprId value = ctx_.mul(r_.resolve(e.value), d.input);
    sys_.dependent.push_back({ctx_.symbol(e.state).name, value, {}});
    r_.bind(e.state, value);
  }
}

std::optional<EquationSystem> Builder::run() {
  for (const bg::Parameter &p : g_.parameters)
    sys_.parameters.push_back({p.name, p.symbol, p.defaultValue, p.structural, p.input});
  sys_.experiment = g_.experiment;

  // Independent states: storage in integral causality, then integrators.
  std::unordered_set<std::uint32_t> dependentIds;
  for (const causality::DerivativeStorage &d : ca_.derivative)
    dependentIds.insert(d.element.index);
  // `name` by value: it may be a symbol's own name, and addSymbol can move
  // the symbol table.
  StateNominals nominals = stateNominals(g_);
  auto addState = [&](std::string name, sym::SymbolId variable, sym::ExprId initial,
                      sym::ExprId nominal) {
    auto slot = static_cast<std::uint32_t>(sys_.states.size());
    sym::SymbolId s = ctx_.addSymbol(name, sym::SymbolKind::State, slot);
    r_.bind(variable, ctx_.ref(s));
    sys_.states.push_back({name, s, initial, {}, nominal});
  };
  for (std::uint32_t i = 0; i < g_.elements.size(); ++i) {
    const Element &e = g_.elements[i];
    if (isStorage(e.kind) && !dependentIds.count(i))
      addState(ctx_.symbol(e.state).name, e.state, e.initial, nominals.storage[i]);
  }
  for (std::size_t i = 0; i < g_.integrators.size(); ++i)
    addState(g_.integrators[i].name, g_.integrators[i].state, ctx_.constant(0),
             nominals.integrators[i]);

  // Tear before resolving anything, so that every loop closes on its
  // tearing variable instead of recursing.
  tearChoices();
  tearDependentStorage();
  tearInvertedLaws();
  bindDependentStates();

  resolveLongSignalChains();

  std::size_t k = 0;
  std::unordered_map<std::uint32_t, sym::ExprId> derivativeOf; // by state symbol index
  for (std::uint32_t i = 0; i < g_.elements.size(); ++i) {
    const Element &e = g_.elements[i];
    if (!isStorage(e.kind) || dependentIds.count(i))
      continue;
    BondId b = e.bonds[0];
    ElementId id{i};
    // Port variables are (e_b, s f_b): dq/dt = s f_b, dp/dt = e_b.
    sys_.states[k++].derivative =
        e.kind == ElementKind::C ? r_.sign(b, id, r_.flow(b)) : r_.effort(b);
  }
  for (const Integrator &i : g_.integrators)
    sys_.states[k++].derivative = r_.resolve(i.input);
  std::vector<sym::ExprId> derivatives(ctx_.numSymbols());
  for (const State &s : sys_.states)
    derivatives[s.symbol.index] = s.derivative;

  for (auto &close : closers_)
    close();
  if (!closeDependentStorage(derivatives))
    return std::nullopt;
  for (const bg::Output &o : g_.outputs)
    sys_.outputs.push_back({o.name, r_.resolve(o.value)});
  for (const bg::Guard *c : guardComparisons(g_)) {
    sys_.guards.push_back(r_.resolve(c->lhs));
    sys_.guards.push_back(r_.resolve(c->rhs));
  }
  guardImpulses();
  std::vector<sym::ExprId> resolved;
  for (const bg::Held &h : g_.held)
    resolved.push_back(r_.resolve(h.value));
  sys_.heldValues = heldUpdates(g_, ctx_, resolved);
  for (std::size_t k = 0; k < g_.held.size(); ++k)
    if (g_.held[k].kind == bg::Held::Kind::Clock)
      sys_.clocks.push_back({g_.held[k].name, resolved[k], g_.held[k].tick});
    else if (g_.held[k].kind == bg::Held::Kind::Edge)
      sys_.edges.push_back({resolved[k], g_.held[k].tick});
  sys_.numHeld = g_.held.size();
  for (std::uint32_t i = 0; i < g_.bonds.size(); ++i) {
    sys_.bondNames.push_back(g_.bonds[i].name);
    sys_.bondEffort.push_back(r_.effort(BondId{i}));
    sys_.bondFlow.push_back(r_.flow(BondId{i}));
  }
  powerPorts();
  for (TornVariable &t : r_.cycles())
    torn_.push_back(t);

  // Close the loops at the defaults' nominal point and substitute.
  std::vector<double> params(sys_.parameters.size());
  std::unordered_map<std::uint32_t, double> paramBySymbol;
  for (std::uint32_t i : sys_.parameterOrder()) {
    params[i] = ctx_.evaluate(sys_.parameters[i].defaultValue,
                              [&](sym::SymbolId s) { return paramBySymbol.at(s.index); });
    paramBySymbol[sys_.parameters[i].symbol.index] = params[i];
  }
  std::vector<double> x0;
  for (const State &s : sys_.states)
    x0.push_back(ctx_.evaluate(s.initial, [&](sym::SymbolId s) { return paramBySymbol.at(s.index); }));
  auto nominal = [&](sym::SymbolId s) -> double {
    const sym::Symbol &sy = ctx_.symbol(s);
    switch (sy.kind) {
    case sym::SymbolKind::Time: return 0;
    case sym::SymbolKind::State: return x0[sy.slot];
    case sym::SymbolKind::Parameter: // held values after the parameters: 0
      return sy.slot < params.size() ? params[sy.slot] : 0.0;
    default: return std::numeric_limits<double>::quiet_NaN();
    }
  };
  ClosedLoops closed;
  if (!closeLoops(torn_, sys_, nominal, opts_.runTimeLoopMin, diags_, closed))
    return std::nullopt;
  std::vector<sym::ExprId *> finished;
  auto finish = [&](sym::ExprId &e) { finished.push_back(&e); };
  for (State &s : sys_.states)
    finish(s.derivative);
  for (Output &o : sys_.outputs)
    finish(o.value);
  for (DependentState &d : sys_.dependent) {
    finish(d.value);
    for (sym::ExprId &i : d.impulse)
      finish(i);
  }
  for (sym::ExprId &e : sys_.guards)
    finish(e);
  for (sym::ExprId &e : sys_.guardImpulse)
    finish(e);
  for (sym::ExprId &e : sys_.heldValues)
    finish(e);
  for (sym::ExprId &e : sys_.sourceWork)
    finish(e);
  for (std::size_t i = 0; i < sys_.bondEffort.size(); ++i) {
    finish(sys_.bondEffort[i]);
    finish(sys_.bondFlow[i]);
  }
  ctx_.substitute(finished, closed.substitution);
  replaceNodes(ctx_, closed.nodes, std::move(finished));
  extractKinks(sys_);
  std::string problem = sys_.verify();
  if (!problem.empty())
    throw InternalError("equation verifier: " + problem);
  return std::move(sys_);
}

void collectComparisons(const bg::Guard &guard, std::vector<const bg::Guard *> &out) {
  if (guard.kind == bg::Guard::Compare)
    out.push_back(&guard);
  for (const bg::Guard &c : guard.children)
    collectComparisons(c, out);
}

} // namespace

std::vector<const bg::Guard *> guardComparisons(const bg::Guard &guard) {
  std::vector<const bg::Guard *> out;
  collectComparisons(guard, out);
  return out;
}

std::vector<const bg::Guard *> guardComparisons(const BondGraph &g) {
  std::vector<const bg::Guard *> out;
  for (const Element &e : g.elements)
    if (e.fsm)
      for (const FsmTransition &t : e.fsm->transitions)
        collectComparisons(t.guard, out);
  return out;
}

std::optional<EquationSystem> buildEquations(const BondGraph &g, const CausalAssignment &ca,
                                             const Mode &mode, DiagnosticEngine &diags,
                                             const EquationOptions &opts) {
  // The causality fixes which ends of an OFF junction's bonds set what, so
  // the equations must be built in the mode the causality was assigned in.
  for (std::uint32_t i = 0; i < g.elements.size(); ++i)
    if (isJunction(g.elements[i].kind) && mode.isOn(ElementId{i}) != ca.mode.isOn(ElementId{i}))
      throw InternalError("equations requested in another mode than the causality's (`" +
                          g.elements[i].name + "`)");
  return Builder(g, ca, mode, diags, opts).run();
}

std::optional<EquationSystem> buildEquations(const BondGraph &g, const CausalAssignment &ca,
                                             DiagnosticEngine &diags,
                                             const EquationOptions &opts) {
  return buildEquations(g, ca, ca.mode, diags, opts);
}

} // namespace hbg::eq
