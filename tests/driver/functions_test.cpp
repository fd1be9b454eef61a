//===- tests/driver/functions_test.cpp - The language's functions ---------===//
//
// pi, floor, ceil, mod, if-then-else, step, pulse, saw and pwm, each
// checked against a closed form: of parameters (folded when the model is
// compiled), of time (time events at the exact instants), and of states
// (state events, located where the argument crosses).
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

hbg::Result run(const std::string &text, double tEnd, double dtOut = 0) {
  hbg::Model model = hbg::Compiler().compileString(text, "functions.hbg");
  hbg::SimulationOptions o;
  o.tEnd = tEnd;
  o.dtOut = dtOut;
  o.rtol = 1e-10;
  o.method = hbg::runtime::Method::DormandPrince;
  hbg::Result r = hbg::Simulation(model, o).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

/// A model that integrates `input` (a signal of time) into `x`, with a
/// capacitor to give it a bond graph.
std::string integrating(const std::string &input, const std::string &more = "") {
  return "model F {\n" + more +
         "  C c(1) { q0 = 0; }\n  Sf s(0);\n  bond s -> c;\n"
         "  signal u = " + input + ";\n  signal x = integral(u);\n  output u, x;\n}\n";
}

/// The event times of a run.
std::vector<double> eventTimes(const hbg::Result &r) {
  std::vector<double> t;
  for (const hbg::Event &e : r.events)
    t.push_back(e.time);
  return t;
}

/// True when `t` is within a few doubles of `exact`: time events land on
/// the first double at which the comparison, as the code computes it,
/// changes.
bool atInstant(double t, double exact) {
  return std::abs(t - exact) <= 4 * std::numeric_limits<double>::epsilon() * std::max(1.0, exact);
}

} // namespace

TEST_CASE("functions of parameters are folded: pi, floor, ceil, mod, if") {
  hbg::Model m = hbg::Compiler().compileString(R"(model P {
      parameter a = 2 * pi;
      parameter f = floor(-2.5) + 10 * ceil(2.1);
      parameter r = mod(7.5, 2) + 10 * mod(-1, 3);
      parameter s = if a > 6 and not f < 0 then 1 else 2;
      parameter e = if f >= 28 then 1 else 0;
      C c(1) { q0 = a + f + r + s + e; }
      Sf src(0);
      bond src -> c;
      output c.q;
  })");
  std::vector<double> p = m.parameterValues();
  CHECK(p[0] == 2 * 3.141592653589793);
  CHECK(p[1] == -3 + 30);
  CHECK(p[2] == 1.5 + 20);
  CHECK(p[3] == 1);
  CHECK(p[4] == 0); // 27 >= 28 is false
  // A declared `pi` comes first.
  hbg::Model shadow = hbg::Compiler().compileString(R"(model P {
      parameter pi = 3;
      C c(1) { q0 = pi; }
      Sf src(0);
      bond src -> c;
      output c.q;
  })");
  CHECK(shadow.parameterValues()[0] == 3);
}

TEST_CASE("step: an RC circuit switched on at t0") {
  // q = C V (1 - exp(-(t - t0) / (R C))) from t0 on, 0 before.
  hbg::Result r = run(R"(model S {
      MSe src(2 * step(1));
      R r(1);
      C c(0.5) { q0 = 0; }
      1 loop;
      bond src -> loop; bond loop -> r; bond loop -> c;
      output c.q;
  })",
                      3, 0.25);
  const std::vector<double> &t = r.at("time"), &q = r.at("c.q");
  for (std::size_t i = 0; i < t.size(); ++i) {
    double exact = t[i] < 1 || (t[i] == 1 && i + 1 < t.size() && t[i + 1] == 1)
                       ? 0
                       : 1 - std::exp(-(t[i] - 1) / 0.5);
    CHECK(q[i] == doctest::Approx(exact).epsilon(1e-8));
  }
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].time == 1.0); // a time event, on the instant
}

