// The step API: inputs declared in the model, set between steps, and a run
// advanced to given times with events handled inside each step.

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

namespace {
// v' = (u - v) / (R C): the capacitor follows the input with tau = 0.5.
const char *kDriven = R"(
model Driven {
    input u;
    parameter R = 1;
    parameter C = 0.5;
    MSe src(u);
    R res(R);
    C cap(C);
    1 loop;
    bond src -> loop;
    bond loop -> res;
    bond loop -> cap;
    output v = cap.e, drive = u;
}
)";

// The same circuit closed by an ideal switch driven by an input: opening
// and closing it are events that setInput causes.
const char *kSwitched = R"(
import electrical;
model Switched {
    input close = 0;
    VoltageSource supply(V = 1);
    IdealSwitch s(on = close);
    Resistor res(R = 1);
    Capacitor cap(C = 0.5);
    Ground gnd;
    bond supply.p -> s.p;
    bond s.n -> res.p;
    bond res.n -> cap.p;
    bond cap.n -> gnd.p;
    bond gnd.p -> supply.n;
    output v = cap.v, i = s.i;
}
)";

hbg::SimulationOptions tight() {
  hbg::SimulationOptions o;
  o.rtol = 1e-10;
  return o;
}
} // namespace

TEST_CASE("an input set between steps drives the model; closed form") {
  hbg::Model model = hbg::Compiler().compileString(kDriven, "driven.hbg");
  CHECK(model.inputNames() == std::vector<std::string>{"u"});
  hbg::Simulation sim(model, tight());
  CHECK(sim.input("u") == 0);
  sim.setInput("u", 1);
  sim.start();
  CHECK(sim.time() == 0);
  CHECK(sim.output("drive") == 1);
  // 1 - e^{-2t} while u = 1, in steps of 0.1.
  for (int k = 1; k <= 10; ++k) {
    sim.advance(0.1 * k);
    CHECK(sim.time() == 0.1 * k);
    CHECK(sim.output("v") == doctest::Approx(1 - std::exp(-0.2 * k)).epsilon(1e-8));
  }
  double v1 = 1 - std::exp(-2.0);
  sim.setInput("u", -1);
  CHECK(sim.output("drive") == -1);
  CHECK(sim.output("v") == doctest::Approx(v1).epsilon(1e-8)); // a C state does not jump
  sim.advance(1.75);
  CHECK(sim.output("v") == doctest::Approx(-1 + (v1 + 1) * std::exp(-2 * 0.75)).epsilon(1e-8));
  CHECK(sim.state("cap.q") == doctest::Approx(0.5 * sim.output("v")).epsilon(1e-12));
  CHECK(sim.steps() > 0);
  // A run all at once starts from the input's value as set.
  hbg::Simulation once(model, tight());
  once.setInput("u", 2);
  once.options().tEnd = 1;
  hbg::Result r = once.run();
  REQUIRE(r.ok());
  CHECK(r.at("v").back() == doctest::Approx(2 * (1 - std::exp(-2.0))).epsilon(1e-8));
}

TEST_CASE("stepping through a model agrees with one run") {
  hbg::Model model = hbg::Compiler().compileString(kDriven);
  hbg::SimulationOptions o = tight();
  o.tEnd = 2;
  hbg::Simulation whole(model, o);
  whole.setInput("u", 1);
  hbg::Result r = whole.run();
  REQUIRE(r.ok());
  hbg::Simulation steps(model, o);
  steps.setInput("u", 1);
  steps.start();
  for (int k = 1; k <= 100; ++k)
    steps.advance(0.02 * k);
  CHECK(steps.time() == 2);
  CHECK(steps.output("v") == doctest::Approx(r.at("v").back()).epsilon(1e-9));
  CHECK(steps.output("v") == doctest::Approx(1 - std::exp(-4.0)).epsilon(1e-8));
  // Starting again starts over.
  steps.start();
  CHECK(steps.time() == 0);
  CHECK(steps.output("v") == 0);
}

