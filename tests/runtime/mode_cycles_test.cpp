//===- tests/runtime/mode_cycles_test.cpp - Modes that do not settle ------===//
//
// simulate() on junctions written by hand (HandSystem.h) that switch back
// and forth at one instant: the run stops with "the modes do not settle",
// naming the junctions, and keeps the output before the event.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "runtime/HandSystem.h"

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;
using namespace hbgtest;

// ---------------------------------------------------------------------------
// Modes that do not settle. x' = 1 from 0 in every mode; the first switch
// comes at x = 0.5.
// ---------------------------------------------------------------------------

namespace {

/// A mode integrating x' = 1 and outputting x; `lhs` gives each
/// comparison's left side (the right one is 0) in this mode.
ModeSpec rampMode(std::vector<std::function<std::uint32_t(Guards &)>> lhs) {
  ModeSpec m;
  m.states = {0};
  m.stateNames = {"x"};
  Guards g;
  for (auto &f : lhs)
    g.compareWithZero(f(g));
  m.guards = g.tape;
  m.rhs = [](double, const double *, double *xdot) { xdot[0] = 1; };
  m.outputs = [](double, const double *x, double *y) { y[0] = x[0]; };
  return m;
}

std::function<std::uint32_t(Guards &)> xMinusHalf() {
  return [](Guards &g) { return g.sub(g.x(0), g.constant(0.5)); };
}
std::function<std::uint32_t(Guards &)> constantLhs(double v) {
  return [v](Guards &g) { return g.constant(v); };
}

/// The output before the failed event: x = t on the grid 0, 0.1, ..., 0.4,
/// then the row before the event at t = 0.5 (which may come after a grid
/// row at 0.5 when the event is located a rounding later).
void checkRowsUpToHalf(const RunRecord &r) {
  REQUIRE(r.columns.size() == 2);
  const std::vector<double> &t = r.columns[0];
  REQUIRE(t.size() >= 6);
  REQUIRE(t.size() <= 7);
  for (std::size_t k = 0; k < 5; ++k)
    CHECK(t[k] == doctest::Approx(0.1 * static_cast<double>(k)).epsilon(1e-15));
  for (std::size_t k = 5; k < t.size(); ++k)
    CHECK(t[k] == doctest::Approx(0.5).epsilon(1e-12));
  for (std::size_t i = 0; i < t.size(); ++i)
    CHECK(r.columns[1][i] == doctest::Approx(t[i]).epsilon(1e-12));
}

SimulateOptions rampOptions() {
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = 1;
  o.dtOut = 0.1;
  return o;
}

} // namespace

TEST_CASE("a junction that switches back at once: the modes do not settle") {
  // j: off -> on when (x >= 0.5)+, on -> off when (w > 0)+, where w is 1 in
  // the ON configuration (0 in OFF): judged a posteriori, ON turns itself
  // off again in the same instant, and OFF turns on again.
  Junction j = junction("j", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "off -> on when (x >= 0.5)+"),
                         transition(1, 0, comparison(1, CompareOp::Greater, false),
                                    "on -> off when (w > 0)+")});
  HandSystem sys({"x"}, {"x"}, Switching({j}, {CompareOp::GreaterEqual, CompareOp::Greater}));
  sys.add({0}, rampMode({xMinusHalf(), constantLhs(0)}));
  sys.add({1}, rampMode({xMinusHalf(), constantLhs(1)}));
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunModesDoNotSettle);
  CHECK(r.failure->time == 0.5);
  CHECK(r.error == "at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` switches "
                   "in a cycle through `j=off` -> `j=on` -> `j=off`");
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

TEST_CASE("two junctions that chase each other: the modes do not settle") {
  // a: off -> on when (x >= 0.5)+, on -> off when (b's flag > 0)+;
  // b: off -> on when (a's flag > 0)+, on -> off when (a's flag <= 0)+,
  // a flag being 1 in the configurations where its junction is on. From
  // (off, off) at x = 0.5: a turns on; then b follows; then a turns off;
  // then a turns on again and b off: (on, off) a second time.
  Junction a = junction("a", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "off -> on when (x >= 0.5)+"),
                         transition(1, 0, comparison(1, CompareOp::Greater, false),
                                    "on -> off when (b.flag > 0)+")});
  Junction b = junction("b", {"off", "on"},
                        {transition(0, 1, comparison(2, CompareOp::Greater, false),
                                    "off -> on when (a.flag > 0)+"),
                         transition(1, 0, comparison(3, CompareOp::LessEqual, false),
                                    "on -> off when (a.flag <= 0)+")});
  HandSystem sys({"x"}, {"x"},
                 Switching({a, b}, {CompareOp::GreaterEqual, CompareOp::Greater,
                                    CompareOp::Greater, CompareOp::LessEqual}));
  for (std::uint32_t qa : {0u, 1u})
    for (std::uint32_t qb : {0u, 1u})
      sys.add({qa, qb}, rampMode({xMinusHalf(), constantLhs(qb), constantLhs(qa),
                                  constantLhs(qa)}));
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  CHECK(r.error == "at t = 0.5 in mode `a=off, b=off`: the modes do not settle: junctions `a`, "
                   "`b` switch in a cycle through `a=on, b=off` -> `a=on, b=on` -> `a=off, b=on` "
                   "-> `a=on, b=off`");
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

namespace {

/// j: off -> on when (u >= 0.5)-, on -> off when (w > 0)-, where u is x in
/// OFF and 0 in ON, w is 1 in ON and 0 in OFF. Judged a priori, each round
/// of mode iteration switches once: OFF -> ON (real), ON -> OFF (real),
/// and the third round starts from OFF with the same state as the first.
HandSystem realModeCycle() {
  Junction j = junction("j", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, true),
                                    "off -> on when (u >= 0.5)-"),
                         transition(1, 0, comparison(1, CompareOp::Greater, true),
                                    "on -> off when (w > 0)-")});
  HandSystem sys({"x"}, {"x"}, Switching({j}, {CompareOp::GreaterEqual, CompareOp::Greater}));
  sys.add({0}, rampMode({xMinusHalf(), constantLhs(0)}));
  sys.add({1}, rampMode({constantLhs(-0.5), constantLhs(1)}));
  return sys;
}

} // namespace

TEST_CASE("a cycle over real modes: a round starts from a mode and state seen before") {
  // The message lists the cycle once: (j=off) -> (j=on) -> (j=off).
  HandSystem sys = realModeCycle();
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunModesDoNotSettle);
  CHECK(r.failure->time == 0.5);
  CHECK(r.error == "at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` switches "
                   "in a cycle through `j=off` -> `j=on` -> `j=off`");
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

TEST_CASE("a cycle over real modes is reported") {
  // The run stops at the first switch, naming the junction, whatever the
  // wording of the end of the cycle.
  HandSystem sys = realModeCycle();
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  CHECK(r.error.rfind("at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` "
                      "switches in a cycle through `j=off` -> `j=on` -> `j=off`",
                      0) == 0);
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}
