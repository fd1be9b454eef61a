//===- tests/runtime/steady_test.cpp - Periodic steady state by shooting --===//
//
// monodromy() and findSteadyState() on hand-written switched systems
// (HandSystem.h) whose flow maps and periodic solutions have closed forms:
// the derivative of a bouncing ball's flight over an impact, the periodic
// response of a first-order lag to a square wave, and each way the
// analysis fails, asserted by its diagnostic kind.
//
//===----------------------------------------------------------------------===//

#include "runtime/HandModels.h"
#include "runtime/HandSystem.h"

#include "hbg/runtime/Periodic.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace hbgtest;

namespace {

/// Entry (r, c) of a column-major N x N matrix.
double at(const std::vector<double> &M, std::size_t N, std::size_t r, std::size_t c) {
  return M[c * N + r];
}

/// Appends sin(a) to a guard tape (Guards has no sine of its own).
std::uint32_t sine(Guards &g, std::uint32_t a) {
  g.tape.code.push_back({TapeOp::Sin, a, 0, 0, 0});
  return static_cast<std::uint32_t>(g.tape.code.size() - 1);
}

/// A model without switched junctions: one mode over states `names`,
/// x' = rhs(t, x), the states its outputs.
HandSystem unswitched(std::vector<std::string> names, Fn rhs) {
  HandSystem sys(names, names, Switching({}, {}));
  ModeSpec m;
  for (std::uint32_t i = 0; i < names.size(); ++i)
    m.states.push_back(i);
  m.stateNames = names;
  m.rhs = std::move(rhs);
  std::size_t n = names.size();
  m.outputs = [n](double, const double *x, double *y) { std::copy(x, x + n, y); };
  sys.add({}, m);
  return sys;
}

/// findSteadyState() of `sys` from `x0` at t = 0, integrating at `rtol`.
SteadyResult search(HandSystem &sys, const std::vector<double> &x0, const SteadyOptions &so,
                    double rtol = 1e-6) {
  SimulateOptions base;
  base.rtol = rtol;
  SteadyResult r;
  findSteadyState(sys, x0, base, so, r);
  return r;
}

} // namespace

// ---------------------------------------------------------------------------
// 1. The monodromy of a traced run against the flow map's closed form.
// ---------------------------------------------------------------------------

TEST_CASE("monodromy of a bouncing ball's flight over one impact is the closed form's") {
  // From (h0, p0) at t0 the ball falls freely (h' = p / m, p' = -m g)
  // until h = 0 at t0 + tau, where p jumps to -e m v-, v- = p0 / m - g tau;
  // then it flies again up to t1. The impact time moves with the start:
  // F(tau, h0, p0) = h0 + p0 tau / m - g tau^2 / 2 = 0, dF/dtau = v-, so
  // dtau/dh0 = -1 / v- and dtau/dp0 = -(tau / m) / v-.
  double h0 = 1, p0 = 0.5 * kM, t0 = 0.1, t1 = 0.9;
  double v0 = p0 / kM;
  double tau = (v0 + std::sqrt(v0 * v0 + 2 * kG * h0)) / kG;
  double vMinus = v0 - kG * tau;
  double pPlus = -kE * kM * vMinus;
  double s = t1 - t0 - tau; // flight after the impact
  REQUIRE(s > 0);
  REQUIRE(pPlus / kM * 2 / kG > s); // no second bounce before t1
  double dtau[2] = {-1 / vMinus, -(tau / kM) / vMinus};
  double dvMinus[2] = {-kG * dtau[0], 1 / kM - kG * dtau[1]};
  double M[2][2]; // M[r][c] = d X1[r] / d X0[c], X = (h, p)
  for (int c = 0; c < 2; ++c) {
    double dpPlus = -kE * kM * dvMinus[c];
    // h1 = (p+ / m) s - g s^2 / 2, p1 = p+ - m g s, with ds = -dtau.
    M[0][c] = dpPlus / kM * s - (pPlus / kM - kG * s) * dtau[c];
    M[1][c] = dpPlus + kM * kG * dtau[c];
  }

  HandSystem sys = bouncingBall(true);
  RunTrace trace;
  SimulateOptions o;
  o.tStart = t0;
  o.tEnd = t1;
  o.rtol = 1e-10;
  o.trace = &trace;
  RunRecord r;
  simulate(sys, {h0, p0}, o, r);
  REQUIRE(r.error.empty());
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].time == doctest::Approx(t0 + tau).epsilon(1e-10));
  REQUIRE(trace.unsupported.empty());
  REQUIRE(trace.jumps.size() == 1);
  // The closed form's end state, that of the run.
  CHECK(r.finalState[0] == doctest::Approx(pPlus / kM * s - kG * s * s / 2).epsilon(1e-9));
  CHECK(r.finalState[1] == doctest::Approx(pPlus - kM * kG * s).epsilon(1e-9));

  std::vector<double> D = monodromy(sys, trace, r.finalState, {1, 1}, t1 - t0);
  REQUIRE(D.size() == 4);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 2; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(at(D, 2, i, j) == doctest::Approx(M[i][j]).epsilon(1e-7));
    }
}

