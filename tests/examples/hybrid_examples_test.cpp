// The switched examples in examples/: each is simulated with events (with
// the method HBG_TEST_METHOD names, TestMethod.h) and
// compared with its closed form or published numbers (event times, jumps,
// conservation laws).

#include "hbg/hbg.h"
#include "TestMethod.h"

#include <Eigen/Dense>
#include <doctest/doctest.h>
#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace {

const std::string kExamples = std::string(HBG_SOURCE_DIR) + "/examples/";

hbg::SimulationOptions tight(double tEnd, double dtOut) {
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  opts.dtOut = dtOut;
  opts.rtol = 1e-10;
  opts.step = 0;
  opts.method = testMethod();
  return opts;
}

hbg::Result simulate(const std::string &file, const hbg::SimulationOptions &opts) {
  hbg::Model model = hbg::Compiler().compileFile(kExamples + file);
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

std::size_t stateIndex(const hbg::Result &r, const std::string &name) {
  auto it = std::find(r.stateNames.begin(), r.stateNames.end(), name);
  REQUIRE_MESSAGE(it != r.stateNames.end(), name);
  return static_cast<std::size_t>(it - r.stateNames.begin());
}

/// The value of `column` in the last row at or before `t` (rows at an
/// event time: the last is the one after the event).
double valueAt(const hbg::Result &r, const std::string &column, double t) {
  const std::vector<double> &time = r.at("time");
  const std::vector<double> &y = r.at(column);
  std::size_t k = 0;
  while (k + 1 < time.size() && time[k + 1] <= t)
    ++k;
  return y[k];
}

/// A root of f in [a, b] by bisection (f(a), f(b) of opposite signs).
double bisect(const std::function<double(double)> &f, double a, double b) {
  double fa = f(a);
  for (int i = 0; i < 200; ++i) {
    double m = 0.5 * (a + b), fm = f(m);
    if ((fm < 0) == (fa < 0)) {
      a = m;
      fa = fm;
    } else {
      b = m;
    }
  }
  return 0.5 * (a + b);
}

} // namespace

