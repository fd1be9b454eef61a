//===- compiler/equations/Loops.cpp - Closing algebraic loops -------------===//

#include "Loops.h"

#include "hbg/symbolic/LinearSolve.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>

namespace hbg::eq {

namespace {

/// Strongly connected components of a dependency graph (edges k -> deps[k]),
/// in an order where every component comes after those it depends on
/// (Tarjan's algorithm emits them that way).
std::vector<std::vector<std::uint32_t>>
components(const std::vector<std::vector<std::uint32_t>> &deps) {
  std::size_t n = deps.size();
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<char> onStack(n, 0);
  std::vector<std::uint32_t> stack;
  std::vector<std::vector<std::uint32_t>> out;
  int counter = 0;
  // Iterative depth-first search: (node, next edge to follow).
  std::vector<std::pair<std::uint32_t, std::size_t>> work;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (index[root] >= 0)
      continue;
    work.push_back({root, 0});
    while (!work.empty()) {
      auto &[v, edge] = work.back();
      if (edge == 0 && index[v] < 0) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        onStack[v] = 1;
      }
      if (edge < deps[v].size()) {
        std::uint32_t w = deps[v][edge++];
        if (index[w] < 0)
          work.push_back({w, 0});
        else if (onStack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      if (low[v] == index[v]) {
        std::vector<std::uint32_t> comp;
        std::uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = 0;
          comp.push_back(w);
        } while (w != v);
        std::sort(comp.begin(), comp.end());
        out.push_back(std::move(comp));
      }
      std::uint32_t finished = v;
      work.pop_back();
      if (!work.empty())
        low[work.back().first] = std::min(low[work.back().first], low[finished]);
    }
  }
  return out;
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? (i + 1 == names.size() ? " and " : ", ") : "") + ("`" + names[i] + "`");
  return out;
}

} // namespace

bool closeLoops(const std::vector<TornVariable> &torn, EquationSystem &sys,
                const std::function<double(sym::SymbolId)> &nominal, DiagnosticEngine &diags,
                ClosedLoops &out) {
  sym::ExprContext &ctx = *sys.ctx;
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t k = 0; k < torn.size(); ++k)
    bySymbol[torn[k].symbol.index] = k;
  std::vector<std::vector<std::uint32_t>> deps(torn.size());
  for (std::uint32_t k = 0; k < torn.size(); ++k)
    for (sym::SymbolId s : ctx.symbolsOf(torn[k].residual)) {
      auto it = bySymbol.find(s.index);
      if (it != bySymbol.end())
        deps[k].push_back(it->second);
    }

  const auto numStates = static_cast<std::uint32_t>(sys.states.size());
  for (const std::vector<std::uint32_t> &comp : components(deps)) {
    std::size_t m = comp.size();
    AlgebraicLoop loop;
    std::vector<std::string> paths;
    std::vector<sym::ExprId> res;
    for (std::uint32_t k : comp) {
      loop.tearing.push_back(torn[k].name);
      if (std::find(paths.begin(), paths.end(), torn[k].path) == paths.end())
        paths.push_back(torn[k].path);
      res.push_back(ctx.substitute(torn[k].residual, out.substitution));
    }
    for (std::size_t i = 0; i < paths.size(); ++i)
      loop.path += (i ? "; " : "") + paths[i];
    const TornVariable &first = torn[comp[0]];

    // Row-major Jacobian of the residuals in this loop's tearing variables.
    std::vector<sym::ExprId> jac(m * m);
    bool linear = true;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j) {
        jac[i * m + j] = ctx.derivative(res[i], torn[comp[j]].symbol);
        for (std::uint32_t k : comp)
          linear = linear && !ctx.dependsOn(jac[i * m + j], torn[k].symbol);
      }
    loop.linear = linear;

    if (linear) {
      // r(z) = J z + r(0) = 0.
      std::unordered_map<std::uint32_t, sym::ExprId> zero;
      for (std::uint32_t k : comp)
        zero[torn[k].symbol.index] = ctx.constant(0);
      std::vector<sym::ExprId> rhs;
      for (sym::ExprId r : res)
        rhs.push_back(ctx.neg(ctx.substitute(r, zero)));
      sym::LinearSolution sol = sym::solveLinear(ctx, m, jac, rhs);
      if (sol.z.empty()) {
        diags.report(DiagKind::SingularLoop, first.at, {loop.path, joinNames(loop.tearing)});
        return false;
      }
      // A loop may be regular in structure yet singular for the values the
      // model is run with: check the Jacobian at the defaults where it can
      // be evaluated (it cannot when it uses Newton unknowns).
      // Returns 1 when singular at the point, 0 when regular, -1 when the
      // Jacobian cannot be evaluated there.
      auto singularAt = [&](const std::function<double(sym::SymbolId)> &at) {
        Eigen::MatrixXd numeric(m, m);
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < m; ++j) {
            numeric(i, j) = ctx.evaluate(jac[i * m + j], at);
            if (!std::isfinite(numeric(i, j)))
              return -1;
          }
        Eigen::FullPivLU<Eigen::MatrixXd> lu(numeric);
        lu.setThreshold(1e-12);
        return lu.rank() < static_cast<Eigen::Index>(m) ? 1 : 0;
      };
      if (singularAt(nominal) == 1) {
        // Singular for other values too (the symbolic solver did not see
        // that, e.g., `r * (1 / r)` is 1)? Move every value by its own
        // factor, so that values equal at the defaults differ.
        auto elsewhere = [&](sym::SymbolId s) {
          double u = std::fmod(0.6180339887 * (s.index + 1), 1.0);
          return nominal(s) * (1.25 + 0.5 * u) + 0.125 * (1 + u);
        };
        bool always = singularAt(elsewhere) == 1;
        diags.report(always ? DiagKind::SingularLoop : DiagKind::SingularLoopAtDefaults, first.at,
                     {loop.path, joinNames(loop.tearing)});
        return false;
      }
      loop.closedForm = sol.method == sym::SolveMethod::ClosedForm;
      loop.solution = sol.z;
      for (std::size_t i = 0; i < m; ++i)
        out.substitution[torn[comp[i]].symbol.index] = sol.z[i];
    } else {
      // Newton unknowns live after the states in the generated code's x.
      std::unordered_map<std::uint32_t, sym::ExprId> toUnknown;
      for (std::uint32_t k : comp) {
        auto index = static_cast<std::uint32_t>(sys.unknowns.size());
        sym::SymbolId s = ctx.addSymbol(torn[k].name, sym::SymbolKind::Algebraic, numStates + index);
        sys.unknowns.push_back({torn[k].name, s});
        loop.unknowns.push_back(index);
        toUnknown[torn[k].symbol.index] = ctx.ref(s);
        out.substitution[torn[k].symbol.index] = ctx.ref(s);
      }
      for (sym::ExprId r : res)
        sys.residuals.push_back(ctx.substitute(r, toUnknown));
    }
    sys.loops.push_back(std::move(loop));
  }

  // Newton works on all nonlinear loops together; later loops' residuals
  // use earlier unknowns, so the Jacobian is block triangular.
  std::size_t u = sys.unknowns.size();
  sys.jacobian.assign(u * u, ctx.constant(0));
  for (std::size_t col = 0; col < u; ++col)
    for (std::size_t row = 0; row < u; ++row)
      sys.jacobian[col * u + row] = ctx.derivative(sys.residuals[row], sys.unknowns[col].symbol);
  return true;
}

} // namespace hbg::eq
