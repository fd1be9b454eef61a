//===- tests/runtime/mode_iteration_test.cpp - Mode iteration at events ---===//
//
// simulate() on switched models written by hand (HandSystem.h), checked
// against closed forms:
//
//  - two valves whose first opening enables the second (tank and valves):
//    the event passes through a mythical mode, state unchanged, into the
//    real one, and the trajectory after it follows the closed form;
//  - a `-` comparison judged on a priori values and the same comparison
//    marked `+` judged on a posteriori values ending an event in different
//    modes;
//  - a short circuit's impulse judged before real storage's.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "runtime/HandModels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;
using namespace hbgtest;

// ---------------------------------------------------------------------------
// A mythical mode: the tank with two pressure-controlled valves.
//
// Full state: tank.q (capacity A, e = q / A), filled at Fin. Valve 1 opens
// when (tank.e >= P1)+ and closes when (tank.e < P2)+; valve 2 opens when
// (pipe.e >= P2)+ and closes when (pipe.e < P2 / 2)+. The pipe's pressure
// depends on the mode: 0 while valve 1 is closed (isolated, or drained by
// R2), the tank's with only valve 1 open (no flow yet), and tank.e R2 / Rt
// with both open (outflow tank.e / Rt, Rt = R1 + R2).
//
// Closed forms (Fin = 1, A = 2, R1 = 1, R2 = 3, P1 = 2, P2 = 1): valve 1
// opens at t1 = A P1 / Fin = 4; in the configuration it opens into, the
// pipe is at P1 >= P2, so valve 2 opens in the same instant and
// (valve1=open, valve2=closed) is mythical. Afterwards
// tank.e(t) = Fin Rt + (P1 - Fin Rt) exp(-(t - t1) / (Rt A)).
// ---------------------------------------------------------------------------

namespace {

constexpr double kFin = 1, kA = 2, kR1 = 1, kR2 = 3, kP1 = 2, kP2 = 1;

HandSystem tankValves(bool enclose) {
  Junction valve1 = junction("valve1", {"closed", "open"},
                             {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                         "closed -> open when (tank.e >= P1)+"),
                              transition(1, 0, comparison(1, CompareOp::Less, false),
                                         "open -> closed when (tank.e < P2)+")});
  Junction valve2 = junction("valve2", {"closed", "open"},
                             {transition(0, 1, comparison(2, CompareOp::GreaterEqual, false),
                                         "closed -> open when (pipe.e >= P2)+"),
                              transition(1, 0, comparison(3, CompareOp::Less, false),
                                         "open -> closed when (pipe.e < P2 / 2)+")});
  HandSystem sys({"tank.q"}, {"tank", "pipe", "outflow"},
                 Switching({valve1, valve2}, {CompareOp::GreaterEqual, CompareOp::Less,
                                              CompareOp::GreaterEqual, CompareOp::Less}));
  for (std::uint32_t v1 : {0u, 1u})
    for (std::uint32_t v2 : {0u, 1u}) {
      bool flowing = v1 && v2;
      // pipe.e = pipeGain * tank.e.
      double pipeGain = !v1 ? 0.0 : (v2 ? kR2 / (kR1 + kR2) : 1.0);
      ModeSpec m;
      m.states = {0};
      m.stateNames = {"tank.q"};
      m.enclose = enclose;
      Guards g;
      std::uint32_t tank = g.mul(g.x(0), g.constant(1 / kA));
      std::uint32_t pipe = g.mul(tank, g.constant(pipeGain));
      g.compare(tank, g.constant(kP1));
      g.compare(tank, g.constant(kP2));
      g.compare(pipe, g.constant(kP2));
      g.compare(pipe, g.constant(kP2 / 2));
      m.guards = g.tape;
      m.rhs = [=](double, const double *x, double *xdot) {
        xdot[0] = kFin - (flowing ? x[0] / kA / (kR1 + kR2) : 0.0);
      };
      m.outputs = [=](double, const double *x, double *y) {
        double tank = x[0] / kA;
        y[0] = tank;
        y[1] = pipeGain * tank;
        y[2] = flowing ? tank / (kR1 + kR2) : 0.0;
      };
      sys.add({v1, v2}, m);
    }
  return sys;
}

} // namespace

