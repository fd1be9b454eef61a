// Discrete values through the step API: a buck converter whose duty comes
// from a PI controller sampled in the model, against the same plant with
// the duty as an input that a controller outside sets at each tick.

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The converter of models/buck_pi.hbg, with its duty an input.
const char *kDriven = R"(
model DrivenBuck {
    parameter Vin = 12;
    parameter fs = 20e3;
    input D = 0;
    MSe bridge(if saw(1 / fs) < D then Vin else 0);
    I choke(100e-6);
    C cap(100e-6);
    R load(5);
    1 loop;
    0 out;
    bond bridge -> loop;
    bond loop -> choke;
    bond loop -> out;
    bond out -> cap;
    bond out -> load;
    output vout = cap.e, iL = choke.f;
}
)";

/// The time of tick k of a clock of period ts from 0, as the run lands
/// on it: the first double whose phase t / ts reaches k.
double tickTime(int k, double ts) {
  double t = k * ts;
  while (t / ts < k)
    t = std::nextafter(t, INFINITY);
  while (k > 0 && std::nextafter(t, -INFINITY) / ts >= k)
    t = std::nextafter(t, -INFINITY);
  return t;
}

} // namespace

TEST_CASE("a sampled controller in the model and the same one through the step API") {
  hbg::Model inModel =
      hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/tests/sampled/models/buck_pi.hbg");
  hbg::Model driven = hbg::Compiler().compileString(kDriven, "driven.hbg");
  const double fs = 20e3, ts = 1 / fs, vref = 5, kp = 0.02, ki = 100;
  const int periods = 200;

  // The model's own run, read at each tick: the duty it set there.
  hbg::Simulation a(inModel);
  a.start();
  std::vector<double> duty, va;
  for (int k = 0; k < periods; ++k) {
    a.advance(tickTime(k, ts));
    duty.push_back(a.output("D"));
    va.push_back(a.output("vout"));
  }

  // The same duties set through the step API: the plant's run is the
  // model's, bit for bit.
  {
    hbg::Simulation b(driven);
    b.start();
    for (int k = 0; k < periods; ++k) {
      b.advance(tickTime(k, ts));
      REQUIRE(b.output("vout") == va[std::size_t(k)]);
      b.setInput("D", duty[std::size_t(k)]);
    }
  }

  // The controller written out here: its duties are the model's to
  // rounding, and so is the output voltage.
  hbg::Simulation c(driven);
  c.start();
  double xi = 0, worstD = 0, worstV = 0;
  for (int k = 0; k < periods; ++k) {
    c.advance(tickTime(k, ts));
    double v = c.output("vout");
    double e = vref - v;
    double d = std::min(std::max(kp * e + xi + ki / fs * e, 0.0), 1.0);
    xi = xi + ki / fs * e;
    worstD = std::max(worstD, std::abs(d - duty[std::size_t(k)]));
    worstV = std::max(worstV, std::abs(v - va[std::size_t(k)]));
    c.setInput("D", d);
  }
  CHECK(worstD < 1e-12);
  CHECK(worstV < 1e-9);
  // The loop settles at the reference.
  CHECK(std::abs(va.back() - vref) < 0.1);
}

TEST_CASE("a run starts from the initial discrete values every time") {
  hbg::Model m = hbg::Compiler().compileString(R"(
model Count {
    discrete n(10) when sample(1) = n + 1;
    signal x = integral(n);
    output n, x;
}
)",
                                               "count.hbg");
  hbg::SimulationOptions o;
  o.tEnd = 2.5;
  o.dtOut = 0.5;
  for (int run = 0; run < 2; ++run) {
    hbg::Simulation sim(m, o);
    hbg::Result r = sim.run();
    REQUIRE(r.ok());
    // Ticks at 0, 1, 2: n = 11, 12, 13; x integrates n.
    CHECK(r.at("n").back() == 13);
    CHECK(r.at("x").back() == doctest::Approx(11 + 12 + 0.5 * 13).epsilon(1e-9));
  }
}

TEST_CASE("the event log carries the discrete values before and after each tick") {
  hbg::Model m = hbg::Compiler().compileString(R"(
model Count {
    discrete n(10) when sample(1) = n + 1;
    discrete twice(0) when sample(1) = 2 * n;
    signal x = integral(n);
    output x;
}
)",
                                               "count.hbg");
  hbg::SimulationOptions o;
  o.tEnd = 3.5;
  hbg::Result r = hbg::Simulation(m, o).run();
  REQUIRE(r.ok());
  CHECK(r.discreteNames == std::vector<std::string>{"n", "twice"});
  // The tick at 0 is held as the run starts; ticks 1, 2, 3 are events,
  // each updating both from the values before it.
  REQUIRE(r.events.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    double n = 11 + double(k);
    CHECK(r.events[k].time == doctest::Approx(k + 1).epsilon(1e-12));
    CHECK(r.events[k].discreteBefore == std::vector<double>{n, 2 * (n - 1)});
    CHECK(r.events[k].discreteAfter == std::vector<double>{n + 1, 2 * n});
  }
  std::ostringstream csv;
  r.writeEventsCsv(csv);
  CHECK(csv.str().rfind("event,time,phase,mode,transitions,energy,removed,x.integral,n,twice,x\n", 0) == 0);
  CHECK(csv.str().find(",before,\"\",\"sample(1): branch 0 -> 1\",,,11,11,20,11\n") !=
        std::string::npos);
}

TEST_CASE("discrete values and their clocks are reported by sema") {
  hbg::Compiler c;
  CHECK_THROWS_WITH_AS(c.compileString("model M { discrete x when 1 = 2; output x; }", "m.hbg"),
                       doctest::Contains("is written `sample(period)`"), hbg::CompileError);
}
