//===- compiler/codegen/Tape.cpp - Expressions as runtime tapes -----------===//

#include "hbg/codegen/Tape.h"

namespace hbg::codegen {

namespace {
/// The tape op of a DAG operation: both enums take their operations from
/// ExprOps.def, under the same names.
runtime::TapeOp tapeOp(sym::Op op) {
  switch (op) {
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME)                                                  \
  case sym::Op::ID:                                                                                \
    return runtime::TapeOp::ID;
#include "hbg/support/ExprOps.def"
  case sym::Op::Const:
  case sym::Op::Symbol:
    break;
  }
  return runtime::TapeOp::Const;
}
} // namespace

std::optional<runtime::Tape> buildTape(const sym::ExprContext &ctx,
                                       const std::vector<sym::ExprId> &roots,
                                       bool unknownsInX) {
  // Node ids are a topological order: emit the reachable nodes by
  // increasing id. (The context is shared by every mode of a model and
  // keeps growing: only the reachable part may be walked.)
  std::vector<std::uint32_t> order = ctx.reach(roots);
  // Each node's instruction by node id, kept between calls: only the
  // entries of this call's nodes are read, and each is written before
  // its users read it.
  thread_local std::vector<std::uint32_t> slot;
  if (slot.size() < ctx.size())
    slot.resize(ctx.size());
  runtime::Tape tape;
  tape.code.reserve(order.size());
  for (std::uint32_t i : order) {
    const sym::Node &n = ctx.node(sym::ExprId{i});
    runtime::TapeInstr in{runtime::TapeOp::Const};
    if (n.op == sym::Op::Const) {
      in.value = n.value;
    } else if (n.op == sym::Op::Symbol) {
      const sym::Symbol &s = ctx.symbol(n.symbol);
      switch (s.kind) {
      case sym::SymbolKind::Time: in.op = runtime::TapeOp::Time; break;
      case sym::SymbolKind::State: in.op = runtime::TapeOp::X; break;
      case sym::SymbolKind::Parameter: in.op = runtime::TapeOp::P; break;
      case sym::SymbolKind::Algebraic:
        if (!unknownsInX)
          return std::nullopt;
        in.op = runtime::TapeOp::X;
        break;
      case sym::SymbolKind::Variable:
        return std::nullopt;
      }
      in.a = s.slot;
    } else {
      in.op = tapeOp(n.op);
      int k = sym::arity(n.op);
      if (k >= 1)
        in.a = slot[n.lhs.index];
      if (k >= 2)
        in.b = slot[n.rhs.index];
      if (k >= 3)
        in.c = slot[n.third.index];
    }
    slot[i] = static_cast<std::uint32_t>(tape.code.size());
    tape.code.push_back(in);
  }
  for (sym::ExprId r : roots)
    tape.results.push_back(slot[r.index]);
  return tape;
}

} // namespace hbg::codegen
