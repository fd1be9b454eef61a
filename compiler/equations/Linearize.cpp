//===- compiler/equations/Linearize.cpp - State-space models of a mode ----===//
//
// `hbgc linearize`: the matrices of a mode's equations about an operating
// point, from symbolic derivatives. Each source becomes an input by adding
// a symbol to its value, so that B and D are derivatives by that symbol at
// zero, whatever the source's own expression. Through nonlinear loops
// the unknowns z are solved at the operating point by Newton's method and
// differentiated implicitly: dz/ds = -(dr/dz)^-1 dr/ds.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"
#include "hbg/runtime/Newton.h"

#include <Eigen/Dense>

#include <algorithm>
#include <numeric>

namespace hbg::eq {

using namespace hbg::bg;

std::optional<StateSpace> linearize(const BondGraph &original, const Mode &mode,
                                    const std::vector<double> &params, double t,
                                    const std::function<double(const std::string &)> &stateValue,
                                    DiagnosticEngine &diags, std::optional<RunDiagnostic> &why) {
  BondGraph g = original;
  auto fail = [&](DiagKind kind, std::initializer_list<DiagArg> args = {}) {
    why = runDiagnostic(kind, t, modeText(original, mode), args);
    return std::nullopt;
  };
  sym::ExprContext &ctx = *g.ctx;
  StateSpace ss;
  // Inputs: a parameter added to each source's value, 0 at the operating
  // point. (Its slot may coincide with a held value's; both evaluate to 0
  // below, and derivatives go by symbol, not slot.)
  std::vector<sym::SymbolId> inputs;
  for (Element &e : g.elements) {
    if (!isSource(e.kind) || e.bonds.size() != 1)
      continue;
    bool effort = e.kind == ElementKind::Se || e.kind == ElementKind::MSe;
    std::string name = e.name + (effort ? ".e" : ".f");
    sym::SymbolId u = ctx.addSymbol(name, sym::SymbolKind::Parameter,
                                    static_cast<std::uint32_t>(g.parameters.size()));
    g.parameters.push_back({name, {}, u, ctx.constant(0)});
    e.value = ctx.add(e.value, ctx.ref(u));
    inputs.push_back(u);
    ss.inputs.push_back(name);
  }
  std::optional<causality::CausalAssignment> ca = causality::assignCausality(g, mode, diags);
  if (!ca)
    return fail(DiagKind::LinearizeNoCausality);
  std::optional<EquationSystem> sys = buildEquations(g, *ca, mode, diags);
  if (!sys)
    return fail(DiagKind::LinearizeNoEquations);
  std::vector<double> x;
  for (const State &s : sys->states) {
    ss.states.push_back(s.name);
    x.push_back(stateValue(s.name));
  }
  for (const Output &o : sys->outputs)
    ss.outputs.push_back(o.name);
  std::size_t n = x.size(), m = inputs.size(), p = ss.outputs.size(), u = sys->unknowns.size();
  std::vector<double> z(u, 0.0);
  auto value = [&](sym::ExprId e) {
    return ctx.evaluate(e, [&](sym::SymbolId id) {
      const sym::Symbol &s = ctx.symbol(id);
      switch (s.kind) {
      case sym::SymbolKind::Time: return t;
      case sym::SymbolKind::State: return x[s.slot];
      case sym::SymbolKind::Algebraic: return z[s.slot - n];
      case sym::SymbolKind::Parameter: return s.slot < params.size() ? params[s.slot] : 0.0;
      default: return std::nan("");
      }
    });
  };
  // The loops' unknowns at the operating point, from zero as Model::rhs
  // starts them, and dr/dz there.
  std::string loops;
  for (const AlgebraicLoop &l : sys->loops)
    if (!l.unknowns.empty())
      loops += (loops.empty() ? "" : "; ") + l.path;
  std::unique_ptr<runtime::LoopSolver> loopLu;
  if (u > 0) {
    loopLu = std::make_unique<runtime::LoopSolver>(sys->jacobianPattern);
    auto residual = [&](const double *zz, double *r) {
      std::copy(zz, zz + u, z.begin());
      for (std::size_t k = 0; k < u; ++k)
        r[k] = value(sys->residuals[k]);
    };
    auto jacobian = [&](const double *zz, double *j) {
      std::copy(zz, zz + u, z.begin());
      for (std::size_t k = 0; k < sys->jacobian.size(); ++k)
        j[k] = value(sys->jacobian[k]);
    };
    std::vector<double> start(u, 0.0);
    runtime::NewtonOptions opts;
    opts.linear = sys->loopsLinear();
    runtime::NewtonResult r = loopLu->solve(residual, jacobian, start.data(), opts);
    if (!r.ok())
      return fail(DiagKind::LinearizeLoopFailed, {runtime::describe(r), DiagArg::loop(loops)});
    z = start;
    std::vector<double> dr(sys->jacobian.size());
    jacobian(z.data(), dr.data());
    if (!loopLu->factorize(dr.data()))
      return fail(DiagKind::LinearizeLoopFailed,
                  {"the loop's Jacobian is singular", DiagArg::loop(loops)});
  }
  // d e / d s_j for each of `symbols`, through the loops: the partial
  // derivative plus sum_k (d e / d z_k) (d z_k / d s_j).
  auto totals = [&](const std::vector<sym::ExprId> &exprs,
                    const std::vector<sym::SymbolId> &symbols, std::vector<double> &out) {
    Eigen::MatrixXd dz = Eigen::MatrixXd::Zero(Eigen::Index(u), Eigen::Index(symbols.size()));
    if (u > 0) {
      for (std::size_t k = 0; k < u; ++k)
        for (std::size_t j = 0; j < symbols.size(); ++j)
          dz(Eigen::Index(k), Eigen::Index(j)) =
              value(ctx.derivative(sys->residuals[k], symbols[j]));
      loopLu->solveInPlace(dz.data(), symbols.size());
      dz = -dz;
    }
    for (sym::ExprId e : exprs) {
      std::vector<double> byZ(u);
      for (std::size_t k = 0; k < u; ++k)
        byZ[k] = value(ctx.derivative(e, sys->unknowns[k].symbol));
      for (std::size_t j = 0; j < symbols.size(); ++j) {
        double d = value(ctx.derivative(e, symbols[j]));
        for (std::size_t k = 0; k < u; ++k)
          d += byZ[k] * dz(Eigen::Index(k), Eigen::Index(j));
        out.push_back(d);
      }
    }
  };
  std::vector<sym::SymbolId> stateSymbols, all;
  for (const State &s : sys->states)
    stateSymbols.push_back(s.symbol);
  all = stateSymbols;
  all.insert(all.end(), inputs.begin(), inputs.end());
  std::vector<sym::ExprId> derivatives, outputs;
  for (const State &s : sys->states)
    derivatives.push_back(s.derivative);
  for (const Output &o : sys->outputs)
    outputs.push_back(o.value);
  // Rows of [A B] and [C D] together, then split.
  std::vector<double> ab, cd;
  totals(derivatives, all, ab);
  totals(outputs, all, cd);
  for (std::size_t i = 0; i < n; ++i) {
    ss.a.insert(ss.a.end(), ab.begin() + std::ptrdiff_t(i * (n + m)),
                ab.begin() + std::ptrdiff_t(i * (n + m) + n));
    ss.b.insert(ss.b.end(), ab.begin() + std::ptrdiff_t(i * (n + m) + n),
                ab.begin() + std::ptrdiff_t((i + 1) * (n + m)));
  }
  for (std::size_t i = 0; i < p; ++i) {
    ss.c.insert(ss.c.end(), cd.begin() + std::ptrdiff_t(i * (n + m)),
                cd.begin() + std::ptrdiff_t(i * (n + m) + n));
    ss.d.insert(ss.d.end(), cd.begin() + std::ptrdiff_t(i * (n + m) + n),
                cd.begin() + std::ptrdiff_t((i + 1) * (n + m)));
  }
  if (n > 0) {
    Eigen::MatrixXd a(n, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        a(Eigen::Index(i), Eigen::Index(j)) = ss.a[i * n + j];
    if (!a.allFinite())
      return fail(DiagKind::LinearizeNotFinite);
    Eigen::EigenSolver<Eigen::MatrixXd> es(a, false);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    const Eigen::VectorXcd &ev = es.eigenvalues();
    std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) {
      if (ev(Eigen::Index(i)).real() != ev(Eigen::Index(j)).real())
        return ev(Eigen::Index(i)).real() < ev(Eigen::Index(j)).real();
      return ev(Eigen::Index(i)).imag() < ev(Eigen::Index(j)).imag();
    });
    for (std::size_t i : order) {
      ss.eigenRe.push_back(ev(Eigen::Index(i)).real());
      ss.eigenIm.push_back(ev(Eigen::Index(i)).imag());
    }
  }
  return ss;
}

} // namespace hbg::eq
