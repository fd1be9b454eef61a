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

#include "hbg/causality/Causality.h"
#include "hbg/sema/BondGraph.h"
#include "hbg/support/Diagnostics.h"

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
};

/// A model parameter: p[slot] and its default (of other parameters).
struct Parameter {
  std::string name;
  sym::SymbolId symbol;
  sym::ExprId defaultValue;
};

/// A recorded output.
struct Output {
  std::string name;
  sym::ExprId value;
};

/// The model as an ODE system dx/dt = f(t, x, p), y = g(t, x, p).
struct EquationSystem {
  std::shared_ptr<sym::ExprContext> ctx;
  std::string modelName;
  std::vector<Parameter> parameters;
  std::vector<State> states;
  std::vector<Output> outputs;
  /// Every bond's effort and flow (for `explain`), by bond index.
  std::vector<std::string> bondNames;
  std::vector<sym::ExprId> bondEffort, bondFlow;

  /// Parameter indices in an order where each default uses only earlier ones.
  std::vector<std::uint32_t> parameterOrder() const;
  /// Checks that every expression uses only Time, State and Parameter
  /// symbols with slots in range. Returns "" or the first violation.
  std::string verify() const;
  /// The equations as text (`--emit=equations`, `hbgc explain`).
  std::string dump() const;
};

/// Builds the state equations. A cycle the causality left in the equations
/// (a modulated element driven by a variable it sets itself) is reported as
/// an algebraic loop; the result is then empty.
std::optional<EquationSystem> buildEquations(const bg::BondGraph &g,
                                             const causality::CausalAssignment &ca,
                                             DiagnosticEngine &diags);

} // namespace hbg::eq
