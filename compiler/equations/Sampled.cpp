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
    switch (h.kind) {
    case Kind::Pre: out[k] = apriori.at(h.symbol.index); break;
    case Kind::Started: out[k] = ctx.constant(1); break;
    case Kind::Clock: out[k] = count[k]; break;
    case Kind::Discrete:
      out[k] = ctx.select(ctx.sub(ticks[h.clock], ctx.constant(0.5)),
                          ctx.substitute(resolved[k], apriori), before.at(h.symbol.index));
      break;
    }
  }
  return out;
}

} // namespace hbg::eq