TEST_CASE("saw, pwm and pulse: integrals over whole and partial periods") {
  // saw(P) rises from 0 to 1 over each period: its integral over k whole
  // periods is k P / 2, plus r^2 / (2 P) for a part r of the next.
  double P = 0.3, T = 2.0;
  hbg::Result s = run(integrating("saw(0.3)"), T);
  double k = std::floor(T / P), rest = T - k * P;
  CHECK(s.at("x").back() == doctest::Approx(k * P / 2 + rest * rest / (2 * P)).epsilon(1e-9));
  std::vector<double> ts = eventTimes(s);
  REQUIRE(ts.size() == 6);
  for (std::size_t i = 0; i < ts.size(); ++i)
    CHECK(atInstant(ts[i], (double(i) + 1) * P));

  // pwm(f, D) is 1 for the first D / f of each period 1 / f: the
  // integral grows by D / f per period.
  hbg::Result w = run(integrating("pwm(4, 0.3)"), 1.1);
  CHECK(w.at("x").back() == doctest::Approx(4 * 0.3 / 4 + 0.075).epsilon(1e-9));
  std::vector<double> tw = eventTimes(w);
  REQUIRE(tw.size() == 9); // off at k/4 + 0.075 (5 of them), on at k/4 (4)
  for (std::size_t i = 0; i < tw.size(); ++i) {
    double exact = i % 2 == 0 ? 0.25 * double(i / 2) + 0.075 : 0.25 * double(i / 2 + 1);
    CHECK(atInstant(tw[i], exact));
  }

  // pulse(t0, width, period): nothing before t0, then width per period.
  hbg::Result p = run(integrating("pulse(0.5, 0.1, 0.4)"), 1.75);
  // Pulses start at 0.5, 0.9, 1.3, 1.7: 3 whole ones and 0.05 of the last.
  CHECK(p.at("x").back() == doctest::Approx(0.35).epsilon(1e-9));
}

TEST_CASE("if of a state: a source that stops when the charge reaches 1") {
  // q' = 2 while q < 1: q = min(2 t, 1), and it stays at 1 (the branch of
  // a condition whose argument does not move is the else branch).
  hbg::Result r = run(R"(model I {
      MSf src(if c.q < 1 then 2 else 0);
      C c(1) { q0 = 0; }
      bond src -> c;
      output c.q;
  })",
                      1, 0.1);
  const std::vector<double> &t = r.at("time"), &q = r.at("c.q");
  for (std::size_t i = 0; i < t.size(); ++i)
    CHECK(q[i] == doctest::Approx(std::min(2 * t[i], 1.0)).epsilon(1e-9));
  REQUIRE(!r.events.empty());
  CHECK(r.events[0].time == doctest::Approx(0.5).epsilon(1e-12));
}

TEST_CASE("floor of a state: a rate that steps up as the charge passes quarters") {
  // q' = floor(4 q) from q = 0.3: rate 1 to q = 0.5, 2 to 0.75, 3 to 1,
  // 4 to 1.25, then 5.
  hbg::Result r = run(R"(model Fl {
      MSf src(floor(4 * c.q));
      C c(1) { q0 = 0.3; }
      bond src -> c;
      output c.q, rate = floor(4 * c.q) + ceil(4 * c.q) - 2 * mod(4 * c.q, 1);
  })",
                      0.5, 0.5);
  double t1 = 0.2, t2 = t1 + 0.25 / 2, t3 = t2 + 0.25 / 3, t4 = t3 + 0.25 / 4;
  CHECK(r.at("c.q").back() == doctest::Approx(1.25 + 5 * (0.5 - t4)).epsilon(1e-9));
  std::vector<double> te = eventTimes(r);
  REQUIRE(te.size() == 4);
  CHECK(te[0] == doctest::Approx(t1).epsilon(1e-12));
  CHECK(te[1] == doctest::Approx(t2).epsilon(1e-12));
  CHECK(te[2] == doctest::Approx(t3).epsilon(1e-12));
  CHECK(te[3] == doctest::Approx(t4).epsilon(1e-12));
  // The output reads floor, ceil and mod of the same argument.
  double v = 4 * r.at("c.q").back();
  CHECK(r.at("rate").back() ==
        doctest::Approx(std::floor(v) + std::ceil(v) - 2 * (v - std::floor(v))).epsilon(1e-9));
}

TEST_CASE("table of time: linear interpolation, held beyond the ends, time events") {
  // u = 2 t on [0, 1], 2 - (t - 1) on [1, 3], 0 after: x = t^2, then
  // 1 + 2 (t - 1) - (t - 1)^2 / 2, then 3.
  hbg::Result r = run(integrating("table(time, [0, 1, 3], [0, 2, 0])"), 4, 0.5);
  const std::vector<double> &t = r.at("time"), &x = r.at("x"), &u = r.at("u");
  for (std::size_t i = 0; i < t.size(); ++i) {
    double s = t[i];
    double exact = s <= 1 ? s * s : s <= 3 ? 1 + 2 * (s - 1) - (s - 1) * (s - 1) / 2 : 3;
    double input = s <= 1 ? 2 * s : s <= 3 ? 2 - (s - 1) : 0;
    CHECK(x[i] == doctest::Approx(exact).epsilon(1e-9));
    CHECK(u[i] == doctest::Approx(input).epsilon(1e-12));
  }
  std::vector<double> te = eventTimes(r);
  REQUIRE(te.size() == 2);
  CHECK(te[0] == 1.0);
  CHECK(te[1] == 3.0);
  // Values may read parameters; breakpoints must be numbers.
  hbg::Result p = run(integrating("table(time, [0, 1], [0, 2 * k])", "  parameter k = 3;\n"), 2, 1);
  CHECK(p.at("x").back() == doctest::Approx(3 + 6).epsilon(1e-9)); // 6 t^2 / 2 to 1, then 6
}