TEST_CASE("monodromy of free fall without an event is exp(A h)") {
  // A = [[0, 1 / m], [0, 0]]: exp(A h) = [[1, h / m], [0, 1]].
  HandSystem sys = bouncingBall(true);
  RunTrace trace;
  SimulateOptions o;
  o.tStart = 0.25;
  o.tEnd = 0.65;
  o.trace = &trace;
  RunRecord r;
  simulate(sys, {3, 1}, o, r);
  REQUIRE(r.error.empty());
  REQUIRE(r.events.empty());
  REQUIRE(trace.jumps.empty());
  std::vector<double> D = monodromy(sys, trace, r.finalState, {1, 1}, 0.4);
  REQUIRE(D.size() == 4);
  CHECK(at(D, 2, 0, 0) == doctest::Approx(1).epsilon(1e-9));
  CHECK(at(D, 2, 0, 1) == doctest::Approx(0.4 / kM).epsilon(1e-9));
  CHECK(std::abs(at(D, 2, 1, 0)) < 1e-9);
  CHECK(at(D, 2, 1, 1) == doctest::Approx(1).epsilon(1e-9));
}

// ---------------------------------------------------------------------------
// 2. A periodic steady state against its closed form.
//
// A first-order lag x' = -a x + u driven by a square wave: u = U while
// sin(w t) >= 0, 0 while sin(w t) < 0 (the junction `src`, switched by
// time alone), period T = 2 pi / w. Over the high half x relaxes towards
// U / a, over the low half towards 0; with q = exp(-a T / 2), the
// periodic solution is x = xLow = (U / a) q / (1 + q) where u goes high
// and x = xHigh = (U / a) / (1 + q) where it goes low: its minimum and
// maximum. Its mean is U / (2 a) (x' has mean 0 over a period), and the
// monodromy is exp(-a T).
// ---------------------------------------------------------------------------

namespace {

constexpr double kA = 2, kU = 3, kW = 2 * M_PI; // T = 1

HandSystem squareWaveLag() {
  Junction src = junction("src", {"low", "high"},
                          {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                      "low -> high when (sin(w t) >= 0)+"),
                           transition(1, 0, comparison(1, CompareOp::Less, false),
                                      "high -> low when (sin(w t) < 0)+")});
  HandSystem sys({"x"}, {"x", "u"},
                 Switching({src}, {CompareOp::GreaterEqual, CompareOp::Less}));
  for (std::uint32_t high : {0u, 1u}) {
    double u = high ? kU : 0;
    ModeSpec m;
    m.states = {0};
    m.stateNames = {"x"};
    Guards g;
    std::uint32_t s = sine(g, g.mul(g.time(), g.constant(kW)));
    g.compareWithZero(s);
    g.compareWithZero(s);
    m.guards = g.tape;
    m.rhs = [u](double, const double *x, double *xdot) { xdot[0] = -kA * x[0] + u; };
    m.outputs = [u](double, const double *x, double *y) {
      y[0] = x[0];
      y[1] = u;
    };
    sys.add({high}, m);
  }
  return sys;
}

} // namespace