TEST_CASE("tank and valves: the event passes through a mythical mode") {
  for (bool enclose : {true, false}) {
    CAPTURE(enclose);
    HandSystem sys = tankValves(enclose);
    SimulateOptions o;
    o.tStart = 0;
    o.tEnd = 10;
    o.dtOut = 0.3;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    RunRecord r;
    simulate(sys, {0}, o, r);
    INFO("error: " << r.error);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    double t1 = kA * kP1 / kFin;
    CHECK(ev.time == doctest::Approx(t1).epsilon(1e-12));
    CHECK(ev.transitions == std::vector<std::string>{
                                "valve1: closed -> open when (tank.e >= P1)+",
                                "valve2: closed -> open when (pipe.e >= P2)+"});
    CHECK(ev.modes == std::vector<std::string>{"valve1=closed, valve2=closed",
                                               "valve1=open, valve2=closed",
                                               "valve1=open, valve2=open"});
    CHECK(ev.real == std::vector<bool>{true, false, true});
    // No dependent storage: the state is the same in every mode passed through.
    REQUIRE(ev.before.size() == 1);
    CHECK(ev.before[0] == doctest::Approx(kA * kP1).epsilon(1e-12));
    REQUIRE(ev.states.size() == 3);
    for (const std::vector<double> &s : ev.states)
      CHECK(s == ev.before);
    CHECK(ev.after == ev.before);
    CHECK(ev.remapIterations.empty());

    // The output: the tank fills linearly, then drains towards Fin Rt.
    std::vector<std::size_t> rows = rowsAt(r, ev.time);
    REQUIRE(rows.size() == 2);
    CHECK(r.columns[2][rows[0]] == 0);                                     // pipe cut off
    CHECK(r.columns[2][rows[1]] == doctest::Approx(kP1 * kR2 / (kR1 + kR2)).epsilon(1e-12));
    double rt = kR1 + kR2;
    for (std::size_t i = 0; i < r.columns[0].size(); ++i) {
      double t = r.columns[0][i];
      bool after = t > ev.time || (t == ev.time && i == rows[1]);
      double tank = after ? kFin * rt + (kP1 - kFin * rt) * std::exp(-(t - t1) / (rt * kA))
                          : kFin * t / kA;
      CAPTURE(t);
      CHECK(r.columns[1][i] == doctest::Approx(tank).epsilon(1e-8));
      CHECK(r.columns[2][i] == doctest::Approx(after ? tank * kR2 / rt : 0).epsilon(1e-8));
    }
    CHECK(r.columns[0].back() == 10);
  }
}

// ---------------------------------------------------------------------------
// `-` against `+` at one event.
//
// The collision again, with a second junction `alarm`: off -> on when
// (engaged > 0)+ and (v1 - v2 > 0.5)±, where `engaged` is 1 in the
// configurations with the contact on, and v1 - v2 the bodies' relative
// speed (0 while they are in contact, whose constraint makes v2 = v1).
// At the impact the contact turns on first; alarm's guard needs the
// contact on, so it is judged in the next step of the iteration, in the
// configuration (contact=on, alarm=off):
//  - marked `-`, the speed is the a priori one, 1 > 0.5: the alarm turns
//    on in the same step; (contact=on, alarm=off) is mythical and the
//    event ends in (contact=on, alarm=on);
//  - marked `+`, the speed is the a posteriori one, 0: the alarm stays off
//    and the event ends in (contact=on, alarm=off), which is real; the next
//    round judges it on the remapped state, where it is still 0.
// ---------------------------------------------------------------------------

