//===- compiler/sema/Expressions.cpp - Expressions into the DAG -----------===//
//
// Expressions lowered into the symbolic DAG: numbers, names, the variables
// of elements and bonds, `if`, and calls: the DAG's functions, those built
// from them, `integral`, `activeState` and `stateIndex`. `table` and `pre`
// have files of their own (Tables.cpp, Pre.cpp).
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace hbg::sema {

using namespace hbg::bg;

namespace {

/// Functions callable in expressions that are operations of the DAG, by
/// their name in source (hbg/support/ExprOps.def); each takes as many
/// arguments as its op has operands.
const std::map<std::string, sym::Op> kFunctions = [] {
  std::map<std::string, sym::Op> byName;
  for (std::size_t i = 0; i < sym::kNumOps; ++i)
    if (const char *name = sym::functionName(static_cast<sym::Op>(i)))
      byName.emplace(name, static_cast<sym::Op>(i));
  return byName;
}();

/// Functions built from others when lowered (docs/language.md,
/// "Functions"), by name: their arity and the expression. Their jumps are
/// those of `floor` and of the signs in `if` conditions, which become
/// events (of time alone: time events).
struct DerivedFunction {
  int arity;
  sym::ExprId (*build)(sym::ExprContext &ctx, const sym::ExprId *args);
};

/// x - y floor(x / y): in [0, y) for y > 0.
sym::ExprId modulo(sym::ExprContext &ctx, sym::ExprId x, sym::ExprId y) {
  return ctx.sub(x, ctx.mul(y, ctx.unary(sym::Op::Floor, ctx.div(x, y))));
}

const std::map<std::string, DerivedFunction> kDerived = {
    {"ceil", {1, [](sym::ExprContext &ctx, const sym::ExprId *a) {
                return ctx.neg(ctx.unary(sym::Op::Floor, ctx.neg(a[0])));
              }}},
    {"mod", {2, [](sym::ExprContext &ctx, const sym::ExprId *a) { return modulo(ctx, a[0], a[1]); }}},
    // 1 from t0 on.
    {"step", {1, [](sym::ExprContext &ctx, const sym::ExprId *a) {
                return ifNotNegative(ctx, ctx.sub(ctx.time(), a[0]), ctx.constant(1), ctx.constant(0));
              }}},
    // 1 over [t0 + k period, t0 + k period + width) for k >= 0.
    {"pulse", {3, [](sym::ExprContext &ctx, const sym::ExprId *a) {
                 sym::ExprId since = ctx.sub(ctx.time(), a[0]);
                 sym::ExprId on = ifPositive(ctx, ctx.sub(a[1], modulo(ctx, since, a[2])),
                                             ctx.constant(1), ctx.constant(0));
                 return ifNotNegative(ctx, since, on, ctx.constant(0));
               }}},
    // Rises from 0 towards 1 over each period, back to 0 at its end.
    {"saw", {1, [](sym::ExprContext &ctx, const sym::ExprId *a) {
               return ctx.div(modulo(ctx, ctx.time(), a[0]), a[0]);
             }}},
    // 1 for the first fraction D of each period 1 / f.
    {"pwm", {2, [](sym::ExprContext &ctx, const sym::ExprId *a) {
               sym::ExprId phase = modulo(ctx, ctx.mul(ctx.time(), a[0]), ctx.constant(1));
               return ifPositive(ctx, ctx.sub(a[1], phase), ctx.constant(1), ctx.constant(0));
             }}},
};

const char *argumentWords(int arity) {
  static const char *words[] = {"no arguments", "one argument", "two arguments",
                                "three arguments"};
  return arity >= 0 && arity <= 3 ? words[arity] : "several arguments";
}

/// `noun` with its indefinite article, by how it is read aloud: "an R
/// element", "an MSe element", "a C element", "a 0-junction".
std::string withArticle(const std::string &noun) {
  bool vowelSound = !noun.empty() && std::string("AEFHILMNORSX").find(noun[0]) != std::string::npos;
  return (vowelSound ? "an " : "a ") + noun;
}

} // namespace

/// `if m > 0 then a else b`, with the sign of m a kink when m varies.
sym::ExprId ifPositive(sym::ExprContext &ctx, sym::ExprId m, sym::ExprId a, sym::ExprId b) {
  return ctx.select(ctx.unary(sym::Op::Sign, m), a, b);
}
/// `if m >= 0 then a else b`.
sym::ExprId ifNotNegative(sym::ExprContext &ctx, sym::ExprId m, sym::ExprId a, sym::ExprId b) {
  return ctx.select(ctx.unary(sym::Op::Sign, ctx.neg(m)), b, a);
}

sym::ExprId Analyzer::lower(const ast::Expr &e, const ExprScope &scope) {
  switch (e.kind) {
  case ast::ExprKind::Number:
    return ctx().constant(e.number);
  case ast::ExprKind::Name:
    return lowerName(e, scope);
  case ast::ExprKind::Member:
    return lowerMember(e);
  case ast::ExprKind::Call:
    return lowerCall(e, scope);
  case ast::ExprKind::Array:
    diags_.report(DiagKind::ArrayOutsideTable, e.range);
    return {};
  case ast::ExprKind::String:
    diags_.report(DiagKind::StringOutsideTable, e.range);
    return {};
  case ast::ExprKind::If: {
    sym::ExprId yes = lower(*e.operands[0], scope), no = lower(*e.operands[1], scope);
    sym::ExprId v = lowerCondition(*e.condition, yes, no, scope);
    return yes.valid() && no.valid() ? v : sym::ExprId();
  }
  case ast::ExprKind::Unary: {
    sym::ExprId a = lower(*e.operands[0], scope);
    if (!a.valid())
      return {};
    return e.op == '-' ? ctx().neg(a) : a;
  }
  case ast::ExprKind::Binary: {
    // `a + b - c + ...` is a chain down the left operands as deep as it is
    // long: walk it with a loop, recursing only into the right operands
    // (which parentheses bound, syntax::kMaxNesting).
    std::vector<const ast::Expr *> spine;
    const ast::Expr *left = &e;
    while (left->kind == ast::ExprKind::Binary && left->op != '^') {
      spine.push_back(left);
      left = left->operands[0].get();
    }
    sym::ExprId acc = spine.empty() ? sym::ExprId() : lower(*left, scope);
    if (spine.empty()) { // a power: right-associative, bounded by its parentheses
      sym::ExprId a = lower(*e.operands[0], scope), b = lower(*e.operands[1], scope);
      return a.valid() && b.valid() ? ctx().pow(a, b) : sym::ExprId();
    }
    bool valid = acc.valid();
    for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
      sym::ExprId b = lower(*(*it)->operands[1], scope);
      valid = valid && b.valid();
      if (!valid)
        continue; // lower the rest for their diagnostics
      switch ((*it)->op) {
      case '+': acc = ctx().add(acc, b); break;
      case '-': acc = ctx().sub(acc, b); break;
      case '*': acc = ctx().mul(acc, b); break;
      case '/': acc = ctx().div(acc, b); break;
      default: throw InternalError(std::string("unknown binary operator ") + (*it)->op);
      }
    }
    return valid ? acc : sym::ExprId();
  }
  }
  throw InternalError("unknown expression kind");
}

