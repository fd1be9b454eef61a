//===- compiler/equations/Sampled.cpp - Held values at an event -----------===//
//
// The run calls a mode's `held` function at each event, with the a priori
// values of the event (the state before it, the held values before it),
// and takes what it returns as the held values from then on. Every held
// value is computed from the values before the event, so discrete values
// that read each other update at once, as registers clocked together.
//
// A clock's slot holds the number of its last tick, n; its ticks are the
// integers its phase (time - start) / period reaches, from 0 on. The
// phase is a floor kink of every mode (extractKinks), so steps end on its
// ticks as on any time event, and at an event the kink's branch is the
// tick the clock is at (the run chooses it first: Run::chooseTimeFloors):
// a tick when it passed n.
//
// Before the run's first event, `started` is 0: a discrete value then
// reads its initial value, and a clock the tick before the start time
// (so a tick at the start time itself counts).
//
// `when edge(b)`: b is a Boolean signal, whose value jumps where one of its
// comparisons' kinks changes branch, which the run chooses as the event
// settles (after its mode iteration). So the run calls the held function
// a second time then, with `settle` 1: every value keeps what the first
// call gave it, except that each edge records b as the event left it,
// and a discrete value on an edge takes its update where b went from 0 to
// 1 (its update read then: the event's values after, discrete values and
// `pre` as before it). `fired` tells the run that one did, for the guards
// may hold now; `armed` is 0 until the first settling (the start's), so
// that b holding at the start is no edge.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include <unordered_map>

namespace hbg::eq {

std::vector<sym::ExprId> heldUpdates(const bg::BondGraph &g, sym::ExprContext &ctx,
                                     const std::vector<sym::ExprId> &resolved) {
  using Kind = bg::Held::Kind;
  std::size_t n = g.held.size();
  sym::ExprId started;
  for (const bg::Held &h : g.held)
    if (h.kind == Kind::Started)
      started = ctx.ref(h.symbol);
  // `if started then a else b`, with started 0 or 1.
  auto ifStarted = [&](sym::ExprId a, sym::ExprId b) {
    return ctx.select(ctx.sub(started, ctx.constant(0.5)), a, b);
  };
  // Each discrete value as the event reads it, and each `pre` as the
  // event holds it: what updates read in their place.
  std::unordered_map<std::uint32_t, sym::ExprId> before;
  for (const bg::Held &h : g.held)
    if (h.kind == Kind::Discrete)
      before[h.symbol.index] = ifStarted(ctx.ref(h.symbol), h.initial);
  std::unordered_map<std::uint32_t, sym::ExprId> apriori = before;
  for (std::size_t k = 0; k < n; ++k)
    if (g.held[k].kind == Kind::Pre)
      apriori[g.held[k].symbol.index] = ctx.substitute(resolved[k], before);

  // The settling pass (edges only): `a` there, `b` in the event's first.
  sym::ExprId settle, armed;
  for (const bg::Held &h : g.held) {
    if (h.kind == Kind::Settle)
      settle = ctx.ref(h.symbol);
    if (h.kind == Kind::Armed)
      armed = ctx.ref(h.symbol);
  }
  auto inSettle = [&](sym::ExprId a, sym::ExprId b) {
    return settle.valid() ? ctx.select(ctx.sub(settle, ctx.constant(0.5)), a, b) : b;
  };
  auto holds = [&](sym::ExprId b, sym::ExprId yes, sym::ExprId no) {
    return ctx.select(ctx.sub(b, ctx.constant(0.5)), yes, no);
  };
  // Whether each edge fires: armed, b 1 now (its kinks' branches, the
  // `tick` symbol) and 0 when the last event settled.
  std::vector<sym::ExprId> fires(n);
  sym::ExprId anyFired = ctx.constant(0);
  for (std::size_t k = 0; k < n; ++k) {
    const bg::Held &h = g.held[k];
    if (h.kind != Kind::Edge)
      continue;
    sym::ExprId one = ctx.constant(1), zero = ctx.constant(0);
    fires[k] = holds(armed, holds(ctx.ref(h.tick), holds(ctx.ref(h.symbol), zero, one), zero), zero);
    anyFired = ctx.add(anyFired, fires[k]);
  }

  // Each clock's tick number now, and whether it ticks (1) or not (0).
  std::vector<sym::ExprId> count(n), ticks(n);
  for (std::size_t k = 0; k < n; ++k) {
    if (g.held[k].kind != Kind::Clock)
      continue;
    // The tick the clock is at: its kink's branch, which the run has
    // chosen for the event (a phase a rounding error below an integer
    // may be at that tick already). At the start, the tick before it,
    // unless the start is on a tick.
    sym::ExprId phase = resolved[k];
    sym::ExprId now = ctx.ref(g.held[k].tick);
    sym::ExprId off = ctx.sub(ctx.unary(sym::Op::Abs, ctx.sub(phase, now)),
                              ctx.mul(ctx.constant(1e-9), ctx.add(ctx.constant(1),
                                                                  ctx.unary(sym::Op::Abs, phase))));
    sym::ExprId atStart = ctx.select(off, now, ctx.sub(now, ctx.constant(1)));
    sym::ExprId last = ifStarted(ctx.ref(g.held[k].symbol), atStart);
    // Ticks are numbered from 0: the phase's floor below 0 is no tick.
    sym::ExprId one = ctx.constant(1), zero = ctx.constant(0);
    ticks[k] = ctx.select(ctx.sub(ctx.sub(now, last), ctx.constant(0.5)),
                          ctx.select(ctx.add(now, ctx.constant(0.5)), one, zero), zero);
    count[k] = ctx.select(ctx.sub(ticks[k], ctx.constant(0.5)), now, last);
  }

  std::vector<sym::ExprId> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    const bg::Held &h = g.held[k];
    sym::ExprId self = ctx.ref(h.symbol);
    switch (h.kind) {
    case Kind::Pre: out[k] = inSettle(self, apriori.at(h.symbol.index)); break;
    case Kind::Started: out[k] = ctx.constant(1); break;
    case Kind::Clock: out[k] = inSettle(self, count[k]); break;
    case Kind::Discrete:
      if (g.held[h.clock].kind == Kind::Edge)
        out[k] = inSettle(holds(fires[h.clock], resolved[k], self), before.at(h.symbol.index));
      else
        out[k] = inSettle(self, ctx.select(ctx.sub(ticks[h.clock], ctx.constant(0.5)),
                                           ctx.substitute(resolved[k], apriori),
                                           before.at(h.symbol.index)));
      break;
    case Kind::Edge: out[k] = inSettle(ctx.ref(h.tick), self); break;
    case Kind::Armed: out[k] = inSettle(ctx.constant(1), self); break;
    case Kind::Settle: out[k] = ctx.constant(0); break;
    case Kind::Fired: out[k] = inSettle(anyFired, ctx.constant(0)); break;
    }
  }
  return out;
}

} // namespace hbg::eq