namespace {

HandSystem alarmedCollision(bool minus) {
  Junction contact = junction("contact", {"off", "on"},
                              {transition(0, 1, comparison(0, CompareOp::LessEqual, false),
                                          "off -> on when (x2 - x1 <= 0)+")});
  std::string mark = minus ? "-" : "+";
  Junction alarm = junction(
      "alarm", {"off", "on"},
      {transition(0, 1, both(comparison(1, CompareOp::Greater, false),
                             comparison(2, CompareOp::Greater, minus)),
                  "off -> on when (engaged > 0)+ and (v1 - v2 > 0.5)" + mark)});
  HandSystem sys({"bullet.p", "wood.p", "x1", "x2"}, {"p1", "p2", "alarm"},
                 Switching({contact, alarm},
                           {CompareOp::LessEqual, CompareOp::Greater, CompareOp::Greater}));
  for (std::uint32_t alarmOn : {0u, 1u}) {
    // Unit masses; the alarm does not change the dynamics.
    ModeSpec off;
    off.states = {0, 1, 2, 3};
    off.stateNames = {"bullet.p", "wood.p", "x1", "x2"};
    Guards g;
    g.compareWithZero(g.sub(g.x(3), g.x(2)));
    g.compareWithZero(g.constant(0));
    g.compare(g.sub(g.x(0), g.x(1)), g.constant(0.5));
    off.guards = g.tape;
    off.rhs = [](double, const double *x, double *xdot) {
      xdot[0] = 0;
      xdot[1] = 0;
      xdot[2] = x[0];
      xdot[3] = x[1];
    };
    off.outputs = [=](double, const double *x, double *y) {
      y[0] = x[0];
      y[1] = x[1];
      y[2] = alarmOn;
    };
    if (!alarmOn) // (contact=off, alarm=on) is never entered
      sys.add({0, alarmOn}, off);

    ModeSpec on;
    on.states = {0, 2, 3};
    on.dependents = {1};
    on.stateNames = {"bullet.p", "x1", "x2"};
    Guards h;
    h.compareWithZero(h.sub(h.x(2), h.x(1)));
    h.compareWithZero(h.constant(1));
    h.compare(h.constant(0), h.constant(0.5));
    on.guards = h.tape;
    on.rhs = [](double, const double *x, double *xdot) {
      xdot[0] = 0;
      xdot[1] = x[0];
      xdot[2] = x[0];
    };
    on.outputs = [=](double, const double *x, double *y) {
      y[0] = x[0];
      y[1] = x[0];
      y[2] = alarmOn;
    };
    on.dependent = [](double, const double *x, double *d) { d[0] = x[0]; };
    on.dependentJacobian = [](double, const double *, double *jac) {
      jac[0] = 1;
      jac[1] = 0;
      jac[2] = 0;
    };
    on.impulse = [](double, const double *, double *b) {
      b[0] = -1;
      b[1] = 0;
      b[2] = 0;
    };
    sys.add({1, alarmOn}, on);
  }
  return sys;
}

} // namespace

TEST_CASE("a `-` comparison is judged a priori, a `+` one a posteriori") {
  for (bool minus : {true, false}) {
    CAPTURE(minus);
    HandSystem sys = alarmedCollision(minus);
    RunRecord r;
    simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
    INFO("error: " << r.error);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    CHECK(ev.time == doctest::Approx(0.2).epsilon(1e-12));
    // The remap is the same either way: the alarm does not change the dynamics.
    REQUIRE(ev.after.size() == 4);
    CHECK(ev.after[0] == doctest::Approx(0.5).epsilon(1e-14));
    CHECK(ev.after[1] == doctest::Approx(0.5).epsilon(1e-14));
    if (minus) {
      CHECK(ev.transitions ==
            std::vector<std::string>{"contact: off -> on when (x2 - x1 <= 0)+",
                                     "alarm: off -> on when (engaged > 0)+ and (v1 - v2 > 0.5)-"});
      CHECK(ev.modes == std::vector<std::string>{"contact=off, alarm=off",
                                                 "contact=on, alarm=off", "contact=on, alarm=on"});
      CHECK(ev.real == std::vector<bool>{true, false, true});
      REQUIRE(ev.states.size() == 3);
      CHECK(ev.states[1] == ev.before); // unchanged through the mythical mode
      CHECK(ev.states[2] == ev.after);
      CHECK(r.columns[3].back() == 1); // the alarm is on at the end
    } else {
      CHECK(ev.transitions == std::vector<std::string>{"contact: off -> on when (x2 - x1 <= 0)+"});
      CHECK(ev.modes == std::vector<std::string>{"contact=off, alarm=off", "contact=on, alarm=off"});
      CHECK(ev.real == std::vector<bool>{true, true});
      REQUIRE(ev.states.size() == 2);
      CHECK(ev.states[1] == ev.after);
      CHECK(r.columns[3].back() == 0); // the alarm stays off
    }
  }
}

