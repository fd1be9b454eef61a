//===- compiler/syntax/ErrorMessages.cpp - Syntax errors in words ---------===//

#include "ErrorMessages.h"

#include "Tokens.h"

#include "HbgParser.h"

#include <cstdio>
#include <initializer_list>
#include <vector>

namespace hbg::syntax {

using antlr4::misc::IntervalSet;
using hbg_antlr::HbgParser;

namespace {

/// A group of tokens named by what they start, so that "expected" lists say
/// "an expression" rather than enumerating the ten tokens that can begin one.
struct TokenGroup {
  const char *words;
  std::vector<size_t> tokens;
};

const std::vector<TokenGroup> &tokenGroups() {
  // Element kinds are also names (see `ident` in Hbg.g4), so every group that
  // accepts a name lists them too. Checked in this order.
  static const std::vector<TokenGroup> groups = [] {
    std::vector<size_t> kinds = {HbgParser::SE, HbgParser::SF,  HbgParser::MSE, HbgParser::MSF,
                                 HbgParser::C,  HbgParser::I,   HbgParser::R,   HbgParser::TF,
                                 HbgParser::GY, HbgParser::MTF, HbgParser::MGY};
    // The words of switched junctions are names too, but start no declaration;
    // `experiment` is a name as well, and starts one.
    std::vector<size_t> words = {HbgParser::SWITCHED, HbgParser::DISSIPATIVE, HbgParser::ON,
                                 HbgParser::OFF,      HbgParser::INITIAL,     HbgParser::WHEN,
                                 HbgParser::AND,      HbgParser::OR,          HbgParser::NOT,
                                 HbgParser::EXPERIMENT, HbgParser::COMPONENT, HbgParser::PORT,
                                 HbgParser::IMPORT,   HbgParser::IN,          HbgParser::INPUT,
                                 HbgParser::DISCRETE};
    auto with = [&](std::initializer_list<size_t> extra, bool names) {
      std::vector<size_t> v(extra);
      v.insert(v.end(), kinds.begin(), kinds.end());
      if (names)
        v.insert(v.end(), words.begin(), words.end());
      return v;
    };
    return std::vector<TokenGroup>{
        {"a declaration",
         with({HbgParser::PARAMETER, HbgParser::INPUT, HbgParser::BOND, HbgParser::SIGNAL,
               HbgParser::DISCRETE, HbgParser::OUTPUT, HbgParser::EXPERIMENT, HbgParser::PORT,
               HbgParser::FOR, HbgParser::IF, HbgParser::IDENT, HbgParser::ZERO, HbgParser::ONE},
              false)},
        {"an expression",
         with({HbgParser::NUMBER, HbgParser::ZERO, HbgParser::ONE, HbgParser::IDENT,
               HbgParser::LPAREN, HbgParser::MINUS, HbgParser::PLUS, HbgParser::IF,
               HbgParser::LBRACKET, HbgParser::STRING},
              true)},
        {"a name", with({HbgParser::IDENT}, true)},
        {"a state", {HbgParser::ON, HbgParser::OFF}},
        {"a comparison",
         {HbgParser::LT, HbgParser::LE, HbgParser::ASSIGN, HbgParser::GE, HbgParser::GT}},
        {"an operator",
         {HbgParser::PLUS, HbgParser::MINUS, HbgParser::STAR, HbgParser::SLASH, HbgParser::CARET}},
    };
  }();
  return groups;
}

std::string tokenWords(size_t type, const antlr4::dfa::Vocabulary &vocabulary) {
  switch (type) {
  case antlr4::Token::EOF:
    return "end of file";
  case HbgParser::NUMBER:
    return "a number";
  case HbgParser::IDENT:
    return "a name";
  case HbgParser::STRING:
    return "a string";
  default:
    break;
  }
  std::string literal = vocabulary.getLiteralName(type);
  // Literal names come quoted, ANTLR style: 'model'.
  if (literal.size() >= 2 && literal.front() == '\'' && literal.back() == '\'')
    return "`" + literal.substr(1, literal.size() - 2) + "`";
  return vocabulary.getSymbolicName(type);
}

/// A readable form of the character at `offset`: a whole UTF-8 sequence when
/// it is one, else an escape, so that no raw control byte reaches a terminal.
std::string describeCharacter(std::string_view buffer, std::size_t offset) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(buffer[i]); };
  unsigned char c = byte(offset);
  auto escaped = [](unsigned char b) {
    char out[8];
    std::snprintf(out, sizeof out, "\\x%02x", b);
    return std::string(out);
  };
  if (c < 0x80)
    return c < 0x20 || c == 0x7f ? escaped(c) : std::string(1, static_cast<char>(c));
  std::size_t length = c >= 0xc2 && c <= 0xdf   ? 2
                       : c >= 0xe0 && c <= 0xef ? 3
                       : c >= 0xf0 && c <= 0xf4 ? 4
                                                : 0;
  if (length == 0 || offset + length > buffer.size())
    return escaped(c);
  std::uint32_t cp = c & (0xff >> (length + 1));
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(offset + i) & 0xc0) != 0x80)
      return escaped(c);
    cp = cp << 6 | (byte(offset + i) & 0x3f);
  }
  // Reject overlong forms, surrogates and values past Unicode.
  static const std::uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < minimum[length] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
    return escaped(c);
  return std::string(buffer.substr(offset, length));
}

} // namespace

