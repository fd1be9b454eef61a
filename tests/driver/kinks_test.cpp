// Kinks through the API: sign, abs, min and max of changing values hold
// their branch within a step and switch at located crossings of their
// arguments, so trajectories through kinks keep the requested accuracy.
// References are closed forms of the piecewise-smooth solutions.

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace {

const double kPi = 3.141592653589793;

hbg::Result run(const std::string &text, hbg::SimulationOptions opts) {
  hbg::Model model = hbg::Compiler().compileString(text, "test.hbg");
  return hbg::Simulation(model, opts).run();
}

hbg::SimulationOptions options(double tEnd, double dtOut, double rtol, double atol) {
  hbg::SimulationOptions o;
  o.tEnd = tEnd;
  o.dtOut = dtOut;
  o.rtol = rtol;
  o.atol = atol;
  return o;
}

/// A unit mass on a unit spring with Coulomb friction Fk sign(v), released
/// at rest from x = 1: each half period pi is a harmonic arc about the
/// friction's equilibrium -Fk sign(v), and the amplitude loses 2 Fk per
/// half period: 1, 0.8, 0.6, 0.4, 0.2, 0. There the spring cannot overcome
/// friction: it sticks, at x = 0, for good.
const char *const kCoulomb = R"(model Coulomb {
    parameter Fk = 0.1;
    I  mass(1) { p0 = 0; }
    C  spring(1) { q0 = 1; }
    R  fr(e = Fk * sign(f));
    1  v;
    bond v -> mass;  bond v -> spring;  bond v -> fr;
    output x = spring.q, vel = mass.f, friction = fr.e;
  })";

/// x(t) of kCoulomb: arcs, then stuck at 0 from 5 pi.
double coulombX(double t) {
  if (t >= 5 * kPi)
    return 0;
  int k = static_cast<int>(std::floor(t / kPi));
  double amplitude = 1 - 0.2 * k, centre = (k % 2 == 0 ? 1 : -1) * 0.1;
  return centre + (amplitude - 0.1) * (k % 2 == 0 ? 1 : -1) * std::cos(t - k * kPi);
}

} // namespace

TEST_CASE("Coulomb friction: reversals at k pi, then it sticks for good") {
  hbg::Result r = run(kCoulomb, options(20, 0.01, 1e-10, 1e-12));
  REQUIRE_MESSAGE(r.ok(), r.error);
  // It starts at v = 0 exactly: the branch the motion takes is -1.
  REQUIRE(r.events.size() == 5);
  for (int k = 1; k <= 4; ++k) {
    const hbg::Event &ev = r.events[k - 1];
    CHECK(ev.time == doctest::Approx(k * kPi).epsilon(1e-8));
    REQUIRE(ev.transitions.size() == 1);
    CHECK(ev.transitions[0] == (k % 2 ? "sign(mass.p): branch -1 -> +1"
                                      : "sign(mass.p): branch +1 -> -1"));
  }
  // At 5 pi both branches drive the velocity back to zero: the sign
  // slides, holding it there with the force the spring exerts.
  CHECK(r.events[4].time == doctest::Approx(5 * kPi).epsilon(1e-8));
  CHECK(r.events[4].transitions.at(0) == "sign(mass.p): branch -1 -> sliding");
  const std::vector<double> &t = r.at("time"), &x = r.at("x");
  double worst = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    worst = std::max(worst, std::abs(x[i] - coulombX(t[i])));
    if (t[i] > 5 * kPi + 1e-6) {
      CHECK(std::abs(r.at("vel")[i]) < 1e-9);
      CHECK(std::abs(r.at("friction")[i] + x[i]) < 1e-9); // holds k x
    }
  }
  CHECK(worst < 1e-8);
}

TEST_CASE("a friction law written with `if` cannot slide: a named error where it sticks") {
  // `if` picks one branch or the other; the sign's equivalent value has
  // nothing to act on.
  std::string text = kCoulomb;
  text.replace(text.find("Fk * sign(f)"), 12, "if f > 0 then Fk else -Fk");
  hbg::Result r = run(text, options(20, 0.01, 1e-10, 1e-12));
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunKinkSliding);
  CHECK(r.failure->time == doctest::Approx(5 * kPi).epsilon(1e-8));
  CHECK(r.error.find("is driven back to zero from both sides: a sliding mode (Coulomb friction "
                     "that sticks, a relay that chatters), which `min`, `max` and `if` cannot "
                     "hold") != std::string::npos);
  // What was computed up to it is kept, and matches the arcs.
  const std::vector<double> &t = r.at("time"), &x = r.at("x");
  REQUIRE(t.size() > 1500);
  double worst = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    worst = std::max(worst, std::abs(x[i] - coulombX(t[i])));
  CHECK(worst < 1e-8);
}

