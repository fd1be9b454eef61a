//===- compiler/equations/EquationSystem.cpp - The equations as data -----===//

#include "hbg/equations/Equations.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

namespace hbg::eq {

bool EquationSystem::loopsLinear() const {
  return std::all_of(loops.begin(), loops.end(),
                     [](const AlgebraicLoop &l) { return l.unknowns.empty() || l.linear; });
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
    for (sym::SymbolId s : ctx->symbolsOf(parameters[i].defaultValue)) {
      auto it = bySymbol.find(s.index);
      if (it != bySymbol.end() && state[it->second] == 0)
        todo.push_back({it->second, false});
    }
  }
  return order;
}

std::string EquationSystem::verify() const {
  // What is wrong with `e`, to follow the name of what it is (named only
  // for a message): " is missing", ...; "" when nothing is.
  auto check = [&](sym::ExprId e, bool parametric) -> std::string {
    if (!e.valid())
      return " is missing";
    for (sym::SymbolId s : ctx->symbolsOf(e)) {
      const sym::Symbol &sy = ctx->symbol(s);
      if (sy.kind == sym::SymbolKind::Variable)
        return " still refers to `" + sy.name + "`";
      // Held values are Parameter symbols after the parameters; they change
      // at events, so defaults and initial values cannot use them.
      if (parametric && (sy.kind != sym::SymbolKind::Parameter || sy.slot >= parameters.size()))
        return " must depend on parameters only";
      if (sy.kind == sym::SymbolKind::State && sy.slot >= states.size())
        return " refers to state slot " + std::to_string(sy.slot);
      if (sy.kind == sym::SymbolKind::Parameter &&
          sy.slot >= parameters.size() + numHeld + kinks.size())
        return " refers to parameter slot " + std::to_string(sy.slot);
      if (sy.kind == sym::SymbolKind::Algebraic &&
          (sy.slot < states.size() || sy.slot >= states.size() + unknowns.size()))
        return " refers to unknown slot " + std::to_string(sy.slot);
    }
    return "";
  };
  if (residuals.size() != unknowns.size() || jacobian.size() != jacobianPattern.nonZeros() ||
      (!unknowns.empty() && jacobianPattern.colStart.size() != unknowns.size() + 1))
    return "loops need one residual per unknown and a square Jacobian";
  for (std::size_t i = 0; i < residuals.size(); ++i)
    if (auto m = check(residuals[i], false); !m.empty())
      return "residual " + std::to_string(i) + m;
  for (const sym::ExprId &j : jacobian)
    if (auto m = check(j, false); !m.empty())
      return "Jacobian entry" + m;
  for (const DependentState &d : dependent)
    if (auto m = check(d.value, false); !m.empty())
      return "dependent state `" + d.name + "`" + m;
  for (const Parameter &p : parameters)
    if (auto m = check(p.defaultValue, true); !m.empty())
      return "default of `" + p.name + "`" + m;
  for (const State &s : states) {
    if (auto m = check(s.initial, true); !m.empty())
      return "initial value of `" + s.name + "`" + m;
    if (auto m = check(s.derivative, false); !m.empty())
      return "derivative of `" + s.name + "`" + m;
  }
  for (const Output &o : outputs)
    if (auto m = check(o.value, false); !m.empty())
      return "output `" + o.name + "`" + m;
  for (const Kink &k : kinks)
    if (auto m = check(k.argument, false); !m.empty())
      return "argument of `" + k.text + "`" + m;
  if (!guardImpulse.empty() && guardImpulse.size() != guards.size() * dependent.size())
    return "guard impulses need one entry per guard side and dependent state";
  for (const sym::ExprId &g : guardImpulse)
    if (auto m = check(g, false); !m.empty())
      return "guard impulse" + m;
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
  if (!dependent.empty()) {
    os << "dependent states (storage in derivative causality)\n";
    for (const DependentState &d : dependent)
      os << "  " << d.name << " = " << ctx->print(d.value) << "\n";
  }
  if (!loops.empty()) {
    os << "algebraic loops\n";
    for (std::size_t i = 0; i < loops.size(); ++i) {
      const AlgebraicLoop &l = loops[i];
      os << "  loop " << i + 1 << ": " << l.path << "\n    tearing:";
      for (const std::string &t : l.tearing)
        os << " " << t;
      os << "\n";
      if (!l.unknowns.empty()) {
        os << (l.linear ? "    linear, solved at run time by a sparse LU, "
                        : "    nonlinear: Newton, ")
           << l.unknowns.size() << (l.unknowns.size() == 1 ? " unknown" : " unknowns") << "\n";
        continue;
      }
      os << "    linear, solved " << (l.closedForm ? "in closed form" : "by a generated LU")
         << "\n";
      for (std::size_t k = 0; k < l.tearing.size(); ++k)
        os << "    " << l.tearing[k] << " = " << ctx->print(l.solution[k]) << "\n";
    }
  }
  if (!unknowns.empty()) {
    os << (loopsLinear() ? "loop residuals\n" : "newton residuals\n");
    for (std::size_t i = 0; i < unknowns.size(); ++i)
      os << "  0 = " << ctx->print(residuals[i]) << "   (for " << unknowns[i].name << ")\n";
  }
  if (!kinks.empty()) {
    os << "kinks (branch held between events, argument crossing zero is an event)\n";
    for (const Kink &k : kinks)
      os << "  " << ctx->symbol(k.branch).name << ": " << k.text << ", crossing "
         << ctx->print(k.argument) << "\n";
  }
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