TEST_CASE("collision_inelastic: impact at 0.2, v1 = v2 = 0.5, momentum conserved") {
  hbg::Result r = simulate("collision_inelastic.hbg", tight(1, 0.01));
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  CHECK(ev.time == doctest::Approx(0.2).epsilon(1e-12));
  REQUIRE(ev.modes.size() == 2);
  CHECK(ev.modes[0] == "contact=off");
  CHECK(ev.modes[1] == "contact=on");
  std::size_t p1 = stateIndex(r, "bullet.p"), p2 = stateIndex(r, "wood.p");
  CHECK(ev.before[p1] == doctest::Approx(1).epsilon(1e-12));
  CHECK(ev.before[p2] == 0);
  CHECK(std::abs(ev.after[p1] - 0.5) < 1e-13);
  CHECK(std::abs(ev.after[p2] - 0.5) < 1e-13);
  CHECK(std::abs(ev.after[p1] + ev.after[p2] - 1) < 1e-13);
  // Afterwards both move at 0.5; energy 0.5 -> 0.25.
  CHECK(r.at("v1").back() == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(r.at("v2").back() == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(r.at("energy").front() == doctest::Approx(0.5));
  CHECK(r.at("energy").back() == doctest::Approx(0.25).epsilon(1e-12));
  for (double m : r.at("momentum"))
    CHECK(std::abs(m - 1) < 1e-13);
  // The audit: 1^2 / 2 before, 2 (0.5^2 / 2) after, half removed; the
  // contact is declared dissipative, so the run does not warn.
  CHECK(ev.storedBefore == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(std::abs(ev.storedAfter - 0.25) < 1e-13);
  CHECK(std::abs(ev.removed - 0.25) < 1e-13);
  CHECK(std::abs(ev.energyAfter[p1] - 0.125) < 1e-13);
  CHECK(std::abs(ev.energyAfter[p2] - 0.125) < 1e-13);
  CHECK(r.warnings.empty());
  CHECK(valueAt(r, "x1", 1.0) == doctest::Approx(0.4).epsilon(1e-9));
  CHECK(valueAt(r, "x2", 1.0) == doctest::Approx(0.4).epsilon(1e-9));
}

TEST_CASE("collision_inelastic: --remap=iterative reproduces HYBRSIM's Table 1") {
  hbg::SimulationOptions opts = tight(1, 0.1);
  opts.remap = hbg::SimulationOptions::Remap::Iterative;
  opts.remapFactor = 0.4;
  hbg::Result r = simulate("collision_inelastic.hbg", opts);
  REQUIRE(r.events.size() == 1);
  const auto &it = r.events[0].remapIterations;
  std::size_t p1 = stateIndex(r, "bullet.p"), p2 = stateIndex(r, "wood.p");
  const double table1[][2] = {{1, 0}, {0.6, 0.4}, {0.52, 0.48}, {0.504, 0.496}};
  REQUIRE(it.size() > 4);
  for (int k = 0; k < 4; ++k) {
    CHECK(it[k][p1] == doctest::Approx(table1[k][0]).epsilon(1e-12));
    CHECK(it[k][p2] == doctest::Approx(table1[k][1]).epsilon(1e-12));
  }
  // It converges to the exact remap: the gap shrinks by 0.2 per step.
  CHECK(std::abs(r.events[0].after[p1] - 0.5) < 1e-11);
  CHECK(it.size() < 25);
  // The event log shows the iterations.
  std::ostringstream csv;
  r.writeEventsCsv(csv);
  CHECK(csv.str().find(",remap,") != std::string::npos);
}

TEST_CASE("collision_elastic: restitution 0.6 gives v1 = 0.2, v2 = 0.8; the bodies separate") {
  hbg::Result r = simulate("collision_elastic.hbg", tight(1, 0.01));
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  CHECK(ev.time == doctest::Approx(0.2).epsilon(1e-12));
  std::size_t p1 = stateIndex(r, "bullet.body.p"), p2 = stateIndex(r, "wood.body.p");
  CHECK(std::abs(ev.after[p1] - 0.2) < 1e-13);
  CHECK(std::abs(ev.after[p2] - 0.8) < 1e-13);
  CHECK(std::abs(ev.after[p1] + ev.after[p2] - 1) < 1e-13);
  // On, then off again in the same instant.
  CHECK(ev.modes.back() == "contact.touch=apart");
  CHECK(r.at("v1").back() == doctest::Approx(0.2).epsilon(1e-12));
  CHECK(r.at("v2").back() == doctest::Approx(0.8).epsilon(1e-12));
  // Separating: x2 - x1 = 0.6 (t - 0.2).
  CHECK(valueAt(r, "x2", 1.0) - valueAt(r, "x1", 1.0) == doctest::Approx(0.48).epsilon(1e-9));
  for (double m : r.at("momentum"))
    CHECK(std::abs(m - 1) < 1e-13);
  // The audit: restitution keeps e^2 of the relative motion's energy
  // (m1 m2 / 2 (m1 + m2) (v1 - v2)^2 = 0.25), so 0.25 (1 - 0.36) = 0.16
  // goes: 0.5 before, 0.2^2 / 2 + 0.8^2 / 2 = 0.34 after.
  CHECK(ev.storedBefore == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(std::abs(ev.storedAfter - 0.34) < 1e-13);
  CHECK(std::abs(ev.removed - 0.16) < 1e-13);
  CHECK(r.warnings.empty());
}

TEST_CASE("bouncing_ball: impact times, rest at t1 (1 + e) / (1 - e), finitely many events") {
  const double g = 9.81, h0 = 1, e = 0.8;
  hbg::Result r = simulate("bouncing_ball.hbg", tight(6, 0.01));
  const double v0 = std::sqrt(2 * g * h0), t1 = v0 / g;
  // Impacts: events entering the impact mode.
  std::vector<double> impacts;
  double rest = -1;
  for (const hbg::Event &ev : r.events) {
    if (std::find(ev.modes.begin(), ev.modes.end(), "floor.touch=impact") != ev.modes.end())
      impacts.push_back(ev.time);
    if (ev.modes.back() == "floor.touch=resting")
      rest = ev.time;
  }
  REQUIRE(impacts.size() >= 10);
  double tk = t1;
  for (int k = 0; k < 10; ++k) {
    CHECK(std::abs(impacts[k] - tk) < 1e-9);
    tk += 2 * v0 / g * std::pow(e, k + 1);
  }
  CHECK(std::abs(rest - t1 * (1 + e) / (1 - e)) < 1e-6);
  CHECK(r.events.size() < 200);
  CHECK(r.events.back().modes.back() == "floor.touch=resting");
  // On the floor, at rest, to the end.
  CHECK(std::abs(r.at("h").back()) < 1e-9);
  CHECK(r.at("v").back() == 0);
  // Each bounce leaves at e times the arrival speed.
  std::size_t p = stateIndex(r, "ball.body.p");
  const hbg::Event &first = r.events[0];
  CHECK(first.after[p] == doctest::Approx(-e * first.before[p]).epsilon(1e-12));
  // flying -> impact (real: remapped there) -> flying.
  REQUIRE(first.modes.size() == 3);
  REQUIRE(first.states.size() == 3);
  CHECK(first.real[1]);
  CHECK(first.states[0][p] == first.before[p]);
  CHECK(first.states[1][p] == first.after[p]);
}

TEST_CASE("tank_valves: valve 1 opens valve 2 through a mythical mode") {
  const double Fin = 1, A = 2, R1 = 1, R2 = 3, P1 = 2, Rt = R1 + R2;
  hbg::Result r = simulate("tank_valves.hbg", tight(20, 0.1));
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  const double t1 = A * P1 / Fin;
  CHECK(ev.time == doctest::Approx(t1).epsilon(1e-12));
  REQUIRE(ev.modes.size() == 3);
  CHECK(ev.modes[0] == "valve1=closed, valve2=closed");
  CHECK(ev.modes[1] == "valve1=open, valve2=closed");
  CHECK_FALSE(ev.real[1]);
  CHECK(ev.modes[2] == "valve1=open, valve2=open");
  CHECK(ev.real[2]);
  std::ostringstream csv;
  r.writeEventsCsv(csv);
  CHECK(csv.str().find("mythical,\"valve1=open, valve2=closed\"") != std::string::npos);
  auto p = [&](double t) {
    return t <= t1 ? Fin * t / A : Fin * Rt + (P1 - Fin * Rt) * std::exp(-(t - t1) / (Rt * A));
  };
  const std::vector<double> &time = r.at("time");
  for (std::size_t k = 0; k < time.size(); ++k) {
    if (std::abs(time[k] - ev.time) < 1e-12)
      continue; // the rows before and after the event
    CHECK(std::abs(r.at("tank")[k] - p(time[k])) < 1e-8);
    double pipe = time[k] < t1 ? 0 : p(time[k]) * R2 / Rt;
    CHECK(std::abs(r.at("pipe")[k] - pipe) < 1e-8);
  }
}

TEST_CASE("rectifier: piecewise closed form and switching times") {
  const double V = 10, w = 2 * 3.141592653589793 * 50, Vd = 0.6, C = 1e-4, R = 100;
  hbg::SimulationOptions opts = tight(0.06, 1e-4);
  hbg::Result r = simulate("rectifier.hbg", opts);
  // Expected switching times from the closed form, three periods.
  std::vector<double> on, off;
  double t = std::asin(Vd / V) / w;
  for (int k = 0; k < 3; ++k) {
    on.push_back(t);
    // Blocks when the current C dv/dt + v / R (v = V sin - Vd) reaches 0,
    // after the peak.
    auto current = [&](double s) { return C * V * w * std::cos(w * s) + (V * std::sin(w * s) - Vd) / R; };
    double period = 2 * 3.141592653589793 / w;
    double peak = (std::floor(t / period) + 0.25) * period;
    double toff = bisect(current, peak, peak + period / 4);
    off.push_back(toff);
    double voff = V * std::sin(w * toff) - Vd;
    auto gap = [&](double s) {
      return V * std::sin(w * s) - voff * std::exp(-(s - toff) / (R * C)) - Vd;
    };
    // Conducts again on the next rise.
    double next = (std::floor(toff / period) + 1) * period;
    t = bisect(gap, next, next + period / 4);
  }
  std::vector<double> gotOn, gotOff;
  for (const hbg::Event &ev : r.events)
    (ev.modes.back() == "diode.j=conducting" ? gotOn : gotOff).push_back(ev.time);
  REQUIRE(gotOn.size() >= 3);
  REQUIRE(gotOff.size() >= 3);
  for (int k = 0; k < 3; ++k) {
    CHECK(std::abs(gotOn[k] - on[k]) < 1e-9);
    CHECK(std::abs(gotOff[k] - off[k]) < 1e-9);
  }
  // The output voltage, piecewise.
  auto v = [&](double s) {
    if (s < on[0])
      return 0.0;
    for (int k = 0; k < 3; ++k) {
      if (s >= on[k] && s <= off[k])
        return V * std::sin(w * s) - Vd;
      double nextOn = k + 1 < 3 ? on[k + 1] : 1e9;
      if (s > off[k] && s < nextOn) {
        double voff = V * std::sin(w * off[k]) - Vd;
        return voff * std::exp(-(s - off[k]) / (R * C));
      }
    }
    return 0.0;
  };
  const std::vector<double> &time = r.at("time");
  double worst = 0;
  for (std::size_t k = 0; k < time.size(); ++k)
    if (time[k] < on[2] + 0.005)
      worst = std::max(worst, std::abs(r.at("v")[k] - v(time[k])));
  CHECK(worst < 1e-6);
}

TEST_CASE("buck: average output voltage D Vin in steady state") {
  const double Vin = 12, D = 0.4, fs = 10000;
  hbg::SimulationOptions opts = tight(0.02, 1e-7);
  opts.rtol = 1e-8;
  hbg::Result r = simulate("buck.hbg", opts);
  // Average over the last 10 periods (trapezoid over the samples).
  const std::vector<double> &t = r.at("time"), &v = r.at("vout");
  double from = 0.02 - 10 / fs, sum = 0, span = 0;
  for (std::size_t k = 1; k < t.size(); ++k)
    if (t[k - 1] >= from) {
      sum += 0.5 * (v[k] + v[k - 1]) * (t[k] - t[k - 1]);
      span += t[k] - t[k - 1];
    }
  double average = sum / span;
  CHECK(std::abs(average - D * Vin) < 0.005 * D * Vin);
  // Two switchings per period; the coil current never reverses.
  CHECK(r.events.size() >= 2 * 200 - 2);
  for (double i : r.at("il"))
    CHECK(i > -1e-9);
  // After each event the stepper goes on with the step size it had
  // reached instead of starting again from the first trial step, so
  // events cost few rejected steps.
  CHECK(r.rejectedSteps * 4 < r.steps);
}

TEST_CASE("pwm_rc: every switching instant, the exact periodic steady state and its average D Vin, "
          "at default tolerances") {
  const double Vin = 10, D = 0.3, fs = 20000, R = 0.1, C = 1e-3, tau = R * C, tEnd = 0.03;
  // Default options: only the span and the output grid are set. The charge
  // (about 3e-3 C) is far above the default atol, so rtol governs.
  hbg::SimulationOptions opts;
  opts.method = testMethod();
  opts.tEnd = tEnd;
  opts.dtOut = 1e-6;
  hbg::Result r = simulate("pwm_rc.hbg", opts);

  // The high switch opens at (k + D/2) / fs and closes at (k + 1 - D/2) / fs;
  // the low switch does the opposite at the same instants.
  std::vector<double> expected;
  for (int k = 0;; ++k) {
    double opens = (k + D / 2) / fs, closes = (k + 1 - D / 2) / fs;
    if (opens >= tEnd)
      break;
    expected.push_back(opens);
    if (closes >= tEnd)
      break;
    expected.push_back(closes);
  }
  REQUIRE(expected.size() == 1200); // 600 periods, two switchings each
  REQUIRE(r.events.size() == expected.size());

  // The capacitor voltage at every switching instant, from t = 0 by the
  // exact exponential on each interval (vs = Vin while the high switch is
  // closed, 0 while it is open).
  const std::size_t q = stateIndex(r, "cap.q");
  double v = 0, t0 = 0, worstTime = 0, worstState = 0;
  for (std::size_t n = 0; n < expected.size(); ++n) {
    const hbg::Event &ev = r.events[n];
    const bool opens = n % 2 == 0;
    CHECK(ev.modes.back() == (opens ? "high=open, low=closed" : "high=closed, low=open"));
    worstTime = std::max(worstTime, std::abs(ev.time - expected[n]) / expected[n]);
    double vs = opens ? Vin : 0;
    v = vs + (v - vs) * std::exp(-(expected[n] - t0) / tau);
    t0 = expected[n];
    worstState = std::max(worstState, std::abs(ev.before[q] / C - v) / v);
    CHECK(ev.after[q] == ev.before[q]); // the capacitor's charge does not jump
  }
  CHECK(worstTime < 1e-9);
  CHECK(worstState < 1e-5);

  // Periodic steady state (the transient has decayed by exp(-300)):
  // v_hi = Vin (1 - a) / (1 - a b) where the high switch opens, v_lo = b v_hi
  // where it closes, exponential in between.
  const double a = std::exp(-D / (fs * tau)), b = std::exp(-(1 - D) / (fs * tau));
  const double vHi = Vin * (1 - a) / (1 - a * b), vLo = b * vHi;
  auto steady = [&](double t) {
    double s = t * fs - std::floor(t * fs); // phase in the period, 0 at the pulse centre
    if (s <= D / 2)
      return Vin + (vLo - Vin) * std::exp(-(s + D / 2) / (fs * tau));
    if (s >= 1 - D / 2)
      return Vin + (vLo - Vin) * std::exp(-(s - (1 - D / 2)) / (fs * tau));
    return vHi * std::exp(-(s - D / 2) / (fs * tau));
  };
  const std::vector<double> &time = r.at("time"), &vout = r.at("v"), &vs = r.at("vs");
  double worst = 0;
  std::size_t rows = 0;
  for (std::size_t k = 0; k < time.size(); ++k)
    if (time[k] >= tEnd - 10 / fs) {
      worst = std::max(worst, std::abs(vout[k] - steady(time[k])) / steady(time[k]));
      ++rows;
    }
  CHECK(rows > 500);
  CHECK(worst < 1e-5);
  // The last switching states against the fixed point as well.
  CHECK(std::abs(r.events[expected.size() - 2].before[q] / C - vHi) < 1e-5 * vHi);
  CHECK(std::abs(r.events[expected.size() - 1].before[q] / C - vLo) < 1e-5 * vLo);
  // The switching node: Vin inside the pulse, 0 outside (rows at an event
  // time hold either value).
  for (std::size_t k = 0; k < time.size(); ++k) {
    double s = time[k] * fs - std::floor(time[k] * fs);
    double margin = std::min(std::abs(s - D / 2), std::abs(s - (1 - D / 2)));
    if (margin > 1e-6)
      CHECK(vs[k] == (s < D / 2 || s > 1 - D / 2 ? Vin : 0));
  }

  // The average over the last 10 periods, from one closing of the high
  // switch to another (trapezoid over the samples, which include the rows
  // at the events): exactly D Vin in steady state.
  const double from = r.events[expected.size() - 21].time, to = r.events.back().time;
  double sum = 0;
  for (std::size_t k = 1; k < time.size(); ++k)
    if (time[k - 1] >= from && time[k] <= to)
      sum += 0.5 * (vout[k] + vout[k - 1]) * (time[k] - time[k - 1]);
  CHECK(std::abs(sum / (to - from) - D * Vin) < 1e-5 * D * Vin);
}

TEST_CASE("ideal_switch: a model without states switches at the closed-form instants") {
  const double pi = 3.141592653589793, V = 10, w = 2 * pi * 50, k = 0.9, R = 5, tEnd = 0.1;
  hbg::SimulationOptions opts; // defaults but for the span and the output grid
  opts.method = testMethod();
  opts.tEnd = tEnd;
  opts.dtOut = 1e-4;
  hbg::Result r = simulate("ideal_switch.hbg", opts);
  CHECK(r.stateNames.empty());

  // Closes at w t = asin(k) + 2 pi n, opens at w t = pi - asin(k) + 2 pi n:
  // five periods, ten events.
  std::vector<double> expected;
  for (int n = 0; n < 5; ++n) {
    expected.push_back((std::asin(k) + 2 * pi * n) / w);
    expected.push_back((pi - std::asin(k) + 2 * pi * n) / w);
  }
  REQUIRE(r.events.size() == expected.size());
  const std::vector<double> &time = r.at("time"), &i = r.at("i"), &v = r.at("v");
  for (std::size_t n = 0; n < expected.size(); ++n) {
    const hbg::Event &ev = r.events[n];
    const bool closes = n % 2 == 0;
    CHECK(ev.modes.back() == (closes ? "switch=closed" : "switch=open"));
    CHECK(std::abs(ev.time - expected[n]) < 1e-9 * expected[n]);
    CHECK(ev.before.empty());
    CHECK(ev.after.empty());
    // Two rows at the event: before and after it. While closed the load
    // sees the source, V sin(w t) = k V at both switching instants.
    std::size_t at = std::find(time.begin(), time.end(), ev.time) - time.begin();
    REQUIRE(at + 1 < time.size());
    REQUIRE(time[at + 1] == ev.time);
    const double closedI = V * std::sin(w * expected[n]) / R;
    CHECK(std::abs(closedI - k * V / R) < 1e-12);
    double before = closes ? 0 : closedI, after = closes ? closedI : 0;
    CHECK(std::abs(i[at] - before) < 1e-9 * k * V / R);
    CHECK(std::abs(i[at + 1] - after) < 1e-9 * k * V / R);
    CHECK(std::abs(v[at] - R * before) < 1e-9 * k * V);
    CHECK(std::abs(v[at + 1] - R * after) < 1e-9 * k * V);
  }
  // Between events: i = V sin(w t) / R inside the window, 0 outside.
  std::size_t rows = 0;
  for (std::size_t n = 0; n < time.size(); ++n) {
    bool atEvent = std::any_of(r.events.begin(), r.events.end(),
                               [&](const hbg::Event &ev) { return ev.time == time[n]; });
    if (atEvent)
      continue;
    double source = V * std::sin(w * time[n]);
    double expectedI = source >= k * V ? source / R : 0;
    CHECK(std::abs(i[n] - expectedI) < 1e-12 * V / R);
    CHECK(std::abs(v[n] - R * expectedI) < 1e-12 * V);
    ++rows;
  }
  CHECK(rows == 1001); // the output grid 0, 1e-4, ..., 0.1
}

TEST_CASE("stick_slip: every slip and stick instant, the positions there and the trajectory "
          "against the closed form; the same events at default options") {
  const double pi = 3.141592653589793, m = 0.5, k = 20, Fs = 2, Fk = 1.2, v0 = 0.2, tEnd = 5;
  // Stuck from x = 0 until k x = Fs at t1; slipping, x = Fk / k + A cos(w s)
  // + (v0 / w) sin(w s) until the mass is back at the belt's velocity at
  // w s = 2 pi - 2 atan(A w / v0), at x = (2 Fk - Fs) / k; stuck again for
  // 2 (Fs - Fk) / (k v0); periodic from there.
  const double w = std::sqrt(k / m), A = (Fs - Fk) / k;
  const double slipping = (2 * pi - 2 * std::atan(A * w / v0)) / w;
  const double stuck = 2 * (Fs - Fk) / (k * v0), period = slipping + stuck;
  const double t1 = Fs / (k * v0), xSlip = Fs / k, xStick = (2 * Fk - Fs) / k;
  std::vector<double> expected; // slip, stick, slip, ...
  for (int n = 0; t1 + n * period < tEnd; ++n) {
    expected.push_back(t1 + n * period);
    if (t1 + n * period + slipping < tEnd)
      expected.push_back(t1 + n * period + slipping);
  }
  REQUIRE(expected.size() == 9); // four periods and the start of a fifth
  struct Exact {
    double x, v, force;
    bool slips;
  };
  auto exact = [&](double t) -> Exact {
    if (t < t1)
      return {v0 * t, v0, k * v0 * t, false};
    double s = t - t1 - std::floor((t - t1) / period) * period;
    if (s < slipping) {
      double x = Fk / k + A * std::cos(w * s) + v0 / w * std::sin(w * s);
      return {x, v0 * std::cos(w * s) - A * w * std::sin(w * s), Fk, true};
    }
    double x = xStick + v0 * (s - slipping);
    return {x, v0, k * x, false};
  };

  hbg::Result r = simulate("stick_slip.hbg", tight(tEnd, 0.01));
  REQUIRE(r.events.size() == expected.size());
  const std::size_t p = stateIndex(r, "mass.p"), q = stateIndex(r, "spring.q");
  for (std::size_t n = 0; n < expected.size(); ++n) {
    const hbg::Event &ev = r.events[n];
    const bool slips = n % 2 == 0;
    CAPTURE(n);
    CHECK(std::abs(ev.time - expected[n]) < 1e-9);
    // One transition of the junction per event: no kink of sign(vrel)
    // switches on its own, neither where slipping starts from vrel = 0
    // nor where vrel returns to 0 and the mass sticks.
    REQUIRE(ev.transitions.size() == 1);
    CHECK(ev.transitions[0].rfind(slips ? "slip: stuck -> slipping when"
                                        : "slip: slipping -> stuck when",
                                  0) == 0);
    REQUIRE(ev.modes.size() == 2);
    CHECK(ev.modes[0] == (slips ? "slip=stuck" : "slip=slipping"));
    CHECK(ev.modes[1] == (slips ? "slip=slipping" : "slip=stuck"));
    CHECK(ev.real[1]);
    // The spring's extension at the limits, the mass at the belt's speed.
    CHECK(std::abs(ev.before[q] - (slips ? xSlip : xStick)) < 1e-9);
    CHECK(ev.after[q] == ev.before[q]);
    CHECK(std::abs(ev.before[p] / m - v0) < 1e-9);
    // Sticking remaps the momentum onto the belt's, m v0; it hardly jumps,
    // since the mass arrives at the belt's speed.
    if (!slips) {
      CHECK(std::abs(ev.after[p] - m * v0) < 1e-15);
      CHECK(std::abs(ev.after[p] - ev.before[p]) < 1e-12);
    }
  }

  // Every output row off the events against the closed form. While
  // slipping the friction is exactly +Fk: the branch of sign(vrel) taken
  // from vrel = 0 is the one the motion takes, and it is held.
  const std::vector<double> &time = r.at("time"), &x = r.at("x"), &v = r.at("v"),
                            &force = r.at("force"), &vrel = r.at("vrel");
  double worstX = 0, worstV = 0, worstForce = 0;
  std::size_t slipRows = 0, stuckRows = 0;
  for (std::size_t i = 0; i < time.size(); ++i) {
    bool nearEvent = std::any_of(expected.begin(), expected.end(),
                                 [&](double te) { return std::abs(time[i] - te) < 1e-8; });
    if (nearEvent)
      continue;
    Exact e = exact(time[i]);
    worstX = std::max(worstX, std::abs(x[i] - e.x));
    worstV = std::max(worstV, std::abs(v[i] - e.v));
    worstForce = std::max(worstForce, std::abs(force[i] - e.force));
    CHECK(std::abs(vrel[i] - (v0 - v[i])) < 1e-15);
    if (e.slips) {
      ++slipRows;
      CHECK(force[i] == Fk);
      CHECK(vrel[i] > 0);
    } else {
      ++stuckRows;
      CHECK(vrel[i] == 0);
      CHECK(v[i] == v0);
    }
  }
  CHECK(slipRows > 250);
  CHECK(stuckRows > 200);
  CHECK(worstX < 1e-9);
  CHECK(worstV < 1e-9);
  CHECK(worstForce < 1e-8);
  // The event log lists only the junction's transitions.
  std::ostringstream csv;
  r.writeEventsCsv(csv);
  CHECK(csv.str().find("sign(") == std::string::npos);

  // Default options: the same events in the same order, at default accuracy.
  hbg::SimulationOptions defaults;
  defaults.tEnd = tEnd;
  defaults.dtOut = 0.01;
  hbg::Result d = simulate("stick_slip.hbg", defaults);
  REQUIRE(d.events.size() == r.events.size());
  for (std::size_t n = 0; n < d.events.size(); ++n) {
    CAPTURE(n);
    CHECK(d.events[n].modes == r.events[n].modes);
    CHECK(std::abs(d.events[n].time - expected[n]) < 1e-5);
  }

  // The belt running the other way mirrors the motion: x -> -x, same
  // instants (the guards hold in both directions).
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "stick_slip.hbg");
  hbg::Simulation mirrored(model, tight(tEnd, 0.01));
  mirrored.setParameter("v0", -v0);
  hbg::Result b = mirrored.run();
  REQUIRE_MESSAGE(b.ok(), b.error);
  REQUIRE(b.events.size() == expected.size());
  for (std::size_t n = 0; n < expected.size(); ++n) {
    CAPTURE(n);
    CHECK(b.events[n].modes == r.events[n].modes);
    CHECK(std::abs(b.events[n].time - expected[n]) < 1e-9);
    CHECK(std::abs(b.events[n].before[q] + (n % 2 == 0 ? xSlip : xStick)) < 1e-9);
  }
}

TEST_CASE("freewheel: the diode takes over the coil's current through a mythical mode") {
  const double V = 10, R = 10, L = 0.01, toff = 0.002, tau = L / R, tEnd = 0.01;
  hbg::Result r = simulate("freewheel.hbg", tight(tEnd, 1e-4));
  // One event: the switch opens; the mode with both junctions off would
  // remap the coil's momentum to zero through an impulse that forward-
  // biases the diode, so it is mythical and the diode conducts at once.
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  CHECK(ev.time == toff);
  REQUIRE(ev.modes.size() == 3);
  CHECK(ev.modes[0] == "switch=closed, diode=blocking");
  CHECK(ev.modes[1] == "switch=open, diode=blocking");
  CHECK_FALSE(ev.real[1]);
  CHECK(ev.modes[2] == "switch=open, diode=conducting");
  CHECK(ev.real[2]);
  // No jump: the coil keeps its momentum L i(toff).
  const double i0 = V / R * (1 - std::exp(-toff / tau));
  std::size_t p = stateIndex(r, "coil.p");
  CHECK(std::abs(ev.before[p] - L * i0) < 1e-9 * L * i0);
  CHECK(ev.after[p] == ev.before[p]);
  // The audit: the coil keeps L i0^2 / 2, nothing is lost at the switch,
  // and the run has nothing to warn about.
  CHECK(ev.storedBefore == doctest::Approx(0.5 * L * i0 * i0).epsilon(1e-9));
  CHECK(ev.removed == 0);
  CHECK(r.warnings.empty());
  // Every row against the closed form: charging, then decay through the
  // diode (which carries the whole current after the event), node at 0.
  const std::vector<double> &time = r.at("time"), &i = r.at("i"), &id = r.at("id"),
                            &vnode = r.at("vnode");
  for (std::size_t n = 0; n < time.size(); ++n) {
    double t = time[n];
    bool after = t > toff || (t == toff && n > 0 && time[n - 1] == toff);
    double expected = after ? i0 * std::exp(-(t - toff) / tau)
                            : V / R * (1 - std::exp(-t / tau));
    CHECK(std::abs(i[n] - expected) < 1e-8 * V / R);
    CHECK(std::abs(id[n] - (after ? i[n] : 0)) < 1e-12);
    CHECK(std::abs(vnode[n] - (after ? 0 : V)) < 1e-12);
  }
}

TEST_CASE("boost: a self-contained diode, every switching instant, output Vin / (1 - D)") {
  const double Vin = 12, fs = 20000, tEnd = 0.1;
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "boost.hbg");
  for (double D : {0.5, 0.2, 0.7}) {
    CAPTURE(D);
    hbg::SimulationOptions opts; // defaults but for the span and the output grid
    opts.method = testMethod();
    opts.tEnd = tEnd;
    opts.dtOut = 1e-6;
    hbg::Simulation sim(model, opts);
    sim.setParameter("D", D);
    hbg::Result r = sim.run();
    REQUIRE_MESSAGE(r.ok(), r.error);
    // The switch closes at (k - D/2) / fs (at 0 for k = 0) and opens at
    // (k + D/2) / fs: every one of these instants is an event, and no
    // other event switches it.
    std::vector<double> expected;
    for (int k = 0; k <= static_cast<int>(tEnd * fs); ++k) {
      double close = std::max(0.0, (k - D / 2) / fs), open = (k + D / 2) / fs;
      if (close < tEnd)
        expected.push_back(close);
      if (open < tEnd)
        expected.push_back(open);
    }
    std::vector<double> switching;
    for (const hbg::Event &ev : r.events)
      if (std::any_of(ev.transitions.begin(), ev.transitions.end(),
                      [](const std::string &t) { return t.rfind("switch.j:", 0) == 0; }))
        switching.push_back(ev.time);
    REQUIRE(switching.size() == expected.size());
    for (std::size_t n = 0; n < expected.size(); ++n)
      CHECK(std::abs(switching[n] - expected[n]) < 1e-9 / fs);
    // No storage loses its charge or current at a switching instant: the
    // diode takes over or lets go in the same instant. (While the output
    // charges, the coil's current falls to zero in some periods and the
    // diode blocks there: its rounding-level rest, 1e-17 V s, is reset.)
    std::size_t q = stateIndex(r, "cap.c.q"), p = stateIndex(r, "coil.l.p");
    for (const hbg::Event &ev : r.events) {
      CHECK(ev.after[q] == ev.before[q]);
      CHECK(std::abs(ev.after[p] - ev.before[p]) < 1e-15);
    }
    // So the audit finds nothing to warn about (before impulses were
    // judged, every switch-on remapped the output charge to zero).
    CHECK(r.warnings.empty());
    // The average over the last 20 ms (400 periods) in steady state.
    const std::vector<double> &time = r.at("time"), &v = r.at("vout");
    double sum = 0, span = 0;
    for (std::size_t i = 1; i < time.size(); ++i)
      if (time[i - 1] >= tEnd - 0.02) {
        sum += 0.5 * (v[i] + v[i - 1]) * (time[i] - time[i - 1]);
        span += time[i] - time[i - 1];
      }
    CHECK(std::abs(sum / span - Vin / (1 - D)) < 0.005 * Vin / (1 - D));
  }
}

namespace {

/// The model's text with the statements of its body in reverse order and
/// comments dropped. A statement ends at a `;` outside braces or at the
/// `}` that closes a switched junction's body.
std::string reverseDeclarations(const std::string &text) {
  std::string clean;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n')
        ++i;
    }
    if (i < text.size())
      clean += text[i];
  }
  std::size_t open = clean.find('{'), close = clean.rfind('}');
  std::vector<std::string> statements;
  std::string cur;
  int depth = 0;
  for (std::size_t i = open + 1; i < close; ++i) {
    char c = clean[i];
    cur += c;
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if ((c == ';' || c == '}') && depth == 0) {
      statements.push_back(cur);
      cur.clear();
    }
  }
  std::string out = clean.substr(0, open + 1) + "\n";
  for (auto it = statements.rbegin(); it != statements.rend(); ++it)
    out += *it + "\n";
  return out + "}\n";
}

} // namespace

