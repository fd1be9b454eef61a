//===- compiler/equations/Equations.cpp - State equations -----------------===//

#include "hbg/equations/Equations.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

namespace hbg::eq {

using namespace hbg::bg;
using causality::CausalAssignment;

namespace {

/// Resolves Variable symbols into expressions of time, states and
/// parameters, memoised per symbol. Recursion follows the causal order, so
/// its depth is the longest causal path, not the model size.
class Resolver {
public:
  Resolver(const BondGraph &g, const CausalAssignment &ca, DiagnosticEngine &diags,
           EquationSystem &sys)
      : g_(g), ca_(ca), diags_(diags), sys_(sys), ctx_(*g.ctx) {}

  /// Replaces every Variable symbol in `e` by its resolution.
  sym::ExprId resolve(sym::ExprId e);
  sym::ExprId effort(BondId b);
  sym::ExprId flow(BondId b);
  bool failed() const { return failed_; }
  /// The State symbol of a storage element or integrator state variable.
  void bindState(sym::SymbolId variable, sym::SymbolId state) {
    memo_[variable.index] = ctx_.ref(state);
  }

private:
  sym::ExprId resolveSymbol(sym::SymbolId s);
  sym::ExprId computeEffort(BondId b, ElementId setter);
  sym::ExprId computeFlow(BondId b, ElementId setter);
  /// The element's law with its local symbol replaced by `arg`.
  sym::ExprId applyLaw(const Element &e, sym::ExprId arg);
  ElementId effortSetter(BondId b) const {
    const Bond &bd = g_.bond(b);
    return ca_.setsEffort(g_, b, bd.from) ? bd.from : bd.to;
  }
  sym::ExprId sign(BondId b, ElementId e, sym::ExprId x) {
    return g_.sign(b, e) > 0 ? x : ctx_.neg(x);
  }

  const BondGraph &g_;
  const CausalAssignment &ca_;
  DiagnosticEngine &diags_;
  EquationSystem &sys_;
  sym::ExprContext &ctx_;
  std::unordered_map<std::uint32_t, sym::ExprId> memo_;
  std::vector<std::uint32_t> stack_; ///< symbols being resolved, for loop reports
  bool failed_ = false;
};

sym::ExprId Resolver::resolve(sym::ExprId e) {
  if (!e.valid())
    return e;
  std::unordered_map<std::uint32_t, sym::ExprId> map;
  std::vector<sym::ExprId> todo{e};
  std::vector<char> seen(ctx_.size(), 0);
  while (!todo.empty()) {
    sym::ExprId id = todo.back();
    todo.pop_back();
    if (seen[id.index])
      continue;
    seen[id.index] = 1;
    const sym::Node &n = ctx_.node(id);
    if (n.op == sym::Op::Symbol) {
      if (ctx_.symbol(n.symbol).kind == sym::SymbolKind::Variable)
        map[n.symbol.index] = resolveSymbol(n.symbol);
      continue;
    }
    int k = sym::arity(n.op);
    if (k >= 1)
      todo.push_back(n.lhs);
    if (k == 2)
      todo.push_back(n.rhs);
  }
  return map.empty() ? e : ctx_.substitute(e, map);
}

sym::ExprId Resolver::resolveSymbol(sym::SymbolId s) {
  auto it = memo_.find(s.index);
  if (it != memo_.end())
    return it->second;
  if (std::find(stack_.begin(), stack_.end(), s.index) != stack_.end()) {
    // A variable that depends on itself: report the chain once.
    if (!failed_) {
      auto from = std::find(stack_.begin(), stack_.end(), s.index);
      std::string path;
      for (auto p = from; p != stack_.end(); ++p)
        path += "`" + ctx_.symbol(sym::SymbolId{*p}).name + "` -> ";
      path += "`" + ctx_.symbol(s).name + "`";
      VariableInfo info = g_.variable(s);
      SourceRange at;
      if (info.kind == VariableInfo::Signal)
        at = g_.signals[info.index].range;
      else if (info.kind == VariableInfo::Effort || info.kind == VariableInfo::Flow)
        at = g_.bonds[info.index].range;
      diags_.report(DiagKind::AlgebraicLoop, at, {path});
      diags_.note(DiagKind::AlgebraicLoopUnsupported, {});
    }
    failed_ = true;
    return ctx_.constant(0);
  }
  stack_.push_back(s.index);
  VariableInfo info = g_.variable(s);
  sym::ExprId r;
  switch (info.kind) {
  case VariableInfo::Effort:
    r = computeEffort(BondId{info.index}, effortSetter(BondId{info.index}));
    break;
  case VariableInfo::Flow: {
    BondId b{info.index};
    r = computeFlow(b, g_.otherEnd(b, effortSetter(b)));
    break;
  }
  case VariableInfo::Signal:
    r = resolve(g_.signals[info.index].value);
    break;
  case VariableInfo::State:
  case VariableInfo::Integrator:
  case VariableInfo::None:
    throw InternalError("unbound variable `" + ctx_.symbol(s).name + "`");
  }
  stack_.pop_back();
  memo_[s.index] = r;
  return r;
}

sym::ExprId Resolver::effort(BondId b) { return resolveSymbol(g_.bond(b).effort); }
sym::ExprId Resolver::flow(BondId b) { return resolveSymbol(g_.bond(b).flow); }

sym::ExprId Resolver::applyLaw(const Element &e, sym::ExprId arg) {
  sym::ExprId law = ctx_.substitute(e.lawExpr, {{e.lawArg.index, arg}});
  return resolve(law);
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
  case ElementKind::I:
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
  case ElementKind::C:
    break;
  }
  throw InternalError(std::string(kindName(e.kind)) + " `" + e.name + "` cannot set a flow");
}

/// Symbols of `root` in id order (for verification).
void collectSymbols(const sym::ExprContext &ctx, sym::ExprId root, std::vector<sym::SymbolId> &out) {
  std::vector<sym::ExprId> todo{root};
  std::vector<char> seen(ctx.size(), 0);
  while (!todo.empty()) {
    sym::ExprId id = todo.back();
    todo.pop_back();
    if (!id.valid() || seen[id.index])
      continue;
    seen[id.index] = 1;
    const sym::Node &n = ctx.node(id);
    if (n.op == sym::Op::Symbol)
      out.push_back(n.symbol);
    int k = sym::arity(n.op);
    if (k >= 1)
      todo.push_back(n.lhs);
    if (k == 2)
      todo.push_back(n.rhs);
  }
}

} // namespace

