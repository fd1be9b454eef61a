//===- hbg/symbolic/LinearSolve.h - Solving linear systems in the DAG ------===//
//
// Algebraic loops that are linear in their tearing variables are solved at
// compile time: A z = b with A and b expressions of time, states and
// parameters becomes z = expressions, so the generated right-hand side does
// no iteration. Small systems get closed forms (Cramer's rule; the builders'
// simplification keeps them compact); larger ones a straight-line LU
// factorisation with partial pivoting, where the pivot choice is made at run
// time by Select nodes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/symbolic/Expr.h"

#include <vector>

namespace hbg::sym {

/// How solveLinear solved a system.
enum class SolveMethod { ClosedForm, LU };

/// Settings of solveLinear.
struct LinearSolveOptions {
  /// Systems up to this size get closed forms; larger ones the LU.
  std::size_t closedFormMax = 3;
};

/// The solution of A z = b.
struct LinearSolution {
  /// z[i]; empty when the system is structurally singular.
  std::vector<ExprId> z;
  SolveMethod method = SolveMethod::ClosedForm;
  /// det(A) for closed forms (invalid for LU).
  ExprId determinant;
};

/// True when no assignment of values to the non-constant entries of the
/// n x n row-major matrix `a` can make it regular: its pattern of entries
/// that are not the constant 0 has no perfect matching.
bool structurallySingular(const ExprContext &ctx, std::size_t n, const std::vector<ExprId> &a);

/// Solves A z = b, A row-major n x n. Returns an empty `z` when A is
/// structurally singular (or its closed-form determinant folds to 0).
LinearSolution solveLinear(ExprContext &ctx, std::size_t n, const std::vector<ExprId> &a,
                           const std::vector<ExprId> &b, const LinearSolveOptions &opts = {});

} // namespace hbg::sym