TEST_CASE("three_phase_bridge: six self-contained ideal diodes follow the piecewise closed form, "
          "whatever the order of declarations") {
  const double V = 325, w = 2 * M_PI * 50, C = 1e-3, R = 100, tEnd = 0.04;
  const double phase[3] = {0, -2 * M_PI / 3, 2 * M_PI / 3};
  // E: the largest line-to-line voltage, and its slope.
  auto envelope = [&](double t, double *slope) {
    double best = -1e300, d = 0;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double e = V * (std::sin(w * t + phase[i]) - std::sin(w * t + phase[j]));
        if (e > best) {
          best = e;
          d = V * w * (std::cos(w * t + phase[i]) - std::cos(w * t + phase[j]));
        }
      }
    if (slope)
      *slope = d;
    return best;
  };
  // The exact piecewise solution: charged to E(0) at t = 0; conducting
  // (v = E) until C E' + E / R < 0; then v = v_b exp(-(t - t_b) / (R C))
  // until E reaches v again. Instants by scanning and bisection.
  struct Piece {
    double from, vb; // blocking from `from` at vb; conducting pieces have vb < 0
  };
  std::vector<Piece> pieces{{0, -1}};
  auto current = [&](double t) {
    double s, e = envelope(t, &s);
    return C * s + e / R;
  };
  const double h = 1e-6;
  for (double t = 0; t < tEnd;) {
    if (pieces.back().vb < 0) {
      while (t < tEnd && current(t + h) >= 0)
        t += h;
      if (t >= tEnd)
        break;
      double tb = bisect(current, t, t + h);
      pieces.push_back({tb, envelope(tb, nullptr)});
      t = tb;
    } else {
      Piece p = pieces.back();
      auto gap = [&](double s) {
        return envelope(s, nullptr) - p.vb * std::exp(-(s - p.from) / (R * C));
      };
      t += h;
      while (t < tEnd && gap(t + h) < 0)
        t += h;
      if (t >= tEnd)
        break;
      double ton = bisect(gap, t, t + h);
      pieces.push_back({ton, -1});
      t = ton;
    }
  }
  auto exact = [&](double t) {
    const Piece *p = &pieces[0];
    for (const Piece &q : pieces)
      if (q.from <= t)
        p = &q;
    return p->vb < 0 ? envelope(t, nullptr)
                     : p->vb * std::exp(-(t - p->from) / (R * C));
  };
  // A conduction and a blocking interval per 60 degrees: 12 of each.
  CHECK(pieces.size() >= 24);

  hbg::SimulationOptions opts;
  opts.method = testMethod();
  opts.tEnd = tEnd;
  opts.dtOut = 1e-5;
  hbg::Result r = simulate("three_phase_bridge.hbg", opts);
  const std::vector<double> &t = r.at("time"), &v = r.at("v");
  double worst = 0;
  for (std::size_t k = 1; k < t.size(); ++k)
    worst = std::max(worst, std::abs(v[k] - exact(t[k])));
  CHECK(worst < 1e-6 * std::sqrt(3.0) * V);
  // Every blocking instant of the closed form is an event of the run.
  for (const Piece &p : pieces)
    if (p.vb > 0) {
      bool found = std::any_of(r.events.begin(), r.events.end(),
                               [&](const hbg::Event &ev) { return std::abs(ev.time - p.from) < 1e-9; });
      CHECK_MESSAGE(found, "blocking at " << p.from);
    }
  // The line currents of a star without neutral sum to zero.
  for (std::size_t k = 0; k < t.size(); ++k)
    CHECK(std::abs(r.at("ia")[k] + r.at("ib")[k] + r.at("ic")[k]) < 1e-9);

  // The same bridge with every declaration in the opposite order.
  std::ifstream in(kExamples + "three_phase_bridge.hbg");
  std::stringstream text;
  text << in.rdbuf();
  std::string reversed = reverseDeclarations(text.str());
  hbg::Model model = hbg::Compiler().compileString(reversed, "reversed.hbg");
  hbg::Result rr = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(rr.ok(), rr.error);
  REQUIRE(rr.at("time").size() == t.size());
  double apart = 0;
  for (const char *column : {"time", "v", "ia", "ib", "ic"})
    for (std::size_t k = 0; k < t.size(); ++k)
      apart = std::max(apart, std::abs(rr.at(column)[k] - r.at(column)[k]) /
                                  std::max(1.0, std::abs(r.at(column)[k])));
  CHECK(apart < 1e-12);
}

