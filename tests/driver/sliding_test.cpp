//===- tests/driver/sliding_test.cpp - Sign laws that stick (Filippov) ----===//
//
// Coulomb friction written as a law, `R friction(e = Fk * sign(f))`,
// sticks where both branches drive the relative velocity back to zero:
// the sign slides, the contact carries what the rest of the model asks of
// it, and it slips again, as an event, when that leaves [-Fk, Fk].
// Checked against the closed form of a block on a moving belt.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "TestMethod.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

/// A block m on a belt moving at v0, tied to a wall by a spring k, with
/// Coulomb friction Fk between block and belt; it starts at rest at x = 0.
const char *const kBelt = R"(model CoulombBelt {
    parameter m = 1;  parameter k = 1;  parameter Fk = 1;  parameter v0 = 0.5;
    Sf belt(v0);
    I mass(m);
    C spring(1 / k);
    R friction(e = Fk * sign(f));
    1 vb; 0 contact; 1 vm;
    bond belt -> vb; bond vb -> contact; bond contact -> vm; bond contact -> friction;
    bond vm -> mass; bond vm -> spring;
    output x = spring.q, v = mass.f, force = friction.e;
})";

/// The closed form, with w = sqrt(k / m) = 1, Fk / k = 1:
///   slipping from rest, the belt faster: x = 1 - cos t, v = sin t, until
///   v = v0 at ts = asin(v0) (pi / 6); both branches then drive the
///   relative velocity back to zero: it sticks, x = xs + v0 (t - ts), the
///   friction holding k x, until k x = Fk at tp = ts + (1 - xs) / v0;
///   then x = 1 + v0 sin(t - tp), v = v0 cos(t - tp): the relative
///   velocity v0 (1 - cos) stays >= 0, touching zero at each period, where
///   the force needed is Fk exactly: it slips on.
struct BeltExact {
  double ts = std::asin(0.5), xs = 1 - std::cos(ts), tp = ts + (1 - xs) / 0.5;
  double x(double t) const {
    if (t < ts)
      return 1 - std::cos(t);
    if (t < tp)
      return xs + 0.5 * (t - ts);
    return 1 + 0.5 * std::sin(t - tp);
  }
  double v(double t) const {
    if (t < ts)
      return std::sin(t);
    if (t < tp)
      return 0.5;
    return 0.5 * std::cos(t - tp);
  }
  double force(double t) const { return t >= ts && t < tp ? x(t) : 1; }
};

hbg::Result runBelt(hbg::runtime::Method method, double rtol) {
  hbg::Model model = hbg::Compiler().compileString(kBelt, "belt.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 10;
  opts.dtOut = 0.01;
  opts.method = method;
  opts.rtol = rtol;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

} // namespace

TEST_CASE("a block on a belt with a Coulomb sign law sticks and slips at the closed form's times") {
  BeltExact exact;
  hbg::Result r = runBelt(hbg::runtime::Method::DormandPrince, 1e-10);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time == doctest::Approx(exact.ts).epsilon(1e-8));
  CHECK(r.events[0].transitions.at(0) == "sign(v0 - mass.p / m): branch +1 -> sliding");
  CHECK(r.events[1].time == doctest::Approx(exact.tp).epsilon(1e-8));
  CHECK(r.events[1].transitions.at(0) == "sign(v0 - mass.p / m): branch sliding -> +1");
  CHECK(std::abs(r.events[0].time - exact.ts) < 1e-8);
  CHECK(std::abs(r.events[1].time - exact.tp) < 1e-8);
  const std::vector<double> &t = r.at("time");
  double worst = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    // Rows at the events: the force is the law's on one side, the
    // holding force on the other; both are exact at the located time.
    if ((i + 1 < t.size() && t[i + 1] == t[i]) || (i > 0 && t[i - 1] == t[i]))
      continue;
    worst = std::max({worst, std::abs(r.at("x")[i] - exact.x(t[i])),
                      std::abs(r.at("v")[i] - exact.v(t[i])),
                      std::abs(r.at("force")[i] - exact.force(t[i]))});
  }
  CHECK(worst < 1e-8);
}

TEST_CASE("the belt at default options, under every method: one stick, one slip") {
  // The slip leaves tangentially (the force needed reaches Fk with zero
  // rate of the relative velocity), and the integration leaves that
  // velocity a tolerance off zero: the slip starts it from zero on the
  // side it leaves to, so no rounding-level event follows.
  BeltExact exact;
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runBelt(method, 1e-6);
    REQUIRE(r.events.size() == 2);
    CHECK(std::abs(r.events[0].time - exact.ts) < 1e-5);
    CHECK(std::abs(r.events[1].time - exact.tp) < 1e-5);
    CHECK(std::abs(r.at("x").back() - exact.x(10)) < 1e-5);
  }
}

TEST_CASE("a relay thermostat written as a sign law holds 20 C with the duty the losses need") {
  // A room (1e5 J/K, 100 W/K to 0 C) heated with 4 kW below 20 C and not
  // above: from 15 C, T = 40 - 25 exp(-t / 1000) reaches 20 C at
  // 1000 ln(1.25); then the relay slides, holding 20 C with the heater on
  // for the fraction of the time that balances the loss, 2 kW / 4 kW.
  hbg::Model model = hbg::Compiler().compileString(R"(model Thermostat {
    parameter Ct = 1e5;  parameter G = 100;  parameter P = 4000;
    signal on = (1 - sign(room.e - 20)) / 2;
    MSf heater(P * on);
    C room(Ct) { q0 = 15 * Ct; }
    R loss(1 / G);
    0 node;
    bond heater -> node; bond node -> room; bond node -> loss;
    output T = room.e, duty = on;
})",
                                                   "thermostat.hbg");
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::SimulationOptions opts;
    opts.tEnd = 3000;
    opts.dtOut = 10;
    opts.method = method;
    hbg::Result r = hbg::Simulation(model, opts).run();
    REQUIRE_MESSAGE(r.ok(), r.error);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].time == doctest::Approx(1000 * std::log(1.25)).epsilon(1e-5));
    const std::vector<double> &t = r.at("time");
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i] > r.events[0].time) {
        CHECK(std::abs(r.at("T")[i] - 20) < 1e-6);
        CHECK(std::abs(r.at("duty")[i] - 0.5) < 1e-6);
      }
  }
}
