//===- tests/runtime/run_errors_test.cpp - Run-time errors by kind --------===//
//
// simulate() on models written by hand (HandSystem.h, HandModels.h) that
// a run cannot start or finish: settings, step limits and collapsing
// steps, a singular stiff matrix, a stepped run going back, too many
// events, a remap that cannot be done.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "runtime/HandModels.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;
using namespace hbgtest;

// Run-time errors: each is a diagnostic kind with the time, the mode and
// the element it names as fields of their own.

namespace {
/// One mode and no junctions: dx/dt = rhs(t, x), the states as outputs.
HandSystem plain(const std::vector<std::string> &states, Fn rhs) {
  HandSystem sys(states, states, Switching());
  ModeSpec m;
  for (std::uint32_t i = 0; i < states.size(); ++i)
    m.states.push_back(i);
  m.stateNames = states;
  m.rhs = std::move(rhs);
  m.outputs = [n = states.size()](double, const double *x, double *y) { std::copy(x, x + n, y); };
  sys.add({}, m);
  return sys;
}

RunRecord runPlain(HandSystem &sys, const std::vector<double> &x0, const SimulateOptions &o) {
  RunRecord r;
  simulate(sys, x0, o, r);
  INFO(r.error);
  REQUIRE(r.failure);
  CHECK(r.error ==
        r.failure->where() + (r.failure->where().empty() ? "" : ": ") + r.failure->message);
  return r;
}

Fn constantRate(double c) {
  return [c](double, const double *, double *xdot) { xdot[0] = c; };
}
} // namespace

TEST_CASE("settings a run cannot start with: errors at no time") {
  HandSystem sys = plain({"x"}, constantRate(1));
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = -1;
  RunRecord r = runPlain(sys, {0}, o);
  CHECK(r.failure->kind == DiagKind::RunEndBeforeStart);
  CHECK(std::isnan(r.failure->time));
  CHECK(r.error == "the end time -1 is before the start time 0");

  o.tEnd = 1;
  o.maxStep = 0;
  r = runPlain(sys, {0}, o);
  CHECK(r.failure->kind == DiagKind::RunStepNotPositive);
  CHECK(r.failure->text("M") == "model `M`: step sizes must be positive");

  o.maxStep = 1;
  r = runPlain(sys, {std::nan("")}, o);
  CHECK(r.failure->kind == DiagKind::RunInitialNotFinite);
  CHECK(r.failure->element == "x");
  CHECK(r.error == "the initial value of state `x` is not finite");
}

TEST_CASE("a step limit, a state that overflows, tiny and collapsing steps: each by kind") {
  SimulateOptions o;
  o.tEnd = 1;
  {
    HandSystem sys = plain({"x"}, constantRate(1));
    o.maxSteps = 5;
    o.maxStep = 0.01;
    RunRecord r = runPlain(sys, {0}, o);
    CHECK(r.failure->kind == DiagKind::RunTooManySteps);
    CHECK(r.failure->time > 0);
    CHECK(r.failure->time <= 0.05);
    CHECK(r.failure->mode.empty());
    CHECK(r.failure->message == "the limit of 5 steps is reached");
    static_cast<IntegratorOptions &>(o) = {};
  }
  {
    // Euler from 0 at 1e308 per unit time: one step of 10 leaves the
    // doubles.
    HandSystem sys = plain({"x"}, constantRate(1e308));
    SimulateOptions e = o;
    e.tEnd = 100;
    e.method = Method::Euler;
    e.step = 10;
    e.dtOut = 10;
    RunRecord r = runPlain(sys, {0}, e);
    CHECK(r.failure->kind == DiagKind::RunStateNotFinite);
    CHECK(r.failure->element == "x");
    CHECK(r.failure->time == 10);
    CHECK(r.error == "at t = 10: state `x` is not finite");
  }
  {
    // Steps held below 1e-12 of t by maxStep: the run says the step
    // collapsed rather than crawl.
    HandSystem sys = plain({"x"}, constantRate(1));
    SimulateOptions c = o;
    c.tStart = 1;
    c.tEnd = 2;
    c.maxStep = 1e-13;
    RunRecord r = runPlain(sys, {0}, c);
    CHECK(r.failure->kind == DiagKind::RunTinySteps);
    CHECK(r.failure->element == "x");
    CHECK(r.failure->time == doctest::Approx(1 + 1000e-13).epsilon(1e-12));
  }
  {
    // x' = x^2 from 1 blows up at t = 1: the steps shrink towards it
    // until they no longer move t.
    HandSystem sys =
        plain({"x"}, [](double, const double *x, double *xdot) { xdot[0] = x[0] * x[0]; });
    SimulateOptions b = o;
    b.tEnd = 2;
    RunRecord r = runPlain(sys, {1}, b);
    INFO(r.error);
    CHECK(r.failure->kind == DiagKind::RunStepUnderflow);
    CHECK(r.failure->element == "x");
    CHECK(r.failure->time == doctest::Approx(1).epsilon(1e-6));
    CHECK(r.failure->message.find("which does not shrink with the step: a right-hand side that "
                                  "is discontinuous, singular or too stiff") != std::string::npos);
  }
  {
    // A chain of integrators from rest, x8 = t^8 / 8!, with no scale for
    // any state (no nominal, no atol): x8's error is judged against its
    // own value, which vanishes with the step as fast as the error does.
    // The message says so, and what gives it a scale.
    std::vector<std::string> names = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"};
    HandSystem sys = plain(names, [](double, const double *x, double *xdot) {
      xdot[0] = 0;
      for (int k = 1; k < 9; ++k)
        xdot[k] = x[k - 1];
    });
    SimulateOptions c = o;
    c.atol = 0;
    RunRecord r = runPlain(sys, {1, 0, 0, 0, 0, 0, 0, 0, 0}, c);
    REQUIRE(r.failure);
    INFO(r.error);
    CHECK(r.failure->kind == DiagKind::RunStepUnderflowScale);
    CHECK(r.failure->time == 0);
    CHECK(r.failure->message.find("it grows from zero, and its error is judged against that "
                                  "value rather than against its scale, whose floor is 0; give "
                                  "it the magnitude it reaches with `nominal = ...`") !=
          std::string::npos);
    // A floor for every state lets it run.
    c.atol = 1e-12;
    RunRecord ok;
    simulate(sys, {1, 0, 0, 0, 0, 0, 0, 0, 0}, c, ok);
    CHECK_MESSAGE(!ok.failure, ok.error);
  }
}

