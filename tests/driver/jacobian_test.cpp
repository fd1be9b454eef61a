//===- tests/driver/jacobian_test.cpp - The JIT-compiled state Jacobian ---===//
//
// Model::jacobian against central differences of Model::rhs, on models
// that exercise each path: time-dependent sources (df/dt), a nonlinear
// loop solved by Newton's method (implicit differentiation), kinks, a
// linear loop solved in closed form, and a switched model's full state;
// and how often the stiff method evaluates and factorises it: once per
// mode entry where it is constant, every step where it is not.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "hbg/driver/Internal.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

/// Checks Model::jacobian at (t, x) against central differences of rhs,
/// entry by entry, relative to the largest entry of its row.
void checkAgainstDifferences(const hbg::Model &model, double t, const std::vector<double> &x,
                             double tol = 1e-6) {
  std::vector<double> p = model.parameterValues();
  std::size_t n = x.size();
  std::vector<double> jac(n * n), dfdt(n), plus(n), minus(n), y = x;
  model.jacobian(t, x.data(), p.data(), jac.data(), dfdt.data());
  std::vector<double> fd(n * n), fdt(n);
  for (std::size_t j = 0; j < n; ++j) {
    double h = 1e-6 * std::max(std::abs(x[j]), 1e-3);
    y[j] = x[j] + h;
    model.rhs(t, y.data(), p.data(), plus.data());
    y[j] = x[j] - h;
    model.rhs(t, y.data(), p.data(), minus.data());
    y[j] = x[j];
    for (std::size_t i = 0; i < n; ++i)
      fd[i * n + j] = (plus[i] - minus[i]) / (2 * h);
  }
  double ht = 1e-6 * std::max(std::abs(t), 1.0);
  model.rhs(t + ht, x.data(), p.data(), plus.data());
  model.rhs(t - ht, x.data(), p.data(), minus.data());
  for (std::size_t i = 0; i < n; ++i)
    fdt[i] = (plus[i] - minus[i]) / (2 * ht);
  for (std::size_t i = 0; i < n; ++i) {
    double scale = 1e-300;
    for (std::size_t j = 0; j < n; ++j)
      scale = std::max(scale, std::abs(fd[i * n + j]));
    for (std::size_t j = 0; j < n; ++j) {
      INFO("d " << model.stateNames()[i] << "' / d " << model.stateNames()[j]);
      CHECK(std::abs(jac[i * n + j] - fd[i * n + j]) <= tol * scale);
    }
    INFO("d " << model.stateNames()[i] << "' / dt");
    CHECK(std::abs(dfdt[i] - fdt[i]) <= tol * std::max(std::abs(fdt[i]), 1e-9));
  }
}

} // namespace

TEST_CASE("the Jacobian of an RLC driven by a sine, with its time derivative") {
  hbg::Model model = hbg::Compiler().compileString(R"(model Rlc {
    parameter w = 50;
    MSe v(3 * sin(w * time)); R r(2); I l(0.1) { p0 = 0; } C c(1e-3) { q0 = 0; }
    1 s; bond v -> s; bond s -> r; bond s -> l; bond s -> c;
  })", "rlc.hbg");
  checkAgainstDifferences(model, 0.3, {0.02, -1e-3});
}

TEST_CASE("the Jacobian through a nonlinear loop solved by Newton's method") {
  hbg::Model model =
      hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/diode_loop.hbg");
  REQUIRE(!hbg::driver::equations(model).unknowns.empty());
  // Capacitor voltages 0.5, 3 and 4.2 V: the diode off, conducting, hard on.
  for (double v : {0.5, 3.0, 4.2})
    checkAgainstDifferences(model, 0, {1e-4 * v}, 1e-5);
}

TEST_CASE("the Jacobian of two coupled nonlinear laws and a kink") {
  hbg::Model model = hbg::Compiler().compileString(R"(model Coupled {
    MSe v(2 + sin(time));
    R rs(1); R d(f = 1e-3 * (exp(e / 0.05) - 1));
    C c1(1e-2) { q0 = 0; } C c2(e = q / 1e-2 + 1e4 * q * q * q) { q0 = 0; }
    R friction(e = 0.1 * sign(f) + 0.5 * f);
    I m(1) { p0 = 0; }
    1 a; 0 n; 1 b;
    bond v -> a; bond a -> rs; bond a -> d; bond a -> n;
    bond n -> c1; bond n -> b; bond b -> c2; bond b -> m; bond b -> friction;
  })", "coupled.hbg");
  REQUIRE(!hbg::driver::equations(model).unknowns.empty());
  REQUIRE(!hbg::driver::equations(model).kinks.empty());
  checkAgainstDifferences(model, 0.7, {0.01, 0.004, 0.3}, 1e-5);
}

TEST_CASE("the Jacobian over a switched model's full state") {
  hbg::Model model =
      hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/bouncing_ball.hbg");
  std::vector<double> x = model.initialState(model.parameterValues());
  for (double &v : x)
    v += 0.1;
  checkAgainstDifferences(model, 0, x);
}

