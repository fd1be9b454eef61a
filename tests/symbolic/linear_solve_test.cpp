#include "hbg/symbolic/LinearSolve.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>

using namespace hbg::sym;

namespace {
/// A system whose entries are parameters p[r*n+c] (and b[r] = p[n*n+r]),
/// so the solution is fully symbolic and checked by evaluation.
struct Symbolic {
  ExprContext ctx;
  std::size_t n;
  std::vector<ExprId> a, b;
  std::vector<SymbolId> syms;
  explicit Symbolic(std::size_t n, const std::vector<bool> &zero = {}) : n(n) {
    for (std::size_t i = 0; i < n * n + n; ++i) {
      syms.push_back(ctx.addSymbol("p" + std::to_string(i), SymbolKind::Parameter, i));
      bool z = i < zero.size() && zero[i];
      (i < n * n ? a : b).push_back(z ? ctx.constant(0) : ctx.ref(syms.back()));
    }
  }
  /// Max |A z - b| with entries `vals`.
  double residual(const LinearSolution &s, const std::vector<double> &vals) {
    auto value = [&](SymbolId id) { return vals.at(id.index - 1); }; // symbol 0 is time
    std::vector<double> z;
    for (ExprId e : s.z)
      z.push_back(ctx.evaluate(e, value));
    double worst = 0;
    for (std::size_t r = 0; r < n; ++r) {
      double sum = -ctx.evaluate(b[r], value);
      for (std::size_t c = 0; c < n; ++c)
        sum += ctx.evaluate(a[r * n + c], value) * z[c];
      worst = std::max(worst, std::fabs(sum));
    }
    return worst;
  }
};
} // namespace

TEST_CASE("closed forms for small systems, LU above the bound, both exact") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t n = 1; n <= 7; ++n) {
    CAPTURE(n);
    Symbolic s(n);
    LinearSolution sol = solveLinear(s.ctx, n, s.a, s.b);
    REQUIRE(sol.z.size() == n);
    CHECK(sol.method == (n <= 3 ? SolveMethod::ClosedForm : SolveMethod::LU));
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> vals(n * n + n);
      for (double &v : vals)
        v = u(rng);
      CHECK(s.residual(sol, vals) < 1e-9);
    }
  }
}

TEST_CASE("LU pivots at run time: a zero diagonal is handled") {
  // Diagonal entries may be zero at run time; pivoting must route around them.
  for (std::size_t n : {4u, 6u}) {
    Symbolic s(n);
    LinearSolution sol = solveLinear(s.ctx, n, s.a, s.b);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> vals(n * n + n);
      for (double &v : vals)
        v = u(rng);
      for (std::size_t i = 0; i < n; ++i)
        vals[i * n + i] = 0; // a permutation-like matrix: no pivot on the diagonal
      CHECK(s.residual(sol, vals) < 1e-8);
    }
  }
}

TEST_CASE("a 2x2 closed form is compact") {
  Symbolic s(2, {false, true, false, false}); // a01 = 0: lower triangular
  LinearSolution sol = solveLinear(s.ctx, 2, s.a, s.b);
  REQUIRE(sol.z.size() == 2);
  CHECK(s.ctx.print(sol.determinant) == "p0 * p3");
  CHECK(s.ctx.print(sol.z[0]) == "p3 * p4 / (p0 * p3)");
}

TEST_CASE("structural singularity is detected") {
  // Column 1 is all zero.
  Symbolic s(3, {false, true, false, false, true, false, false, true, false});
  CHECK(structurallySingular(s.ctx, 3, s.a));
  CHECK(solveLinear(s.ctx, 3, s.a, s.b).z.empty());
  Symbolic big(5, {false, true, false, false, false, false, true, false, false, false,
                   false, true, false, false, false, false, true, false, false, false,
                   false, true, false, false, false});
  CHECK(solveLinear(big.ctx, 5, big.a, big.b).z.empty());
  // Numeric cancellation in the closed form also counts.
  ExprContext ctx;
  ExprId one = ctx.constant(1), two = ctx.constant(2);
  CHECK(solveLinear(ctx, 2, {one, two, one, two}, {one, one}).z.empty());
  CHECK_FALSE(structurallySingular(ctx, 2, {one, two, one, two}));
}