sym::ExprId Analyzer::lowerName(const ast::Expr &e, const ExprScope &scope) {
  for (const auto &[name, symbol] : scope.locals)
    if (name == e.name)
      return ctx().ref(symbol);
  if (e.name == "time")
    return ctx().time();
  auto it = names_.find(e.name);
  if (it == names_.end() && e.name == "pi")
    return ctx().constant(3.141592653589793); // a declared `pi` comes first
  if (it == names_.end()) {
    std::vector<std::string> candidates = valueNames();
    for (const auto &[name, symbol] : scope.locals)
      candidates.push_back(name);
    unknownName(e.name, e.nameRange, candidates);
    return {};
  }
  const NameInfo &info = it->second;
  switch (info.kind) {
  case NameInfo::Parameter:
    return ctx().ref(g_.parameters[info.index].symbol);
  case NameInfo::Signal:
    return ctx().ref(g_.signals[info.index].symbol);
  case NameInfo::Element: {
    const Element &el = g_.elements[info.index];
    std::vector<std::string> vars;
    if (el.kind == ElementKind::Zero)
      vars = {e.name + ".e"};
    else if (el.kind == ElementKind::One)
      vars = {e.name + ".f"};
    else if (isTwoPort(el.kind))
      vars = {e.name + ".e1", e.name + ".f1", e.name + ".e2", e.name + ".f2"};
    else {
      vars = {e.name + ".e", e.name + ".f"};
      if (isStorage(el.kind))
        vars.push_back(e.name + (el.kind == ElementKind::C ? ".q" : ".p"));
    }
    diags_.report(DiagKind::NotAValue, e.nameRange,
                  {e.name, withArticle(elementNoun(el.kind)), quoteList(vars)});
    return {};
  }
  case NameInfo::Bond:
    diags_.report(DiagKind::NotAValue, e.nameRange,
                  {e.name, "a bond", quoteList({e.name + ".e", e.name + ".f"})});
    return {};
  }
  return {};
}