namespace {

/// The three-phase bridge with leaky diodes: each diode is a switched
/// 1-junction with its on-resistance Ron and knee voltage Vf in series,
/// beside a 1-junction through its leak resistance Rleak = 1 / (1 mS).
/// `ronFirst` declares the on-resistances before the leaks.
std::string leakyBridge(bool ronFirst) {
  const char *diodes[][3] = {{"d1", "A", "P"},  {"d3", "B", "P"},  {"d5", "Cn", "P"},
                             {"d4", "M", "A"},  {"d6", "M", "B"},  {"d2", "M", "Cn"}};
  std::string text = R"(model LeakyBridge {
    parameter V = 325.0;  parameter f = 50.0;  parameter C = 1e-3;  parameter R = 100.0;
    parameter Ron = 1e-3;  parameter Rleak = 1e3;  parameter Vf = 0.8;
    Se ground(0);
    MSe va(V * sin(2 * 3.141592653589793 * f * time));
    MSe vb(V * sin(2 * 3.141592653589793 * f * time - 2.0943951023931953));
    MSe vc(V * sin(2 * 3.141592653589793 * f * time + 2.0943951023931953));
    0 star;  0 A;  0 B;  0 Cn;  0 P;  0 M;  1 sa;  1 sb;  1 sc;
    bond ground -> star;
    bond star -> sa;  bond va -> sa;  bond sa -> A;
    bond star -> sb;  bond vb -> sb;  bond sb -> B;
    bond star -> sc;  bond vc -> sc;  bond sc -> Cn;
    1 dc;  0 out;  C cap(C) { q0 = 0; }  R load(R);
    bond P -> dc;  bond dc -> M;  bond dc -> out;  bond out -> cap;  bond out -> load;
)";
  std::string rons, leaks;
  for (const auto &d : diodes) {
    std::string n = d[0];
    rons += "    R r" + n + "(Ron);\n";
    leaks += "    R g" + n + "(Rleak);\n";
  }
  text += ronFirst ? rons + leaks : leaks + rons;
  for (const auto &d : diodes) {
    std::string n = d[0], x = d[1], y = d[2];
    text += "    Se k" + n + "(Vf);\n    1 " + n +
            " switched { off blocking initial; on conducting;\n"
            "      blocking -> conducting when (x" + n + ".e - y" + n + ".e > Vf)+;\n"
            "      conducting -> blocking when (r" + n + ".f < 0)+; }\n"
            "    1 l" + n + ";\n"
            "    bond x" + n + ": " + x + " -> " + n + ";  bond y" + n + ": " + n + " -> " + y +
            ";  bond " + n + " -> r" + n + ";  bond " + n + " -> k" + n + ";\n"
            "    bond " + x + " -> l" + n + ";  bond l" + n + " -> " + y + ";  bond l" + n +
            " -> g" + n + ";\n";
  }
  return text + "    output v = cap.e, ia = sa.f, ib = sb.f, ic = sc.f;\n}\n";
}

} // namespace

