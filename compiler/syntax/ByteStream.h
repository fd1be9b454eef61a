//===- compiler/syntax/ByteStream.h - Bytes as an ANTLR input ---*- C++ -*-===//
//
// Internal to hbg_syntax; the parser reads bytes through TokenList, and this
// feeds ANTLR's generated lexer in tests/syntax/lexer_test.cpp.
// ANTLRInputStream decodes UTF-8, which has two
// problems for us: it throws on malformed input, and it makes token indices
// count code points while SourceRange counts bytes. Feeding one character
// per byte instead keeps indices equal to byte offsets and accepts any input.
// Nothing is lost: outside comments the language is ASCII, and any other
// byte lexes as ERROR_CHAR, which is reported from the original buffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ANTLRInputStream.h>

#include <string>
#include <string_view>

namespace hbg::syntax {

/// An ANTLR char stream over raw bytes, one character per byte.
class ByteStream : public antlr4::ANTLRInputStream {
public:
  ByteStream(std::string_view bytes, std::string sourceName) {
    _data.clear();
    _data.reserve(bytes.size());
    for (char c : bytes)
      _data.push_back(static_cast<unsigned char>(c));
    p = 0;
    name = std::move(sourceName);
  }
};

} // namespace hbg::syntax
