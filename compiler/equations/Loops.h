//===- compiler/equations/Loops.h - Closing algebraic loops ---------------===//
//
// The equations stage tears every algebraic loop: a tearing variable z
// stands in for one variable of the loop while the rest of the model is
// resolved, and a residual r(z) = 0 records the equation that closes it.
// This file groups the residuals into independent loops (strongly connected
// components of "residual k uses z_j"), solves each linear one symbolically
// and turns the nonlinear ones into unknowns for Newton's method.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/equations/Equations.h"

#include <functional>
#include <unordered_map>

namespace hbg::eq {

/// One tearing variable and the equation that closes its loop.
struct TornVariable {
  std::string name;     ///< e.g. "r2.f"
  sym::SymbolId symbol; ///< kind Variable
  sym::ExprId residual; ///< r(t, x, z) = 0
  std::string path;     ///< the loop's elements and bonds, for messages
  SourceRange at;       ///< where to point errors
};

/// What closing the loops produced.
struct ClosedLoops {
  /// Tearing-variable symbol index -> its solution (linear) or its
  /// Algebraic unknown (nonlinear). Substitute into every expression.
  std::unordered_map<std::uint32_t, sym::ExprId> substitution;
  /// Loops solved at run time: node id (after substitution) -> the
  /// unknown that stands for it, or the node rebuilt over such unknowns.
  /// Applied after the substitution (replaceNodes), it lets the state
  /// equations and outputs read a large loop's node values instead of
  /// the long causal chains they stand for.
  std::unordered_map<std::uint32_t, sym::ExprId> nodes;
};

/// Replaces, in every root, each node of `nodes` by its mapped
/// expression, rebuilding the nodes above it.
void replaceNodes(sym::ExprContext &ctx, const std::unordered_map<std::uint32_t, sym::ExprId> &nodes,
                  std::vector<sym::ExprId *> roots);

/// Solves the loops of `torn`, appending loops, unknowns, residuals and the
/// Jacobian to `sys` (whose states are final). `nominal` gives the value of
/// a Time, State or Parameter symbol at the defaults, for detecting loops
/// that are singular there. Linear loops of more than `runTimeLoopMin`
/// tearing variables are solved at run time. Returns false after
/// reporting an error.
bool closeLoops(const std::vector<TornVariable> &torn, EquationSystem &sys,
                const std::function<double(sym::SymbolId)> &nominal, std::size_t runTimeLoopMin,
                DiagnosticEngine &diags, ClosedLoops &out);

} // namespace hbg::eq
