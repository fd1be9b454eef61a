//===- compiler/bondgraph/BondGraph.cpp - The flat bond graph -------------===//

#include "hbg/bondgraph/BondGraph.h"

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <sstream>

namespace hbg::bg {

const char *kindName(ElementKind k) {
  switch (k) {
  case ElementKind::Se: return "Se";
  case ElementKind::Sf: return "Sf";
  case ElementKind::MSe: return "MSe";
  case ElementKind::MSf: return "MSf";
  case ElementKind::C: return "C";
  case ElementKind::I: return "I";
  case ElementKind::R: return "R";
  case ElementKind::TF: return "TF";
  case ElementKind::GY: return "GY";
  case ElementKind::MTF: return "MTF";
  case ElementKind::MGY: return "MGY";
  case ElementKind::Zero: return "0";
  case ElementKind::One: return "1";
  }
  return "?";
}

bool isSource(ElementKind k) {
  return k == ElementKind::Se || k == ElementKind::Sf || k == ElementKind::MSe ||
         k == ElementKind::MSf;
}
bool isStorage(ElementKind k) { return k == ElementKind::C || k == ElementKind::I; }
bool isJunction(ElementKind k) { return k == ElementKind::Zero || k == ElementKind::One; }
bool isTwoPort(ElementKind k) {
  return k == ElementKind::TF || k == ElementKind::GY || k == ElementKind::MTF ||
         k == ElementKind::MGY;
}

namespace {
/// A guard as text: `(lhs op rhs)+`, `not g`, `a and b`, `a or b`, with
/// parentheses where the tighter binding would otherwise be misread.
std::string printGuard(const sym::ExprContext &ctx, const Guard &g) {
  switch (g.kind) {
  case Guard::Compare:
    return "(" + ctx.print(g.lhs) + " " + compareOpText(g.op) + " " + ctx.print(g.rhs) + ")" +
           g.mark;
  case Guard::Not: {
    const Guard &c = g.children[0];
    std::string inner = printGuard(ctx, c);
    return "not " + (c.kind == Guard::And || c.kind == Guard::Or ? "(" + inner + ")" : inner);
  }
  case Guard::And:
  case Guard::Or: {
    std::string out;
    for (std::size_t i = 0; i < g.children.size(); ++i) {
      const Guard &c = g.children[i];
      std::string inner = printGuard(ctx, c);
      // `or` inside `and` needs them; a list nested in a list of its own
      // kind keeps the grouping that was written.
      if (c.kind == Guard::Or || (c.kind == Guard::And && g.kind == Guard::And))
        inner = "(" + inner + ")";
      out += (i ? (g.kind == Guard::And ? " and " : " or ") : "") + inner;
    }
    return out;
  }
  }
  return "?";
}
} // namespace

ElementId BondGraph::otherEnd(BondId b, ElementId e) const {
  const Bond &bd = bond(b);
  return bd.from == e ? bd.to : bd.from;
}

int BondGraph::sign(BondId b, ElementId e) const { return bond(b).to == e ? 1 : -1; }

VariableInfo BondGraph::variable(sym::SymbolId s) const {
  return s.index < variables.size() ? variables[s.index] : VariableInfo{};
}

const Held *BondGraph::heldOf(sym::SymbolId s) const {
  const sym::Symbol &sy = ctx->symbol(s);
  if (sy.kind != sym::SymbolKind::Parameter || sy.slot < parameters.size())
    return nullptr;
  std::size_t i = sy.slot - parameters.size();
  return i < held.size() && held[i].symbol == s ? &held[i] : nullptr;
}

ElementId BondGraph::addElement(ElementKind kind, std::string name, SourceRange range) {
  Element e;
  e.kind = kind;
  e.name = std::move(name);
  e.range = range;
  elements.push_back(std::move(e));
  return ElementId{static_cast<std::uint32_t>(elements.size() - 1)};
}

sym::SymbolId BondGraph::addVariable(std::string name, VariableInfo info) {
  sym::SymbolId s = ctx->addSymbol(std::move(name), sym::SymbolKind::Variable, 0);
  if (variables.size() <= s.index)
    variables.resize(s.index + 1);
  variables[s.index] = info;
  return s;
}

BondId BondGraph::addBond(ElementId from, ElementId to, std::string name, SourceRange range) {
  BondId id{static_cast<std::uint32_t>(bonds.size())};
  if (name.empty())
    name = "b" + std::to_string(id.index + 1);
  Bond b;
  b.range = range;
  b.from = from;
  b.to = to;
  b.effort = addVariable(name + ".e", {VariableInfo::Effort, id.index});
  b.flow = addVariable(name + ".f", {VariableInfo::Flow, id.index});
  b.name = std::move(name);
  bonds.push_back(std::move(b));
  elements[from.index].bonds.push_back(id);
  elements[to.index].bonds.push_back(id);
  return id;
}

std::string BondGraph::verify() const {
  for (std::size_t i = 0; i < bonds.size(); ++i) {
    const Bond &b = bonds[i];
    if (!b.from.valid() || !b.to.valid() || b.from.index >= elements.size() ||
        b.to.index >= elements.size())
      return "bond `" + b.name + "` has an invalid end";
    for (ElementId end : {b.from, b.to}) {
      bool found = false;
      for (BondId x : elements[end.index].bonds)
        found |= x.index == i;
      if (!found)
        return "bond `" + b.name + "` is not registered on `" + elements[end.index].name + "`";
    }
    if (variable(b.effort).kind != VariableInfo::Effort ||
        variable(b.flow).kind != VariableInfo::Flow)
      return "bond `" + b.name + "` has unmapped variables";
  }
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const Element &e = elements[i];
    ElementId id{static_cast<std::uint32_t>(i)};
    if (isTwoPort(e.kind) &&
        (e.bonds.size() != 2 || sign(e.bonds[0], id) != 1 || sign(e.bonds[1], id) != -1))
      return "two-port `" + e.name + "` is not ordered [in, out]";
    if (isStorage(e.kind) && variable(e.state).kind != VariableInfo::State)
      return "storage `" + e.name + "` has no state variable";
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const sym::Symbol &sy = ctx->symbol(parameters[i].symbol);
    if (sy.kind != sym::SymbolKind::Parameter || sy.slot != i)
      return "parameter `" + parameters[i].name + "` is not in slot " + std::to_string(i);
  }
  for (std::size_t i = 0; i < held.size(); ++i) {
    const Held &h = held[i];
    const sym::Symbol &sy = ctx->symbol(h.symbol);
    if (sy.kind != sym::SymbolKind::Parameter || sy.slot != parameters.size() + i)
      return "held value `" + h.name + "` is not in slot " + std::to_string(parameters.size() + i);
    if (!h.value.valid())
      return "held value `" + h.name + "` has no value";
    if (h.kind == Held::Kind::Discrete &&
        (!h.initial.valid() || h.clock >= held.size() ||
         (held[h.clock].kind != Held::Kind::Clock && held[h.clock].kind != Held::Kind::Edge)))
      return "discrete value `" + h.name + "` has no initial value or clock";
    // What is held is read off the model's variables at an event: another
    // `pre` or a law's local name would have nothing to be read from. A
    // discrete value is a variable like the others there.
    for (sym::SymbolId s : ctx->symbolsOf(h.value)) {
      const sym::Symbol &used = ctx->symbol(s);
      const Held *other = heldOf(s);
      if (used.kind == sym::SymbolKind::Parameter && used.slot >= parameters.size() &&
          !(other && other->kind == Held::Kind::Discrete))
        return "held value `" + h.name + "` holds another held value";
      if (used.kind == sym::SymbolKind::Variable && variable(s).kind == VariableInfo::None)
        return "held value `" + h.name + "` uses the unmapped symbol `" + used.name + "`";
    }
  }
  return "";
}

