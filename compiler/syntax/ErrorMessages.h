//===- compiler/syntax/ErrorMessages.h - Syntax errors in words -*- C++ -*-===//
//
// Internal to hbg_syntax. Turns the parser's view of an error (tokens, token
// sets) into diagnostics worded for people who have not read the grammar.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ErrorStrategy.h"
#include "Tokens.h"

#include "hbg/support/Diagnostics.h"

#include <Vocabulary.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace hbg::syntax {

/// "end of file" or the token's text in backticks.
std::string describeToken(const SourceText &src, const antlr4::Token *tok);

/// The expected tokens in words ("a declaration or `}`"), or "" when the
/// set is empty or too long to be worth reading.
std::string describeExpected(const antlr4::misc::IntervalSet &expected,
                             const antlr4::dfa::Vocabulary &vocabulary);

/// True for the tokens that only exist to carry a lexical error (invalid
/// characters, unterminated comments, malformed or out-of-range numbers).
bool isLexicalError(const SourceText &src, const antlr4::Token *tok);

/// Reports the lexical error carried by `tok` (see isLexicalError).
void reportLexicalError(const SourceText &src, const antlr4::Token *tok, DiagnosticEngine &diags);

/// Reports a syntax error. `previous` is the token before the offending one
/// (nullptr at the start of the file): a missing `;` is shown after it.
void reportSyntaxError(const SourceText &src, const SyntaxError &error,
                       const antlr4::Token *previous, const antlr4::dfa::Vocabulary &vocabulary,
                       DiagnosticEngine &diags);

} // namespace hbg::syntax
