//===- compiler/equations/Loops.cpp - Closing algebraic loops -------------===//

#include "Loops.h"

#include "hbg/support/Graph.h"
#include "hbg/symbolic/LinearSolve.h"

#include "hbg/runtime/Newton.h"

#include <Eigen/Dense>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_set>

namespace hbg::eq {

namespace {

/// The nodes `roots` reach, in increasing id (operands first), without
/// looking below the nodes where `stop` holds.
std::vector<std::uint32_t> nodesReached(const sym::ExprContext &ctx,
                                        const std::vector<sym::ExprId> &roots,
                                        const std::function<bool(std::uint32_t)> &stop) {
  std::vector<char> seen(ctx.size(), 0);
  std::vector<std::uint32_t> nodes, todo;
  for (sym::ExprId r : roots)
    todo.push_back(r.index);
  while (!todo.empty()) {
    std::uint32_t id = todo.back();
    todo.pop_back();
    if (seen[id])
      continue;
    seen[id] = 1;
    nodes.push_back(id);
    if (!stop(id))
      sym::forEachOperand(ctx.node(sym::ExprId{id}), [&](sym::ExprId o) { todo.push_back(o.index); });
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

/// Rewrites a large linear loop's residuals so that each reads few
/// unknowns. Resolved along the causal paths of a network (a grid of
/// resistors), a tearing variable's residual reaches the node voltages on
/// a long chain back to a state, so each residual reads a long run of
/// unknowns and the Jacobian fills in (its entries grow as N^1.5 and
/// more). Every subexpression that depends on the unknowns, is used more
/// than once and reads more than two of them becomes an unknown w of its
/// own, with the residual
/// w - (its expression, its used-again operands as unknowns) = 0: the
/// residuals are then as large as the DAG, and the Jacobian as sparse as
/// the network. Eliminating the w (each defined in terms of earlier ones)
/// gives back the original system, so the two are regular together.
/// `residuals` are rewritten in place; the new unknowns' residuals are
/// appended to them, and `addUnknown(k)` makes the symbol of the k-th new
/// unknown. `outer` receives each rewritten node's replacement, equal to
/// it at the solution, for the expressions outside the loop that read it
/// (replaceNodes).
void cutSharedSubexpressions(sym::ExprContext &ctx, std::vector<sym::ExprId> &residuals,
                             const std::unordered_set<std::uint32_t> &unknowns,
                             const std::function<sym::SymbolId(std::size_t)> &addUnknown,
                             std::unordered_map<std::uint32_t, sym::ExprId> &outer) {
  std::vector<sym::ExprId> roots(residuals.begin(), residuals.end());
  std::vector<std::uint32_t> nodes = nodesReached(ctx, roots, [](std::uint32_t) { return false; });
  std::unordered_map<std::uint32_t, std::uint32_t> uses;
  std::unordered_set<std::uint32_t> varying;
  for (std::uint32_t id : nodes) {
    const sym::Node &n = ctx.node(sym::ExprId{id});
    bool v = n.op == sym::Op::Symbol && unknowns.count(n.symbol.index);
    sym::forEachOperand(n, [&](sym::ExprId o) {
      if (varying.count(o.index)) {
        v = true;
        ++uses[o.index];
      }
    });
    if (v)
      varying.insert(id);
  }
  for (sym::ExprId r : residuals)
    if (varying.count(r.index))
      ++uses[r.index];
  // inner: the node rebuilt over its operands' outer forms; outer: the
  // node itself, or its unknown where it is cut.
  auto outerOf = [&](sym::ExprId e) {
    auto it = outer.find(e.index);
    return it == outer.end() ? e : it->second;
  };
  // The unknowns each node's outer form reads, up to kFew + 1 of them: a
  // shared node that reads few unknowns (a branch voltage w_a - w_b, a
  // current (w_a - w_b) / R) is cheaper copied into the residuals that use
  // it, as nodal analysis writes it, than made an unknown of its own.
  constexpr std::size_t kFew = 2;
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> reads;
  auto merge = [&](std::vector<std::uint32_t> &into, sym::ExprId from) {
    auto it = reads.find(from.index);
    if (it == reads.end())
      return;
    for (std::uint32_t s : it->second)
      if (into.size() <= kFew && std::find(into.begin(), into.end(), s) == into.end())
        into.push_back(s);
  };
  std::vector<sym::ExprId> definitions;
  for (std::uint32_t id : nodes) {
    if (!varying.count(id))
      continue;
    const sym::Node &n = ctx.node(sym::ExprId{id});
    if (n.op == sym::Op::Symbol) {
      reads[id] = {n.symbol.index};
      continue;
    }
    int k = sym::arity(n.op);
    std::vector<std::uint32_t> read;
    merge(read, n.lhs);
    if (k >= 2)
      merge(read, n.rhs);
    if (k >= 3)
      merge(read, n.third);
    sym::ExprId inner = ctx.make(n.op, outerOf(n.lhs), k >= 2 ? outerOf(n.rhs) : sym::ExprId(),
                                 k >= 3 ? outerOf(n.third) : sym::ExprId());
    bool cut = uses[id] >= 2 && read.size() > kFew && sym::arity(ctx.node(inner).op) > 0;
    if (!cut) {
      outer[id] = inner;
      reads[id] = std::move(read);
      continue;
    }
    sym::SymbolId unknown = addUnknown(definitions.size());
    sym::ExprId w = ctx.ref(unknown);
    definitions.push_back(ctx.sub(w, inner));
    outer[id] = w;
    reads[id] = {unknown.index};
  }
  for (sym::ExprId &r : residuals)
    r = outerOf(r);
  residuals.insert(residuals.end(), definitions.begin(), definitions.end());
}

} // namespace

void replaceNodes(sym::ExprContext &ctx, const std::unordered_map<std::uint32_t, sym::ExprId> &nodes,
                  std::vector<sym::ExprId *> roots) {
  if (nodes.empty())
    return;
  // The nodes the roots reach, rebuilt bottom-up over their operands'
  // replacements; one memo for all roots, which share most of their nodes.
  std::vector<sym::ExprId> from;
  for (sym::ExprId *r : roots)
    from.push_back(*r);
  std::vector<std::uint32_t> order =
      nodesReached(ctx, from, [&](std::uint32_t id) { return nodes.count(id) > 0; });
  std::unordered_map<std::uint32_t, sym::ExprId> done;
  auto of = [&](sym::ExprId e) {
    auto it = done.find(e.index);
    return it == done.end() ? e : it->second;
  };
  for (std::uint32_t id : order) {
    if (auto it = nodes.find(id); it != nodes.end()) {
      done[id] = it->second;
      continue;
    }
    const sym::Node n = ctx.node(sym::ExprId{id}); // a copy: make() may grow the store
    int k = sym::arity(n.op);
    if (k == 0)
      continue;
    sym::ExprId a = of(n.lhs), b = k >= 2 ? of(n.rhs) : sym::ExprId(),
                c = k >= 3 ? of(n.third) : sym::ExprId();
    if (a.index != n.lhs.index || (k >= 2 && b.index != n.rhs.index) ||
        (k >= 3 && c.index != n.third.index))
      done[id] = ctx.make(n.op, a, b, c);
  }
  for (sym::ExprId *r : roots)
    *r = of(*r);
}

bool closeLoops(const std::vector<TornVariable> &torn, EquationSystem &sys,
                const std::function<double(sym::SymbolId)> &nominal, std::size_t runTimeLoopMin,
                DiagnosticEngine &diags, ClosedLoops &out) {
  sym::ExprContext &ctx = *sys.ctx;
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t k = 0; k < torn.size(); ++k)
    bySymbol[torn[k].symbol.index] = k;
  // The loops are the strongly connected components of "residual k reads
  // z_j". Walking each residual for the z it reads costs the sum of their
  // sizes, quadratic in a network whose residuals reach back along long
  // causal chains; instead the components are found on the DAG itself:
  // vertex k (< torn.size()) stands for z_k and leads to its residual's
  // root, a node leads to its operands, and z_j's symbol leads to vertex j.
  // Keeping only the tearing variables of each component gives the loops,
  // still in dependency order.
  auto numTorn = static_cast<std::uint32_t>(torn.size());
  std::vector<sym::ExprId> roots;
  for (const TornVariable &t : torn)
    roots.push_back(t.residual);
  std::vector<std::uint32_t> nodes = nodesReached(ctx, roots, [](std::uint32_t) { return false; });
  std::unordered_map<std::uint32_t, std::uint32_t> vertexOf;
  for (std::uint32_t i = 0; i < nodes.size(); ++i)
    vertexOf[nodes[i]] = numTorn + i;
  std::vector<std::vector<std::uint32_t>> deps(numTorn + nodes.size());
  for (std::uint32_t k = 0; k < numTorn; ++k)
    deps[k].push_back(vertexOf.at(torn[k].residual.index));
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const sym::Node &n = ctx.node(sym::ExprId{nodes[i]});
    std::vector<std::uint32_t> &out = deps[numTorn + i];
    if (n.op == sym::Op::Symbol) {
      if (auto it = bySymbol.find(n.symbol.index); it != bySymbol.end())
        out.push_back(it->second);
      continue;
    }
    sym::forEachOperand(n, [&](sym::ExprId o) { out.push_back(vertexOf.at(o.index)); });
  }
  std::vector<std::vector<std::uint32_t>> loops;
  for (std::vector<std::uint32_t> &comp : support::stronglyConnectedComponents(deps)) {
    comp.erase(std::remove_if(comp.begin(), comp.end(), [&](std::uint32_t v) { return v >= numTorn; }),
               comp.end());
    if (!comp.empty())
      loops.push_back(std::move(comp));
  }

