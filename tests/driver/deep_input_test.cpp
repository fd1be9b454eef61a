//===- tests/driver/deep_input_test.cpp - Long inputs do not recurse ------===//
//
// Chains of operators at one level are as deep as they are long in the
// AST and the expression DAG; every pass walks them with loops.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

namespace {
/// Output `y` at t = 1 of `text`, simulated at a tight tolerance.
double yAtOne(const std::string &text) {
  hbg::Model model = hbg::Compiler().compileString(text, "deep.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 1;
  opts.rtol = 1e-10;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r.at("y").back();
}
} // namespace

TEST_CASE("a parameter default of 300,000 terms compiles and sums exactly") {
  std::string sum = "1";
  double exact = 1;
  for (int i = 1; i < 300000; ++i) {
    sum += (i % 3 ? " + " : " - ") + std::to_string(i % 7 + 1);
    exact += (i % 3 ? 1 : -1) * (i % 7 + 1);
  }
  hbg::Model model = hbg::Compiler().compileString(
      "model M {\n  parameter k = " + sum +
          ";\n  Se v(1); R r(k); C c(1) { q0 = 0; } 1 s;\n  bond v -> s; bond s -> r; bond "
          "s -> c;\n}\n",
      "sum.hbg");
  CHECK(model.parameterValues()[0] == exact);
}

TEST_CASE("an output summing 5,000 terms of a state simulates to its closed form") {
  // y = c.e (1 + 2 + ... + 5000), c.e = 1 - exp(-t).
  std::string sum = "c.e * 1";
  for (int i = 2; i <= 5000; ++i)
    sum += " + c.e * " + std::to_string(i);
  double y = yAtOne("model M {\n  Se v(1); R r(1); C c(1) { q0 = 0; } 1 s;\n  bond v -> s; "
                    "bond s -> r; bond s -> c;\n  output y = " +
                    sum + ";\n}\n");
  double want = 5000.0 * 5001 / 2 * (1 - std::exp(-1.0));
  CHECK(y == doctest::Approx(want).epsilon(1e-8));
}

TEST_CASE("a chain of 20,000 signals compiles and simulates") {
  // s0 = c.e, s_k = s_(k-1) + 1: y = 1 - exp(-t) + 20000 at t = 1.
  const int n = 20000;
  std::string text = "model Chain {\n  Se v(1); R r(1); C c(1) { q0 = 0; } 1 s;\n"
                     "  bond v -> s; bond s -> r; bond s -> c;\n  signal s0 = c.e;\n";
  for (int i = 1; i <= n; ++i)
    text += "  signal s" + std::to_string(i) + " = s" + std::to_string(i - 1) + " + 1;\n";
  text += "  output y = s" + std::to_string(n) + ";\n}\n";
  CHECK(yAtOne(text) == doctest::Approx(n + 1 - std::exp(-1.0)).epsilon(1e-12));
}