sym::ExprId Analyzer::lowerMember(const ast::Expr &e) {
  auto it = names_.find(e.name);
  if (it == names_.end()) {
    std::vector<std::string> candidates;
    for (const auto &[name, info] : names_)
      if (info.kind == NameInfo::Element || info.kind == NameInfo::Bond)
        candidates.emplace_back(name);
    std::sort(candidates.begin(), candidates.end());
    unknownName(e.name, e.nameRange, candidates);
    return {};
  }
  const NameInfo &info = it->second;
  if (info.kind == NameInfo::Bond) {
    if (e.member == "e" || e.member == "f") {
      // Bonds whose ends failed to resolve were not created (and reported).
      for (const Bond &b : g_.bonds)
        if (b.name == e.name)
          return ctx().ref(e.member == "e" ? b.effort : b.flow);
      return ctx().constant(0);
    }
    diags_.report(DiagKind::UnknownVariable, e.memberRange,
                  {"bond", e.name, e.member, "`e` and `f`"});
    return {};
  }
  if (info.kind != NameInfo::Element) {
    diags_.report(DiagKind::NoVariables, e.range,
                  {info.kind == NameInfo::Parameter ? "parameter" : "signal", e.name, e.member});
    return {};
  }
  const Element &el = g_.elements[info.index];
  std::string noun = elementNoun(el.kind);
  auto bondAt = [&](std::size_t k) -> const Bond * {
    return k < el.bonds.size() ? &g_.bonds[el.bonds[k].index] : nullptr;
  };
  std::vector<std::string> vars;
  const Bond *b = nullptr;
  bool effort = true;
  if (el.kind == ElementKind::Zero) {
    vars = {"e"};
    b = e.member == "e" ? bondAt(0) : nullptr;
  } else if (el.kind == ElementKind::One) {
    vars = {"f"};
    b = e.member == "f" ? bondAt(0) : nullptr;
    effort = false;
  } else if (isTwoPort(el.kind)) {
    vars = {"e1", "f1", "e2", "f2"};
    for (std::size_t k = 0; k < 4; ++k)
      if (e.member == vars[k]) {
        b = bondAt(k / 2);
        effort = k % 2 == 0;
      }
  } else {
    vars = {"e", "f"};
    if (isStorage(el.kind)) {
      std::string state = el.kind == ElementKind::C ? "q" : "p";
      vars.push_back(state);
      if (e.member == state)
        return ctx().ref(el.state);
    }
    if (e.member == "e" || e.member == "f") {
      b = bondAt(0);
      effort = e.member == "e";
    }
  }
  if (!b) {
    bool known = std::find(vars.begin(), vars.end(), e.member) != vars.end();
    if (known) // the element lacks its bonds, which was reported already
      return ctx().constant(0);
    std::vector<std::string> full;
    for (const std::string &v : vars)
      full.push_back(v);
    diags_.report(DiagKind::UnknownVariable, e.memberRange, {noun, e.name, e.member, quoteList(full)});
    return {};
  }
  return ctx().ref(effort ? b->effort : b->flow);
}

