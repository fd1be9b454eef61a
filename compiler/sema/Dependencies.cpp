//===- compiler/sema/Dependencies.cpp - Dependency cycles -----------------===//
//
// Step 4 of sema: no parameter's default and no signal may depend on
// itself, directly or through others; a cycle is reported as its path.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include "hbg/support/Graph.h"

#include <functional>
#include <unordered_map>
#include <vector>

namespace hbg::sema {

using namespace hbg::bg;

namespace {

/// Symbols of kind `kind` that `root` refers to, in id order.
std::vector<sym::SymbolId> symbolsIn(const sym::ExprContext &ctx, sym::ExprId root,
                                     sym::SymbolKind kind) {
  std::vector<sym::SymbolId> out;
  if (!root.valid())
    return out;
  for (sym::SymbolId s : ctx.symbolsOf(root))
    if (ctx.symbol(s).kind == kind)
      out.push_back(s);
  return out;
}

/// A cycle of the dependency graph over `n` nodes (support::findCycle).
std::vector<std::uint32_t> findCycle(std::size_t n,
                                     const std::function<std::vector<std::uint32_t>(std::uint32_t)> &deps) {
  std::vector<std::vector<std::uint32_t>> adjacency(n);
  for (std::uint32_t v = 0; v < n; ++v)
    adjacency[v] = deps(v);
  return support::findCycle(adjacency);
}

} // namespace

void Analyzer::orderParameters() {
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t i = 0; i < g_.parameters.size(); ++i)
    bySymbol[g_.parameters[i].symbol.index] = i;
  auto deps = [&](std::uint32_t i) {
    std::vector<std::uint32_t> out;
    for (sym::SymbolId s : symbolsIn(ctx(), g_.parameters[i].defaultValue, sym::SymbolKind::Parameter))
      out.push_back(bySymbol.at(s.index));
    return out;
  };
  std::vector<std::uint32_t> cycle = findCycle(g_.parameters.size(), deps);
  if (!cycle.empty()) {
    std::string path;
    for (std::size_t k = 0; k < cycle.size(); ++k)
      path += (k ? " -> " : "") + ("`" + g_.parameters[cycle[k]].name + "`");
    const Parameter &p = g_.parameters[cycle[0]];
    diags_.report(DiagKind::ParameterCycle, p.range, {p.name, path});
  }
  // Slots stay in declaration order; Simulation evaluates defaults in
  // dependency order, which it derives from the same DAG.
}

void Analyzer::checkSignalCycles() {
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t i = 0; i < g_.signals.size(); ++i)
    bySymbol[g_.signals[i].symbol.index] = i;
  // Integrators break cycles: a signal may depend on its own integral.
  auto deps = [&](std::uint32_t i) {
    std::vector<std::uint32_t> out;
    for (sym::SymbolId s : symbolsIn(ctx(), g_.signals[i].value, sym::SymbolKind::Variable)) {
      auto it = bySymbol.find(s.index);
      if (it != bySymbol.end())
        out.push_back(it->second);
    }
    return out;
  };
  std::vector<std::uint32_t> cycle = findCycle(g_.signals.size(), deps);
  if (cycle.empty())
    return;
  std::string path;
  for (std::size_t k = 0; k < cycle.size(); ++k)
    path += (k ? " -> " : "") + ("`" + g_.signals[cycle[k]].name + "`");
  const Signal &s = g_.signals[cycle[0]];
  diags_.report(DiagKind::SignalCycle, s.range, {s.name, path});
}

} // namespace hbg::sema
