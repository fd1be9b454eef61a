//===- tests/syntax/parse_speed.cpp - Parsing speed, in CPU time ----------===//
//
// Not a test: measures hbg::syntax::parse alone (lexing, the parse and the
// AST, not freeing the AST) on each file given, as the least CPU time of
// --repeat runs, so that a busy machine inflates it as little as possible.
// docs/performance.md, "Parsing", has the figures.
//
//   build/tests/hbg_parse_speed [--repeat N] FILE...
//
//===----------------------------------------------------------------------===//

#include "hbg/support/Diagnostics.h"
#include "hbg/support/Source.h"
#include "hbg/syntax/Parser.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

double cpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

} // namespace

int main(int argc, char **argv) {
  int repeat = 5;
  int first = 1;
  if (argc > 2 && std::string(argv[1]) == "--repeat") {
    repeat = std::max(1, std::atoi(argv[2]));
    first = 3;
  }
  if (first >= argc) {
    std::cerr << "usage: hbg_parse_speed [--repeat N] FILE...\n";
    return 2;
  }
  for (int a = first; a < argc; ++a) {
    std::ifstream in(argv[a], std::ios::binary);
    if (!in) {
      std::cerr << argv[a] << ": cannot read\n";
      return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    double best = 0;
    for (int r = 0; r < repeat; ++r) {
      hbg::SourceManager sm;
      std::uint32_t id = sm.addBuffer(argv[a], text.str());
      hbg::DiagnosticEngine diags(sm);
      double start = cpuSeconds();
      std::unique_ptr<hbg::ast::File> file = hbg::syntax::parse(id, sm, diags);
      double seconds = cpuSeconds() - start;
      if (!file) {
        std::cerr << diags.renderAll();
        return 1;
      }
      best = r == 0 ? seconds : std::min(best, seconds);
    }
    double megabytes = static_cast<double>(text.str().size()) / 1e6;
    std::printf("%s: %.2f MB, %.1f ms, %.2f MB/s\n", argv[a], megabytes, best * 1e3,
                megabytes / best);
  }
  return 0;
}
