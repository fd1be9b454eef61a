//===- compiler/syntax/Lexer.cpp - The grammar's tokens, by hand ----------===//
//
// ANTLR's lexer takes the longest match, and among equally long ones the
// rule written first. Written out: keywords are identifiers whose whole
// text is a keyword; a number is DIGITS ('.' DIGITS?)? or '.' DIGITS, then
// an exponent if one with digits follows, else, after an `e` or `E` (and a
// sign), BAD_NUMBER; a number that is just `0` or `1` is a junction kind;
// of the operators, `->`, `<=` and `>=` before their first character; a
// `/*` without a `*/` after it runs to the end as UNTERMINATED_COMMENT.
//
//===----------------------------------------------------------------------===//

#include "Lexer.h"

#include "HbgLexer.h"

#include <CommonTokenFactory.h>

#include <array>
#include <vector>

namespace hbg::syntax {

namespace {

using L = hbg_antlr::HbgLexer;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }

struct Keyword {
  std::string_view text;
  std::size_t type;
};

constexpr Keyword kKeywords[] = {
    {"model", L::MODEL},     {"parameter", L::PARAMETER}, {"bond", L::BOND},
    {"signal", L::SIGNAL},   {"output", L::OUTPUT},       {"Se", L::SE},
    {"Sf", L::SF},           {"MSe", L::MSE},             {"MSf", L::MSF},
    {"C", L::C},             {"I", L::I},                 {"R", L::R},
    {"TF", L::TF},           {"GY", L::GY},               {"MTF", L::MTF},
    {"MGY", L::MGY},         {"switched", L::SWITCHED},   {"dissipative", L::DISSIPATIVE},
    {"on", L::ON},           {"off", L::OFF},             {"initial", L::INITIAL},
    {"when", L::WHEN},       {"and", L::AND},             {"or", L::OR},
    {"not", L::NOT},         {"experiment", L::EXPERIMENT},
    {"if", L::IF},           {"then", L::THEN},           {"else", L::ELSE},
    {"component", L::COMPONENT}, {"port", L::PORT},       {"import", L::IMPORT},
    {"for", L::FOR},         {"in", L::IN},               {"input", L::INPUT},
    {"discrete", L::DISCRETE},
};

std::size_t identifierType(std::string_view word) {
  // Only the keywords with the word's first letter are compared.
  static const auto byStart = [] {
    std::array<std::vector<const Keyword *>, 128> table;
    for (const Keyword &k : kKeywords)
      table[static_cast<unsigned char>(k.text[0])].push_back(&k);
    return table;
  }();
  for (const Keyword *k : byStart[static_cast<unsigned char>(word[0]) & 0x7f])
    if (k->text == word)
      return k->type;
  return L::IDENT;
}

} // namespace

antlr4::TokenFactory<antlr4::CommonToken> *Lexer::getTokenFactory() {
  return antlr4::CommonTokenFactory::DEFAULT.get();
}

void Lexer::advance(std::size_t n) {
  for (std::size_t end = pos_ + n; pos_ < end; ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 0;
    } else {
      ++column_;
    }
  }
}

