//===- compiler/sema/BondGraph.cpp - The flat bond graph ------------------===//

#include "hbg/sema/BondGraph.h"

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
  for (const Output &o : outputs)
    os << "  output " << o.name << " = " << ctx->print(o.value) << "\n";
  return os.str();
}

} // namespace hbg::bg