std::string describeToken(const SourceText &src, const antlr4::Token *tok) {
  if (tok->getType() == antlr4::Token::EOF)
    return "end of file";
  return "`" + std::string(tokenText(src.buffer, tok)) + "`";
}

std::string describeExpected(const IntervalSet &expected,
                             const antlr4::dfa::Vocabulary &vocabulary) {
  IntervalSet left = expected;
  std::vector<std::string> items;
  for (const TokenGroup &group : tokenGroups()) {
    bool all = true, any = false;
    for (size_t t : group.tokens) {
      all = all && expected.contains(t);
      any = any || left.contains(t);
    }
    if (!all || !any)
      continue;
    items.push_back(group.words);
    for (size_t t : group.tokens)
      left.remove(t);
  }
  bool eof = left.contains(antlr4::Token::EOF);
  left.remove(antlr4::Token::EOF);
  for (ssize_t t : left.toList())
    items.push_back(tokenWords(static_cast<size_t>(t), vocabulary));
  if (eof)
    items.push_back(tokenWords(antlr4::Token::EOF, vocabulary));

  // Past four choices a list stops helping; "unexpected X" alone is better.
  if (items.empty() || items.size() > 4)
    return "";
  std::string out = items[0];
  for (std::size_t i = 1; i < items.size(); ++i)
    out += (i + 1 == items.size() ? " or " : ", ") + items[i];
  return out;
}

bool isLexicalError(const SourceText &src, const antlr4::Token *tok) {
  switch (tok->getType()) {
  case HbgParser::ERROR_CHAR:
  case HbgParser::UNTERMINATED_COMMENT:
  case HbgParser::UNTERMINATED_STRING:
  case HbgParser::BAD_NUMBER:
    return true;
  case HbgParser::NUMBER: {
    double value;
    return !parseNumber(tokenText(src.buffer, tok), value);
  }
  default:
    return false;
  }
}

void reportLexicalError(const SourceText &src, const antlr4::Token *tok, DiagnosticEngine &diags) {
  SourceRange range = tokenRange(src.fileId, tok);
  switch (tok->getType()) {
  case HbgParser::ERROR_CHAR:
    range.length = 1;
    diags.report(DiagKind::InvalidCharacter, range,
                 {describeCharacter(src.buffer, tok->getStartIndex())});
    return;
  case HbgParser::UNTERMINATED_COMMENT:
    range.length = 2; // the `/*`; the rest of the file is the comment
    diags.report(DiagKind::UnterminatedComment, range);
    return;
  case HbgParser::UNTERMINATED_STRING:
    diags.report(DiagKind::UnterminatedString, range);
    return;
  default:
    diags.report(DiagKind::InvalidNumber, range, {tokenText(src.buffer, tok)});
    return;
  }
}

void reportSyntaxError(const SourceText &src, const SyntaxError &error,
                       const antlr4::Token *previous, const antlr4::dfa::Vocabulary &vocabulary,
                       DiagnosticEngine &diags) {
  const antlr4::Token *tok = error.offending;
  bool atEnd = tok->getType() == antlr4::Token::EOF;
  std::string expected = describeExpected(error.expected, vocabulary);

  // Just after the previous token: where a forgotten `;` belongs, and where
  // the text stopped when the file ends too early (rather than on the empty
  // line after the final newline).
  SourceRange afterPrevious{{src.fileId, static_cast<std::uint32_t>(src.buffer.size())}, 1};
  if (previous)
    afterPrevious.begin.offset = static_cast<std::uint32_t>(previous->getStopIndex() + 1);

  // A token forgotten at the end of a line is only noticed on the next one;
  // point at the line it belongs to.
  if (error.fix == SyntaxError::Fix::Missing && !atEnd && previous &&
      tok->getLine() > previous->getLine() && !expected.empty()) {
    diags.report(DiagKind::MissingToken, afterPrevious, {expected, describeToken(src, tok)});
    return;
  }
  SourceRange range = atEnd ? afterPrevious : tokenRange(src.fileId, tok);
  // An extra token is best shown alone: what was expected comes right after
  // it, so naming it would only confuse.
  if (expected.empty() || error.fix == SyntaxError::Fix::Extra)
    diags.report(DiagKind::UnexpectedInput, range, {describeToken(src, tok)});
  else
    diags.report(DiagKind::UnexpectedToken, range, {describeToken(src, tok), expected});
}

} // namespace hbg::syntax