TEST_CASE("a bridge of leaky diodes gives the same results in every order of declarations") {
  // Which resistor takes resistance causality by choice must not follow
  // the order of declarations: with the leak chosen, the 1 mOhm
  // on-resistance would compute its current as a small difference of
  // large voltages divided by 1 mOhm.
  const double V = 325, Vf = 0.8, tEnd = 0.04;
  hbg::SimulationOptions opts;
  opts.method = testMethod();
  opts.tEnd = tEnd;
  opts.dtOut = 1e-4;
  std::vector<hbg::Result> runs;
  for (const std::string &text :
       {leakyBridge(true), leakyBridge(false), reverseDeclarations(leakyBridge(true))}) {
    hbg::Model model = hbg::Compiler().compileString(text, "leaky.hbg");
    runs.push_back(hbg::Simulation(model, opts).run());
    REQUIRE_MESSAGE(runs.back().ok(), runs.back().error);
  }
  // Times and the output voltage agree to 1e-12 of their scale. A line
  // current through two conducting diodes is the difference of the line
  // voltage and the output divided by 2 Ron, whatever the formulation, so
  // its rounding is that of the voltages times 1 / Ron: the currents agree
  // to 1e-12 V / Ron. (Choosing by declaration order, the leak-first order
  // chose the leaks, and the orders differed by 1e-8 in the voltage and
  // 1e-4 A in the currents.)
  const double Ron = 1e-3;
  const hbg::Result &r = runs[0];
  for (std::size_t n = 1; n < runs.size(); ++n) {
    CAPTURE(n);
    REQUIRE(runs[n].at("time").size() == r.at("time").size());
    auto apart = [&](const char *column) {
      double worst = 0;
      for (std::size_t k = 0; k < r.at("time").size(); ++k)
        worst = std::max(worst, std::abs(runs[n].at(column)[k] - r.at(column)[k]));
      return worst;
    };
    CHECK(apart("time") < 1e-12 * tEnd);
    CHECK(apart("v") < 1e-12 * std::sqrt(3.0) * V);
    for (const char *current : {"ia", "ib", "ic"})
      CHECK(apart(current) < 1e-12 * V / Ron);
  }
  // At each peak of the line-to-line voltage sqrt(3) V the capacitor's
  // current is zero and two diodes conduct the load's 5.6 A: the output
  // is sqrt(3) V less two knees and 2 Ron 5.6 A = 0.011 V (the leaks
  // change that by less than 1 mV).
  const std::vector<double> &t = r.at("time"), &v = r.at("v");
  double peak = 0;
  for (std::size_t k = 0; k < t.size(); ++k)
    if (t[k] > tEnd / 2)
      peak = std::max(peak, v[k]);
  CHECK(std::abs(peak - (std::sqrt(3.0) * V - 2 * Vf - 0.011)) < 0.02);
  // The line currents of a star without neutral sum to zero.
  for (std::size_t k = 0; k < t.size(); ++k)
    CHECK(std::abs(r.at("ia")[k] + r.at("ib")[k] + r.at("ic")[k]) < 1e-9);
}

