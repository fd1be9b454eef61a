//===- tests/runtime/remap_test.cpp - Remapping the state at events -------===//
//
// simulate() on the inelastic collision of two bodies (HYBRSIM's bullet
// and wood, HandModels.h): event time, the state before and after, the
// event log, and momentum conservation by the exact and by the iterative
// remap.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "runtime/HandModels.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;
using namespace hbgtest;

// HYBRSIM's iteration with factor F (equal masses) moves the gap
// p1 - p2 by (1 - 2F) each step: p1_k = 0.5 + 0.5 (1 - 2F)^k.

namespace {

/// The checks every collision run shares: one event at 0.2 from OFF into
/// ON, the state before and after, the rows at the event and the end.
void checkCollision(const RunRecord &r, double m1, double m2) {
  INFO("error: " << r.error);
  REQUIRE(r.error.empty());
  REQUIRE(r.events.size() == 1);
  const Event &ev = r.events[0];
  double tImpact = 0.2 * m1; // gap 0.2 closed at speed p1(0) / m1 = 1 / m1
  CHECK(ev.time == doctest::Approx(tImpact).epsilon(1e-12));
  CHECK(ev.transitions == std::vector<std::string>{"contact: off -> on when (x2 - x1 <= 0)+"});
  CHECK(ev.modes == std::vector<std::string>{"contact=off", "contact=on"});
  CHECK(ev.real == std::vector<bool>{true, true});

  double x = -0.2 + tImpact / m1; // both bodies at the origin
  REQUIRE(ev.before.size() == 4);
  CHECK(ev.before[0] == 1);
  CHECK(ev.before[1] == 0);
  CHECK(ev.before[2] == doctest::Approx(x).epsilon(1e-12));
  CHECK(ev.before[3] == 0);
  double p1 = m1 / (m1 + m2), p2 = m2 / (m1 + m2);
  REQUIRE(ev.after.size() == 4);
  CHECK(ev.after[0] == doctest::Approx(p1).epsilon(1e-12));
  CHECK(ev.after[1] == doctest::Approx(p2).epsilon(1e-12));
  CHECK(ev.after[0] + ev.after[1] == doctest::Approx(1).epsilon(1e-12)); // momentum
  CHECK(ev.after[2] == ev.before[2]); // positions do not jump
  CHECK(ev.after[3] == ev.before[3]);
  REQUIRE(ev.states.size() == 2);
  CHECK(ev.states[0] == ev.before);
  CHECK(ev.states[1] == ev.after);

  // A row before the impact and one after it, at the impact time.
  std::vector<std::size_t> rows = rowsAt(r, ev.time);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1] == rows[0] + 1);
  CHECK(r.columns[1][rows[0]] == 1);
  CHECK(r.columns[2][rows[0]] == 0);
  CHECK(r.columns[1][rows[1]] == doctest::Approx(p1).epsilon(1e-12));
  CHECK(r.columns[2][rows[1]] == doctest::Approx(p2).epsilon(1e-12));
  // At the end the bodies move together at 1 / (m1 + m2).
  double tEnd = r.columns[0].back(), v = 1 / (m1 + m2);
  CHECK(tEnd == 0.5);
  CHECK(r.columns[3].back() == doctest::Approx(x + v * (tEnd - tImpact)).epsilon(1e-12));
  CHECK(r.columns[4].back() == doctest::Approx(x + v * (tEnd - tImpact)).epsilon(1e-12));
  for (double momentum : r.columns[5])
    CHECK(momentum == doctest::Approx(1).epsilon(1e-12));
}

} // namespace

TEST_CASE("inelastic collision: the exact remap conserves momentum") {
  for (bool enclose : {true, false}) {
    CAPTURE(enclose);
    HandSystem sys = collision(1, 1, enclose);
    RunRecord r;
    simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
    checkCollision(r, 1, 1);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].after == std::vector<double>{0.5, 0.5, r.events[0].before[2], 0});
    CHECK(r.events[0].remapIterations.empty());
  }
}

TEST_CASE("inelastic collision of unequal masses: p1 = m1 / (m1 + m2) after the impact") {
  // m1 = 1, m2 = 3: the bullet keeps a quarter of its momentum.
  HandSystem sys = collision(1, 3, true);
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
  checkCollision(r, 1, 3);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].after[0] == doctest::Approx(0.25).epsilon(1e-14));
  CHECK(r.events[0].after[1] == doctest::Approx(0.75).epsilon(1e-14));
}

TEST_CASE("inelastic collision: HYBRSIM's iterative remap converges to the same state") {
  HandSystem sys = collision(1, 1, true);
  SimulateOptions o = collisionOptions();
  o.remap = SimulateOptions::Remap::Iterative;
  o.remapFactor = 0.4;
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, o, r);
  checkCollision(r, 1, 1);
  REQUIRE(r.events.size() == 1);
  const Event &ev = r.events[0];
  // p1_k = 0.5 + 0.5 * 0.2^k (HYBRSIM's Table 1: 1, 0.6, 0.52, 0.504, ...);
  // the gap p1_k - p2_k = 0.2^k first drops below the tolerance 1e-12 at
  // k = 18, and every iterate is recorded from k = 0.
  int last = 0;
  while (std::pow(0.2, last) > o.remapTolerance)
    ++last;
  CHECK(last == 18);
  REQUIRE(ev.remapIterations.size() == static_cast<std::size_t>(last + 1));
  for (int k = 0; k <= last; ++k) {
    CAPTURE(k);
    const std::vector<double> &s = ev.remapIterations[k];
    REQUIRE(s.size() == 4);
    CHECK(s[0] == doctest::Approx(0.5 + 0.5 * std::pow(0.2, k)).epsilon(1e-14));
    CHECK(s[1] == doctest::Approx(0.5 - 0.5 * std::pow(0.2, k)).epsilon(1e-14));
    CHECK(s[2] == ev.before[2]);
    CHECK(s[3] == ev.before[3]);
  }
  CHECK(ev.remapIterations[1][0] == doctest::Approx(0.6).epsilon(1e-15));
  CHECK(ev.remapIterations[2][0] == doctest::Approx(0.52).epsilon(1e-15));
  CHECK(ev.remapIterations[3][0] == doctest::Approx(0.504).epsilon(1e-15));
  CHECK(ev.after == ev.remapIterations.back());
  CHECK(std::abs(ev.after[0] - ev.after[1]) <= o.remapTolerance);
}