TEST_CASE("inputs switch junctions between steps; guards inside a step too") {
  hbg::Model model = hbg::Compiler().compileString(kSwitched, "switched.hbg");
  hbg::Simulation sim(model, tight());
  sim.start();
  CHECK(sim.mode() == "s.j=open");
  sim.advance(0.5);
  CHECK(sim.output("v") == 0);
  CHECK(sim.events().empty());
  sim.setInput("close", 1); // an event at t = 0.5
  CHECK(sim.mode() == "s.j=closed");
  REQUIRE(sim.events().size() == 1);
  CHECK(sim.events()[0].time == 0.5);
  CHECK(sim.output("i") == doctest::Approx(1.0)); // (V - v) / R at once
  sim.advance(1.5);
  CHECK(sim.output("v") == doctest::Approx(1 - std::exp(-2.0)).epsilon(1e-8));
  sim.setInput("close", 0);
  CHECK(sim.mode() == "s.j=open");
  CHECK(sim.events().size() == 2);
  double held = sim.output("v");
  sim.advance(3);
  CHECK(sim.output("v") == doctest::Approx(held).epsilon(1e-12));
  CHECK(sim.output("i") == 0);
}

TEST_CASE("step API errors") {
  hbg::Model model = hbg::Compiler().compileString(kDriven);
  hbg::Simulation sim(model);
  CHECK_THROWS_AS(sim.time(), std::logic_error);
  // Values computed from a parameter array need all of it.
  CHECK_THROWS_AS(model.initialState({}), std::invalid_argument);
  CHECK_THROWS_AS(model.nominalState({1.0}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim.setInput("uu", 1), "model `Driven` has no input `uu`; did you mean `u`?",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sim.setParameter("u", 1),
                       "`u` is an input of model `Driven`: setInput sets it",
                       std::invalid_argument);
  sim.start();
  sim.advance(0.5);
  // A time before the run's is refused, and the run goes on.
  CHECK_THROWS_WITH_AS(
      sim.advance(0.25),
      "model `Driven` at t = 0.5: cannot advance to t = 0.25, before the run's time",
      std::invalid_argument);
  CHECK_THROWS_AS(sim.advance(std::nan("")), std::invalid_argument);
  CHECK(sim.time() == 0.5);
  sim.advance(1);
  CHECK(sim.time() == 1);
  CHECK_THROWS_AS(sim.output("nope"), std::invalid_argument);
  CHECK_THROWS_AS(sim.state("nope"), std::invalid_argument);

  // A run-time failure names what failed and the time; the state stays
  // at the last step before it.
  hbg::Model sq = hbg::Compiler().compileString(R"(
model Root {
    input u = 1;
    MSe src(u);
    R res(1);
    C cap(e = sqrt(q)) { q0 = 1; }
    1 loop;
    bond src -> loop; bond loop -> res; bond loop -> cap;
    output v = cap.e;
}
)");
  hbg::Simulation fails(sq);
  fails.start();
  fails.setInput("u", -1);
  std::string what;
  std::optional<hbg::RunDiagnostic> failure;
  try {
    fails.advance(10);
  } catch (const hbg::SimulationError &e) {
    what = e.what();
    failure = e.diagnostic();
  }
  // q' = -1 - sqrt(q) from q = 1 empties the capacitor at t = 2 (1 - ln 2).
  REQUIRE(failure);
  CHECK(failure->kind == hbg::DiagKind::RunDerivativeNotFinite);
  CHECK(failure->element == "cap.q");
  CHECK(failure->time == doctest::Approx(2 * (1 - std::log(2.0))).epsilon(1e-5));
  CHECK(what == failure->text("Root"));
  CHECK(what.find("model `Root` at t = 0.6137") == 0);
  CHECK(what.find(": the derivative of state `cap.q` is not finite") != std::string::npos);
  CHECK(fails.time() == doctest::Approx(2 * (1 - std::log(2.0))).epsilon(1e-5));
  // The failure sticks: later calls throw it again, the state stays.
  CHECK_THROWS_WITH_AS(fails.advance(20), what.c_str(), hbg::SimulationError);
  CHECK(fails.time() == doctest::Approx(2 * (1 - std::log(2.0))).epsilon(1e-5));
}