TEST_CASE("periodic steady state of a lag driven by a square wave is the closed form's") {
  double T = 2 * M_PI / kW, q = std::exp(-kA * T / 2);
  double xLow = kU / kA * q / (1 + q), xHigh = kU / kA / (1 + q);
  // The closed form at phase phi of the period (u high on [0, T / 2)).
  auto exact = [&](double phi) {
    if (phi < T / 2)
      return kU / kA + (xLow - kU / kA) * std::exp(-kA * phi);
    return xHigh * std::exp(-kA * (phi - T / 2));
  };
  HandSystem sys = squareWaveLag();
  SimulateOptions base;
  base.tStart = 0.1;
  base.rtol = 1e-10;
  SteadyOptions so;
  so.period = T;
  SteadyResult r;
  findSteadyState(sys, {0}, base, so, r);
  REQUIRE(r.ok());
  CHECK(r.residual <= so.tolerance);
  REQUIRE(r.X0.size() == 1);
  double phi = std::fmod(r.t0, T);
  CAPTURE(r.t0);
  CHECK(r.X0[0] == doctest::Approx(exact(phi)).epsilon(1e-8));
  // Away from the events at phases 0 and T / 2.
  CHECK(std::abs(phi - T / 4) < 0.1 * T);
  CHECK(r.modes == std::vector<std::string>{"src=high", "src=low"});
  REQUIRE(r.modeTimes.size() == 2);
  // Phases from base.tStart: the period's start, then the low half's.
  CHECK(r.modeTimes[0] == doctest::Approx(r.t0 - 5 * T - base.tStart).epsilon(1e-9));
  CHECK(r.modeTimes[1] == doctest::Approx(T / 2 - 0.1).epsilon(1e-9));
  REQUIRE(r.figures.size() == 2);
  CHECK(r.figures[0].mean == doctest::Approx(kU / (2 * kA)).epsilon(1e-8));
  CHECK(r.figures[0].min == doctest::Approx(xLow).epsilon(1e-8));
  CHECK(r.figures[0].max == doctest::Approx(xHigh).epsilon(1e-8));
  CHECK(r.figures[1].mean == doctest::Approx(kU / 2).epsilon(1e-8));
  CHECK(r.figures[1].rms == doctest::Approx(kU / std::sqrt(2.0)).epsilon(1e-8));
  REQUIRE(r.multipliers.size() == 1);
  CHECK(r.multipliers[0].first == doctest::Approx(std::exp(-kA * T)).epsilon(1e-8));
  CHECK(r.multipliers[0].second == 0);
}

// ---------------------------------------------------------------------------
// 3. The ways the analysis fails, by diagnostic kind.
// ---------------------------------------------------------------------------

TEST_CASE("a period that is not positive is refused") {
  HandSystem sys = unswitched({"x"}, [](double t, const double *x, double *xdot) {
    xdot[0] = -x[0] + std::sin(t);
  });
  for (double period : {0.0, -1.0}) {
    CAPTURE(period);
    SteadyOptions so;
    so.period = period;
    SteadyResult r = search(sys, {0}, so);
    CHECK_FALSE(r.ok());
    REQUIRE(r.failure);
    CHECK(r.failure->kind == hbg::DiagKind::SteadyPeriodNotPositive);
    CHECK(r.periodsSimulated == 0);
  }
}

TEST_CASE("a search that runs out of iterations reports its residual") {
  // x' = -x - x^3 + 2 sin(2 pi t): nonlinear, so that one Newton step from
  // the transient's end does not reach a tolerance of 1e-14.
  HandSystem sys = unswitched({"x"}, [](double t, const double *x, double *xdot) {
    xdot[0] = -x[0] - x[0] * x[0] * x[0] + 2 * std::sin(2 * M_PI * t);
  });
  for (std::size_t iterations : {1, 2}) {
    CAPTURE(iterations);
    SteadyOptions so;
    so.period = 1;
    so.maxIterations = iterations;
    so.maxFallbacks = 0;
    so.tolerance = 1e-14;
    SteadyResult r = search(sys, {0.5}, so, 1e-10);
    CHECK_FALSE(r.ok());
    REQUIRE(r.failure);
    CHECK(r.failure->kind == hbg::DiagKind::SteadyNotConverged);
    CHECK(r.failure->message.find("the residual is") != std::string::npos);
    REQUIRE(r.iterations.size() == iterations);
    CHECK(r.iterations.back().residual > so.tolerance);
    if (iterations == 2) // the Newton step got closer
      CHECK(r.iterations[1].residual < 1e-2 * r.iterations[0].residual);
    CHECK(r.transientPeriods == so.warmupPeriods);
  }
}

TEST_CASE("an integrator of a quantity with a nonzero mean has no steady state") {
  // v settles; q gains 1 per period whatever it starts from.
  HandSystem sys = unswitched({"v", "q"}, [](double t, const double *x, double *xdot) {
    xdot[0] = -x[0] + std::sin(2 * M_PI * t);
    xdot[1] = 1 + std::sin(2 * M_PI * t);
  });
  SteadyOptions so;
  so.period = 1;
  SteadyResult r = search(sys, {0, 0}, so);
  CHECK_FALSE(r.ok());
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::SteadyNoSteadyState);
  CHECK(r.failure->element == "q");
  // The message names q and what it gains per period.
  const std::string &m = r.failure->message;
  std::size_t by = m.find("state `q` changes by ");
  REQUIRE(by != std::string::npos);
  CHECK(std::stod(m.substr(by + 21)) == doctest::Approx(1).epsilon(1e-6));
}