TEST_CASE("table of a state: the charge's own rate by segments") {
  // q' = 1 + 2 q while q < 1 (q = (exp(2 t) - 1) / 2, reaching 1 at
  // ln(3) / 2), then 3 (the table's last value, held).
  hbg::Result r = run(R"(model T {
      MSf src(table(c.q, [0, 1, 2], [1, 3, 3]));
      C c(1) { q0 = 0; }
      bond src -> c;
      output c.q;
  })",
                      1, 0.25);
  double t1 = std::log(3.0) / 2;
  const std::vector<double> &t = r.at("time"), &q = r.at("c.q");
  for (std::size_t i = 0; i < t.size(); ++i) {
    double exact = t[i] <= t1 ? (std::exp(2 * t[i]) - 1) / 2 : 1 + 3 * (t[i] - t1);
    CHECK(q[i] == doctest::Approx(exact).epsilon(1e-8));
  }
  REQUIRE(r.events.size() >= 1);
  CHECK(r.events[0].time == doctest::Approx(t1).epsilon(1e-10));
}

TEST_CASE("table from a CSV file next to the model") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hbg_functions_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "data");
  {
    std::ofstream csv(dir / "data" / "road.csv");
    csv << "position, height\n# a bump from 1 to 2 m\n0, 0\n1, 0\r\n1.5, 0.1\n\n2,0\n";
    std::ofstream model(dir / "road.hbg");
    model << integrating("table(\"data/road.csv\", time)");
  }
  hbg::Model m = hbg::Compiler().compileFile((dir / "road.hbg").string());
  hbg::SimulationOptions o;
  o.tEnd = 3;
  o.dtOut = 1.5;
  o.rtol = 1e-10;
  hbg::Result r = hbg::Simulation(m, o).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  const std::vector<double> &t = r.at("time");
  std::size_t at = std::find(t.begin(), t.end(), 1.5) - t.begin();
  REQUIRE(at < t.size());
  CHECK(r.at("u")[at] == doctest::Approx(0.1).epsilon(1e-12)); // the top of the bump
  CHECK(r.at("x").back() == doctest::Approx(0.05).epsilon(1e-9)); // the bump: 1 m by 0.1 / 2
  fs::remove_all(dir);
}

TEST_CASE("a state at zero until an event, then a ramp, with no absolute tolerance") {
  // Its tolerance is rtol |x|, which shrinks with the step; the error
  // estimate's noise from rounding the stage times does not (the step
  // used to collapse at t = 1).
  for (const char *input : {"max(0, 0.2 * (time - 1))", "table(time, [0, 1, 2], [0, 0, 0.2])"}) {
    hbg::Model model = hbg::Compiler().compileString(integrating(input), "ramp.hbg");
    hbg::SimulationOptions o;
    o.tEnd = 3;
    o.rtol = 1e-10;
    o.method = hbg::runtime::Method::DormandPrince;
    hbg::Result r = hbg::Simulation(model, o).run();
    REQUIRE_MESSAGE(r.ok(), r.error);
    // max: 0.1 (t - 1)^2, 0.4 at t = 3; table: 0.1 (t - 1)^2 to t = 2,
    // then 0.2 per second.
    double exact = std::string(input).rfind("max", 0) == 0 ? 0.4 : 0.1 + 0.2;
    CHECK(r.at("x").back() == doctest::Approx(exact).epsilon(1e-9));
  }
}

TEST_CASE("functions: wrong argument counts and equality in if are errors") {
  auto error = [](const std::string &text) {
    try {
      hbg::Compiler().compileString(text, "bad.hbg");
    } catch (const hbg::CompileError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(integrating("pulse(1, 2)")).find("function `pulse` takes three arguments, 2 given") !=
        std::string::npos);
  CHECK(error(integrating("mod(1)")).find("function `mod` takes two arguments, 1 given") !=
        std::string::npos);
  CHECK(error(integrating("if time = 1 then 1 else 0")).find("cannot compare with `=`") !=
        std::string::npos);
  CHECK(error(integrating("flor(time)")).find("did you mean `floor`?") != std::string::npos);
}
