//===- hbg/sema/Sema.h - AST to checked bond graph ------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"
#include "hbg/support/Diagnostics.h"
#include "hbg/syntax/AST.h"

#include <optional>

namespace hbg::sema {

/// Checks the model of `file` (names, element arities, bond counts and
/// directions, expressions, signal and parameter cycles) and builds its flat
/// bond graph. Every problem is reported to `diags`; the result is empty
/// when there was any error.
std::optional<bg::BondGraph> analyze(const ast::File &file, const SourceManager &sm,
                                     DiagnosticEngine &diags);

} // namespace hbg::sema
