//===- tests/runtime/zeno_test.cpp - Zeno behaviour reported --------------===//
//
// simulate() on a bouncing ball without a resting mode (HandModels.h):
// Zeno behaviour reported near the closed-form accumulation point
// t1 (1 + e) / (1 - e), with events located on enclosures and by sampling.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "runtime/HandModels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;
using namespace hbgtest;

// The spacing of the events shrinks by e, so the detector's estimate of
// the time left after bounce k, (t_k - t_(k-1)) e / (1 - e)
// = 2 t1 e^k / (1 - e), is exact; it reports the first bounce k with
// 2 t1 e^k / (1 - e) <= zenoSpan max(1, t_k).

namespace {

/// Runs the ball to t = 5 and checks the bounces and the Zeno report
/// against the closed forms.
void checkBouncingBall(bool enclose) {
  HandSystem sys = bouncingBall(enclose);
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = 5;
  RunRecord r;
  simulate(sys, {kH0, 0}, o, r);

  double v0 = std::sqrt(2 * kG * kH0), t1 = v0 / kG, tInf = t1 * (1 + kE) / (1 - kE);
  CHECK(tInf == doctest::Approx(4.0637).epsilon(1e-5)); // the example's number

  // The bounces up to the report, against the closed form.
  std::size_t expected = 0;
  {
    double t = t1;
    for (std::size_t k = 1;; ++k) {
      if (k > 11 && 2 * t1 * std::pow(kE, k) / (1 - kE) <= o.zenoSpan * std::max(1.0, t)) {
        expected = k;
        break;
      }
      t += 2 * t1 * std::pow(kE, k);
    }
  }
  CHECK(r.events.size() == expected);
  double tk = t1;
  for (std::size_t k = 1; k <= std::min<std::size_t>(r.events.size(), 20); ++k) {
    CAPTURE(k);
    const Event &ev = r.events[k - 1];
    CHECK(ev.time == doctest::Approx(tk).epsilon(1e-10));
    CHECK(ev.modes == std::vector<std::string>{"floor=flying", "floor=impact", "floor=flying"});
    CHECK(ev.real == std::vector<bool>{true, true, true});
    CHECK(ev.transitions == std::vector<std::string>{
                                "floor: flying -> impact when (h <= 0)+ and (ball.f < 0)-",
                                "floor: impact -> flying when (ball.f > 0)-"});
    REQUIRE(ev.before.size() == 2);
    double speed = v0 * std::pow(kE, k - 1);
    CHECK(ev.before[0] == doctest::Approx(0).epsilon(1e-10));
    CHECK(ev.before[1] == doctest::Approx(-kM * speed).epsilon(1e-9));
    CHECK(ev.after[0] == ev.before[0]);
    CHECK(ev.after[1] == doctest::Approx(-kE * ev.before[1]).epsilon(1e-15));
    tk += 2 * t1 * std::pow(kE, k);
  }

  // The report: the junction, and a time inside the detector's window
  // before the accumulation point: no more than zenoSpan max(1, t) before
  // it, and (the bounce before was not reported) more than e times that.
  INFO("error: " << r.error);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunZeno);
  CHECK(r.failure->message.rfind("Zeno behaviour: events of `floor` accumulate (", 0) == 0);
  double reported = r.failure->time;
  double window = o.zenoSpan * tInf;
  CHECK(reported < tInf);
  CHECK(tInf - reported <= window * (1 + 1e-3));
  CHECK(tInf - reported > kE * window * (1 - 1e-3));
  REQUIRE_FALSE(r.events.empty());
  CHECK(reported == r.events.back().time);
  CHECK(r.error.find("the model needs a resting mode") != std::string::npos);
  // The output before the report is kept: the first flight is a parabola.
  REQUIRE(r.columns[0].size() > 10);
  for (std::size_t i = 0; i < r.columns[0].size() && r.columns[0][i] < t1; ++i) {
    double t = r.columns[0][i];
    CHECK(r.columns[1][i] == doctest::Approx(kH0 - kG * t * t / 2).epsilon(1e-10));
  }
}

} // namespace

TEST_CASE("bouncing ball without a resting mode: Zeno behaviour at t1 (1 + e) / (1 - e)") {
  checkBouncingBall(true);
}

TEST_CASE("a bounded event history keeps the last events, counts the rest, finds the same Zeno") {
  SimulateOptions o;
  o.tEnd = 5;
  o.zenoEvents = 10; // keeps 22 events, trimmed beyond 44: fewer than the ball's
  RunRecord all, bounded;
  HandSystem a = bouncingBall(true), b = bouncingBall(true);
  simulate(a, {kH0, 0}, o, all);
  o.keepEvents = 0; // the record keeps what Zeno detection needs
  simulate(b, {kH0, 0}, o, bounded);
  REQUIRE(all.events.size() > 2 * (o.zenoEvents + 12));
  CHECK(bounded.events.size() <= 2 * (o.zenoEvents + 12));
  CHECK(bounded.events.size() + bounded.eventsDropped == all.events.size());
  CHECK(bounded.error == all.error);
  CHECK(bounded.events.back().time == all.events.back().time);
  CHECK(bounded.events.front().time == all.events[bounded.eventsDropped].time);
}

