//===- hbg/codegen/Tape.h - Expressions as runtime tapes ------------------===//
//
// The second lowering of a mode's guards: besides LLVM IR for the JIT, a
// runtime::Tape that the runtime evaluates on intervals to prove that no
// guard changes its truth over a step. Interpreting a small straight-line
// program keeps interval arithmetic inside runtime/, where it is tested
// without the compiler, and gives the same enclosures to JIT-compiled and
// ahead-of-time-compiled models.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Tape.h"
#include "hbg/symbolic/Expr.h"

#include <optional>
#include <vector>

namespace hbg::codegen {

/// The tape computing `roots` over (t, x, p): states and parameters read
/// their slots. Nullopt when an expression reads a value that only a
/// run-time solve gives (an algebraic unknown), unless `unknownsInX`: then
/// unknowns read x[slot] after the states, as the generated code's do.
/// Walks the context with its visit marks: callers hold its mutex where
/// other threads share it (ExprContext::mutex).
std::optional<runtime::Tape> buildTape(const sym::ExprContext &ctx,
                                       const std::vector<sym::ExprId> &roots,
                                       bool unknownsInX = false);

} // namespace hbg::codegen