TEST_CASE("hydraulic_press: two domains, seven components, against the piecewise exact solution") {
  // The phases of examples/hydraulic_press.hbg, each linear in
  // y = (V, P, x): the tank's volume, the ram's momentum, the spring's
  // compression. [y(t); 1] = exp(Z t) [y0; 1] with Z = [M b; 0 0].
  const double Q = 2e-3, tStop = 12, Ch = 0.002 / (1000 * 9.81), A = 0.02, m = 100, k = 2e4,
               R = 5e7, pOpen = 5e4, pClose = 4e4;
  auto phase = [&](bool open, double q) {
    Eigen::Matrix4d Z = Eigen::Matrix4d::Zero();
    Z(0, 1) = -A / m;
    Z(0, 0) = open ? -1 / (Ch * R) : 0;
    Z(0, 3) = q;
    Z(1, 0) = A / Ch;
    Z(1, 2) = -k;
    Z(2, 1) = 1 / m;
    return Z;
  };
  auto at = [](const Eigen::Matrix4d &Z, const Eigen::Vector4d &y0, double t) -> Eigen::Vector4d {
    Eigen::Matrix4d E = (Z * t).exp();
    return E * y0;
  };
  // The first time after t0 at which the pressure crosses `level`.
  auto crossing = [&](const Eigen::Matrix4d &Z, const Eigen::Vector4d &y0, double level) {
    auto f = [&](double t) { return at(Z, y0, t)(0) / Ch - level; };
    double a = 0;
    for (double b = 1e-3;; b += 1e-3) {
      REQUIRE(b < 100);
      if ((f(b) < 0) != (f(a) < 0))
        return bisect(f, a, b);
      a = b;
    }
  };
  Eigen::Vector4d y0(0, 0, 0, 1);
  Eigen::Matrix4d Z1 = phase(false, Q), Z2 = phase(true, Q), Z3 = phase(true, 0), Z4 = phase(false, 0);
  double t1 = crossing(Z1, y0, pOpen);
  Eigen::Vector4d y1 = at(Z1, y0, t1), y2 = at(Z2, y1, tStop - t1);
  double t2 = tStop + crossing(Z3, y2, pClose);
  Eigen::Vector4d y3 = at(Z3, y2, t2 - tStop);
  auto exact = [&](double t) -> Eigen::Vector4d {
    if (t < t1)
      return at(Z1, y0, t);
    if (t < tStop)
      return at(Z2, y1, t - t1);
    if (t < t2)
      return at(Z3, y2, t - tStop);
    return at(Z4, y3, t - t2);
  };

  hbg::Result r = simulate("hydraulic_press.hbg", tight(20, 0.05));
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[0].time == doctest::Approx(t1).epsilon(1e-9));
  CHECK(r.events[0].modes.back() == "relief.j=open");
  CHECK(r.events[1].time == tStop);
  CHECK(r.events[2].time == doctest::Approx(t2).epsilon(1e-9));
  CHECK(r.events[2].modes.back() == "relief.j=closed");
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i + 1] == t[i])
      continue; // before an event
    Eigen::Vector4d y = exact(t[i]);
    CHECK(r.at("p")[i] == doctest::Approx(y(0) / Ch).epsilon(1e-7).scale(1e5));
    CHECK(r.at("x")[i] == doctest::Approx(y(2)).epsilon(1e-7).scale(0.1));
    CHECK(r.at("v")[i] == doctest::Approx(y(1) / m).epsilon(1e-7).scale(0.02));
    bool open = t[i] >= r.events[0].time && t[i] < r.events[2].time;
    CHECK(r.at("relief_q")[i] == doctest::Approx(open ? y(0) / Ch / R : 0).epsilon(1e-7).scale(1e-3));
  }
}