TEST_CASE("steps too short for t, with no state's error to blame: the settings are named") {
  HandSystem sys = plain({"x"}, constantRate(1));
  // A fixed step of 1 at t = 1e17, where neighbouring doubles are 16 apart.
  SimulateOptions o;
  o.tStart = 1e17;
  o.tEnd = 1e17 + 1024;
  o.dtOut = 1024;
  o.method = Method::Euler;
  o.step = 1;
  RunRecord r = runPlain(sys, {0}, o);
  CHECK(r.failure->kind == DiagKind::RunStepTooSmall);
  CHECK(r.failure->time == 1e17);
  CHECK(r.failure->element.empty());
  // An adaptive step bounded below 1e-14 of t before any error estimate.
  SimulateOptions a;
  a.tStart = 1;
  a.tEnd = 2;
  a.maxStep = 1e-15;
  r = runPlain(sys, {0}, a);
  CHECK(r.failure->kind == DiagKind::RunStepTooSmall);
  CHECK(r.failure->time == 1);
}

TEST_CASE("the stiff method's matrix singular at every step size: an error by kind") {
  // f = 1e300 (x0 + x1) (1, 1) is zero at the start, and its Jacobian
  // (1e300 in every entry) swamps 1 / (h gamma) for every step the
  // method could take: I / (h gamma) - J is singular in floating point.
  HandSystem sys = plain({"a", "b"}, [](double, const double *x, double *xdot) {
    xdot[0] = xdot[1] = 1e300 * (x[0] + x[1]);
  });
  SimulateOptions o;
  o.tEnd = 1;
  o.method = Method::Rosenbrock;
  RunRecord r = runPlain(sys, {1, -1}, o);
  CHECK(r.failure->kind == DiagKind::RunStiffSingular);
  CHECK(r.failure->time == 0);
}

TEST_CASE("a stepped run asked to go back in time: an error naming both times") {
  HandSystem sys = plain({"x"}, constantRate(1));
  SimulateOptions o;
  o.tEnd = 1;
  RunRecord r;
  SteppedRun run(sys, {0}, o, r);
  REQUIRE(run.start());
  REQUIRE(run.advance(0.5));
  CHECK_FALSE(run.advance(0.25));
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunAdvanceBackwards);
  CHECK(r.failure->time == 0.5);
  CHECK(r.error == "at t = 0.5: cannot advance to t = 0.25, before the run's time");
}

TEST_CASE("too many events: an error at the event that passes the limit") {
  HandSystem sys = bouncingBall(true);
  SimulateOptions o;
  o.tEnd = 5;
  o.maxEvents = 3;
  RunRecord r;
  simulate(sys, {kH0, 0}, o, r);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunTooManyEvents);
  CHECK(r.events.size() == 4);
  CHECK(r.failure->time == r.events.back().time);
  CHECK(r.failure->mode == "floor=flying");
  CHECK(r.failure->message == "more than 3 events");
}

namespace {
/// The collision with its contact mode changed by `breakIt`: the run
/// fails at the impact, keeping the rows before it.
RunRecord brokenCollision(const std::function<void(ModeSpec &)> &breakIt) {
  HandSystem sys = collision(1, 1, true, false, breakIt);
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
  INFO(r.error);
  REQUIRE(r.failure);
  CHECK(r.failure->time == doctest::Approx(0.2).epsilon(1e-12));
  CHECK(r.failure->mode == "contact=off"); // where the run was: the event started there
  CHECK(r.failure->message.rfind("state remapping into mode `contact=on` ", 0) == 0);
  CHECK(r.columns[0].back() <= r.failure->time);
  return r;
}
} // namespace

TEST_CASE("a remap that cannot be done: singular, not finite, not converging, each by kind") {
  // I - B A = 1 - (1)(1): the impulse into the wood goes into the bullet
  // as well.
  RunRecord r = brokenCollision([](ModeSpec &on) {
    on.impulse = [](double, const double *, double *b) { b[0] = 1, b[1] = 0, b[2] = 0; };
  });
  CHECK(r.failure->kind == DiagKind::RunRemapSingular);
  r = brokenCollision([](ModeSpec &on) {
    on.dependent = [](double, const double *, double *d) {
      d[0] = std::numeric_limits<double>::infinity();
    };
  });
  CHECK(r.failure->kind == DiagKind::RunRemapNotFinite);
  // A Jacobian of the wrong sign: each Newton step overshoots 19-fold.
  r = brokenCollision([](ModeSpec &on) {
    on.dependentJacobian = [](double, const double *, double *jac) {
      jac[0] = -0.9, jac[1] = 0, jac[2] = 0;
    };
  });
  CHECK(r.failure->kind == DiagKind::RunRemapNotConverged);
}
