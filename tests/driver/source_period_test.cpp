//===- tests/driver/source_period_test.cpp - Model::sourcePeriod ----------===//
//
// The common period of a model's periodic functions of time, for models
// periodic in time (sin, cos, pwm, pulse, saw, mod, in sources, signals
// and guards) and models that are not (a ramp, a late step, periods with
// no common multiple, no time at all).
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

namespace {

hbg::Model::SourcePeriod periodOf(const std::string &text,
                                  const std::map<std::string, double> &overrides = {}) {
  hbg::Model model = hbg::Compiler().compileString(text, "period.hbg");
  return model.sourcePeriod(model.parameterValues(overrides));
}

/// An RC circuit driven by the effort `source`, with `more` declarations.
std::string driven(const std::string &source, const std::string &more = "") {
  return "model P {\n" + more + "  MSe v(" + source +
         ");\n  R r(1); C c(1e-3) { q0 = 0; }\n  1 j;\n"
         "  bond v -> j; bond j -> r; bond j -> c;\n  output c.q;\n}\n";
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); }

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// `p` has no period, and its reason says `part`.
void notPeriodic(const hbg::Model::SourcePeriod &p, const std::string &part) {
  INFO("why: ", p.why);
  CHECK(p.period == 0);
  CHECK(contains(p.why, part));
}

} // namespace

TEST_CASE("sin(time) has period 2 pi") {
  hbg::Model::SourcePeriod p = periodOf(driven("sin(time)"));
  CHECK(near(p.period, 2 * M_PI));
  CHECK(p.why.empty());
  REQUIRE(p.sources.size() == 1);
  CHECK(p.sources[0].first == "sin(time)");
  CHECK(near(p.sources[0].second, 2 * M_PI));
}

TEST_CASE("pwm(f, D) has period 1 / f") {
  hbg::Model::SourcePeriod p = periodOf(driven("10 * pwm(f, 0.3)", "  parameter f = 250;\n"));
  CHECK(near(p.period, 1.0 / 250));
  CHECK(p.why.empty());
}

TEST_CASE("saw, pulse and mod of time are periodic") {
  CHECK(near(periodOf(driven("saw(0.3)")).period, 0.3));
  CHECK(near(periodOf(driven("pulse(0, 0.1, 0.4)")).period, 0.4));
  CHECK(near(periodOf(driven("mod(50 * time, 1)")).period, 0.02));
  // A pulse train starting later is periodic only from then on.
  notPeriodic(periodOf(driven("pulse(0.5, 0.1, 0.4)")), "at t = 0.5");
}

TEST_CASE("a floor of time alone is a staircase, not periodic") {
  notPeriodic(periodOf(driven("floor(10 * time)")), "`floor(10 * time)` (MSe `v`)");
}

TEST_CASE("sources at 1 kHz and 3 kHz have the period 1 ms") {
  hbg::Model::SourcePeriod p =
      periodOf(driven("sin(2 * pi * 1000 * time) + cos(2 * pi * 3000 * time)"));
  CHECK(near(p.period, 1e-3));
  CHECK(p.sources.size() == 2);
}

TEST_CASE("sources at 1 kHz and 1.5 kHz have the period 2 ms") {
  hbg::Model::SourcePeriod p = periodOf(driven("sin(2 * pi * 1000 * time) + pwm(1500, 0.5)"));
  CHECK(near(p.period, 2e-3));
}

TEST_CASE("sources at 1 Hz and sqrt(2) Hz have no common period") {
  hbg::Model::SourcePeriod p =
      periodOf(driven("sin(2 * pi * time) + sin(2 * pi * sqrt(2) * time)"));
  CHECK(p.period == 0);
  CHECK(p.sources.size() == 2);
  CHECK(near(p.sources[0].second, 1));
  CHECK(near(p.sources[1].second, 1 / std::sqrt(2.0)));
  CHECK(contains(p.why, "`" + p.sources[0].first + "` (1 s)"));
  CHECK(contains(p.why, "`" + p.sources[1].first + "` (0.7071"));
  CHECK(contains(p.why, "no common multiple"));
}

