#include "hbg/runtime/Newton.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace hbg::runtime;

TEST_CASE("newton: a scalar diode equation converges quadratically from a warm start") {
  // i = Is (exp(v / Vt) - 1) with v = V - R i: residual in i.
  const double Is = 1e-12, Vt = 0.025, V = 5, R = 1000;
  auto res = [&](const double *z, double *r) { r[0] = z[0] - Is * (std::exp((V - R * z[0]) / Vt) - 1); };
  auto jac = [&](const double *z, double *j) { j[0] = 1 + Is * R / Vt * std::exp((V - R * z[0]) / Vt); };
  double z = 0.0043;
  NewtonResult r = newtonSolve(1, res, jac, &z);
  REQUIRE(r.ok());
  CHECK(r.iterations <= 20);
  double check;
  res(&z, &check);
  CHECK(std::fabs(check) < 1e-15);
  // Warm start at the solution: one iteration.
  NewtonResult again = newtonSolve(1, res, jac, &z);
  CHECK(again.ok());
  CHECK(again.iterations <= 1);
}

TEST_CASE("newton: damping brings a far start home on a 2x2 system") {
  // x^2 + y^2 = 4, x y = 1 (column-major Jacobian).
  auto res = [](const double *z, double *r) {
    r[0] = z[0] * z[0] + z[1] * z[1] - 4;
    r[1] = z[0] * z[1] - 1;
  };
  auto jac = [](const double *z, double *j) {
    j[0] = 2 * z[0];
    j[1] = z[1];
    j[2] = 2 * z[1];
    j[3] = z[0];
  };
  double z[2] = {30, 0.1};
  NewtonResult r = newtonSolve(2, res, jac, z);
  REQUIRE(r.ok());
  CHECK(z[0] * z[0] + z[1] * z[1] == doctest::Approx(4).epsilon(1e-12));
  CHECK(z[0] * z[1] == doctest::Approx(1).epsilon(1e-12));
}

TEST_CASE("newton: failures say why") {
  auto none = [](const double *z, double *r) { r[0] = z[0] * z[0] + 1; }; // no real root
  auto dnone = [](const double *z, double *j) { j[0] = 2 * z[0]; };
  double z = 0.5;
  NewtonResult r = newtonSolve(1, none, dnone, &z, {1e-12, 1e-12, 30});
  CHECK_FALSE(r.ok());
  CHECK(r.status != NewtonStatus::Converged);
  CHECK_FALSE(describe(r).empty());

  auto flat = [](const double *, double *r) { r[0] = 1; };
  auto zero = [](const double *, double *j) { j[0] = 0; };
  z = 1;
  CHECK(newtonSolve(1, flat, zero, &z).status == NewtonStatus::SingularJacobian);

  auto bad = [](const double *, double *r) { r[0] = NAN; };
  CHECK(newtonSolve(1, bad, zero, &z).status == NewtonStatus::NonFinite);
}

TEST_CASE("newton: a flat start (zero Jacobian) steps off and converges") {
  // z^3 = 0.008 from z = 0, where d(z^3)/dz = 0.
  auto res = [](const double *z, double *r) { r[0] = z[0] * z[0] * z[0] - 0.008; };
  auto jac = [](const double *z, double *j) { j[0] = 3 * z[0] * z[0]; };
  double z = 0;
  NewtonResult r = newtonSolve(1, res, jac, &z);
  REQUIRE(r.ok());
  CHECK(z == doctest::Approx(0.2).epsilon(1e-12));
}

TEST_CASE("newton: a flat region is not mistaken for a root") {
  // A diode driven by a current source: Is (exp(v / Vt) - 1) = I0. From
  // v = -6.4 the exponential is about e^-256: the Jacobian is so small that
  // the step is regularised, and the regularised step moves v by less than
  // its last bit. The residual stays at I0 there; the root is near +0.52 V.
  const double Is = 1e-12, Vt = 0.025, I0 = 1e-3;
  auto res = [&](const double *z, double *r) { r[0] = Is * std::expm1(z[0] / Vt) - I0; };
  auto jac = [&](const double *z, double *j) { j[0] = Is / Vt * std::exp(z[0] / Vt); };
  // The root, independently: the residual increases with v, so bisect.
  double lo = -10, hi = 1;
  for (int k = 0; k < 200; ++k) {
    double mid = (lo + hi) / 2, r;
    res(&mid, &r);
    (r < 0 ? lo : hi) = mid;
  }
  const double root = lo;
  REQUIRE(root == doctest::Approx(0.518).epsilon(1e-3));

  double z = -6.4;
  NewtonResult r = newtonSolve(1, res, jac, &z);
  INFO(describe(r), "; v = ", z);
  if (r.ok()) {
    CHECK(z == doctest::Approx(root).epsilon(1e-12));
  } else {
    // Failing is right as long as it says so, with the residual it is left
    // with.
    CHECK(r.residualNorm == doctest::Approx(I0));
    CHECK(describe(r).find("Newton's method") == 0);
  }
  // From a start on the steep side the same equation solves.
  z = 1;
  REQUIRE(newtonSolve(1, res, jac, &z).ok());
  CHECK(z == doctest::Approx(root).epsilon(1e-12));
}