// ---------------------------------------------------------------------------
// Impulse tiers. Junction `j` closes at t = 0.5 onto a short circuit: in
// the candidate (j=on, d=conducting) a source's stand-in (dependent
// storage outside the state) and the real storage x both jump. Diode `d`
// blocks when (s < 0)+, and s carries the stand-in's impulse with
// strength +1 per unit and x's with -1 per unit. The stand-in jumps by
// -1e-6 from zero, x by -1 from 1: together s's strength would be
// +0.999999, but the short circuit's impulse is unbounded and dominates,
// so the diode blocks and the run goes on in (j=on, d=blocking). A
// stand-in that does not jump (the sources agree) is judged as the limit
// of a jump of -epsilon, with the same result. When it jumps by +1e-6,
// its impulse keeps the diode on, and entering the short-circuited mode
// stops the run.
// ---------------------------------------------------------------------------

namespace {

HandSystem shortCircuitSystem(double standInJump) {
  Junction j = junction("j", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "off -> on when (time >= 0.5)+")});
  Junction d = junction("d", {"conducting", "blocking"},
                        {transition(0, 1, comparison(1, CompareOp::Less, false),
                                    "conducting -> blocking when (s < 0)+")});
  HandSystem sys({"x"}, {"x"},
                 Switching({j, d}, {CompareOp::GreaterEqual, CompareOp::Less}));
  auto plain = [](bool withTime) {
    ModeSpec m;
    m.states = {0};
    m.stateNames = {"x"};
    Guards g;
    g.compare(withTime ? g.time() : g.constant(0), g.constant(0.5));
    g.compareWithZero(g.constant(1)); // s is +1 between events
    m.guards = g.tape;
    m.rhs = [](double, const double *, double *xdot) { xdot[0] = 0; };
    m.outputs = [](double, const double *x, double *y) { y[0] = x[0]; };
    return m;
  };
  sys.add({0, 0}, plain(true));
  sys.add({1, 1}, plain(false));
  ModeSpec shorted = plain(false);
  shorted.states = {};
  shorted.stateNames = {};
  shorted.dependents = {kNoSlot, 0};
  shorted.shortCircuit = "`a` and `b` both impose the effort";
  shorted.rhs = [](double, const double *, double *) {};
  shorted.outputs = [](double, const double *, double *y) { y[0] = 0; };
  shorted.dependent = [=](double, const double *, double *dep) {
    dep[0] = standInJump; // from zero
    dep[1] = 0;           // x: from 1
  };
  shorted.guardImpulses = [](double, const double *, double *out) {
    // Sides: time, 0.5, s, 0; dependent: stand-in, x.
    std::fill(out, out + 8, 0.0);
    out[2 * 2 + 0] = 1;
    out[2 * 2 + 1] = -1;
  };
  sys.add({1, 0}, shorted);
  return sys;
}

} // namespace

TEST_CASE("a short circuit's impulse is judged before real storage's") {
  SimulateOptions o;
  o.tEnd = 1;
  o.dtOut = 0.25;
  // A stand-in's jump of zero (the sources agree: a switch closed across
  // its conducting 0 V diode) is judged as the limit of its source a
  // little above its value, as a jump of -1e-6 is.
  for (double jump : {-1e-6, 0.0}) {
    CAPTURE(jump);
    HandSystem sys = shortCircuitSystem(jump);
    RunRecord r;
    simulate(sys, {1}, o, r);
    INFO(r.error);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    CHECK(ev.time == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(ev.modes == std::vector<std::string>{"j=off, d=conducting", "j=on, d=conducting",
                                               "j=on, d=blocking"});
    CHECK(ev.real == std::vector<bool>{true, false, true});
    CHECK(ev.after == std::vector<double>{1}); // the mythical mode's jump never happens
  }
  {
    HandSystem sys = shortCircuitSystem(1e-6);
    RunRecord r;
    simulate(sys, {1}, o, r);
    INFO(r.error);
    REQUIRE(r.failure);
    CHECK(r.failure->kind == DiagKind::RunModeShortCircuit);
    CHECK(r.error.find("at t = 0.5 in mode `j=off, d=conducting`: entering mode `j=on, "
                       "d=conducting`, in which") != std::string::npos);
    CHECK(r.error.find("in which sources short-circuit each other") != std::string::npos);
    CHECK(r.error.find("`a` and `b` both impose the effort") != std::string::npos);
  }
}
