//===- compiler/syntax/TokenList.cpp - A file's tokens in one array -------===//

#include "TokenList.h"

#include "Lexer.h"

#include <Exceptions.h>
#include <RuleContext.h>
#include <misc/Interval.h>

namespace hbg::syntax {

std::string ListToken::getText() const {
  if (type_ == kEof)
    return "<EOF>";
  return std::string(list_->buffer().substr(start_, end_ - start_));
}

std::string ListToken::toString() const {
  return "[@" + std::to_string(index_) + "," + std::to_string(start_) + ":" +
         std::to_string(getStopIndex()) + "='" + getText() + "',<" + std::to_string(getType()) +
         ">," + std::to_string(line_) + ":" + std::to_string(column_) + "]";
}

TokenList::TokenList(std::string_view text, std::string sourceName)
    : text_(text), name_(std::move(sourceName)) {
  // About one token per five bytes in written models and generated ones.
  tokens_.reserve(text.size() / 5 + 16);
  Lexer lexer(text, nullptr);
  Lexer::Scanned t;
  while (lexer.scan(t))
    tokens_.emplace_back(this, t.type, t.start, t.start + t.length, t.line, t.column,
                         tokens_.size());
  std::size_t end = text.size();
  tokens_.emplace_back(this, antlr4::Token::EOF, end, end, lexer.getLine(),
                       lexer.getCharPositionInLine(), tokens_.size());
}

antlr4::Token *TokenList::LT(ssize_t k) {
  if (k == 0)
    return nullptr;
  ssize_t i = static_cast<ssize_t>(p_) + (k > 0 ? k - 1 : k);
  if (i < 0)
    return nullptr;
  if (static_cast<std::size_t>(i) >= tokens_.size())
    return &tokens_.back();
  return &tokens_[static_cast<std::size_t>(i)];
}

std::size_t TokenList::LA(ssize_t i) {
  if (i == 1)
    return tokens_[p_].type();
  antlr4::Token *t = LT(i);
  return t ? t->getType() : antlr4::Token::INVALID_TYPE;
}

antlr4::Token *TokenList::get(std::size_t index) const {
  if (index >= tokens_.size())
    throw antlr4::IndexOutOfBoundsException("token index " + std::to_string(index) +
                                            " out of range 0.." +
                                            std::to_string(tokens_.size() - 1));
  return const_cast<ListToken *>(&tokens_[index]);
}

void TokenList::consume() {
  if (tokens_[p_].type() == antlr4::Token::EOF)
    throw antlr4::IllegalStateException("cannot consume EOF");
  ++p_;
}

std::string TokenList::getText(const antlr4::misc::Interval &interval) {
  if (interval.a < 0 || interval.b < 0 || tokens_.size() < 2)
    return "";
  std::size_t first = static_cast<std::size_t>(interval.a);
  std::size_t last = std::min(static_cast<std::size_t>(interval.b), tokens_.size() - 2);
  std::string out;
  for (std::size_t i = first; i <= last; ++i)
    out += tokens_[i].getText();
  return out;
}

std::string TokenList::getText() {
  return getText(
      antlr4::misc::Interval(static_cast<ssize_t>(0), static_cast<ssize_t>(tokens_.size()) - 1));
}

std::string TokenList::getText(antlr4::RuleContext *ctx) {
  return getText(ctx->getSourceInterval());
}

std::string TokenList::getText(antlr4::Token *start, antlr4::Token *stop) {
  if (!start || !stop)
    return "";
  return getText(antlr4::misc::Interval(start->getTokenIndex(), stop->getTokenIndex()));
}

} // namespace hbg::syntax