std::size_t Lexer::scanNumber(std::size_t &type) const {
  std::size_t i = pos_, n = text_.size();
  auto digits = [&] {
    std::size_t start = i;
    while (i < n && isDigit(text_[i]))
      ++i;
    return i > start;
  };
  if (!digits()) { // '.' DIGITS: the caller saw a digit after the dot
    ++i;
    digits();
  } else if (i < n && text_[i] == '.') {
    ++i;
    digits();
  }
  type = L::NUMBER;
  if (i < n && (text_[i] == 'e' || text_[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < n && (text_[j] == '+' || text_[j] == '-'))
      ++j;
    if (j < n && isDigit(text_[j])) {
      i = j;
      digits();
    } else {
      type = L::BAD_NUMBER;
      i = j;
    }
  }
  std::size_t length = i - pos_;
  if (type == L::NUMBER && length == 1 && (text_[pos_] == '0' || text_[pos_] == '1'))
    type = text_[pos_] == '0' ? L::ZERO : L::ONE;
  return length;
}

std::unique_ptr<antlr4::Token> Lexer::nextToken() {
  Scanned t;
  if (!scan(t))
    return getTokenFactory()->create({this, input_}, antlr4::Token::EOF, "",
                                     antlr4::Token::DEFAULT_CHANNEL, pos_, pos_ - 1, line_,
                                     column_);
  return getTokenFactory()->create({this, input_}, t.type, "", antlr4::Token::DEFAULT_CHANNEL,
                                   t.start, t.start + t.length - 1, t.line, t.column);
}

bool Lexer::scan(Scanned &out) {
  const std::size_t n = text_.size();
  for (;;) {
    if (pos_ >= n)
      return false;
    char c = text_[pos_];
    char next = pos_ + 1 < n ? text_[pos_ + 1] : '\0';
    std::size_t type = 0, length = 1;
    switch (c) {
    case ' ': case '\t': case '\r': case '\n': case '\f': {
      std::size_t end = pos_;
      while (end < n && (text_[end] == ' ' || text_[end] == '\t' || text_[end] == '\r' ||
                         text_[end] == '\n' || text_[end] == '\f'))
        ++end;
      advance(end - pos_);
      continue;
    }
    case '/':
      if (next == '/') {
        std::size_t end = pos_ + 2;
        while (end < n && text_[end] != '\n' && text_[end] != '\r')
          ++end;
        advance(end - pos_);
        continue;
      }
      if (next == '*') {
        std::size_t close = text_.find("*/", pos_ + 2);
        if (close != std::string_view::npos) {
          advance(close + 2 - pos_);
          continue;
        }
        type = L::UNTERMINATED_COMMENT;
        length = n - pos_;
        break;
      }
      type = L::SLASH;
      break;
    case ',': type = L::COMMA; break;
    case '=': type = L::ASSIGN; break;
    case ':': type = L::COLON; break;
    case '{': type = L::LBRACE; break;
    case '}': type = L::RBRACE; break;
    case '(': type = L::LPAREN; break;
    case ')': type = L::RPAREN; break;
    case '[': type = L::LBRACKET; break;
    case ']': type = L::RBRACKET; break;
    case '"': {
      std::size_t end = pos_ + 1;
      while (end < n && text_[end] != '"' && text_[end] != '\r' && text_[end] != '\n')
        ++end;
      type = end < n && text_[end] == '"' ? L::STRING : L::UNTERMINATED_STRING;
      length = end - pos_ + (type == L::STRING ? 1 : 0);
      break;
    }
    case ';': type = L::SEMI; break;
    case '+': type = L::PLUS; break;
    case '*': type = L::STAR; break;
    case '^': type = L::CARET; break;
    case '-':
      type = next == '>' ? L::ARROW : L::MINUS;
      length = next == '>' ? 2 : 1;
      break;
    case '<':
      type = next == '=' ? L::LE : L::LT;
      length = next == '=' ? 2 : 1;
      break;
    case '>':
      type = next == '=' ? L::GE : L::GT;
      length = next == '=' ? 2 : 1;
      break;
    case '.':
      if (isDigit(next))
        length = scanNumber(type);
      else
        type = L::DOT;
      break;
    default:
      if (isDigit(c)) {
        length = scanNumber(type);
      } else if (isIdentStart(c)) {
        std::size_t end = pos_ + 1;
        while (end < n && isIdentChar(text_[end]))
          ++end;
        length = end - pos_;
        type = identifierType(text_.substr(pos_, length));
      } else {
        type = L::ERROR_CHAR;
      }
      break;
    }
    out = {type, pos_, length, line_, column_};
    advance(length);
    return true;
  }
}

} // namespace hbg::syntax
