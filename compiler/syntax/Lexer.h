//===- compiler/syntax/Lexer.h - The grammar's tokens, by hand --*- C++ -*-===//
//
// Internal to hbg_syntax. The lexer rules of grammar/Hbg.g4 written out as
// a direct scan of the bytes. ANTLR's generated lexer simulates its ATN
// per character, with a lock around every DFA lookup and a virtual call
// per byte read: about half of parsing, 0.8 s of 4 MB of text. This one
// produces the same tokens (types, byte offsets, lines, columns; checked
// against HbgLexer on every example and on random inputs by
// tests/syntax/lexer_test.cpp) for the generated parser, which is kept.
// The grammar stays the definition; a change to its lexer rules must be
// made here too, and the test fails until it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CharStream.h>
#include <CommonToken.h>
#include <TokenSource.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace hbg::syntax {

/// Tokens of `text` for HbgParser, taken with scan() by TokenList. As a
/// TokenSource (tests/syntax/lexer_test.cpp compares it with ANTLR's
/// lexer), `input` holds the same bytes, one character per byte
/// (ByteStream): its tokens read their text from it, as ANTLR's do.
/// Whitespace and closed comments are skipped; an unclosed `/*` is an
/// UNTERMINATED_COMMENT token to the end; any byte no rule matches is an
/// ERROR_CHAR. Lines count from 1, columns (bytes) from 0.
class Lexer final : public antlr4::TokenSource {
public:
  Lexer(std::string_view text, antlr4::CharStream *input) : text_(text), input_(input) {}

  /// One token as the lexer finds it.
  struct Scanned {
    std::size_t type, start, length, line, column;
  };
  /// The next token, false at the end of the text (no token for end of
  /// file). The parser's TokenList takes tokens this way, without the
  /// TokenSource's heap tokens.
  bool scan(Scanned &out);

  std::unique_ptr<antlr4::Token> nextToken() override;
  std::size_t getLine() const override { return line_; }
  std::size_t getCharPositionInLine() override { return column_; }
  antlr4::CharStream *getInputStream() override { return input_; }
  std::string getSourceName() override { return input_ ? input_->getSourceName() : ""; }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override;

private:
  /// Consumes `n` bytes, counting lines as ANTLR does (at `\n` only).
  void advance(std::size_t n);
  /// The token type of the number (or bad number) at pos_, and its length.
  std::size_t scanNumber(std::size_t &type) const;

  std::string_view text_;
  antlr4::CharStream *input_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1, column_ = 0;
};

} // namespace hbg::syntax
