//===- compiler/equations/Kinks.cpp - sign, abs, min, max as events -------===//
//
// A step that integrates across a kink of the right-hand side loses the
// integrator's order: its error estimate sees a smooth polynomial where
// the solution bends. Each kink whose argument changes in time is
// therefore replaced by a branch value the runtime holds fixed between
// events, and its argument becomes a crossing function the event locator
// watches (eq::Kink).
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include <unordered_map>
#include <vector>

namespace hbg::eq {

namespace {

bool isKinkOp(sym::Op op) {
  return op == sym::Op::Sign || op == sym::Op::Floor || op == sym::Op::Abs ||
         op == sym::Op::Min || op == sym::Op::Max;
}

class KinkRewriter {
public:
  explicit KinkRewriter(EquationSystem &sys) : sys_(sys), ctx_(*sys.ctx) {}

  void rewrite(sym::ExprId &root) {
    if (root.valid())
      root = visit(root);
  }

private:
  struct Done {
    sym::ExprId id;
    bool varies; ///< depends on time, a state or a Newton unknown
  };

  /// Whether operand k of `n` is left as it is: a Select's condition,
  /// which picks a pivot (both choices give the same value), unless it is
  /// the sign of a difference, as `if` and the functions built on it
  /// write their conditions: then its sign is a kink like any other.
  bool kept(const sym::Node &n, int k) const {
    return n.op == sym::Op::Select && k == 0 && ctx_.node(n.lhs).op != sym::Op::Sign;
  }

  /// Post-order over the DAG below `root`, iteratively (expressions can
  /// be deep).
  sym::ExprId visit(sym::ExprId root) {
    std::vector<std::pair<sym::ExprId, bool>> todo{{root, false}};
    while (!todo.empty()) {
      auto [id, expanded] = todo.back();
      todo.pop_back();
      if (isDone(id))
        continue;
      const sym::Node &n = ctx_.node(id);
      if (!expanded) {
        todo.push_back({id, true});
        int k = 0;
        sym::forEachOperand(n, [&](sym::ExprId o) {
          if (!kept(n, k++) && !isDone(o))
            todo.push_back({o, false});
        });
        continue;
      }
      done_[id.index] = finish(id, n);
    }
    return done_.at(root.index).id;
  }

  /// Whether `id` has been visited. (A hash map, not a vector by node:
  /// the store holds every mode's nodes, the walk only this mode's.)
  bool isDone(sym::ExprId id) const { return done_.count(id.index) > 0; }

  /// `n` by value: building nodes may move the context's node storage.
  Done finish(sym::ExprId id, const sym::Node n) {
    if (n.op == sym::Op::Const)
      return {id, false};
    if (n.op == sym::Op::Symbol)
      return {id, ctx_.symbol(n.symbol).kind != sym::SymbolKind::Parameter};
    int arity = sym::arity(n.op);
    const sym::ExprId ops[3] = {n.lhs, n.rhs, n.third};
    sym::ExprId out[3];
    bool varies = false;
    for (int k = 0; k < arity; ++k) {
      if (kept(n, k)) {
        // Not visited: kept as it is.
        varies = varies || !ctx_.isParametric(ops[k]);
        out[k] = ops[k];
        continue;
      }
      const Done &d = done_.at(ops[k].index);
      varies = varies || d.varies;
      out[k] = d.id;
    }
    // A select on a kink's branch (an `if` on the sign of a difference)
    // picks one side or the other: that branch cannot slide.
    if (n.op == sym::Op::Select && ctx_.node(out[0]).op == sym::Op::Symbol) {
      auto kink = byBranch_.find(ctx_.node(out[0]).symbol.index);
      if (kink != byBranch_.end())
        sys_.kinks[kink->second].linear = false;
    }
    if (!isKinkOp(n.op) || !varies) {
      bool same = true;
      for (int k = 0; k < arity; ++k)
        same = same && out[k] == ops[k];
      // Unchanged below: the node itself (building it again would only
      // find it in the store).
      return {same ? id : ctx_.make(n.op, out[0], out[1], out[2]), varies};
    }
    sym::ExprId u = out[0], v = out[1];
    sym::ExprId c = n.op == sym::Op::Min ? ctx_.sub(v, u) : n.op == sym::Op::Max ? ctx_.sub(u, v) : u;
    sym::ExprId b = ctx_.ref(branchOf(c, id, n.op == sym::Op::Floor));
    if (n.op == sym::Op::Min || n.op == sym::Op::Max)
      sys_.kinks[byBranch_.at(ctx_.node(b).symbol.index)].linear = false;
    switch (n.op) {
    case sym::Op::Sign:
    case sym::Op::Floor: return {b, false}; // fixed between events
    case sym::Op::Abs: return {ctx_.mul(b, c), true};
    default: {
      sym::ExprId mean = ctx_.mul(ctx_.constant(0.5), ctx_.add(u, v));
      return {ctx_.select(b, u, ctx_.select(ctx_.neg(b), v, mean)), true};
    }
    }
  }

