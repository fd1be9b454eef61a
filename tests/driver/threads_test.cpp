//===- tests/driver/threads_test.cpp - One Model, many threads ------------===//
//
// Eight threads run 100 simulations each of one freshly compiled Model,
// each with its own parameter values, while modes and Jacobians are
// compiled on first use underneath; every result must equal, bit for bit,
// the same simulation run serially on a second compilation of the model.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Case {
  const char *file;
  double tEnd;
  hbg::runtime::Method method;
};

constexpr int kThreads = 8, kRuns = 100;

/// Run k of a case: its first parameter moved by k per mille.
hbg::Result runOne(const hbg::Model &model, const Case &c, int k) {
  hbg::SimulationOptions opts;
  opts.tEnd = c.tEnd;
  opts.dtOut = c.tEnd / 20;
  opts.method = c.method;
  hbg::Simulation sim(model, opts);
  const std::string &name = model.parameterNames().front();
  sim.setParameter(name, model.parameterValues().front() * (1 + 0.001 * k));
  return sim.run();
}

bool same(const hbg::Result &a, const hbg::Result &b) {
  if (a.error != b.error || a.columns.size() != b.columns.size() ||
      a.events.size() != b.events.size())
    return false;
  for (std::size_t c = 0; c < a.columns.size(); ++c)
    if (a.columns[c].size() != b.columns[c].size() ||
        std::memcmp(a.columns[c].data(), b.columns[c].data(),
                    a.columns[c].size() * sizeof(double)) != 0)
      return false;
  return true;
}

/// Runs case `c` kThreads x kRuns times on one model compiled with `opts`
/// and compares every result with the serial runs of a model compiled
/// with the defaults.
void checkThreads(const Case &c, const hbg::CompilerOptions &opts, bool sameModeCount) {
  const std::string dir = std::string(HBG_SOURCE_DIR) + "/examples/";
  hbg::Model serialModel = hbg::Compiler().compileFile(dir + c.file);
  std::vector<hbg::Result> serial;
  for (int k = 0; k < kThreads * kRuns; ++k)
    serial.push_back(runOne(serialModel, c, k));
  // A second compilation, so that the threads meet every mode and the
  // Jacobian uncompiled.
  hbg::Model shared = hbg::Compiler(opts).compileFile(dir + c.file);
  std::vector<hbg::Result> threaded(serial.size());
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int r = 0; r < kRuns; ++r) {
        int k = r * kThreads + i;
        threaded[std::size_t(k)] = runOne(shared, c, k);
      }
    });
  for (std::thread &t : threads)
    t.join();
  int differ = 0;
  for (std::size_t k = 0; k < serial.size(); ++k)
    differ += same(serial[k], threaded[k]) ? 0 : 1;
  CHECK(differ == 0);
  CHECK(serial.front().ok());
  if (sameModeCount)
    CHECK(shared.modesCompiled() == serialModel.modesCompiled());
}

} // namespace

TEST_CASE("eight threads simulate one model as one thread does, bit for bit") {
  for (Case c : {Case{"rlc.hbg", 2, hbg::runtime::Method::Auto},
                 Case{"tank_valves.hbg", 6, hbg::runtime::Method::Auto},
                 Case{"bouncing_ball.hbg", 2, hbg::runtime::Method::DormandPrince},
                 Case{"stick_slip.hbg", 2, hbg::runtime::Method::Auto},
                 Case{"diode_loop.hbg", 0.05, hbg::runtime::Method::Rosenbrock}}) {
    CAPTURE(c.file);
    checkThreads(c, {}, true);
  }
}

TEST_CASE("eight threads, while modes are compiled, swapped in and dropped from the cache") {
  // Every mode hot after one evaluation and compiled twice (LLVM's quick
  // tier, then optimised), so that the background thread compiles and
  // swaps code in while eight threads run them, and a cache of one mode,
  // so that modes are dropped and analysed again as runs end: the results
  // must not change in a bit.
  hbg::CompilerOptions opts;
  opts.hotCalls = 1;
  opts.quickTierMin = 0;
  opts.maxCachedModes = 1;
  for (Case c : {Case{"tank_valves.hbg", 6, hbg::runtime::Method::Auto},
                 Case{"freewheel.hbg", 0.01, hbg::runtime::Method::Auto},
                 Case{"stick_slip.hbg", 2, hbg::runtime::Method::Auto}}) {
    CAPTURE(c.file);
    checkThreads(c, opts, false);
  }
}