TEST_CASE("a ramp is not periodic, and the message names it") {
  hbg::Model::SourcePeriod p = periodOf(driven("ramp", "  signal ramp = 2 * time;\n"));
  CHECK(p.period == 0);
  CHECK(contains(p.why, "`ramp` (MSe `v`)"));
  hbg::Model::SourcePeriod out = periodOf(R"(model P {
    Se v(1); R r(1); C c(1) { q0 = 0; }
    1 j; bond v -> j; bond j -> r; bond j -> c;
    output c.q, clock = time;
  })");
  CHECK(out.period == 0);
  CHECK(contains(out.why, "`time` (output `clock`)"));
  notPeriodic(periodOf(driven("sin(time) * exp(-time)")), "`exp(-time)`");
}

TEST_CASE("a step after the start is not periodic; one at the start is constant") {
  notPeriodic(periodOf(driven("sin(time) + step(1)")), "at t = 1,");
  hbg::Model::SourcePeriod early = periodOf(driven("sin(time) + step(0)"));
  CHECK(near(early.period, 2 * M_PI));
}

TEST_CASE("a rate of change in time that depends on the state is not periodic") {
  notPeriodic(periodOf(driven("sin(c.q * time)")), "depends on the model's state");
  // A phase that depends on the state is periodic in time.
  CHECK(near(periodOf(driven("sin(2 * time + c.q)")).period, M_PI));
}

TEST_CASE("a model without time has no period") {
  hbg::Model::SourcePeriod p = periodOf(driven("5"));
  CHECK(p.period == 0);
  CHECK(p.why == "no source of the model depends on time");
  CHECK(p.sources.empty());
}

TEST_CASE("the period follows the parameter values given") {
  std::string text = driven("A * cos(2 * pi * f * time + phi)",
                            "  parameter A = 2;\n  parameter f = 50;\n  parameter phi = 0.1;\n");
  CHECK(near(periodOf(text).period, 0.02));
  CHECK(near(periodOf(text, {{"f", 60}}).period, 1.0 / 60));
  // An input is a constant for this purpose.
  hbg::Model::SourcePeriod in =
      periodOf(driven("u * sin(w * time)", "  parameter w = 4;\n  input u;\n"));
  CHECK(near(in.period, M_PI / 2));
}

TEST_CASE("a switched model whose only function of time is in a guard") {
  hbg::Model::SourcePeriod p = periodOf(R"(model G {
    parameter f = 50;
    Se s(1); R r(1); C c(1e-3) { q0 = 0; }
    signal phase = sin(2 * pi * f * time);
    1 sw switched { off initial; on;
      off -> on when (phase > 0.5)+;
      on -> off when (phase < 0.5)+; }
    bond s -> sw; bond sw -> r; bond sw -> c;
    output c.q;
  })");
  CHECK(near(p.period, 0.02));
  REQUIRE(p.sources.size() == 1);
  CHECK(contains(p.sources[0].first, "sin("));
  hbg::Model::SourcePeriod late = periodOf(R"(model G {
    Se s(1); R r(1); C c(1e-3) { q0 = 0; }
    1 sw switched { off initial; on; off -> on when (time > 2)+; }
    bond s -> sw; bond sw -> r; bond sw -> c;
    output c.q;
  })");
  CHECK(late.period == 0);
  CHECK(contains(late.why, "a guard of junction `sw`"));
  CHECK(contains(late.why, "at t = 2,"));
}

TEST_CASE("the buck converter's gate has the period 1 / fs, its modes not analysed") {
  hbg::Model buck = hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/buck.hbg");
  hbg::Model::SourcePeriod p = buck.sourcePeriod(buck.parameterValues());
  CHECK(near(p.period, 1e-4));
  CHECK(p.why.empty());
  CHECK(buck.modesCompiled() == 1);
  CHECK(near(buck.sourcePeriod(buck.parameterValues({{"fs", 20000}})).period, 5e-5));
}
