//===- tests/driver/steady_test.cpp - Model::steady -----------------------===//
//
// The periodic steady state through the embedding API: the buck converter
// of tests/steady against its exact steady state and the closed form of
// its mean output, the period given or from the sources, and the errors
// (no period, no steady state, unknown names); its power balance, and its
// small-signal response to the duty cycle against the LC filter's.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <map>
#include <string>

namespace {

const std::string kModels = HBG_SOURCE_DIR "/tests/steady/models/";
const std::string kInputs = HBG_SOURCE_DIR "/tests/steady/Inputs/";

bool near(double a, double b, double tol) { return std::abs(a - b) <= tol * std::abs(b); }

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("steady: the buck in continuous conduction against its exact steady state") {
  hbg::Model model = hbg::Compiler().compileFile(kModels + "buck_ccm.hbg");
  hbg::SteadyState s = model.steady();
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(s.period == doctest::Approx(5e-5).epsilon(1e-15));
  CHECK(s.residual <= 1e-11);
  CHECK(!s.iterations.empty());
  // The exact periodic steady state (matrix exponentials per switch
  // state), as `/usr/bin/python3 tests/steady/reference.py buck_ccm`
  // prints it.
  struct Expected {
    const char *output;
    double mean, rms, min, max;
  };
  for (const Expected &e : {Expected{"vout", 4.799999999999999, 4.80000111132967,
                                     4.795197174407911, 4.804202752628431},
                            Expected{"il", 0.4800000000000008, 0.48179885126584876,
                                     0.40796406611719427, 0.552036106097062}}) {
    INFO(e.output);
    const hbg::OutputFigures &f = s.figuresOf(e.output);
    CHECK(near(f.mean, e.mean, 1e-10));
    CHECK(near(f.rms, e.rms, 1e-10));
    CHECK(near(f.min, e.min, 1e-10));
    CHECK(near(f.max, e.max, 1e-10));
    CHECK(near(f.peakToPeak(), e.max - e.min, 1e-8));
  }
  // The switch closes at the period's start and opens at D T = 20 us.
  REQUIRE(s.modes.size() == 2);
  CHECK(s.modes[0] == "switch.j=closed, diode.j=blocking");
  CHECK(s.modes[1] == "switch.j=open, diode.j=conducting");
  CHECK(s.modePhases[0] == 0);
  CHECK(near(s.modePhases[1], 2e-5, 1e-9));
  // The LC filter's damped pair: |mu| = 0.97530991202833 by the reference.
  REQUIRE(!s.multipliers.empty());
  CHECK(near(std::abs(s.multipliers[0]), 0.9753099120283326, 1e-8));
  // One period of rows, time from 0 to T, the columns by name.
  REQUIRE(s.rows.names == std::vector<std::string>{"time", "vout", "il"});
  const std::vector<double> &time = s.rows.at("time");
  REQUIRE(time.size() >= 1001);
  CHECK(time.front() == 0);
  CHECK(near(time.back(), 5e-5, 1e-12));
  CHECK(s.state.size() == model.stateNames().size());
  CHECK_THROWS_AS((void)s.figuresOf("vot"), std::out_of_range);
}

TEST_CASE("steady: the mean output is D Vin and D Vin / R whatever the duty cycle and load") {
  hbg::Model model = hbg::Compiler().compileFile(kModels + "buck_ccm.hbg");
  for (double D : {0.25, 0.6})
    for (double R : {5.0, 20.0}) {
      INFO("D = " << D << ", R = " << R);
      hbg::SteadyState s = model.steady({{"D", D}, {"R", R}, {"Vin", 24}});
      REQUIRE_MESSAGE(s.ok(), s.error);
      CHECK(near(s.figuresOf("vout").mean, D * 24, 1e-10));
      CHECK(near(s.figuresOf("il").mean, D * 24 / R, 1e-10));
    }
}

TEST_CASE("steady: options: the period given, the rows, the integration's settings") {
  hbg::Model model = hbg::Compiler().compileFile(kModels + "buck_ccm.hbg");
  hbg::SteadyOptions o;
  o.period = 2 / 20e3; // two of the sources' periods: the same steady state
  o.rowsPerPeriod = 10;
  o.simulation = model.experiment().apply();
  o.simulation->method = hbg::runtime::Method::Rosenbrock;
  o.rtol = 1e-11;
  hbg::SteadyState s = model.steady({}, o);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(s.period == 1e-4);
  CHECK(s.rows.at("time").size() < 100);
  CHECK(near(s.figuresOf("vout").mean, 4.8, 1e-9));
  CHECK(s.modes.size() == 4);
}

TEST_CASE("steady: failures are in the result, mistakes throw") {
  hbg::Compiler compiler;
  // Nothing periodic: no period, and why.
  hbg::Model constant = compiler.compileFile(kInputs + "no_time.hbg");
  hbg::SteadyState s = constant.steady();
  CHECK(!s.ok());
  CHECK(s.error == "model `RcConstant`: no period: no source of the model depends on time; "
                   "give one with --period");
  REQUIRE(s.failure);
  CHECK(s.failure->kind == hbg::DiagKind::SteadyNoPeriod);
  CHECK(s.figures.empty());
  CHECK_THROWS_AS((void)s.figuresOf("v"), std::out_of_range);
  // With a period given, the constant supply's steady state is its DC one.
  hbg::SteadyOptions o;
  o.period = 1e-3;
  s = constant.steady({}, o);
  REQUIRE_MESSAGE(s.ok(), s.error);
  CHECK(near(s.figuresOf("v").mean, 5, 1e-9));

  // A capacitor that gains a charge every period: no steady state, named
  // by its state, with the iteration that found it.
  hbg::Model integrator = compiler.compileFile(kInputs + "integrator.hbg");
  s = integrator.steady();
  CHECK(!s.ok());
  CHECK(contains(s.error, "model `ChargedCapacitor`: no periodic steady state: state `cap.c.q`"));
  REQUIRE(s.failure);
  CHECK(s.failure->kind == hbg::DiagKind::SteadyNoSteadyState);
  CHECK(s.iterations.size() == 1);

  // A misspelt name is the caller's mistake.
  hbg::Model buck = compiler.compileFile(kModels + "buck_ccm.hbg");
  try {
    (void)buck.steady({{"Dd", 0.5}});
    FAIL("an unknown parameter was accepted");
  } catch (const std::invalid_argument &e) {
    CHECK(std::string(e.what()) ==
          "model `BuckCcm` has no parameter or input `Dd`; did you mean `D`?");
  }
}

TEST_CASE("steady: the ideal buck's power balance: the load takes what the supply gives") {
  hbg::Model model = hbg::Compiler().compileFile(kModels + "buck_ccm.hbg");
  hbg::SteadyState s = model.steady();
  REQUIRE_MESSAGE(s.ok(), s.error);
  const hbg::PowerFigures &f = s.losses;
  REQUIRE(f.elements.size() == f.mean.size());
  double load = std::nan(""), supply = std::nan("");
  for (std::size_t i = 0; i < f.elements.size(); ++i) {
    if (f.elements[i].path == "load.r") {
      CHECK(f.elements[i].kind == "R");
      load = f.mean[i];
    }
    if (f.elements[i].path == "supply.s") {
      CHECK(f.elements[i].kind == "MSe");
      supply = f.mean[i];
    }
  }
  // The load's mean power is the mean of vout^2 / R: rms(vout)^2 / R.
  double rms = s.figuresOf("vout").rms;
  CHECK(near(load, rms * rms / 10, 1e-10));
  // Ideal switches lose nothing: the supply delivers the same.
  CHECK(near(supply, load, 1e-10));
  CHECK(std::abs(f.eventLoss) <= 1e-10 * load);
  CHECK(near(s.efficiency("load.r", "supply.s"), 1, 1e-10));
  CHECK_THROWS_AS((void)s.efficiency("load.x", "supply.s"), std::invalid_argument);
  // Without the measurement, no figures.
  hbg::SteadyOptions o;
  o.losses = false;
  CHECK(model.steady({}, o).losses.elements.empty());
}

TEST_CASE("frequencyResponse: the buck's response to the duty cycle is the LC filter's") {
  hbg::Model model = hbg::Compiler().compileFile(kModels + "buck_ccm.hbg");
  const std::vector<double> frequencies{10, 100};
  hbg::FrequencyResponse r = model.frequencyResponse("D", frequencies);
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.input == "D");
  CHECK(r.period == doctest::Approx(5e-5).epsilon(1e-15));
  REQUIRE(r.outputs == std::vector<std::string>{"vout", "il"});
  const double Vin = 12, L = 1e-3, C = 1e-4, R = 10, pi = 3.14159265358979323846;
  const std::vector<std::complex<double>> &vout = r.at("vout");
  REQUIRE(vout.size() == 2);
  for (std::size_t k = 0; k < frequencies.size(); ++k) {
    INFO("f = " << frequencies[k]);
    std::complex<double> s(0, 2 * pi * frequencies[k]);
    std::complex<double> expected = Vin / (1.0 + s * L / R + s * s * L * C);
    CHECK(std::abs(vout[k] - expected) <= 1e-6 * std::abs(expected));
  }
  CHECK_THROWS_AS((void)r.at("vot"), std::out_of_range);
}

TEST_CASE("frequencyResponse: failures are in the result, mistakes throw") {
  hbg::Compiler compiler;
  hbg::Model buck = compiler.compileFile(kModels + "buck_ccm.hbg");
  try {
    (void)buck.frequencyResponse("Duty", {10});
    FAIL("an unknown input was accepted");
  } catch (const std::invalid_argument &e) {
    CHECK(contains(e.what(), "model `BuckCcm` has no parameter or input `Duty`"));
  }
  CHECK_THROWS_AS((void)buck.frequencyResponse("D", {10}, {{"Dd", 0.5}}), std::invalid_argument);
  CHECK_THROWS_AS((void)buck.frequencyResponse("D", {-1}), std::invalid_argument);
  // No steady state to take the response around: the result says so.
  hbg::Model integrator = compiler.compileFile(kInputs + "integrator.hbg");
  hbg::FrequencyResponse r = integrator.frequencyResponse("f", {10});
  CHECK(!r.ok());
  CHECK(contains(r.error, "model `ChargedCapacitor`: no periodic steady state"));
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::SteadyNoSteadyState);
  CHECK(r.response.empty());
}
