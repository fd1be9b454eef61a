// Tiers: a mode's functions run on tapes (runtime::Tape, an interpreter of
// the expression DAG) until LLVM has compiled them. The tape mirrors the
// generated code op for op, so every example must give the same
// trajectory, events and final state, bit for bit, whether it runs on
// tapes only, on LLVM's code only, or switches from one to the other in
// the middle of the run (a background compilation after the first call).

#include "ChainModel.h"

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

const std::string kExamples = std::string(HBG_SOURCE_DIR) + "/examples/";

hbg::Model compile(const std::string &file, hbg::Tiering tiering, unsigned hotCalls = 1000,
                   std::size_t quickTierMin = hbg::CompilerOptions().quickTierMin) {
  hbg::CompilerOptions opts;
  opts.tiering = tiering;
  opts.hotCalls = hotCalls;
  opts.quickTierMin = quickTierMin;
  return hbg::Compiler(opts).compileFile(kExamples + file);
}

/// A count of evaluations no run reaches: the code stays baseline code.
constexpr unsigned kNever = std::numeric_limits<unsigned>::max();

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Every column, event and final value of `b` equals `a`'s bit for bit.
void checkIdentical(const hbg::Result &a, const hbg::Result &b) {
  REQUIRE(a.columns.size() == b.columns.size());
  for (std::size_t c = 0; c < a.columns.size(); ++c) {
    CAPTURE(a.names[c]);
    REQUIRE(a.columns[c].size() == b.columns[c].size());
    std::size_t differ = 0;
    for (std::size_t k = 0; k < a.columns[c].size(); ++k)
      differ += !same(a.columns[c][k], b.columns[c][k]);
    CHECK(differ == 0);
  }
  REQUIRE(a.events.size() == b.events.size());
  for (std::size_t e = 0; e < a.events.size(); ++e) {
    CHECK(same(a.events[e].time, b.events[e].time));
    CHECK(a.events[e].modes == b.events[e].modes);
  }
  REQUIRE(a.finalState.size() == b.finalState.size());
  for (std::size_t i = 0; i < a.finalState.size(); ++i)
    CHECK(same(a.finalState[i], b.finalState[i]));
  CHECK(a.steps == b.steps);
  CHECK(a.rhsCalls == b.rhsCalls);
}

/// Modes LLVM has compiled once `want` are (or after 5 s), and 200 ms
/// more, by when anything else queued would be compiled too.
std::size_t llvmModesAfterWaiting(const hbg::Model &model, std::size_t want) {
  for (int i = 0; i < 500 && model.modesCompiledByLlvm() < want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  return model.modesCompiledByLlvm();
}

/// Simulates `model` to `tEnd` with the default options.
hbg::Result runTo(const hbg::Model &model, double tEnd) {
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  return hbg::Simulation(model, opts).run();
}

struct Example {
  const char *file;
  double tEnd;
};

const Example kAll[] = {
    {"rlc.hbg", 5},
    {"mass_spring_damper.hbg", 10},
    {"dc_motor.hbg", 3},
    {"falling_drag.hbg", 5},
    {"rigid_masses.hbg", 3},
    {"parallel_capacitors.hbg", 2},
    {"gear_inertias.hbg", 5},
    {"resistor_bridge.hbg", 0.01},
    {"diode_loop.hbg", 2},
    {"collision_inelastic.hbg", 1},
    {"collision_elastic.hbg", 1},
    {"bouncing_ball.hbg", 6},
    {"tank_valves.hbg", 20},
    {"rectifier.hbg", 0.06},
    {"buck.hbg", 0.004},
    {"pwm_rc.hbg", 0.005},
    {"ideal_switch.hbg", 0.1},
    {"stick_slip.hbg", 5},
    {"freewheel.hbg", 0.01},
    {"boost.hbg", 0.01},
    {"three_phase_bridge.hbg", 0.04},
};

} // namespace

