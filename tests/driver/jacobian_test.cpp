//===- tests/driver/jacobian_test.cpp - The JIT-compiled state Jacobian ---===//
//
// Model::jacobian against central differences of Model::rhs, on models
// that exercise each path: time-dependent sources (df/dt), a nonlinear
// loop solved by Newton's method (implicit differentiation), kinks, a
// linear loop solved in closed form, and a switched model's full state.
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