std::string BondGraph::dump() const {
  std::ostringstream os;
  os << "bond graph " << modelName << "\n";
  for (const Parameter &p : parameters)
    os << "  parameter " << p.name << " = " << ctx->print(p.defaultValue) << "\n";
  for (const Element &e : elements) {
    os << "  " << kindName(e.kind) << " " << e.name;
    if (e.law != LawForm::Linear)
      os << " (" << (e.law == LawForm::EffortLaw ? "e" : "f") << " = " << ctx->print(e.lawExpr)
         << ")";
    else if (e.value.valid())
      os << " (" << ctx->print(e.value) << ")";
    if (e.initial.valid())
      os << " initial " << ctx->symbol(e.state).name << " = " << ctx->print(e.initial);
    if (e.fsm) {
      os << " switched\n";
      for (std::size_t i = 0; i < e.fsm->states.size(); ++i) {
        const FsmState &st = e.fsm->states[i];
        os << "    state " << st.name << ": " << (st.on ? "on" : "off")
           << (i == e.fsm->initial ? " initial" : "") << "\n";
      }
      for (const FsmTransition &t : e.fsm->transitions)
        os << "    " << e.fsm->states[t.from].name << " -> " << e.fsm->states[t.to].name
           << " when " << printGuard(*ctx, t.guard) << "\n";
      continue;
    }
    os << "\n";
  }
  for (const Bond &b : bonds)
    os << "  bond " << b.name << ": " << elements[b.from.index].name << " -> "
       << elements[b.to.index].name << "\n";
  for (const Signal &s : signals)
    os << "  signal " << s.name << " = " << ctx->print(s.value) << "\n";
  for (const Integrator &i : integrators)
    os << "  integrator " << i.name << " = integral(" << ctx->print(i.input) << ")\n";
  for (const Held &h : held) {
    switch (h.kind) {
    case Held::Kind::Pre: os << "  held " << h.name << " = " << ctx->print(h.value) << "\n"; break;
    case Held::Kind::Discrete:
      os << "  discrete " << h.name << "(" << ctx->print(h.initial) << ") when "
         << held[h.clock].name << " = " << ctx->print(h.value) << "\n";
      break;
    case Held::Kind::Clock:
      os << "  clock " << h.name << ": phase " << ctx->print(h.value) << "\n";
      break;
    case Held::Kind::Edge: os << "  edge " << h.name << " of " << ctx->print(h.value) << "\n"; break;
    case Held::Kind::Started:
    case Held::Kind::Armed:
    case Held::Kind::Settle:
    case Held::Kind::Fired: break;
    }
  }
  for (const Output &o : outputs)
    os << "  output " << o.name << " = " << ctx->print(o.value) << "\n";
  // The experiment's settings in the order written.
  for (const auto &[name, range] : experiment.ranges) {
    (void)range;
    os << "  experiment " << name << " = ";
    if (name == "method")
      os << experiment.method;
    for (const ExperimentSetting &s : experimentSettings())
      if (name == s.name) {
        sym::ExprId value = experiment.*(s.field);
        os << (value.valid() ? ctx->print(value) : std::string("?"));
      }
    os << "\n";
  }
  return os.str();
}

