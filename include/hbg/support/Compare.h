//===- hbg/support/Compare.h - Comparison operators of guards -------------===//
#pragma once

namespace hbg {

/// How a transition guard compares two values: `<`, `<=`, `=`, `>=`, `>`.
/// Shared by the AST and the bond graph, which both hold guards.
enum class CompareOp { Less, LessEqual, Equal, GreaterEqual, Greater };

/// "<", "<=", "=", ">=", ">".
const char *compareOpText(CompareOp op);

} // namespace hbg
