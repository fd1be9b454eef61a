//===- compiler/sema/Sampled.cpp - Discrete values and their clocks -------===//
//
// `discrete x(x0) when sample(T, t0) = update;`: a value the run holds
// between the ticks of its clock, t0 + k T for k = 0, 1, ..., and sets to
// the update's a priori value at each. Discrete values, their clocks and
// `pre` are all held values (bg::Held): slots after the parameters that
// the run sets at events. The equations stage turns each discrete value
// into its held expression (eq::heldUpdate); each clock is a floor kink
// of its phase in every mode, so that steps end on its ticks.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <cmath>
#include <string>

namespace hbg::sema {

using namespace hbg::bg;

sym::SymbolId Analyzer::addHeld(Held::Kind kind, std::string name, SourceRange range) {
  Held h;
  h.kind = kind;
  h.name = std::move(name);
  h.range = range;
  // Held values come after the parameters in the runtime's parameter array;
  // every parameter exists by now (buildStructure made them first).
  h.symbol = ctx().addSymbol(h.name, sym::SymbolKind::Parameter,
                             std::uint32_t(g_.parameters.size() + g_.held.size()));
  g_.held.push_back(std::move(h));
  return g_.held.back().symbol;
}

std::string Analyzer::sourceText(SourceRange range) const {
  std::string_view text = sm_.text(range.begin.file).substr(range.begin.offset, range.length);
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
    if (!space)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return out;
}

void Analyzer::lowerDiscrete(const ast::Signal &s, Signal &sig) {
  std::size_t index = ctx().symbol(sig.symbol).slot - g_.parameters.size();
  auto held = [&]() -> Held & { return g_.held[index]; };
  held().initial = s.initial ? lowerConstant(*s.initial,
                                             [&] { return "the initial value of `" + s.name + "`"; })
                             : ctx().constant(0);
  if (!held().initial.valid())
    held().initial = ctx().constant(0);

  const ast::Expr &c = *s.clock;
  if (c.kind == ast::ExprKind::Call && c.name == "edge" && c.operands.size() == 1) {
    lowerEdge(s, index, c);
    return;
  }
  // The clock: `sample(period)` or `sample(period, start)`, of parameters.
  if (c.kind != ast::ExprKind::Call || c.name != "sample" || c.operands.empty() ||
      c.operands.size() > 2) {
    diags_.report(DiagKind::DiscreteClock, c.range, {s.name});
    return;
  }
  std::string text = sourceText(c.range);
  sym::ExprId period = lowerConstant(*c.operands[0], [&] { return "the period of `" + text + "`"; });
  sym::ExprId start = c.operands.size() > 1
                          ? lowerConstant(*c.operands[1],
                                          [&] { return "the start of `" + text + "`"; })
                          : ctx().constant(0);
  if (!period.valid() || !start.valid())
    return;
  // Checked at the parameters' defaults; with other values, a period
  // that is not positive makes the phase infinite, which the run reports
  // (Run::chooseTimeFloors).
  std::vector<double> params = bg::defaultParameterValues(g_);
  double value = ctx().evaluate(period, [&](sym::SymbolId s) {
    std::uint32_t slot = ctx().symbol(s).slot;
    return slot < params.size() ? params[slot] : std::nan("");
  });
  if (!(value > 0)) {
    diags_.report(DiagKind::SamplePeriodNotPositive, c.operands[0]->range, {text, value});
    return;
  }
  // Clocks of the same period and start are one clock (the DAG is
  // hash-consed: equal phases are one node). Before the start the phase
  // is -1/2, whose floor no tick reaches: a clock that starts later than
  // a period after the run makes no events at the integers its phase
  // would cross below 0 (its own kink at the start is the first tick's
  // instant).
  sym::ExprId since = ctx().sub(ctx().time(), start);
  sym::ExprId phase = ifNotNegative(ctx(), since,
                                    ctx().div(since, ctx().max(period, ctx().constant(0))),
                                    ctx().constant(-0.5));
  std::uint32_t clock = UINT32_MAX;
  for (std::uint32_t k = 0; k < g_.held.size(); ++k)
    if (g_.held[k].kind == Held::Kind::Clock && g_.held[k].value == phase)
      clock = k;
  if (clock == UINT32_MAX) {
    clock = std::uint32_t(g_.held.size());
    addHeld(Held::Kind::Clock, text, c.range);
    g_.held.back().value = phase;
    g_.held.back().tick = ctx().addSymbol("tick of " + text, sym::SymbolKind::Parameter, UINT32_MAX);
  }
  addOnce(Held::Kind::Started, "started", s.keywordRange);
  held().clock = clock;

  // The update reads any value of the model, discrete values included
  // (their values before the tick); `integral` has no place in it.
  sym::ExprId update = lower(*s.value, {});
  if (update.valid())
    held().value = update;
}

void Analyzer::addOnce(Held::Kind kind, const char *name, SourceRange range) {
  for (const Held &h : g_.held)
    if (h.kind == kind)
      return;
  addHeld(kind, name, range);
  g_.held.back().value = ctx().constant(kind == Held::Kind::Started ? 1 : 0);
}

void Analyzer::lowerEdge(const ast::Signal &s, std::size_t index, const ast::Expr &c) {
  // `edge(b)`: b a Boolean signal, which is a condition's kinks.
  const ast::Expr &arg = *c.operands[0];
  if (!isBoolean(arg))
    return;
  sym::ExprId b = lower(arg, {});
  if (!b.valid())
    return;
  // Edges of one signal are one clock.
  std::uint32_t clock = UINT32_MAX;
  for (std::uint32_t k = 0; k < g_.held.size(); ++k)
    if (g_.held[k].kind == Held::Kind::Edge && g_.held[k].value == b)
      clock = k;
  if (clock == UINT32_MAX) {
    std::string text = sourceText(c.range);
    clock = std::uint32_t(g_.held.size());
    addHeld(Held::Kind::Edge, text, c.range);
    g_.held.back().value = b;
    g_.held.back().tick = ctx().addSymbol("value of " + text, sym::SymbolKind::Parameter, UINT32_MAX);
  }
  // The slots of the pass after an event settles, once a model: Settle
  // and Fired next to each other (the run finds Fired after Settle).
  bool settled = false;
  for (const Held &h : g_.held)
    settled = settled || h.kind == Held::Kind::Settle;
  if (!settled) {
    addOnce(Held::Kind::Settle, "settle", s.keywordRange);
    addOnce(Held::Kind::Fired, "fired", s.keywordRange);
  }
  addOnce(Held::Kind::Armed, "armed", s.keywordRange);
  addOnce(Held::Kind::Started, "started", s.keywordRange);
  g_.held[index].clock = clock;
  sym::ExprId update = lower(*s.value, {});
  if (update.valid())
    g_.held[index].value = update;
}

} // namespace hbg::sema
