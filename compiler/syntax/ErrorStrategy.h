//===- compiler/syntax/ErrorStrategy.h - Stop at the first error -*- C++ -*-===//
//
// Internal to hbg_syntax. ANTLR's default strategy recovers from errors by
// inserting and deleting tokens, and the errors that follow a recovery are
// mostly artefacts of it. We stop instead, keeping what the parser knew at the
// first error so that Parser.cpp can word it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <DefaultErrorStrategy.h>
#include <misc/IntervalSet.h>

#include <optional>

namespace hbg::syntax {

/// What the parser knew at its first error.
struct SyntaxError {
  /// The token that could not be parsed (possibly end of file).
  antlr4::Token *offending = nullptr;
  /// The tokens that would have been accepted instead. Empty when unknown:
  /// a failed multi-token prediction knows what could start the construct,
  /// not what could follow the tokens that matched.
  antlr4::misc::IntervalSet expected;
  /// A one-token edit that would let the parse go on, as ANTLR's recovery
  /// would find it; it decides how the error is worded.
  enum class Fix {
    None,
    Missing, ///< insert the one expected token before `offending`
    Extra,   ///< delete `offending`
  } fix = Fix::None;
};

/// Records the first syntax error and aborts the parse with
/// antlr4::ParseCancellationException.
class StopAtFirstError : public antlr4::DefaultErrorStrategy {
public:
  const std::optional<SyntaxError> &error() const { return error_; }

  void reportError(antlr4::Parser *parser, const antlr4::RecognitionException &e) override;
  void recover(antlr4::Parser *parser, std::exception_ptr e) override;
  antlr4::Token *recoverInline(antlr4::Parser *parser) override;
  void sync(antlr4::Parser *parser) override;

private:
  [[noreturn]] void fail(antlr4::Token *offending, antlr4::misc::IntervalSet expected,
                         SyntaxError::Fix fix);
  std::optional<SyntaxError> error_;
};

} // namespace hbg::syntax