TEST_CASE("conveyor: a piecewise speed profile drives a box in derivative causality") {
  // As written, at the experiment block's settings: the profile's switches
  // at t = 1 and 3 are events; between them the force is m v' + b v.
  const double m = 2, b = 0.5;
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "conveyor.hbg");
  hbg::SimulationOptions opts = model.experiment().apply();
  opts.method = testMethod();
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time == doctest::Approx(1).epsilon(1e-12));
  CHECK(r.events[1].time == doctest::Approx(3).epsilon(1e-12));
  // Nothing jumps: the momentum is continuous, so the audit finds the
  // energy unchanged.
  for (const hbg::runtime::Event &e : r.events)
    CHECK(e.removed == doctest::Approx(0).scale(1e-12));
  CHECK(r.warnings.empty());
  auto speed = [](double t) { return t < 1 ? 0.0 : t < 3 ? 2 * (t - 1) : 4.0; };
  auto accel = [](double t) { return t < 1 ? 0.0 : t < 3 ? 2.0 : 0.0; };
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i < t.size(); ++i) {
    // At an event time the rows before and after carry the force of the
    // branch on either side; the rows in between are exact.
    bool before = i + 1 < t.size() && t[i + 1] == t[i];
    double tb = before ? t[i] - 1e-9 : t[i] + 1e-9;
    CHECK(r.at("force")[i] == doctest::Approx(m * accel(tb) + b * speed(t[i])).epsilon(1e-9));
    CHECK(r.at("p")[i] == doctest::Approx(m * speed(t[i])).epsilon(1e-9).scale(1));
  }
}

