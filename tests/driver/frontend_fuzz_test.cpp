// Bounded fuzzing of the whole front end: mutated example models must either
// compile or produce diagnostics; nothing may throw or crash.

#include "hbg/driver/Pipeline.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace {
std::vector<std::string> exampleTexts() {
  std::vector<std::string> texts;
  for (const auto &e : std::filesystem::directory_iterator(std::string(HBG_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".hbg")
      continue;
    std::ifstream in(e.path());
    std::ostringstream os;
    os << in.rdbuf();
    texts.push_back(os.str());
  }
  std::sort(texts.begin(), texts.end());
  return texts;
}

/// Replaces, deletes or duplicates a random token-sized piece.
std::string mutate(std::string s, std::mt19937 &rng) {
  static const char *pieces[] = {"0", "1", "->", ";", "}", "{", "(", ")", "e", "f", "q",
                                 "bond", "R", "C", "I", "Se", "Sf", "TF", "GY", "MSe",
                                 "integral(", "x.e", "source", "loop", "1e400", "*", "/",
                                 "parameter", "signal", "output", ",", "=", ".", "time"};
  int edits = 1 + rng() % 3;
  for (int k = 0; k < edits && !s.empty(); ++k) {
    std::size_t at = rng() % s.size();
    std::size_t len = rng() % 6;
    switch (rng() % 3) {
    case 0: s.replace(at, len, pieces[rng() % (sizeof pieces / sizeof *pieces)]); break;
    case 1: s.erase(at, len); break;
    case 2: s.insert(at, s.substr(rng() % s.size(), len)); break;
    }
  }
  return s;
}
} // namespace

TEST_CASE("mutated models never crash the front end") {
  std::vector<std::string> texts = exampleTexts();
  REQUIRE(!texts.empty());
  std::mt19937 rng(12345);
  int compiled = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = mutate(texts[i % texts.size()], rng);
    hbg::SourceManager sm;
    std::uint32_t file = sm.addBuffer("fuzz.hbg", text);
    hbg::DiagnosticEngine diags(sm);
    hbg::driver::FrontendResult r;
    REQUIRE_NOTHROW(r = hbg::driver::runFrontend(sm, file, diags));
    if (diags.hasErrors()) {
      ++rejected;
      std::string rendered = diags.renderAll();
      CHECK(rendered.find("error: ") != std::string::npos);
      CHECK_FALSE(r.equations.has_value());
    } else {
      ++compiled;
      REQUIRE(r.equations.has_value());
      CHECK(r.equations->verify() == "");
    }
  }
  // Both outcomes must be exercised for the test to mean anything.
  CHECK(compiled > 50);
  CHECK(rejected > 500);
}
