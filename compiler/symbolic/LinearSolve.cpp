//===- compiler/symbolic/LinearSolve.cpp - Linear systems in the DAG ------===//

#include "hbg/symbolic/LinearSolve.h"

#include <functional>

namespace hbg::sym {

bool structurallySingular(const ExprContext &ctx, std::size_t n, const std::vector<ExprId> &a) {
  // Kuhn's augmenting paths: n is the size of one algebraic loop, small.
  std::vector<int> rowOfCol(n, -1);
  std::vector<char> seen;
  std::function<bool(std::size_t)> augment = [&](std::size_t row) {
    for (std::size_t c = 0; c < n; ++c) {
      if (seen[c] || ctx.isConst(a[row * n + c], 0))
        continue;
      seen[c] = 1;
      if (rowOfCol[c] < 0 || augment(static_cast<std::size_t>(rowOfCol[c]))) {
        rowOfCol[c] = static_cast<int>(row);
        return true;
      }
    }
    return false;
  };
  for (std::size_t r = 0; r < n; ++r) {
    seen.assign(n, 0);
    if (!augment(r))
      return true;
  }
  return false;
}

namespace {

/// Determinant by cofactor expansion along the first row; for n <= 3 this
/// is the familiar closed form and stays small.
ExprId determinant(ExprContext &ctx, std::size_t n, const std::vector<ExprId> &m) {
  if (n == 1)
    return m[0];
  ExprId det = ctx.constant(0);
  for (std::size_t c = 0; c < n; ++c) {
    if (ctx.isConst(m[c], 0))
      continue;
    std::vector<ExprId> minor;
    for (std::size_t r = 1; r < n; ++r)
      for (std::size_t k = 0; k < n; ++k)
        if (k != c)
          minor.push_back(m[r * n + k]);
    ExprId term = ctx.mul(m[c], determinant(ctx, n - 1, minor));
    det = c % 2 == 0 ? ctx.add(det, term) : ctx.sub(det, term);
  }
  return det;
}

LinearSolution cramer(ExprContext &ctx, std::size_t n, const std::vector<ExprId> &a,
                      const std::vector<ExprId> &b) {
  LinearSolution s;
  s.method = SolveMethod::ClosedForm;
  s.determinant = determinant(ctx, n, a);
  if (ctx.isConst(s.determinant, 0))
    return s;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<ExprId> ai = a;
    for (std::size_t r = 0; r < n; ++r)
      ai[r * n + i] = b[r];
    s.z.push_back(ctx.div(determinant(ctx, n, ai), s.determinant));
  }
  return s;
}

LinearSolution lu(ExprContext &ctx, std::size_t n, std::vector<ExprId> m, std::vector<ExprId> v) {
  auto at = [&](std::size_t r, std::size_t c) -> ExprId & { return m[r * n + c]; };
  for (std::size_t k = 0; k + 1 < n; ++k) {
    // Partial pivoting decided at run time: the row of largest |m[i][k]|.
    ExprId best = ctx.unary(Op::Abs, at(k, k));
    ExprId piv = ctx.constant(static_cast<double>(k));
    for (std::size_t i = k + 1; i < n; ++i) {
      if (ctx.isConst(at(i, k), 0))
        continue;
      ExprId mag = ctx.unary(Op::Abs, at(i, k));
      ExprId larger = ctx.sub(mag, best);
      best = ctx.select(larger, mag, best);
      piv = ctx.select(larger, ctx.constant(static_cast<double>(i)), piv);
    }
    if (!ctx.isConst(piv)) {
      // isPivot[i] > 0 exactly when piv == i (piv holds a small integer).
      std::vector<ExprId> isPivot(n);
      for (std::size_t i = k + 1; i < n; ++i)
        isPivot[i] = ctx.sub(ctx.constant(0.5),
                             ctx.unary(Op::Abs, ctx.sub(piv, ctx.constant(static_cast<double>(i)))));
      auto swapColumn = [&](auto get) {
        ExprId rowK = get(k);
        ExprId newK = rowK;
        for (std::size_t i = k + 1; i < n; ++i) {
          ExprId rowI = get(i);
          newK = ctx.select(isPivot[i], rowI, newK);
          get(i) = ctx.select(isPivot[i], rowK, rowI);
        }
        get(k) = newK;
      };
      for (std::size_t c = k; c < n; ++c)
        swapColumn([&](std::size_t r) -> ExprId & { return at(r, c); });
      swapColumn([&](std::size_t r) -> ExprId & { return v[r]; });
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      if (ctx.isConst(at(i, k), 0))
        continue;
      ExprId l = ctx.div(at(i, k), at(k, k));
      for (std::size_t c = k + 1; c < n; ++c)
        at(i, c) = ctx.sub(at(i, c), ctx.mul(l, at(k, c)));
      v[i] = ctx.sub(v[i], ctx.mul(l, v[k]));
      at(i, k) = ctx.constant(0);
    }
  }
  LinearSolution s;
  s.method = SolveMethod::LU;
  s.z.assign(n, ExprId());
  for (std::size_t i = n; i-- > 0;) {
    ExprId sum = v[i];
    for (std::size_t c = i + 1; c < n; ++c)
      sum = ctx.sub(sum, ctx.mul(at(i, c), s.z[c]));
    s.z[i] = ctx.div(sum, at(i, i));
  }
  return s;
}

} // namespace

LinearSolution solveLinear(ExprContext &ctx, std::size_t n, const std::vector<ExprId> &a,
                           const std::vector<ExprId> &b, const LinearSolveOptions &opts) {
  if (structurallySingular(ctx, n, a)) {
    LinearSolution s;
    s.method = n <= opts.closedFormMax ? SolveMethod::ClosedForm : SolveMethod::LU;
    return s;
  }
  if (n <= opts.closedFormMax)
    return cramer(ctx, n, a, b);
  return lu(ctx, n, a, b);
}

} // namespace hbg::sym