TEST_CASE("Coulomb friction at default options keeps the default tolerance through the kinks") {
  hbg::SimulationOptions o;
  o.tEnd = 15;
  o.dtOut = 0.01;
  hbg::Result r = run(kCoulomb, o);
  REQUIRE_MESSAGE(r.ok(), r.error);
  const std::vector<double> &t = r.at("time"), &x = r.at("x");
  double worst = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    worst = std::max(worst, std::abs(x[i] - coulombX(t[i])));
  // Integrating across the reversals instead would leave an error of the
  // order of rtol per kink times the steps it spans; located, each arc is
  // smooth and the global error stays a small multiple of rtol.
  CHECK(worst < 20 * o.rtol);
}

TEST_CASE("max and min of time in a source: the charge bends at the located kinks") {
  // A half-wave rectified current max(0, sin t) and a ramp min(1, t)
  // clipped at 1 charge two unit capacitors: q1 = 1 - cos t on [0, pi],
  // 2 on [pi, 2 pi], 3 - cos t after; q2 = t^2 / 2 up to 1, t - 1/2 after.
  const char *model = R"(model Clip {
      MSf half(max(0, sin(time)));  C c1(1) { q0 = 0; }
      MSf ramp(min(1, time));       C c2(1) { q0 = 0; }
      bond half -> c1;  bond ramp -> c2;
      output q1 = c1.q, q2 = c2.q;
    })";
  hbg::Result r = run(model, options(8, 0.05, 1e-10, 1e-12));
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[0].time == doctest::Approx(1).epsilon(1e-12));
  CHECK(r.events[1].time == doctest::Approx(kPi).epsilon(1e-12));
  CHECK(r.events[2].time == doctest::Approx(2 * kPi).epsilon(1e-12));
  const std::vector<double> &t = r.at("time"), &q1 = r.at("q1"), &q2 = r.at("q2");
  double worst = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    double e1 = t[i] <= kPi       ? 1 - std::cos(t[i])
                : t[i] <= 2 * kPi ? 2
                                  : 3 - std::cos(t[i]);
    double e2 = t[i] <= 1 ? t[i] * t[i] / 2 : t[i] - 0.5;
    worst = std::max({worst, std::abs(q1[i] - e1), std::abs(q2[i] - e2)});
  }
  CHECK(worst < 1e-8);
}

TEST_CASE("Model::rhs outside a run takes each kink's branch from its argument") {
  hbg::Model model = hbg::Compiler().compileString(kCoulomb, "test.hbg");
  std::vector<double> p = model.parameterValues(), xdot(2);
  // States in order mass.p, spring.q: v = -2 pulls friction +Fk.
  std::vector<double> x = {-2, 0.5};
  model.rhs(0, x.data(), p.data(), xdot.data());
  CHECK(xdot[0] == doctest::Approx(-0.5 + 0.1));
  x[0] = 2;
  model.rhs(0, x.data(), p.data(), xdot.data());
  CHECK(xdot[0] == doctest::Approx(-0.5 - 0.1));
}

TEST_CASE("a kink that changes branch at a junction's event is in that event's log") {
  // kCoulomb with a flag junction that turns on when the friction force
  // first pushes forward: at the first reversal (t = pi) the junction
  // switches and the kink changes branch in one event.
  std::string model = kCoulomb;
  model.replace(model.rfind("output"), 0,
                "Se zero(0); R dummy(1);\n"
                "    1 flag switched { off initial; on; off -> on when (fr.e > 0)-; }\n"
                "    bond zero -> flag; bond flag -> dummy;\n    ");
  hbg::Result r = run(model, options(7, 0.1, 1e-10, 1e-12));
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time == doctest::Approx(kPi).epsilon(1e-8));
  REQUIRE(r.events[0].transitions.size() == 2);
  CHECK(r.events[0].transitions[0] == "flag: off -> on when (fr.e > 0)-");
  CHECK(r.events[0].transitions[1] == "sign(mass.p): branch -1 -> +1");
  CHECK(r.events[1].time == doctest::Approx(2 * kPi).epsilon(1e-8));
  REQUIRE(r.events[1].transitions.size() == 1);
  CHECK(r.events[1].transitions[0] == "sign(mass.p): branch +1 -> -1");
}