  const auto numStates = static_cast<std::uint32_t>(sys.states.size());
  // The Newton Jacobian, by column (unknown): (row, d residual / d unknown).
  // Later loops' residuals read earlier unknowns, so it is block triangular.
  // A run-time loop's rows are filled while its own Jacobian is formed,
  // which needs the same derivatives; the others' after the loops.
  std::unordered_map<std::uint32_t, std::uint32_t> unknownOf; // symbol -> unknown
  std::vector<std::vector<std::pair<std::uint32_t, sym::ExprId>>> byColumn;
  std::size_t rowsDone = 0; // residuals whose Jacobian rows are in byColumn
  for (const std::vector<std::uint32_t> &comp : loops) {
    std::size_t m = comp.size();
    AlgebraicLoop loop;
    std::vector<std::string_view> paths; // distinct, in order of first use
    std::unordered_set<std::string_view> seen;
    std::vector<sym::ExprId> res;
    for (std::uint32_t k : comp) {
      loop.tearing.push_back(torn[k].name);
      if (seen.insert(torn[k].path).second)
        paths.push_back(torn[k].path);
      res.push_back(torn[k].residual);
    }
    {
      std::vector<sym::ExprId *> roots;
      for (sym::ExprId &r : res)
        roots.push_back(&r);
      ctx.substitute(roots, out.substitution);
    }
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (i)
        loop.path += "; ";
      loop.path += paths[i];
    }
    const TornVariable &first = torn[comp[0]];