TEST_CASE("every example runs identically on tapes, on LLVM's code, and switching mid-run") {
  for (const Example &ex : kAll) {
    CAPTURE(ex.file);
    hbg::SimulationOptions opts;
    opts.tEnd = ex.tEnd;
    opts.dtOut = ex.tEnd / 200;
    hbg::Result jit = hbg::Simulation(compile(ex.file, hbg::Tiering::Jit), opts).run();
    REQUIRE_MESSAGE(jit.ok(), jit.error);
    CHECK(jit.rhsCalls > 0);
    hbg::Result tape = hbg::Simulation(compile(ex.file, hbg::Tiering::Tape), opts).run();
    REQUIRE_MESSAGE(tape.ok(), tape.error);
    checkIdentical(jit, tape);
    // Never LLVM: the tapes as baseline machine code (runtime/Baseline.h).
    hbg::Result baseline =
        hbg::Simulation(compile(ex.file, hbg::Tiering::Tiered, kNever), opts).run();
    REQUIRE_MESSAGE(baseline.ok(), baseline.error);
    checkIdentical(jit, baseline);
    // Hot after one call: compiled in the background while the run goes
    // on, and swapped in whenever that is done.
    hbg::Result tiered = hbg::Simulation(compile(ex.file, hbg::Tiering::Tiered, 1), opts).run();
    REQUIRE_MESSAGE(tiered.ok(), tiered.error);
    checkIdentical(jit, tiered);
    // Every mode through LLVM's quick tier first: two swaps mid-run.
    hbg::Result quick =
        hbg::Simulation(compile(ex.file, hbg::Tiering::Tiered, 1, 0), opts).run();
    REQUIRE_MESSAGE(quick.ok(), quick.error);
    checkIdentical(jit, quick);
  }
}

namespace {

/// How the tests of the quick tier below run the chain of 300 masses.
hbg::SimulationOptions chainRunOptions() {
  hbg::SimulationOptions opts;
  opts.tEnd = 20;
  opts.dtOut = 0.1;
  return opts;
}

/// The chain model `text` run on tapes only: the reference, bit for bit.
hbg::Result runOnTapes(const std::string &text, const hbg::SimulationOptions &opts) {
  hbg::CompilerOptions tapeOpts;
  tapeOpts.tiering = hbg::Tiering::Tape;
  return hbg::Simulation(hbg::Compiler(tapeOpts).compileString(text, "chain.hbg"), opts).run();
}

} // namespace

TEST_CASE("large modes get LLVM's quick code first, then the optimised code") {
  // A chain of 300 masses: its right-hand side's tape is well above
  // quickTierMin, the RLC circuit's far below.
  std::string text = hbg::test::chainModel(300);
  hbg::SimulationOptions opts = chainRunOptions();
  hbg::Result tape = runOnTapes(text, opts);
  REQUIRE_MESSAGE(tape.ok(), tape.error);
  hbg::CompilerOptions countOpts;
  countOpts.hotCalls = 1000; // compiled by count, not by cost (tier_policy_test)
  hbg::Model model = hbg::Compiler(countOpts).compileString(text, "chain.hbg");
  hbg::Result tiered = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(tiered.ok(), tiered.error);
  checkIdentical(tape, tiered);
  CHECK(llvmModesAfterWaiting(model, 1) == 1);
  CHECK(model.modesCompiledQuickly() == 1);
  // Run again on the optimised code: still the same bits.
  checkIdentical(tape, hbg::Simulation(model, opts).run());

  hbg::Model small = compile("rlc.hbg", hbg::Tiering::Tiered, 1);
  REQUIRE(runTo(small, 1).ok());
  CHECK(llvmModesAfterWaiting(small, 1) == 1);
  CHECK(small.modesCompiledQuickly() == 0);
}

TEST_CASE("Jit gives large modes LLVM's quick code before the first call") {
  // The chain of 300 masses' tapes are above a jitQuickMin of 1,000
  // instructions: LLVM's quick code is in when compileString returns, and
  // its results are the tapes' bit for bit. Below the bound, the mode is
  // optimised before its first call, as before.
  std::string text = hbg::test::chainModel(300);
  hbg::SimulationOptions opts = chainRunOptions();
  hbg::Result tape = runOnTapes(text, opts);
  REQUIRE_MESSAGE(tape.ok(), tape.error);

  hbg::CompilerOptions jitOpts;
  jitOpts.tiering = hbg::Tiering::Jit;
  jitOpts.jitQuickMin = 1000;
  hbg::Model quick = hbg::Compiler(jitOpts).compileString(text, "chain.hbg");
  CHECK(quick.modesCompiledQuickly() == 1);
  CHECK(quick.modesCompiledByLlvm() == 0);
  hbg::Result run = hbg::Simulation(quick, opts).run();
  REQUIRE_MESSAGE(run.ok(), run.error);
  checkIdentical(tape, run);

  jitOpts.jitQuickMin = hbg::CompilerOptions().jitQuickMin;
  hbg::Model optimised = hbg::Compiler(jitOpts).compileString(text, "chain.hbg");
  CHECK(optimised.modesCompiledQuickly() == 0);
  CHECK(optimised.modesCompiledByLlvm() == 1);
}

