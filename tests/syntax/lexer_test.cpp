// The hand-written lexer (compiler/syntax/Lexer.h) against the one ANTLR
// generates from grammar/Hbg.g4, which stays the definition of the tokens:
// every token's type, channel, byte range, line, column and text must be
// the same, on every example and on random inputs built from the pieces
// where longest-match rules disagree (numbers, keywords, comments,
// operators, bytes outside ASCII).

#include "ByteStream.h"
#include "Lexer.h"
#include "TokenList.h"

#include "HbgLexer.h"

#include <CommonTokenStream.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using hbg::syntax::ByteStream;

struct Tok {
  std::size_t type, channel, start, stop, line, column;
  std::string text;
  bool operator==(const Tok &o) const {
    return type == o.type && channel == o.channel && start == o.start && stop == o.stop &&
           line == o.line && column == o.column && text == o.text;
  }
};

std::ostream &operator<<(std::ostream &os, const Tok &t) {
  return os << "type " << t.type << " channel " << t.channel << " [" << t.start << ", "
            << t.stop << "] at " << t.line << ":" << t.column;
}

std::vector<Tok> collect(antlr4::TokenSource &source) {
  antlr4::CommonTokenStream stream(&source);
  stream.fill();
  std::vector<Tok> out;
  for (antlr4::Token *t : stream.getTokens())
    out.push_back({t->getType(), t->getChannel(), t->getStartIndex(), t->getStopIndex(),
                   t->getLine(), t->getCharPositionInLine(), t->getText()});
  return out;
}

std::vector<Tok> viaAntlr(const std::string &text) {
  ByteStream input(text, "test");
  hbg_antlr::HbgLexer lexer(&input);
  lexer.removeErrorListeners();
  return collect(lexer);
}

std::vector<Tok> viaHand(const std::string &text) {
  ByteStream input(text, "test");
  hbg::syntax::Lexer lexer(text, &input);
  return collect(lexer);
}

/// The tokens the parser reads: the hand-written lexer through TokenList.
std::vector<Tok> viaList(const std::string &text) {
  hbg::syntax::TokenList list(text, "test");
  std::vector<Tok> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    antlr4::Token *t = list.get(i);
    out.push_back({t->getType(), t->getChannel(), t->getStartIndex(), t->getStopIndex(),
                   t->getLine(), t->getCharPositionInLine(), t->getText()});
    CHECK(t->getTokenIndex() == i);
  }
  return out;
}

void same(const std::vector<Tok> &a, const std::vector<Tok> &h) {
  CHECK(a.size() == h.size());
  for (std::size_t i = 0; i < std::min(a.size(), h.size()); ++i)
    if (!(a[i] == h[i])) {
      CAPTURE(i);
      CAPTURE(a[i]);
      CAPTURE(h[i]);
      CHECK(false);
      return;
    }
}

/// Compares the two lexers on `text`, and the token list with ANTLR's;
/// `what` names the input on failure.
void same(const std::string &text, const std::string &what) {
  CAPTURE(what);
  std::vector<Tok> a = viaAntlr(text);
  same(a, viaHand(text));
  // A token of the list has the bytes of the buffer as its text, where
  // ANTLR's encodes each byte past ASCII (a character of ByteStream) as
  // UTF-8.
  for (Tok &t : a)
    if (t.type != antlr4::Token::EOF)
      t.text = text.substr(t.start, t.stop - t.start + 1);
  same(a, viaList(text));
}

} // namespace

TEST_CASE("the hand-written lexer gives ANTLR's tokens on every example") {
  int files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(HBG_SOURCE_DIR "/examples")) {
    if (entry.path().extension() != ".hbg")
      continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    same(buffer.str(), entry.path().filename().string());
    ++files;
  }
  CHECK(files >= 20);
}

TEST_CASE("the hand-written lexer gives ANTLR's tokens where longest matches meet") {
  const std::vector<std::string> cases = {
      "", " ", "0", "1", "01", "10", "0.", "1.", "1.5", ".5", ".", "..", "1..2", "1.x",
      "1e", "1e5", "1E+5", "1e-", "1e+", "1e+x", "1.e", "1.e3", ".5e", ".5e-2", ".e5",
      "0e", "2.5E+", "1ee", "x1.5", "a.b", "a..b", "-1", "->", "-->", "- >", "<=<", ">=>",
      "<>", "//", "// c\r\nx", "//\n", "/**/", "/*/", "/* a */ b", "/* a", "/*", "*/",
      "/* a * / b", "/* ** */", "/***/x", "a/b", "a//b", "a/*b*/c", "model", "models",
      "Se", "SE", "Sef", "MSe", "MSex", "C", "C1", "I", "R", "TF", "GY", "MTF", "MGY",
      "switched", "dissipative", "on", "off", "initial", "when", "and", "or", "not",
      "_", "_1", "a_b", "\t\f\r\n", "\v", "\x01", std::string(1, '\0'), "\xc3\xa9",
      "\x80\xff", "#", "@$`", "a\nb\n\nc", "\r\r\n", "x = 1;\n  y", "1\n.5",
  };
  for (const std::string &c : cases)
    same(c, "`" + c + "`");
}

TEST_CASE("the hand-written lexer gives ANTLR's tokens on random inputs") {
  const std::vector<std::string> pieces = {
      "0",     "1",   "7",   "42",  ".",  "e",   "E",   "+",   "-",     ">",      "<",
      "=",     "/",   "*",   "(",   ")",  "{",   "}",   ";",   ",",     ":",      "^",
      "model", "on",  "off", "Se",  "M",  "MS",  "S",   "x",   "_",     "tf",     "TF",
      " ",     "\n",  "\r",  "\t",  "//", "/*",  "*/",  "\f",  "\v",    "\xc3",   "\xa9",
      "#",     "1e",  ".5",  "->",  "<=", ">=",  "when", "not", "and",  "initial", "9",
  };
  std::uint64_t seed = 0x5eed;
  auto next = [&](std::size_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((seed >> 33) % bound);
  };
  for (int k = 0; k < 3000; ++k) {
    std::string text;
    std::size_t count = next(30);
    for (std::size_t i = 0; i < count; ++i)
      text += pieces[next(pieces.size())];
    same(text, "random input " + std::to_string(k));
  }
}