    // Large loops are solved at run time: their tearing variables become
    // unknowns at once, with the residuals' shared subexpressions as
    // unknowns of their own (cutSharedSubexpressions), so that what
    // follows works on a sparse system.
    bool runTime = m > runTimeLoopMin;
    std::vector<sym::SymbolId> columns; // the loop's variables, by column
    if (runTime) {
      std::unordered_map<std::uint32_t, sym::ExprId> toUnknown;
      std::unordered_set<std::uint32_t> loopUnknowns;
      auto addUnknown = [&](const std::string &name) {
        auto index = static_cast<std::uint32_t>(sys.unknowns.size());
        sym::SymbolId s = ctx.addSymbol(name, sym::SymbolKind::Algebraic, numStates + index);
        sys.unknowns.push_back({name, s});
        unknownOf[s.index] = index;
        loop.unknowns.push_back(index);
        loopUnknowns.insert(s.index);
        columns.push_back(s);
        return s;
      };
      for (std::uint32_t k : comp) {
        sym::ExprId z = ctx.ref(addUnknown(torn[k].name));
        toUnknown[torn[k].symbol.index] = z;
        out.substitution[torn[k].symbol.index] = z;
      }
      std::vector<sym::ExprId *> roots;
      for (sym::ExprId &r : res)
        roots.push_back(&r);
      ctx.substitute(roots, toUnknown);
      std::string base = torn[comp[0]].name;
      cutSharedSubexpressions(
          ctx, res, loopUnknowns,
          [&](std::size_t k) {
            return addUnknown("(" + base + " loop node " + std::to_string(k + 1) + ")");
          },
          out.nodes);
    } else {
      for (std::uint32_t k : comp)
        columns.push_back(torn[k].symbol);
    }
    std::size_t size = columns.size();