TEST_CASE("a Jacobian infinite where the right-hand side is not is differenced") {
  // e = sqrt(q) charged from zero through 1 ohm from 1 V: dq/dt = 1 - sqrt(q)
  // is finite at q = 0, its slope by q is not. The stiff method differences
  // that column. Closed form: t = -2 sqrt(q) - 2 ln(1 - sqrt(q)).
  hbg::Model model = hbg::Compiler().compileString(R"(model Root {
    Se v(1); R r(1); C c(e = sqrt(q)) { q0 = 0; nominal = 1; } 1 s;
    bond v -> s; bond s -> r; bond s -> c;
    output q = c.q;
  })", "root.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 2;
  opts.dtOut = 0.1;
  opts.rtol = 1e-8;
  opts.method = hbg::runtime::Method::Rosenbrock;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  const std::vector<double> &t = r.at("time"), &q = r.at("q");
  for (std::size_t k = 1; k < t.size(); ++k) {
    double s = std::sqrt(q[k]);
    CHECK(-2 * s - 2 * std::log(1 - s) == doctest::Approx(t[k]).epsilon(1e-6));
  }
}

TEST_CASE("a Jacobian that is not finite, nor its differences, stops the stiff method") {
  // e = -sqrt(-q) discharged from zero: dq/dt = -1 + sqrt(-q) is finite at
  // q = 0 and its slope is not; a difference step towards q > 0 leaves the
  // law's domain. dopri5 needs no Jacobian and runs (q goes negative).
  hbg::Model model = hbg::Compiler().compileString(R"(model Root {
    Se v(-1); R r(1); C c(e = -sqrt(-q)) { q0 = 0; } 1 s;
    bond v -> s; bond s -> r; bond s -> c;
    output q = c.q;
  })", "root.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.method = hbg::runtime::Method::Rosenbrock;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunJacobianNotFinite);
  CHECK(r.failure->element == "c.q");
  CHECK(r.error == "model `Root` at t = 0: the Jacobian of the derivative of state `c.q` is not "
                   "finite (the stiff method needs it; --method dopri5 does not)");
  CHECK(r.at("time").size() == 1); // the row at t = 0, kept
  opts.method = hbg::runtime::Method::DormandPrince;
  hbg::Result ok = hbg::Simulation(model, opts).run();
  CHECK_MESSAGE(ok.ok(), ok.error);
}

namespace {

/// A run of `source` with the Rosenbrock method to tEnd, sampled every
/// dtOut.
hbg::Result stiffRun(const char *source, double tEnd, double rtol = 1e-6, double dtOut = 0.1) {
  hbg::Model model = hbg::Compiler().compileString(source, "stiff.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  opts.dtOut = dtOut;
  opts.rtol = rtol;
  opts.method = hbg::runtime::Method::Rosenbrock;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

} // namespace

TEST_CASE("a linear mode driven by a sine keeps df/dx and evaluates df/dt each step") {
  // v' = (sin(w t) - v) / tau: v = (sin(w t) - w tau cos(w t) + w tau
  // exp(-t / tau)) / (1 + (w tau)^2). Checked at the end, a step's end:
  // between steps the dense output is of lower order here.
  const double w = 5, tau = 1e-4, tEnd = 2;
  hbg::Result r = stiffRun(R"(model SineRc {
    MSe u(sin(5 * time)); R r(1); C c(1e-4) { q0 = 0; }
    1 s; bond u -> s; bond s -> r; bond s -> c;
    output v = c.e;
  })", tEnd, 1e-8, tEnd);
  CHECK(r.jacobianCalls == r.steps);
  CHECK(r.factorisations < r.steps);
  double wt = w * tau;
  double exact =
      (std::sin(w * tEnd) - wt * std::cos(w * tEnd) + wt * std::exp(-tEnd / tau)) / (1 + wt * wt);
  CHECK(std::abs(r.at("v").back() - exact) < 1e-8);
}

TEST_CASE("a nonlinear mode has its Jacobian evaluated and factorised every step") {
  // RODAS4's order needs the exact Jacobian at each step's start.
  hbg::Result r = stiffRun(R"(model Cubic {
    Se v(1); R r(1e-3); C c(e = q + q^3) { q0 = 0; }
    1 s; bond v -> s; bond s -> r; bond s -> c;
    output q = c.q;
  })", 1);
  CHECK(r.jacobianCalls == r.steps);
  CHECK(r.factorisations == r.steps + r.rejectedSteps);
}

TEST_CASE("a kink's branch changed at an event renews the constant Jacobian") {
  // The resistance steps from 1 to 3 at t = 1 (the kink's branch, a
  // parameter of the Jacobian): q = exp(-t), then exp(-1 - (t - 1) / 3).
  hbg::Result r = stiffRun(R"(model Kink {
    R r(e = f * (2 + sign(time - 1))); C c(1) { q0 = 1; }
    1 s; bond c -> s; bond s -> r;
    output q = c.q;
  })", 3, 1e-8);
  CHECK(r.jacobianCalls == 2); // once on each side of the event
  const std::vector<double> &t = r.at("time"), &q = r.at("q");
  for (std::size_t k = 1; k < t.size(); ++k) {
    double exact = t[k] <= 1 ? std::exp(-t[k]) : std::exp(-1 - (t[k] - 1) / 3);
    CHECK(std::abs(q[k] - exact) < 1e-7);
  }
}