TEST_CASE("newton: a residual with a positive minimum stalls, and says so") {
  // z^2 + 1 > 0: the damped steps cannot lower the residual below 1 and
  // soon cannot lower it at all.
  auto res = [](const double *z, double *r) { r[0] = z[0] * z[0] + 1; };
  auto jac = [](const double *z, double *j) { j[0] = 2 * z[0]; };
  double z = 1e-3;
  NewtonResult r = newtonSolve(1, res, jac, &z);
  REQUIRE_FALSE(r.ok());
  CHECK(r.residualNorm >= 1);
  NewtonResult stalled;
  stalled.status = NewtonStatus::Stalled;
  stalled.iterations = 3;
  stalled.residualNorm = 0.3217;
  CHECK(describe(stalled) == "Newton's method stalled (residual 0.322)");
}

TEST_CASE("newton: the residual's units do not decide convergence") {
  // The same root, z = 3, with residuals scaled by 1e-9 and 1e9: the test
  // is relative to the Jacobian, so both converge, to the last bits.
  for (double k : {1e-9, 1.0, 1e9}) {
    CAPTURE(k);
    auto res = [k](const double *z, double *r) { r[0] = k * (z[0] * z[0] - 9); };
    auto jac = [k](const double *z, double *j) { j[0] = k * 2 * z[0]; };
    double z = 2;
    NewtonResult r = newtonSolve(1, res, jac, &z);
    REQUIRE(r.ok());
    CHECK(r.iterations <= 8);
    CHECK(z == doctest::Approx(3).epsilon(1e-14));
  }
}

TEST_CASE("LoopSolver: a linear system by KLU, factorised once while its values stay") {
  // J = [[4, 1, 0], [1, 3, 1], [0, 1, 2]] by compressed columns; J z = -r0.
  SparsePattern pattern{{0, 2, 5, 7}, {0, 1, 0, 1, 2, 1, 2}};
  std::vector<double> values{4, 1, 1, 3, 1, 1, 2};
  std::vector<double> r0{-5, -5, -3}; // z = (1, 1, 1)
  LoopSolver solver(pattern, true);
  std::vector<double> z(3);
  NewtonResult r = solver.solveLinear(values.data(), r0.data(), z.data());
  REQUIRE(r.ok());
  for (double v : z)
    CHECK(v == doctest::Approx(1).epsilon(1e-15));
  CHECK(solver.factorisations() == 1);
  // Same values (another right-hand side): the factorisation is kept.
  std::vector<double> r1{-4, -1, 0}; // z = (1, 0, 0)
  REQUIRE(solver.solveLinear(values.data(), r1.data(), z.data()).ok());
  CHECK(z[0] == doctest::Approx(1).epsilon(1e-15));
  CHECK(std::fabs(z[1]) < 1e-15);
  CHECK(solver.factorisations() == 1);
  // New values: factorised again. J = 2 I plus the same couplings.
  std::vector<double> other{2, 1, 1, 2, 1, 1, 2};
  std::vector<double> r2{-3, -4, -3}; // z = (1, 1, 1)
  REQUIRE(solver.solveLinear(other.data(), r2.data(), z.data()).ok());
  CHECK(z[2] == doctest::Approx(1).epsilon(1e-14));
  CHECK(solver.factorisations() == 2);
}

TEST_CASE("LoopSolver: a singular linear system is reported, not solved") {
  // Columns 0 and 1 equal: [[1, 1], [2, 2]].
  SparsePattern pattern{{0, 2, 4}, {0, 1, 0, 1}};
  std::vector<double> values{1, 2, 1, 2}, r0{1, 1}, z(2);
  LoopSolver solver(pattern, true);
  NewtonResult r = solver.solveLinear(values.data(), r0.data(), z.data());
  CHECK(r.status == NewtonStatus::SingularJacobian);
  CHECK(describe(r).find("singular") != std::string::npos);
}