sym::ExprId Analyzer::lowerStateCall(const ast::Expr &e) {
  bool active = e.name == "activeState";
  if (e.operands.size() != 1) {
    diags_.report(DiagKind::WrongArgumentCount, e.range, {"function", e.name, "one argument", e.operands.size()});
    return {};
  }
  const ast::Expr &arg = *e.operands[0];
  if (arg.kind != (active ? ast::ExprKind::Member : ast::ExprKind::Name)) {
    diags_.report(DiagKind::StateArgument, arg.range,
                  {e.name, active ? "a state of a switched junction, `junction.state`"
                                  : "the name of a switched junction"});
    return {};
  }
  // The junction: a name declared as one, with a state machine.
  std::vector<std::string> switched;
  const ast::Junction *junction = nullptr;
  std::uint32_t element = 0;
  for (std::size_t i = 0; i < model_->junctions.size(); ++i) {
    const ast::Junction &j = model_->junctions[i];
    if (j.switched && j.fsm)
      switched.push_back(j.name);
    if (j.name == arg.name) {
      junction = &j;
      element = std::uint32_t(model_->elements.size() + i);
    }
  }
  auto it = names_.find(arg.name);
  if (it == names_.end()) {
    std::sort(switched.begin(), switched.end());
    unknownName(arg.name, arg.nameRange, switched);
    return {};
  }
  if (!junction || !junction->switched || !junction->fsm || it->second.index != element) {
    diags_.report(DiagKind::NotSwitchedJunction, arg.nameRange, {arg.name, e.name});
    return {};
  }
  std::uint32_t state = UINT32_MAX;
  if (active) {
    std::vector<std::string> names;
    for (std::size_t k = 0; k < junction->fsm->states.size(); ++k) {
      names.push_back(junction->fsm->states[k].name);
      if (junction->fsm->states[k].name == arg.member && state == UINT32_MAX)
        state = std::uint32_t(k);
    }
    if (state == UINT32_MAX) {
      std::string best = closestName(arg.member, names);
      if (best.empty())
        diags_.report(DiagKind::UnknownState, arg.memberRange, {arg.name, arg.member});
      else
        diags_.report(DiagKind::UnknownStateSuggest, arg.memberRange, {arg.name, arg.member, best});
      return {};
    }
  }
  auto [slot, inserted] = stateSymbols_.emplace(std::make_pair(element, state), sym::SymbolId{});
  if (inserted) {
    std::string name = active ? "activeState(" + arg.name + "." + arg.member + ")"
                              : "stateIndex(" + arg.name + ")";
    slot->second = g_.addVariable(name, {active ? VariableInfo::ActiveState : VariableInfo::StateIndex,
                                         element, active ? state : 0});
  }
  return ctx().ref(slot->second);
}

sym::ExprId Analyzer::lowerCall(const ast::Expr &e, const ExprScope &scope) {
  auto argCountError = [&](const char *expected) {
    diags_.report(DiagKind::WrongArgumentCount, e.range,
                  {"function", e.name, expected, e.operands.size()});
  };
  // Checks that there are `arity` arguments and lowers them into `args`;
  // false when one of them failed (and was reported).
  auto lowerArguments = [&](int arity, sym::ExprId *args) {
    if (static_cast<int>(e.operands.size()) != arity) {
      argCountError(argumentWords(arity));
      return false;
    }
    bool ok = true;
    for (int k = 0; k < arity; ++k)
      ok = (args[k] = lower(*e.operands[k], scope)).valid() && ok;
    return ok;
  };
  if (e.name == "pre")
    return lowerPre(e, scope);
  if (e.name == "activeState" || e.name == "stateIndex")
    return lowerStateCall(e);
  if (e.name == "table")
    return lowerTable(e, scope);
  if (e.name == "integral") {
    if (scope.signal < 0) {
      diags_.report(DiagKind::IntegralOutsideSignal, e.nameRange);
      return {};
    }
    if (e.operands.size() != 1) {
      argCountError("one argument");
      return {};
    }
    sym::ExprId input = lower(*e.operands[0], scope);
    if (!input.valid())
      return {};
    const Signal &sig = g_.signals[scope.signal];
    if (signalIntegrals_.size() < g_.signals.size())
      signalIntegrals_.resize(g_.signals.size(), 0);
    int k = ++signalIntegrals_[scope.signal];
    Integrator integ;
    integ.name = sig.name + ".integral" + (k > 1 ? std::to_string(k) : "");
    integ.range = e.range;
    integ.input = input;
    integ.state = g_.addVariable(integ.name, {VariableInfo::Integrator,
                                              std::uint32_t(g_.integrators.size())});
    g_.integrators.push_back(integ);
    return ctx().ref(integ.state);
  }
  auto derived = kDerived.find(e.name);
  if (derived != kDerived.end()) {
    const DerivedFunction &fn = derived->second;
    sym::ExprId args[3];
    return lowerArguments(fn.arity, args) ? fn.build(ctx(), args) : sym::ExprId();
  }
  auto it = kFunctions.find(e.name);
  if (it == kFunctions.end()) {
    std::vector<std::string> candidates;
    for (const auto &[name, info] : kFunctions)
      candidates.push_back(name);
    for (const auto &[name, info] : kDerived)
      candidates.push_back(name);
    candidates.push_back("table");
    candidates.push_back("integral");
    candidates.push_back("pre");
    candidates.push_back("activeState");
    candidates.push_back("stateIndex");
    std::string best = closestName(e.name, candidates);
    if (best.empty())
      diags_.report(DiagKind::UnknownFunction, e.nameRange, {e.name});
    else
      diags_.report(DiagKind::UnknownFunctionSuggest, e.nameRange, {e.name, best});
    return {};
  }
  sym::Op op = it->second;
  sym::ExprId args[3];
  return lowerArguments(sym::arity(op), args) ? ctx().make(op, args[0], args[1], args[2])
                                              : sym::ExprId();
}

