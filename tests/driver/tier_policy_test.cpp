// The default tier policy: LLVM is loaded, and a mode compiled, only when
// the compilation pays back over the rest of the run (docs/architecture.md,
// "Tiers"). Its own process, so that whether LLVM was loaded is this
// file's doing; the cases run in file order.

#include "../../compiler/driver/TierPolicy.h"
#include "ChainModel.h"

#include "hbg/codegen/CodeGen.h"
#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace {

const std::string kExamples = std::string(HBG_SOURCE_DIR) + "/examples/";

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void checkIdentical(const hbg::Result &a, const hbg::Result &b) {
  REQUIRE(a.columns.size() == b.columns.size());
  for (std::size_t c = 0; c < a.columns.size(); ++c) {
    REQUIRE(a.columns[c].size() == b.columns[c].size());
    std::size_t differ = 0;
    for (std::size_t k = 0; k < a.columns[c].size(); ++k)
      differ += !same(a.columns[c][k], b.columns[c][k]);
    CHECK(differ == 0);
  }
  CHECK(a.steps == b.steps);
}

hbg::Result run(const hbg::Model &model, double tEnd) {
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  return hbg::Simulation(model, opts).run();
}

} // namespace

TEST_CASE("the choice weighs the run ahead against compiling") {
  hbg::TierCosts c;
  SUBCASE("on tapes") {
    // 100 instructions, 1,000 calls ahead: 0.75 ms on tapes, far less
    // than loading LLVM.
    CHECK(hbg::chooseTier(c, 100, 200, 1e3, 0, false, false) == 0);
    // Once LLVM is loaded, a million calls of the same code pay for it.
    CHECK(hbg::chooseTier(c, 100, 200, 1e6, 0, true, false) == hbg::kOptimisedTier);
    // A chain of 1,000 masses (12,000 instructions) with 5,000 calls
    // ahead: the quick code pays back, the optimised code's compile time
    // does not.
    CHECK(hbg::chooseTier(c, 12000, 12000, 5e3, 0, false, false) == hbg::kQuickTier);
    // On quick code, optimising pays back only over a much longer run.
    CHECK(hbg::chooseTier(c, 12000, 12000, 5e3, hbg::kQuickTier, true, false) ==
          hbg::kQuickTier);
    CHECK(hbg::chooseTier(c, 12000, 12000, 1e7, hbg::kQuickTier, true, false) ==
          hbg::kOptimisedTier);
    // Nothing ahead, nothing to gain.
    CHECK(hbg::chooseTier(c, 12000, 12000, 0, 0, true, false) == 0);
  }
  SUBCASE("as baseline code") {
    // The same chain: baseline code is nearly as fast as the quick tier,
    // and 5,000 calls do not pay for LLVM at all.
    CHECK(hbg::chooseTier(c, 12000, 12000, 5e3, 0, false, true) == 0);
    // A million calls pay for the optimised code.
    CHECK(hbg::chooseTier(c, 12000, 12000, 1e6, 0, false, true) == hbg::kOptimisedTier);
  }
}

TEST_CASE("small models and short runs never load LLVM") {
  hbg::Model ball = hbg::Compiler().compileFile(kExamples + "bouncing_ball.hbg");
  hbg::Result r = run(ball, 20);
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.events.size() > 20);
  hbg::Model buck = hbg::Compiler().compileFile(kExamples + "buck.hbg");
  r = run(buck, 0.05);
  REQUIRE_MESSAGE(r.ok(), r.error);
  // A chain of 300 masses for a few steps.
  hbg::Model shortChain = hbg::Compiler().compileString(hbg::test::chainModel(300), "chain.hbg");
  r = run(shortChain, 0.05);
  REQUIRE_MESSAGE(r.ok(), r.error);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(ball.modesCompiledByLlvm() + buck.modesCompiledByLlvm() == 0);
  CHECK(shortChain.modesCompiledByLlvm() + shortChain.modesCompiledQuickly() == 0);
  CHECK_FALSE(hbg::codegen::backendLoaded());
}

TEST_CASE("a run as baseline code gives the tapes' bits, and LLVM's code only when it pays") {
  hbg::CompilerOptions tapeOpts;
  tapeOpts.tiering = hbg::Tiering::Tape;
  std::string text = hbg::test::chainModel(300);
  hbg::Result tape = run(hbg::Compiler(tapeOpts).compileString(text, "chain.hbg"), 200);
  REQUIRE_MESSAGE(tape.ok(), tape.error);
  hbg::Model model = hbg::Compiler().compileString(text, "chain.hbg");
  hbg::Result tiered = run(model, 200);
  REQUIRE_MESSAGE(tiered.ok(), tiered.error);
  checkIdentical(tape, tiered);
  CHECK_FALSE(hbg::codegen::backendLoaded());

  // Long enough for the optimised code to pay back: compiled on the
  // background thread, and swapped in.
  hbg::Result longer = run(model, 20000);
  REQUIRE_MESSAGE(longer.ok(), longer.error);
  CAPTURE(longer.rhsCalls);
  for (int i = 0; i < 500 && model.modesCompiledByLlvm() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(model.modesCompiledByLlvm() == 1);
  CHECK(model.modesCompiledQuickly() == 0);
  CHECK(hbg::codegen::backendLoaded());
}
