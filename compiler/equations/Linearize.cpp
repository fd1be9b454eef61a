//===- compiler/equations/Linearize.cpp - State-space models of a mode ----===//
//
// `hbgc linearize`: the matrices of a mode's equations about an operating
// point, from symbolic derivatives. Each source becomes an input by adding
// a symbol to its value, so that B and D are derivatives by that symbol at
// zero, whatever the source's own expression.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include <Eigen/Dense>

#include <algorithm>
#include <numeric>

namespace hbg::eq {

using namespace hbg::bg;

std::optional<StateSpace> linearize(const BondGraph &original, const Mode &mode,
                                    const std::vector<double> &params, double t,
                                    const std::function<double(const std::string &)> &stateValue,
                                    DiagnosticEngine &diags, std::string &why) {
  BondGraph g = original;
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
  if (!ca) {
    why = "the mode has no causal assignment";
    return std::nullopt;
  }
  std::optional<EquationSystem> sys = buildEquations(g, *ca, mode, diags);
  if (!sys) {
    why = "the mode's equations could not be built";
    return std::nullopt;
  }
  if (!sys->unknowns.empty()) {
    why = "the mode has nonlinear algebraic loops solved by Newton's method, through which "
          "linearize does not differentiate yet";
    return std::nullopt;
  }
  std::vector<double> x;
  for (const State &s : sys->states) {
    ss.states.push_back(s.name);
    x.push_back(stateValue(s.name));
  }
  for (const Output &o : sys->outputs)
    ss.outputs.push_back(o.name);
  auto value = [&](sym::ExprId e) {
    return ctx.evaluate(e, [&](sym::SymbolId id) {
      const sym::Symbol &s = ctx.symbol(id);
      switch (s.kind) {
      case sym::SymbolKind::Time: return t;
      case sym::SymbolKind::State: return x[s.slot];
      case sym::SymbolKind::Parameter: return s.slot < params.size() ? params[s.slot] : 0.0;
      default: return std::nan("");
      }
    });
  };
  std::size_t n = x.size(), m = inputs.size(), p = ss.outputs.size();
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j)
      ss.a.push_back(value(ctx.derivative(sys->states[i].derivative, sys->states[j].symbol)));
    for (std::size_t k = 0; k < m; ++k)
      ss.b.push_back(value(ctx.derivative(sys->states[i].derivative, inputs[k])));
  }
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j < n; ++j)
      ss.c.push_back(value(ctx.derivative(sys->outputs[i].value, sys->states[j].symbol)));
    for (std::size_t k = 0; k < m; ++k)
      ss.d.push_back(value(ctx.derivative(sys->outputs[i].value, inputs[k])));
  }
  if (n > 0) {
    Eigen::MatrixXd a(n, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        a(Eigen::Index(i), Eigen::Index(j)) = ss.a[i * n + j];
    if (!a.allFinite()) {
      why = "the state matrix is not finite at the operating point";
      return std::nullopt;
    }
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
