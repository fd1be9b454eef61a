//===- hbg/syntax/Parser.h - .hbg text to AST -----------------------------===//
#pragma once

#include "hbg/support/Diagnostics.h"
#include "hbg/syntax/AST.h"

#include <memory>

namespace hbg::syntax {

/// Parses the buffer `fileId` of `sm`. Lexical and syntax errors are
/// reported to `diags` (the first one only: ANTLR's recovery produces
/// follow-on errors that mislead more than they help) and the result is
/// then nullptr.
std::unique_ptr<ast::File> parse(std::uint32_t fileId, const SourceManager &sm,
                                 DiagnosticEngine &diags);

} // namespace hbg::syntax