std::optional<EquationSystem> buildEquations(const BondGraph &g, const CausalAssignment &ca,
                                             DiagnosticEngine &diags) {
  if (!ca.choices.empty() || !ca.derivative.empty())
    throw InternalError("equations need a graph without algebraic loops or derivative causality");
  EquationSystem sys;
  sys.ctx = g.ctx;
  sys.modelName = g.modelName;
  sym::ExprContext &ctx = *g.ctx;
  Resolver r(g, ca, diags, sys);

  for (const bg::Parameter &p : g.parameters)
    sys.parameters.push_back({p.name, p.symbol, p.defaultValue});

  // States: storage elements in declaration order, then integrators.
  auto addState = [&](const std::string &name, sym::SymbolId variable, sym::ExprId initial) {
    auto slot = static_cast<std::uint32_t>(sys.states.size());
    sym::SymbolId s = ctx.addSymbol(name, sym::SymbolKind::State, slot);
    r.bindState(variable, s);
    sys.states.push_back({name, s, initial, {}});
  };
  std::vector<std::pair<std::size_t, const Element *>> storage;
  for (const Element &e : g.elements)
    if (isStorage(e.kind))
      addState(ctx.symbol(e.state).name, e.state, e.initial);
  for (const Integrator &i : g.integrators)
    addState(i.name, i.state, ctx.constant(0));

  std::size_t k = 0;
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    const Element &e = g.elements[i];
    if (!isStorage(e.kind))
      continue;
    BondId b = e.bonds[0];
    ElementId id{i};
    // Port variables are (e_b, s f_b): dq/dt = s f_b, dp/dt = e_b.
    sys.states[k++].derivative =
        e.kind == ElementKind::C ? (g.sign(b, id) > 0 ? r.flow(b) : ctx.neg(r.flow(b)))
                                 : r.effort(b);
  }
  for (const Integrator &i : g.integrators)
    sys.states[k++].derivative = r.resolve(i.input);

  for (const bg::Output &o : g.outputs)
    sys.outputs.push_back({o.name, r.resolve(o.value)});
  for (std::uint32_t i = 0; i < g.bonds.size(); ++i) {
    sys.bondNames.push_back(g.bonds[i].name);
    sys.bondEffort.push_back(r.effort(BondId{i}));
    sys.bondFlow.push_back(r.flow(BondId{i}));
  }
  if (r.failed())
    return std::nullopt;
  std::string problem = sys.verify();
  if (!problem.empty())
    throw InternalError("equation verifier: " + problem);
  return sys;
}

