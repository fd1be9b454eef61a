//===- compiler/syntax/Tokens.h - ANTLR tokens as source ranges -*- C++ -*-===//
//
// Internal to hbg_syntax. Token indices are byte offsets: the lexer scans
// bytes, so a token's start index is its offset in the buffer and its text
// is a slice of the buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/Source.h"

#include <Token.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace hbg::syntax {

/// The buffer being parsed and its file id, for slicing and locating tokens.
struct SourceText {
  std::uint32_t fileId;
  std::string_view buffer;
};

/// The source text of `tok` (empty for end of file).
inline std::string_view tokenText(std::string_view buffer, const antlr4::Token *tok) {
  std::size_t begin = tok->getStartIndex(), stop = tok->getStopIndex();
  if (tok->getType() == antlr4::Token::EOF || stop < begin || begin >= buffer.size())
    return {};
  return buffer.substr(begin, stop - begin + 1);
}

/// The span from the start of `first` to the end of `last`.
inline SourceRange tokenRange(std::uint32_t fileId, const antlr4::Token *first,
                              const antlr4::Token *last) {
  std::size_t begin = first->getStartIndex(), stop = last->getStopIndex();
  std::uint32_t length = stop >= begin ? static_cast<std::uint32_t>(stop - begin + 1) : 1;
  return {{fileId, static_cast<std::uint32_t>(begin)}, length};
}

inline SourceRange tokenRange(std::uint32_t fileId, const antlr4::Token *tok) {
  return tokenRange(fileId, tok, tok);
}

/// Converts the text of a NUMBER token. False when it is out of the range of
/// a double (overflow, or underflow all the way to zero): such a literal
/// cannot mean what its author wrote.
bool parseNumber(std::string_view text, double &value);

} // namespace hbg::syntax
