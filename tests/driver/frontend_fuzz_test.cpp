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
                                 "parameter", "signal", "output", ",", "=", ".", "time",
                                 "if n > 0 {", "else", "connected(heat)", "not ", "port"};
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

/// Mutates `texts` `count` times: each must compile or be rejected with
/// diagnostics; counts how many of each.
void fuzz(const std::vector<std::string> &texts, int count, int &compiled, int &rejected) {
  std::mt19937 rng(12345);
  for (int i = 0; i < count; ++i) {
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
}

} // namespace

TEST_CASE("mutated models never crash the front end") {
  std::vector<std::string> texts = exampleTexts();
  REQUIRE(!texts.empty());
  int compiled = 0, rejected = 0;
  fuzz(texts, 3000, compiled, rejected);
  // Both outcomes must be exercised for the test to mean anything.
  CHECK(compiled > 50);
  CHECK(rejected > 500);
}

TEST_CASE("mutated conditional declarations never crash the front end") {
  // A component whose declarations depend on a port and a parameter,
  // nested and in a loop.
  const std::string text = R"(
component HeatingResistor {
    parameter R = 1;
    parameter T = 293.15;
    port p = j in, n = j out, heat = th;
    1 j;  R r(R);  bond j -> r;
    0 th;  MSf loss(r.e * r.f);  bond loss -> th;
    if not connected(heat) {
        Se ambient(T);  bond th -> ambient;
    } else if R > 10 {
        R leak(1e6);  bond th -> leak;
    }
    signal Tdev = th.e;
}
component Stage {
    port p = h.p, n = h.n, heat = h.heat;
    HeatingResistor h(R = 2);
}
model M {
    parameter n = 2;
    Se src(2);  Se gnd(0);  0 top;  0 bottom;
    bond src -> top;  bond bottom -> gnd;
    for i in 1:n {
        Stage s[i];
        bond top -> s[i].p;  bond s[i].n -> bottom;
        if i > 1 {
            0 plate[i];  C cap[i](10) { q0 = 3000; }
            bond s[i].heat -> plate[i];  bond plate[i] -> cap[i];
        }
    }
    output T1 = s[1].h.Tdev, T2 = s[2].h.Tdev;
}
)";
  int compiled = 0, rejected = 0;
  fuzz({text}, 1500, compiled, rejected);
  CHECK(compiled > 20);
  CHECK(rejected > 300);
}