    // The Jacobian of the residuals in the loop's variables, by entry:
    // only the variables each residual reads.
    std::unordered_map<std::uint32_t, std::uint32_t> inLoop; // symbol -> column
    for (std::size_t j = 0; j < size; ++j)
      inLoop[columns[j].index] = static_cast<std::uint32_t>(j);
    struct Entry {
      std::uint32_t row, col;
      sym::ExprId value;
    };
    std::vector<Entry> entries;
    // Run-time loops: the derivatives in earlier loops' unknowns, for the
    // Newton Jacobian, as (row, unknown, value).
    std::vector<Entry> earlier;
    bool linear = true;
    for (std::size_t i = 0; i < size; ++i)
      for (sym::SymbolId s : ctx.symbolsOf(res[i])) {
        auto col = inLoop.find(s.index);
        if (col == inLoop.end()) {
          if (auto u = unknownOf.find(s.index); runTime && u != unknownOf.end())
            earlier.push_back({static_cast<std::uint32_t>(i), u->second, ctx.derivative(res[i], s)});
          continue;
        }
        sym::ExprId d = ctx.derivative(res[i], s);
        for (sym::SymbolId r : ctx.symbolsOf(d))
          linear = linear && !inLoop.count(r.index);
        entries.push_back({static_cast<std::uint32_t>(i), col->second, d});
      }
    loop.linear = linear;

    // A loop may be regular in structure yet singular for the values the
    // model is run with: check the Jacobian at the defaults where it can be
    // evaluated (it cannot when it uses Newton unknowns). Returns 1 when
    // singular at the point, 0 when regular, -1 when the Jacobian cannot be
    // evaluated there.
    auto singularAt = [&](const std::function<double(sym::SymbolId)> &at) {
      std::vector<Eigen::Triplet<double>> values;
      for (const Entry &e : entries) {
        double v = ctx.evaluate(e.value, at);
        if (!std::isfinite(v))
          return -1;
        values.emplace_back(int(e.row), int(e.col), v);
      }
      if (!runTime) {
        Eigen::MatrixXd numeric = Eigen::MatrixXd::Zero(Eigen::Index(size), Eigen::Index(size));
        for (const auto &t : values)
          numeric(t.row(), t.col()) += t.value();
        Eigen::FullPivLU<Eigen::MatrixXd> lu(numeric);
        lu.setThreshold(1e-12);
        return lu.rank() < static_cast<Eigen::Index>(size) ? 1 : 0;
      }
      // Large loops: the run time's LU (KLU), singular when it meets a
      // zero pivot (one only nearly zero shows at run time as a residual
      // that refinement cannot bring down, an error naming the loop).
      std::sort(values.begin(), values.end(), [](const auto &x, const auto &y) {
        return x.col() != y.col() ? x.col() < y.col() : x.row() < y.row();
      });
      runtime::SparsePattern pattern;
      std::vector<double> numbers;
      for (const auto &v : values) {
        while (pattern.colStart.size() <= static_cast<std::size_t>(v.col()))
          pattern.colStart.push_back(static_cast<std::uint32_t>(pattern.rows.size()));
        pattern.rows.push_back(static_cast<std::uint32_t>(v.row()));
        numbers.push_back(v.value());
      }
      while (pattern.colStart.size() <= size)
        pattern.colStart.push_back(static_cast<std::uint32_t>(pattern.rows.size()));
      runtime::LoopSolver lu(std::move(pattern), true);
      return lu.factorize(numbers.data()) ? 0 : 1;
    };
    auto reportSingular = [&]() {
      // Singular for other values too (the symbolic solver did not see
      // that, e.g., `r * (1 / r)` is 1)? Move every value by its own
      // factor, so that values equal at the defaults differ.
      auto elsewhere = [&](sym::SymbolId s) {
        double u = std::fmod(0.6180339887 * (s.index + 1), 1.0);
        return nominal(s) * (1.25 + 0.5 * u) + 0.125 * (1 + u);
      };
      bool always = singularAt(elsewhere) == 1;
      diags.report(always ? DiagKind::SingularLoop : DiagKind::SingularLoopAtDefaults, first.at,
                   {loop.path, quoteList(loop.tearing)});
    };