  /// The branch of the kink with argument `c` (its sign, or its floor),
  /// created on first use and named after the call `call`.
  sym::SymbolId branchOf(sym::ExprId c, sym::ExprId call, bool floor) {
    std::uint64_t key = std::uint64_t(c.index) << 1 | (floor ? 1 : 0);
    auto it = byArgument_.find(key);
    if (it != byArgument_.end())
      return sys_.kinks[it->second].branch;
    std::size_t k = sys_.kinks.size();
    auto slot = static_cast<std::uint32_t>(sys_.parameters.size() + sys_.numHeld + k);
    Kink kink;
    kink.text = ctx_.print(call);
    const std::size_t kLongest = 72;
    if (kink.text.size() > kLongest)
      kink.text = kink.text.substr(0, kLongest - 3) + "...";
    kink.argument = c;
    kink.floor = floor;
    kink.branch = ctx_.addSymbol("branch" + std::to_string(k), sym::SymbolKind::Parameter, slot);
    sys_.kinks.push_back(std::move(kink));
    byArgument_[key] = k;
    byBranch_[sys_.kinks.back().branch.index] = k;
    return sys_.kinks.back().branch;
  }

  EquationSystem &sys_;
  sym::ExprContext &ctx_;
  std::unordered_map<std::uint32_t, Done> done_;
  std::unordered_map<std::uint64_t, std::size_t> byArgument_;
  std::unordered_map<std::uint32_t, std::size_t> byBranch_;
};

} // namespace

void extractKinks(EquationSystem &sys) {
  // Each clock's ticks are the floor of its phase: a kink of every mode,
  // whichever values the mode reads (compiler/equations/Sampled.cpp).
  std::vector<sym::ExprId> ticks;
  for (const EquationSystem::Clock &c : sys.clocks)
    ticks.push_back(sys.ctx->unary(sym::Op::Floor, c.phase));
  // Most models have no kink at all: the store's counts tell.
  const sym::ExprContext &ctx = *sys.ctx;
  if (ctx.count(sym::Op::Sign) + ctx.count(sym::Op::Floor) + ctx.count(sym::Op::Abs) +
          ctx.count(sym::Op::Min) + ctx.count(sym::Op::Max) ==
      0)
    return; // an edge's Boolean signal is an `if`, a Sign: it counts
  KinkRewriter r(sys);
  for (State &s : sys.states)
    r.rewrite(s.derivative);
  for (sym::ExprId &e : sys.residuals)
    r.rewrite(e);
  for (sym::ExprId &e : sys.jacobian)
    r.rewrite(e);
  for (DependentState &d : sys.dependent) {
    r.rewrite(d.value);
    for (sym::ExprId &e : d.impulse)
      r.rewrite(e);
  }
  for (Output &o : sys.outputs)
    r.rewrite(o.value);
  // Held values read each clock's tick as its kink's branch: the run
  // chooses it before it holds values at an event (Run::chooseTimeFloors).
  std::unordered_map<std::uint32_t, sym::ExprId> tickOf;
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    r.rewrite(ticks[k]);
    tickOf[sys.clocks[k].tick.index] = ticks[k];
    // The phase as the kink reads it (its start's own kink a branch).
    sym::ExprId phase = sys.clocks[k].phase;
    r.rewrite(phase);
    for (Kink &kink : sys.kinks)
      if (kink.floor && kink.argument == phase)
        kink.text = sys.clocks[k].name;
  }
  // An edge's signal is its kinks, with the branches the run chose as the
  // event settled.
  for (EquationSystem::Edge &e : sys.edges) {
    sym::ExprId b = e.b;
    r.rewrite(b);
    tickOf[e.value.index] = b;
  }
  if (!tickOf.empty()) {
    std::vector<sym::ExprId *> roots;
    for (sym::ExprId &e : sys.heldValues)
      roots.push_back(&e);
    sys.ctx->substitute(roots, tickOf);
  }
}

} // namespace hbg::eq
