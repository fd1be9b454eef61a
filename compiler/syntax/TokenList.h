//===- compiler/syntax/TokenList.h - A file's tokens in one array -*- C++ -*-===//
//
// Internal to hbg_syntax. The token stream the parser reads: every token of
// a file lexed up front into one vector of small tokens. ANTLR's
// CommonTokenStream pulls heap-allocated CommonTokens one at a time from a
// TokenSource and looks each one up through channel filtering on every
// LT(); it was 14 % of parsing a large model (docs/performance.md,
// "Parsing"). The lexer puts every token on the default channel, so
// lookahead here is an index.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Token.h>
#include <TokenStream.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hbg::syntax {

class TokenList;

/// One token: its type, its place in the buffer, its line and column.
/// Its text is a slice of the buffer, read through the list.
class ListToken final : public antlr4::Token {
public:
  ListToken(const TokenList *list, std::size_t type, std::size_t start, std::size_t end,
            std::size_t line, std::size_t column, std::size_t index)
      : list_(list), type_(static_cast<std::uint32_t>(type)),
        start_(static_cast<std::uint32_t>(start)), end_(static_cast<std::uint32_t>(end)),
        line_(static_cast<std::uint32_t>(line)), column_(static_cast<std::uint32_t>(column)),
        index_(static_cast<std::uint32_t>(index)) {}

  std::string getText() const override;
  std::size_t getType() const override {
    return type_ == kEof ? antlr4::Token::EOF : static_cast<std::size_t>(type_);
  }
  std::size_t getLine() const override { return line_; }
  std::size_t getCharPositionInLine() const override { return column_; }
  std::size_t getChannel() const override { return antlr4::Token::DEFAULT_CHANNEL; }
  std::size_t getTokenIndex() const override { return index_; }
  std::size_t getStartIndex() const override { return start_; }
  /// One before the start for an empty token (end of file), as ANTLR has it.
  std::size_t getStopIndex() const override { return static_cast<std::size_t>(end_) - 1; }
  antlr4::TokenSource *getTokenSource() const override { return nullptr; }
  antlr4::CharStream *getInputStream() const override { return nullptr; }
  std::string toString() const override;

  /// The type as the parser compares it, without a virtual call.
  std::size_t type() const { return getType(); }

private:
  static constexpr std::uint32_t kEof = 0xffffffffu;
  const TokenList *list_;
  std::uint32_t type_, start_, end_, line_, column_, index_;
};

/// The tokens of one buffer, ending with end of file, as an ANTLR token
/// stream. Files are limited to 4 GB by SourceRange's offsets already.
class TokenList final : public antlr4::TokenStream {
public:
  /// Lexes all of `text` (Lexer.h).
  TokenList(std::string_view text, std::string sourceName);
  // Tokens point back at their list.
  TokenList(const TokenList &) = delete;
  TokenList &operator=(const TokenList &) = delete;

  std::string_view buffer() const { return text_; }
  const std::vector<ListToken> &tokens() const { return tokens_; }

  /// LT(1) and LA(1), without the checks for other offsets.
  ListToken *current() { return &tokens_[p_]; }

  antlr4::Token *LT(ssize_t k) override;
  antlr4::Token *get(std::size_t index) const override;
  antlr4::TokenSource *getTokenSource() const override { return nullptr; }
  std::string getText(const antlr4::misc::Interval &interval) override;
  std::string getText() override;
  std::string getText(antlr4::RuleContext *ctx) override;
  std::string getText(antlr4::Token *start, antlr4::Token *stop) override;

  void consume() override;
  std::size_t LA(ssize_t i) override;
  ssize_t mark() override { return -1; }
  void release(ssize_t) override {}
  std::size_t index() override { return p_; }
  void seek(std::size_t index) override {
    p_ = index < tokens_.size() ? index : tokens_.size() - 1;
  }
  std::size_t size() override { return tokens_.size(); }
  std::string getSourceName() const override { return name_; }

private:
  std::string_view text_;
  std::string name_;
  std::vector<ListToken> tokens_;
  std::size_t p_ = 0;
};

} // namespace hbg::syntax