sym::ExprId Analyzer::lowerCondition(const ast::Guard &cond, sym::ExprId yes, sym::ExprId no,
                                     const ExprScope &scope) {
  switch (cond.kind) {
  case ast::GuardKind::Compare: {
    sym::ExprId lhs = lower(*cond.lhs, scope), rhs = lower(*cond.rhs, scope);
    if (cond.op == CompareOp::Equal) {
      diags_.report(DiagKind::IfEquality, cond.range);
      return {};
    }
    if (!lhs.valid() || !rhs.valid() || !yes.valid() || !no.valid())
      return {};
    switch (cond.op) {
    case CompareOp::Greater: return ifPositive(ctx(), ctx().sub(lhs, rhs), yes, no);
    case CompareOp::Less: return ifPositive(ctx(), ctx().sub(rhs, lhs), yes, no);
    case CompareOp::GreaterEqual: return ifNotNegative(ctx(), ctx().sub(lhs, rhs), yes, no);
    default: return ifNotNegative(ctx(), ctx().sub(rhs, lhs), yes, no);
    }
  }
  case ast::GuardKind::Not:
    return lowerCondition(*cond.children[0], no, yes, scope);
  case ast::GuardKind::And: {
    // a and b and c: if a then (if b and c then yes else no) else no.
    sym::ExprId v = yes;
    for (auto it = cond.children.rbegin(); it != cond.children.rend(); ++it)
      v = lowerCondition(**it, v, no, scope);
    return v;
  }
  case ast::GuardKind::Or: {
    sym::ExprId v = no;
    for (auto it = cond.children.rbegin(); it != cond.children.rend(); ++it)
      v = lowerCondition(**it, yes, v, scope);
    return v;
  }
  case ast::GuardKind::Truth: {
    // A Boolean signal holds where it is 1 (it is 0 or 1).
    if (!isBoolean(*cond.lhs))
      return {};
    sym::ExprId b = lower(*cond.lhs, scope);
    if (!b.valid() || !yes.valid() || !no.valid())
      return {};
    return ifPositive(ctx(), ctx().sub(b, ctx().constant(0.5)), yes, no);
  }
  case ast::GuardKind::Connected:
    break; // a condition of `if` blocks only, decided by flattening
  }
  return {};
}

bool Analyzer::isBoolean(const ast::Expr &e) {
  // Flattening makes `inst.b` one name.
  if (e.kind == ast::ExprKind::Name && e.indices.empty() && booleans_.count(e.name))
    return true;
  diags_.report(DiagKind::NotBoolean, e.range, {sourceText(e.range)});
  return false;
}

} // namespace hbg::sema