TEST_CASE("an unstable periodic solution is found and reported with its multiplier") {
  // x' = a x + sin t: the periodic solution x = A sin t + B cos t with
  // A = -a / (1 + a^2), B = -1 / (1 + a^2), multiplier exp(2 pi a) > 1.
  const double a = 0.2, T = 2 * M_PI;
  HandSystem sys = unswitched({"x"}, [a](double t, const double *x, double *xdot) {
    xdot[0] = a * x[0] + std::sin(t);
  });
  SteadyOptions so;
  so.period = T;
  so.warmupPeriods = 1;
  so.tolerance = 1e-9;
  SteadyResult r = search(sys, {0}, so, 1e-12);
  CHECK_FALSE(r.ok());
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::SteadyUnstable);
  CHECK(r.failure->element == "x");
  CHECK(r.failure->message.find("mostly in state `x`") != std::string::npos);
  // Newton's first step lands on it: the linear period map's fixed point.
  REQUIRE(r.iterations.size() == 2);
  CHECK(r.residual <= so.tolerance);
  REQUIRE(r.X0.size() == 1);
  double A = -a / (1 + a * a), B = -1 / (1 + a * a);
  CHECK(r.X0[0] == doctest::Approx(A * std::sin(r.t0) + B * std::cos(r.t0)).epsilon(1e-8));
  REQUIRE(r.multipliers.size() == 1);
  CHECK(r.multipliers[0].first == doctest::Approx(std::exp(a * T)).epsilon(1e-7));
}

// A junction `j` closing when (x >= 1)+ on an oscillator x' = v, v' = -x,
// with a constant force c pulling v down once closed.
namespace {

HandSystem latch(double c) {
  Junction j = junction("j", {"open", "closed"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "open -> closed when (x >= 1)+")});
  HandSystem sys({"x", "v"}, {"x", "v"}, Switching({j}, {CompareOp::GreaterEqual}));
  for (std::uint32_t closed : {0u, 1u}) {
    ModeSpec m;
    m.states = {0, 1};
    m.stateNames = {"x", "v"};
    Guards g;
    g.compare(g.x(0), g.constant(1));
    m.guards = g.tape;
    double force = closed ? c : 0;
    m.rhs = [force](double, const double *x, double *xdot) {
      xdot[0] = x[1];
      xdot[1] = -x[0] - force;
    };
    m.outputs = [](double, const double *x, double *y) { std::copy(x, x + 2, y); };
    sys.add({closed}, m);
  }
  return sys;
}

/// A trace of one event closing `j` at t = 0 from state (x, v), the state
/// unchanged by it.
RunTrace closing(HandSystem &sys, double x, double v) {
  std::string why;
  RunTrace trace;
  RunTrace::Jump jump;
  jump.from = sys.mode({0}, why);
  jump.before = jump.after = {x, v};
  jump.comparisons = {0};
  RunTrace::Entry entry;
  entry.mode = sys.mode({1}, why);
  REQUIRE(jump.from);
  REQUIRE(entry.mode);
  jump.entries = {entry};
  trace.jumps = {jump};
  trace.order = {{true, 0}};
  return trace;
}

} // namespace

TEST_CASE("an event reached tangentially has no saltation matrix") {
  const double c = 0.75;
  HandSystem sys = latch(c);
  {
    // Crossing x = 1 at v = 0.5: g = x - 1, g_X = (1, 0), f- = (0.5, -1),
    // f+ = (0.5, -1 - c), so S = I - (f- - f+) g_X^T / 0.5 has -2 c at (v, x).
    RunTrace trace = closing(sys, 1, 0.5);
    std::vector<double> S = monodromy(sys, trace, {1, 0.5}, {1, 1}, 1);
    REQUIRE(S.size() == 4);
    CHECK(at(S, 2, 0, 0) == doctest::Approx(1).epsilon(1e-9));
    CHECK(std::abs(at(S, 2, 0, 1)) < 1e-9);
    CHECK(at(S, 2, 1, 0) == doctest::Approx(-2 * c).epsilon(1e-7));
    CHECK(at(S, 2, 1, 1) == doctest::Approx(1).epsilon(1e-9));
  }
  // At the top of the swing, v = 0: g_X . f- = 0, and the event time does
  // not move smoothly with the state.
  RunTrace trace = closing(sys, 1, 0);
  bool threw = false;
  try {
    monodromy(sys, trace, {1, 0}, {1, 1}, 1);
  } catch (const RunError &e) {
    threw = true;
    CHECK(e.diagnostic.kind == hbg::DiagKind::SteadyGrazing);
    CHECK(e.diagnostic.message.find("comparison 0") != std::string::npos);
  }
  CHECK(threw);
}
