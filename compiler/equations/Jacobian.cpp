//===- compiler/equations/Jacobian.cpp - Sparse symbolic Jacobians --------===//
//
// The derivatives the stiff method and linearize need, taken on the DAG:
// each derivative d f_i / d x_j only for the states f_i reads (structural
// non-zeros), and through nonlinear loops the parts of the implicit
// function theorem, which the runtime combines with the loop's own
// Jacobian at the solved point.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include <unordered_map>

namespace hbg::eq {

StateJacobian stateJacobian(const EquationSystem &sys) {
  sym::ExprContext &ctx = *sys.ctx;
  StateJacobian jac;
  std::unordered_map<std::uint32_t, std::uint32_t> stateOf, unknownOf;
  for (std::size_t j = 0; j < sys.states.size(); ++j)
    stateOf[sys.states[j].symbol.index] = static_cast<std::uint32_t>(j);
  for (std::size_t k = 0; k < sys.unknowns.size(); ++k)
    unknownOf[sys.unknowns[k].symbol.index] = static_cast<std::uint32_t>(k);
  sym::SymbolId time = ctx.timeSymbol();
  // Derivatives of `e` by the states and unknowns it reads, as entries of
  // row `row`, and by time.
  auto differentiate = [&](sym::ExprId e, std::uint32_t row, std::vector<StateJacobian::Entry> &byState,
                           std::vector<StateJacobian::Entry> *byUnknown) {
    sym::ExprId dt = ctx.constant(0);
    for (sym::SymbolId s : ctx.symbolsOf(e)) {
      if (s == time) {
        dt = ctx.derivative(e, s);
        continue;
      }
      auto st = stateOf.find(s.index);
      auto un = unknownOf.find(s.index);
      std::vector<StateJacobian::Entry> *into =
          st != stateOf.end() ? &byState : (un != unknownOf.end() ? byUnknown : nullptr);
      if (!into)
        continue;
      sym::ExprId d = ctx.derivative(e, s);
      if (!ctx.isConst(d, 0))
        into->push_back({row, st != stateOf.end() ? st->second : un->second, d});
    }
    return dt;
  };
  for (std::size_t i = 0; i < sys.states.size(); ++i)
    jac.dfdt.push_back(differentiate(sys.states[i].derivative, static_cast<std::uint32_t>(i),
                                     jac.fx, &jac.fz));
  for (std::size_t k = 0; k < sys.residuals.size(); ++k)
    jac.drdt.push_back(
        differentiate(sys.residuals[k], static_cast<std::uint32_t>(k), jac.rx, nullptr));
  return jac;
}

} // namespace hbg::eq