TEST_CASE("stiff methods evaluate the Jacobian on tapes identically") {
  for (const char *file : {"rlc.hbg", "dc_motor.hbg", "bouncing_ball.hbg", "stick_slip.hbg"}) {
    CAPTURE(file);
    hbg::SimulationOptions opts;
    opts.tEnd = 1;
    opts.method = hbg::runtime::Method::Rosenbrock;
    hbg::Result jit = hbg::Simulation(compile(file, hbg::Tiering::Jit), opts).run();
    REQUIRE_MESSAGE(jit.ok(), jit.error);
    CHECK(jit.jacobianCalls > 0);
    hbg::Result tape = hbg::Simulation(compile(file, hbg::Tiering::Tape), opts).run();
    REQUIRE_MESSAGE(tape.ok(), tape.error);
    hbg::Result baseline =
        hbg::Simulation(compile(file, hbg::Tiering::Tiered, kNever), opts).run();
    REQUIRE_MESSAGE(baseline.ok(), baseline.error);
    checkIdentical(jit, baseline);
    checkIdentical(jit, tape);
    CHECK(jit.jacobianCalls == tape.jacobianCalls);
  }
}

TEST_CASE("a switched model's modes start on tapes and are compiled once hot") {
  // Tiered (the default): a mode passed through stays on its tape; the
  // one a run stays in is compiled in the background.
  hbg::Model model = compile("freewheel.hbg", hbg::Tiering::Tiered, 50);
  hbg::Result r = runTo(model, 0.01);
  REQUIRE_MESSAGE(r.ok(), r.error);
  // Three modes entered: the initial one, the mythical (open, blocking)
  // and the real (open, conducting).
  CHECK(model.modesCompiled() == 3);
  CHECK(llvmModesAfterWaiting(model, 2) == 2);
  // Tapes only: nothing reaches LLVM.
  hbg::Model tapes = compile("freewheel.hbg", hbg::Tiering::Tape);
  REQUIRE(runTo(tapes, 0.01).ok());
  CHECK(tapes.modesCompiledByLlvm() == 0);
  // LLVM only: every mode entered, the mythical one too.
  hbg::Model jit = compile("freewheel.hbg", hbg::Tiering::Jit);
  REQUIRE(runTo(jit, 0.01).ok());
  CHECK(jit.modesCompiledByLlvm() == 3);
}

TEST_CASE("a mythical mode is never compiled, however many events pass through it") {
  // The buck passes through a mythical mode at every switching (the
  // diode blocking as the switch opens; the switch closing onto the
  // conducting diode): hundreds of events here, each evaluating that
  // mode's guards and impulses. Only the right-hand side makes a mode
  // hot, so only the two real modes reach LLVM.
  hbg::Model model = compile("buck.hbg", hbg::Tiering::Tiered, 50);
  hbg::Result r = runTo(model, 0.004);
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.events.size() > 50);
  CHECK(model.modesCompiled() == 4);
  CHECK(llvmModesAfterWaiting(model, 2) == 2);
}

TEST_CASE("a model dropped while its modes compile in the background") {
  // The background thread stops with the model; nothing it compiles may
  // outlive it (ASan and the sanitizer build check the rest).
  for (int k = 0; k < 5; ++k) {
    hbg::Model model = compile("three_phase_bridge.hbg", hbg::Tiering::Tiered, 1);
    hbg::SimulationOptions opts;
    opts.tEnd = 0.005;
    REQUIRE(hbg::Simulation(model, opts).run().ok());
  }
}

TEST_CASE("the mode cache keeps at most maxCachedModes modes that no run holds") {
  hbg::SimulationOptions opts;
  opts.tEnd = 0.01;
  opts.dtOut = 1e-4;
  for (std::size_t bound : {std::size_t(1), std::size_t(256)}) {
    CAPTURE(bound);
    hbg::CompilerOptions copts;
    copts.maxCachedModes = bound;
    hbg::Model model = hbg::Compiler(copts).compileFile(kExamples + "freewheel.hbg");
    hbg::Result first = hbg::Simulation(model, opts).run();
    REQUIRE_MESSAGE(first.ok(), first.error);
    // The run held its three modes; once it is over, all but the initial
    // one may go.
    CHECK(model.modesCompiled() == 3);
    hbg::Result second = hbg::Simulation(model, opts).run();
    REQUIRE_MESSAGE(second.ok(), second.error);
    // With room for one mode, the second run analyses the other two again.
    CHECK(model.modesCompiled() == (bound == 1 ? 5u : 3u));
    checkIdentical(first, second);
  }
}
