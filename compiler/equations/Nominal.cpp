//===- compiler/equations/Nominal.cpp - Nominal magnitudes of storage -----===//
//
// Each state's absolute tolerance scales with a nominal magnitude, so that
// a relative tolerance means the same for a 1 pF capacitor's charge and a
// vehicle's momentum. The model knows a scale before the run: the sources'
// amplitudes and the elements' parameters. This file derives it as an
// expression of parameters, so that parameter overrides move it too.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"

#include <optional>

namespace hbg::eq {

using namespace hbg::bg;

namespace {

/// Whether `e` reads nothing but the model's parameters (held values are
/// parameters too, past the model's own, and change at events).
bool ofParameters(const BondGraph &g, sym::ExprId e) {
  const sym::ExprContext &ctx = *g.ctx;
  if (!ctx.isParametric(e))
    return false;
  for (sym::SymbolId s : ctx.symbolsOf(e))
    if (ctx.symbol(s).slot >= g.parameters.size())
      return false;
  return true;
}

/// An expression of parameters bounding |e| for every time, or nothing
/// when e reads states or held values or grows with time. Deep
/// expressions give up rather than recurse without bound.
std::optional<sym::ExprId> amplitude(const BondGraph &g, sym::ExprId e, int depth = 0) {
  sym::ExprContext &ctx = *g.ctx;
  if (depth > 64)
    return std::nullopt;
  if (ofParameters(g, e))
    return ctx.unary(sym::Op::Abs, e);
  // A copy: building the amplitudes below adds nodes, which may move the
  // node array.
  const sym::Node n = ctx.node(e);
  auto sub = [&](sym::ExprId a) { return amplitude(g, a, depth + 1); };
  switch (n.op) {
  case sym::Op::Sin:
  case sym::Op::Cos:
  case sym::Op::Tanh:
  case sym::Op::Sign:
    return ctx.constant(1);
  case sym::Op::Neg:
  case sym::Op::Abs:
    return sub(n.lhs);
  case sym::Op::Add:
  case sym::Op::Sub:
  case sym::Op::Mul:
  case sym::Op::Min:
  case sym::Op::Max: {
    std::optional<sym::ExprId> a = sub(n.lhs), b = sub(n.rhs);
    if (!a || !b)
      return std::nullopt;
    if (n.op == sym::Op::Mul)
      return ctx.mul(*a, *b);
    if (n.op == sym::Op::Min || n.op == sym::Op::Max)
      return ctx.max(*a, *b);
    return ctx.add(*a, *b);
  }
  case sym::Op::Div: {
    std::optional<sym::ExprId> a = sub(n.lhs);
    if (!a || !ofParameters(g, n.rhs))
      return std::nullopt;
    return ctx.div(*a, ctx.unary(sym::Op::Abs, n.rhs));
  }
  case sym::Op::Select: {
    std::optional<sym::ExprId> a = sub(n.rhs), b = sub(n.third);
    if (!a || !b)
      return std::nullopt;
    return ctx.max(*a, *b);
  }
  default:
    return std::nullopt; // time, states, exp/log/pow of them
  }
}

/// The larger of two optional magnitudes.
std::optional<sym::ExprId> larger(sym::ExprContext &ctx, std::optional<sym::ExprId> a,
                                  std::optional<sym::ExprId> b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return ctx.max(*a, *b);
}

} // namespace

std::vector<sym::ExprId> storageNominals(const BondGraph &g) {
  sym::ExprContext &ctx = *g.ctx;
  std::optional<sym::ExprId> effort, flow, rMin, rMax;
  for (const Element &e : g.elements) {
    switch (e.kind) {
    case ElementKind::Se:
    case ElementKind::MSe:
      effort = larger(ctx, effort, amplitude(g, e.value));
      break;
    case ElementKind::Sf:
    case ElementKind::MSf:
      flow = larger(ctx, flow, amplitude(g, e.value));
      break;
    case ElementKind::R:
      if (e.law == LawForm::Linear && ofParameters(g, e.value)) {
        sym::ExprId r = ctx.unary(sym::Op::Abs, e.value);
        rMin = rMin ? ctx.min(*rMin, r) : r;
        rMax = rMax ? ctx.max(*rMax, r) : r;
      }
      break;
    default:
      break;
    }
  }
  // A flow scale from the effort scale through the largest resistance (the
  // smallest current it drives), and dually.
  std::optional<sym::ExprId> effortScale = effort, flowScale = flow;
  if (!flowScale && effort && rMax)
    flowScale = ctx.div(*effort, *rMax);
  if (!effortScale && flow && rMin)
    effortScale = ctx.mul(*flow, *rMin);

  std::vector<sym::ExprId> out(g.elements.size());
  sym::ExprId fraction = ctx.constant(kDerivedNominalFraction);
  for (std::size_t i = 0; i < g.elements.size(); ++i) {
    const Element &e = g.elements[i];
    if (!isStorage(e.kind))
      continue;
    if (e.nominal.valid()) {
      out[i] = ctx.unary(sym::Op::Abs, e.nominal);
      continue;
    }
    std::optional<sym::ExprId> scale = e.kind == ElementKind::C ? effortScale : flowScale;
    if (e.law != LawForm::Linear || !scale || !ofParameters(g, e.value))
      continue;
    out[i] = ctx.mul(fraction, ctx.mul(ctx.unary(sym::Op::Abs, e.value), *scale));
  }
  return out;
}

} // namespace hbg::eq