std::vector<std::uint32_t> EquationSystem::parameterOrder() const {
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t i = 0; i < parameters.size(); ++i)
    bySymbol[parameters[i].symbol.index] = i;
  std::vector<std::uint32_t> order;
  std::vector<int> state(parameters.size(), 0);
  // Depth-first post-order; sema has already rejected cycles.
  std::vector<std::pair<std::uint32_t, bool>> todo;
  for (std::uint32_t i = parameters.size(); i-- > 0;)
    todo.push_back({i, false});
  while (!todo.empty()) {
    auto [i, done] = todo.back();
    todo.pop_back();
    if (done) {
      if (state[i] != 2)
        order.push_back(i);
      state[i] = 2;
      continue;
    }
    if (state[i] != 0)
      continue;
    state[i] = 1;
    todo.push_back({i, true});
    std::vector<sym::SymbolId> syms;
    collectSymbols(*ctx, parameters[i].defaultValue, syms);
    for (sym::SymbolId s : syms) {
      auto it = bySymbol.find(s.index);
      if (it != bySymbol.end() && state[it->second] == 0)
        todo.push_back({it->second, false});
    }
  }
  return order;
}

std::string EquationSystem::verify() const {
  auto check = [&](sym::ExprId e, const std::string &what, bool parametric) -> std::string {
    if (!e.valid())
      return what + " is missing";
    std::vector<sym::SymbolId> syms;
    collectSymbols(*ctx, e, syms);
    for (sym::SymbolId s : syms) {
      const sym::Symbol &sy = ctx->symbol(s);
      if (sy.kind == sym::SymbolKind::Variable)
        return what + " still refers to `" + sy.name + "`";
      if (parametric && sy.kind != sym::SymbolKind::Parameter)
        return what + " must depend on parameters only";
      if (sy.kind == sym::SymbolKind::State && sy.slot >= states.size())
        return what + " refers to state slot " + std::to_string(sy.slot);
      if (sy.kind == sym::SymbolKind::Parameter && sy.slot >= parameters.size())
        return what + " refers to parameter slot " + std::to_string(sy.slot);
    }
    return "";
  };
  for (const Parameter &p : parameters)
    if (auto m = check(p.defaultValue, "default of `" + p.name + "`", true); !m.empty())
      return m;
  for (const State &s : states) {
    if (auto m = check(s.initial, "initial value of `" + s.name + "`", true); !m.empty())
      return m;
    if (auto m = check(s.derivative, "derivative of `" + s.name + "`", false); !m.empty())
      return m;
  }
  for (const Output &o : outputs)
    if (auto m = check(o.value, "output `" + o.name + "`", false); !m.empty())
      return m;
  return "";
}

std::string EquationSystem::dump() const {
  std::ostringstream os;
  os << "parameters\n";
  for (const Parameter &p : parameters)
    os << "  " << p.name << " = " << ctx->print(p.defaultValue) << "\n";
  os << "states\n";
  for (const State &s : states)
    os << "  " << s.name << "(0) = " << ctx->print(s.initial) << "\n";
  os << "state equations\n";
  for (const State &s : states)
    os << "  d/dt " << s.name << " = " << ctx->print(s.derivative) << "\n";
  os << "bond variables\n";
  for (std::size_t i = 0; i < bondNames.size(); ++i)
    os << "  " << bondNames[i] << ".e = " << ctx->print(bondEffort[i]) << "\n"
       << "  " << bondNames[i] << ".f = " << ctx->print(bondFlow[i]) << "\n";
  os << "outputs\n";
  for (const Output &o : outputs)
    os << "  " << o.name << " = " << ctx->print(o.value) << "\n";
  return os.str();
}

} // namespace hbg::eq