TEST_CASE("relay_motor: a relay without hysteresis holds the speed in a sliding mode") {
  // At the experiment block's settings: the shaft reaches 100 rad/s at
  // t = -tau ln(1 - 2.1 / 4.8), tau = J / 0.021, and the relay then slides
  // with duty 1/28 (28 A while closed, 1 A on average), one event.
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "relay_motor.hbg");
  hbg::SimulationOptions opts = model.experiment().apply();
  opts.method = testMethod();
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 1);
  const double tau = 0.01 / 0.021, reach = -tau * std::log(1 - 2.1 / 4.8);
  CHECK(r.events[0].time == doctest::Approx(reach).epsilon(1e-5));
  CHECK(r.finalMode == "relay=sliding(drive, coast)");
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i < t.size(); ++i) {
    // The row before the event carries the driving mode, the one after it
    // the slide.
    bool driving = t[i] < r.events[0].time || (i + 1 < t.size() && t[i + 1] == t[i]);
    if (driving) {
      CHECK(r.at("speed")[i] ==
            doctest::Approx(4.8 / 0.021 * (1 - std::exp(-t[i] / tau))).epsilon(1e-5).scale(1));
      CHECK(r.at("duty")[i] == 1);
    } else {
      CHECK(r.at("speed")[i] == doctest::Approx(100).epsilon(1e-6));
      CHECK(r.at("duty")[i] == doctest::Approx(1.0 / 28).epsilon(1e-5));
      CHECK(r.at("current")[i] == doctest::Approx(1).epsilon(1e-5));
    }
  }
}

TEST_CASE("h_bridge: switches closing across their conducting 0 V diodes, against the "
          "piecewise exact solution") {
  // At default options. Each switch of a pair closes across its diode
  // while the diode carries the load's current: the switch takes it and
  // the diode blocks, with no energy lost.
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "h_bridge.hbg");
  hbg::SimulationOptions opts = model.experiment().apply();
  opts.method = testMethod();
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.warnings.empty());
  const double Vdc = 100, f = 1000, dead = 20e-6, R = 10, L = 10e-3, tau = L / R;
  // The exact current at t, stepped over the intervals of constant drive.
  auto exact = [&](double t) {
    double i = 0, t0 = 0;
    while (t0 < t) {
      double k = std::floor(t0 * f + 1e-9);
      double t1 = t;
      for (double o : {dead, 0.5 / f, 0.5 / f + dead, 1 / f})
        if (k / f + o > t0 + 1e-15)
          t1 = std::min(t1, k / f + o);
      double phase = 0.5 * (t0 + t1) * f - k;
      int drive = phase > f * dead && phase < 0.5 ? 1 : phase > 0.5 + f * dead ? -1 : 0;
      double v = drive != 0 ? drive * Vdc : (i > 0 ? -Vdc : i < 0 ? Vdc : 0);
      if (v != 0) {
        double next = v / R + (i - v / R) * std::exp(-(t1 - t0) / tau);
        // In the dead time the diodes block once the current reaches 0.
        i = drive == 0 && (next > 0) != (i > 0) ? 0 : next;
      }
      t0 = t1;
    }
    return i;
  };
  const std::vector<double> &t = r.at("time"), &i = r.at("i");
  double worst = 0;
  for (std::size_t k = 0; k < t.size(); ++k)
    worst = std::max(worst, std::abs(i[k] - exact(t[k])));
  CHECK(worst < 1e-4);
  // The closing pair's diodes block while its switches conduct.
  for (const hbg::Event &ev : r.events) {
    const std::string &after = ev.modes.back();
    if (after.find("s2.j=closed") != std::string::npos)
      CHECK(after.find("d2.j=blocking") != std::string::npos);
    if (after.find("s1.j=closed") != std::string::npos)
      CHECK(after.find("d1.j=blocking") != std::string::npos);
  }
  CHECK(r.events.size() >= 30);
}

TEST_CASE("synchronous_buck: body diodes and dead time, average D Vin and the exact ripple") {
  // The periodic steady state: x = (iL, vC) with x' = A x + b s(t), s = 1
  // for the first D T of each period and 0 for the rest (dead times
  // included: the low body diode carries the positive current). Its state
  // at a period's start is the fixed point of the two intervals' exact
  // maps.
  const double Vin = 12, D = 0.4, fs = 20000, L = 100e-6, C = 100e-6, R = 5, T = 1 / fs;
  Eigen::Matrix2d A;
  A << 0, -1 / L, 1 / C, -1 / (R * C);
  const Eigen::Vector2d b(Vin / L, 0);
  const Eigen::Matrix2d I = Eigen::Matrix2d::Identity();
  auto flow = [&](const Eigen::Vector2d &x, double h, bool on) -> Eigen::Vector2d {
    Eigen::Matrix2d E = (A * h).exp();
    return on ? Eigen::Vector2d(E * x + A.inverse() * (E - I) * b) : Eigen::Vector2d(E * x);
  };
  Eigen::Matrix2d P = (A * (1 - D) * T).exp() * (A * D * T).exp();
  Eigen::Vector2d x0 = (I - P).inverse() * flow(flow(Eigen::Vector2d::Zero(), D * T, true),
                                                (1 - D) * T, false);
  auto exact = [&](double t) {
    double in = t - std::floor(t * fs + 1e-9) * T;
    return in < D * T ? flow(x0, in, true) : flow(flow(x0, D * T, true), in - D * T, false);
  };
  // From rest at default options, 400 periods: the filter's transient
  // decays as exp(-t / 2RC) = exp(-t / 1 ms), gone to 2e-9 by the last
  // two periods, which follow the periodic state.
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "synchronous_buck.hbg");
  hbg::SimulationOptions opts = model.experiment().apply();
  opts.method = testMethod();
  opts.tEnd = 400 * T;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.warnings.empty());
  const std::vector<double> &t = r.at("time"), &il = r.at("il"), &vout = r.at("vout");
  double worstI = 0, worstV = 0, sum = 0, lo = 1e300, hi = -1e300;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k] < 398 * T)
      continue;
    Eigen::Vector2d x = exact(t[k]);
    worstI = std::max(worstI, std::abs(il[k] - x[0]));
    worstV = std::max(worstV, std::abs(vout[k] - x[1]));
    // The last period, its ends included (rows at event times come in
    // pairs, before and after).
    if (t[k] >= 399 * T * (1 - 1e-12)) {
      if (k + 1 < t.size())
        sum += 0.5 * (vout[k] + vout[k + 1]) * (t[k + 1] - t[k]);
      lo = std::min(lo, il[k]);
      hi = std::max(hi, il[k]);
    }
  }
  CHECK(worstI < 1e-4);
  CHECK(worstV < 1e-4);
  // Volt-second balance: the output averages D Vin.
  CHECK(sum / T == doctest::Approx(D * Vin).epsilon(1e-5));
  // The ripple: the periodic state's peak to peak, close to the textbook
  // (Vin - Vout) D / (L fs) of a constant output.
  double ripple = flow(x0, D * T, true)[0] - x0[0];
  CHECK(hi - lo == doctest::Approx(ripple).epsilon(1e-3));
  CHECK(ripple == doctest::Approx((Vin - D * Vin) * D / (L * fs)).epsilon(0.01));
  // The low switch closes across its conducting body diode, which blocks.
  std::size_t closings = 0;
  for (const hbg::Event &ev : r.events)
    if (ev.modes.back().find("low.j=closed") != std::string::npos) {
      ++closings;
      CHECK(ev.modes.back().find("lowBody.j=blocking") != std::string::npos);
    }
  CHECK(closings >= 399);
}
