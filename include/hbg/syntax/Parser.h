//===- hbg/syntax/Parser.h - .hbg text to AST -----------------------------===//
#pragma once

#include "hbg/support/Diagnostics.h"
#include "hbg/syntax/AST.h"

#include <cstddef>
#include <memory>

namespace hbg::syntax {

/// Parentheses (of groups, calls, arguments and guards) may nest this
/// deep; deeper is an error at the first `(` past it. Every pass that walks
/// an expression's nesting recursively is bounded by it; chains of
/// operators at one level (a sum of a million terms) are walked by loops.
inline constexpr std::size_t kMaxNesting = 256;

/// Parses the buffer `fileId` of `sm`. Lexical and syntax errors are
/// reported to `diags` (the first one only: ANTLR's recovery produces
/// follow-on errors that mislead more than they help) and the result is
/// then nullptr.
std::unique_ptr<ast::File> parse(std::uint32_t fileId, const SourceManager &sm,
                                 DiagnosticEngine &diags);

} // namespace hbg::syntax