TEST_CASE("events recorded in the storage of dropped ones equal those a full record keeps") {
  // With keepEvents bounded, dropped events lend their vectors and strings
  // to the next ones: every event handed to onEvent, and every event
  // kept, must be the full record's, field by field.
  SimulateOptions o;
  o.tEnd = 5;
  o.zenoEvents = 10;
  RunRecord all, bounded;
  HandSystem a = bouncingBall(true), b = bouncingBall(true);
  simulate(a, {kH0, 0}, o, all);
  std::vector<Event> seen;
  o.keepEvents = 0;
  o.onEvent = [&](const Event &ev) { seen.push_back(ev); };
  simulate(b, {kH0, 0}, o, bounded);
  REQUIRE(bounded.eventsDropped > 0);
  auto bits = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  auto same = [&](const std::vector<double> &x, const std::vector<double> &y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), bits);
  };
  auto sameStates = [&](const std::vector<std::vector<double>> &x,
                        const std::vector<std::vector<double>> &y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), same);
  };
  auto check = [&](const Event &x, const Event &y) {
    CHECK(bits(x.time, y.time));
    CHECK(x.transitions == y.transitions);
    CHECK(x.modes == y.modes);
    CHECK(x.real == y.real);
    CHECK(sameStates(x.states, y.states));
    CHECK(sameStates(x.remapIterations, y.remapIterations));
    CHECK(same(x.before, y.before));
    CHECK(same(x.after, y.after));
    CHECK(same(x.outputsBefore, y.outputsBefore));
    CHECK(same(x.outputsAfter, y.outputsAfter));
    CHECK(same(x.energyBefore, y.energyBefore));
    CHECK(same(x.energyAfter, y.energyAfter));
    CHECK(bits(x.storedBefore, y.storedBefore));
    CHECK(bits(x.storedAfter, y.storedAfter));
    CHECK(bits(x.removed, y.removed));
    CHECK(x.junctionsSwitched == y.junctionsSwitched);
  };
  REQUIRE(seen.size() == all.events.size());
  for (std::size_t k = 0; k < seen.size(); ++k) {
    CAPTURE(k);
    check(seen[k], all.events[k]);
  }
  for (std::size_t k = 0; k < bounded.events.size(); ++k) {
    CAPTURE(k);
    check(bounded.events[k], all.events[bounded.eventsDropped + k]);
  }
}

TEST_CASE("an event's outputs are its rows before and after, and the closed form's") {
  // The rows around an event and the event's outputs are computed once
  // for both: each event has a row before it and one after it at its
  // time, with the event's outputs, and the velocity after a bounce is
  // -e times the one before.
  SimulateOptions o;
  o.tEnd = 4;
  RunRecord r;
  HandSystem sys = bouncingBall(true);
  simulate(sys, {kH0, 0}, o, r);
  REQUIRE(r.events.size() > 10);
  auto bits = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  const std::vector<double> &time = r.columns[0];
  for (std::size_t k = 0; k < r.events.size(); ++k) {
    CAPTURE(k);
    const Event &ev = r.events[k];
    auto at = std::find(time.begin(), time.end(), ev.time);
    REQUIRE(at + 1 < time.end());
    std::size_t row = std::size_t(at - time.begin());
    REQUIRE(time[row + 1] == ev.time);
    REQUIRE(ev.outputsBefore.size() == 2);
    REQUIRE(ev.outputsAfter.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(bits(r.columns[i + 1][row], ev.outputsBefore[i]));
      CHECK(bits(r.columns[i + 1][row + 1], ev.outputsAfter[i]));
    }
    CHECK(ev.outputsAfter[1] == doctest::Approx(-kE * ev.outputsBefore[1]).epsilon(1e-12));
  }
}

TEST_CASE("bouncing ball, events found by sampling: the same bounces and report") {
  // The guards refuse enclosures, as a mode whose guards read Newton-solved
  // values does. Each bounce, located by sampling to 1e-12 of its step,
  // leaves the ball a little below the floor (h = -2.2e-12 after the
  // first); the flight's first step grows long ([0.4515, 5]) and h <= 0
  // holds at its start and at its first quarter. Only the probes very
  // early in the step, where the ball has risen above the floor, show the
  // landing in between as a crossing.
  checkBouncingBall(false);
}