    if (runTime) {
      // Solved at run time by a sparse LU, which the runtime factorises
      // once while its values stay the same (nonlinear: Newton's method).
      if (linear && singularAt(nominal) == 1) {
        reportSingular();
        return false;
      }
      loop.closedForm = false;
      auto base = static_cast<std::uint32_t>(sys.residuals.size());
      sys.residuals.insert(sys.residuals.end(), res.begin(), res.end());
      byColumn.resize(sys.unknowns.size());
      for (const Entry &e : entries)
        byColumn[loop.unknowns[e.col]].emplace_back(base + e.row, e.value);
      for (const Entry &e : earlier)
        byColumn[e.col].emplace_back(base + e.row, e.value);
      rowsDone = sys.residuals.size();
    } else if (linear) {
      // r(z) = J z + r(0) = 0.
      std::vector<sym::ExprId> jac(m * m, ctx.constant(0));
      for (const Entry &e : entries)
        jac[e.row * m + e.col] = e.value;
      std::unordered_map<std::uint32_t, sym::ExprId> zero;
      for (std::uint32_t k : comp)
        zero[torn[k].symbol.index] = ctx.constant(0);
      std::vector<sym::ExprId> rhs;
      for (sym::ExprId r : res)
        rhs.push_back(ctx.neg(ctx.substitute(r, zero)));
      sym::LinearSolution sol = sym::solveLinear(ctx, m, jac, rhs);
      if (sol.z.empty()) {
        diags.report(DiagKind::SingularLoop, first.at, {loop.path, quoteList(loop.tearing)});
        return false;
      }
      if (singularAt(nominal) == 1) {
        reportSingular();
        return false;
      }
      loop.closedForm = sol.method == sym::SolveMethod::ClosedForm;
      loop.solution = sol.z;
      for (std::size_t i = 0; i < m; ++i)
        out.substitution[torn[comp[i]].symbol.index] = sol.z[i];
    } else {
      // Nonlinear: Newton's method. The unknowns live after the states in
      // the generated code's x.
      std::unordered_map<std::uint32_t, sym::ExprId> toUnknown;
      for (std::uint32_t k : comp) {
        auto index = static_cast<std::uint32_t>(sys.unknowns.size());
        sym::SymbolId s = ctx.addSymbol(torn[k].name, sym::SymbolKind::Algebraic, numStates + index);
        sys.unknowns.push_back({torn[k].name, s});
        unknownOf[s.index] = index;
        loop.unknowns.push_back(index);
        toUnknown[torn[k].symbol.index] = ctx.ref(s);
        out.substitution[torn[k].symbol.index] = ctx.ref(s);
      }
      for (sym::ExprId r : res)
        sys.residuals.push_back(ctx.substitute(r, toUnknown));
    }
    sys.loops.push_back(std::move(loop));
    // Rows not filled above (a Newton loop's): every unknown they read,
    // this loop's and earlier ones'.
    byColumn.resize(sys.unknowns.size());
    for (; rowsDone < sys.residuals.size(); ++rowsDone) {
      sym::ExprId r = sys.residuals[rowsDone];
      for (sym::SymbolId s : ctx.symbolsOf(r))
        if (auto u = unknownOf.find(s.index); u != unknownOf.end())
          byColumn[u->second].emplace_back(static_cast<std::uint32_t>(rowsDone),
                                           ctx.derivative(r, s));
    }
  }

  // Newton works on all run-time loops together, its Jacobian kept sparse:
  // only the unknowns each residual reads.
  sys.jacobianPattern = {};
  sys.jacobian.clear();
  if (!sys.unknowns.empty()) {
    for (auto &column : byColumn) {
      std::sort(column.begin(), column.end(),
                [](const auto &a, const auto &b) { return a.first < b.first; });
      sys.jacobianPattern.colStart.push_back(
          static_cast<std::uint32_t>(sys.jacobianPattern.rows.size()));
      for (const auto &[row, value] : column) {
        sys.jacobianPattern.rows.push_back(row);
        sys.jacobian.push_back(value);
      }
    }
    sys.jacobianPattern.colStart.push_back(
        static_cast<std::uint32_t>(sys.jacobianPattern.rows.size()));
  }
  return true;
}

} // namespace hbg::eq