const std::vector<ExperimentSetting> &experimentSettings() {
  static const std::vector<ExperimentSetting> settings = {
#define HBG_SETTING(Id, name, field, positive) {name, &Experiment::field, positive},
#include "hbg/runtime/ExperimentSettings.def"
  };
  return settings;
}

std::vector<double> defaultParameterValues(const BondGraph &g) {
  // Kahn's algorithm over the parameters' reads: no recursion, so a long
  // chain of parameters costs its length and no stack.
  const sym::ExprContext &ctx = *g.ctx;
  std::size_t n = g.parameters.size();
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t i = 0; i < n; ++i)
    bySymbol[g.parameters[i].symbol.index] = i;
  std::vector<std::vector<std::uint32_t>> readers(n);
  std::vector<std::size_t> waiting(n, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    for (sym::SymbolId s : ctx.symbolsOf(g.parameters[i].defaultValue)) {
      auto it = bySymbol.find(s.index);
      if (it != bySymbol.end()) {
        readers[it->second].push_back(i);
        ++waiting[i];
      }
    }
  std::vector<double> values(n, std::nan(""));
  std::vector<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < n; ++i)
    if (waiting[i] == 0)
      ready.push_back(i);
  while (!ready.empty()) {
    std::uint32_t i = ready.back();
    ready.pop_back();
    values[i] = ctx.evaluate(g.parameters[i].defaultValue, [&](sym::SymbolId s) {
      auto it = bySymbol.find(s.index);
      return it == bySymbol.end() ? std::nan("") : values[it->second];
    });
    for (std::uint32_t r : readers[i])
      if (--waiting[r] == 0)
        ready.push_back(r);
  }
  return values;
}

} // namespace hbg::bg
