//===- tests/runtime/energy_audit_test.cpp - The energy audit of events ---===//
//
// simulate() on the inelastic collision (HandModels.h): the energy stored
// before and after the impact (3/8 of 1/2 J removed), with and without the
// contact declared dissipative, and nothing from a System that cannot say.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "runtime/HandModels.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;
using namespace hbgtest;

// ---------------------------------------------------------------------------
// The energy audit, on the collision: p^2 / 2m per body, nothing for the
// positions.
// ---------------------------------------------------------------------------

TEST_CASE("the energy audit records the energy before and after, and warns of a loss") {
  for (bool dissipative : {false, true}) {
    CAPTURE(dissipative);
    const double m1 = 1, m2 = 3;
    HandSystem sys = collision(m1, m2, true, dissipative);
    sys.energy = [=](const double *X, double *e) {
      e[0] = X[0] * X[0] / (2 * m1);
      e[1] = X[1] * X[1] / (2 * m2);
      e[2] = e[3] = 0;
    };
    RunRecord r;
    simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    // 1/2 before; (1/4)^2 / 2 + (3/4)^2 / 6 = 1/8 after: 3/8 removed.
    CHECK(ev.energyBefore == std::vector<double>{0.5, 0, 0, 0});
    CHECK(ev.storedBefore == 0.5);
    CHECK(ev.storedAfter == doctest::Approx(0.125).epsilon(1e-14));
    CHECK(ev.removed == doctest::Approx(0.375).epsilon(1e-14));
    CHECK(ev.junctionsSwitched == std::vector<std::uint32_t>{0});
    if (dissipative) {
      CHECK(r.warnings.empty());
      continue;
    }
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].kind == DiagKind::RunEnergyVanished);
    CHECK(r.warnings[0].time == doctest::Approx(0.2).epsilon(1e-14));
    CHECK(r.warnings[0].message ==
          "the event into mode `contact=on` removed 0.375 J of the 0.5 J stored "
          "(bullet 0.5 J -> 0.0312 J) with no dissipative junction switching (contact): an "
          "ideal switching element may leave no path for what the storage holds; if the loss "
          "is physical (a plastic impact), declare the junction `switched dissipative`");
  }
}

TEST_CASE("the energy audit says nothing about a System that cannot say") {
  HandSystem sys = collision(1, 1, true);
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].energyBefore.empty());
  CHECK(std::isnan(r.events[0].removed));
  CHECK(r.warnings.empty());
}
