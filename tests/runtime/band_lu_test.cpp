//===- tests/runtime/band_lu_test.cpp - The stiff method's band LU --------===//

#include "BandLu.h"

#include <doctest/doctest.h>

#include <Eigen/Dense>

#include <random>

using hbg::runtime::BandLu;

TEST_CASE("band LU solves like a dense LU, pivoting included") {
  // Random band matrices: with entries below the diagonal as large as on
  // it, partial pivoting swaps rows and fills the band above. (Triangular
  // ones, kl = 0, get a dominant diagonal: random triangular matrices are
  // ill-conditioned.) The solution of A x = b is checked against Eigen's
  // dense LU of the same matrix and by its residual.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto [n, kl, ku] : {std::tuple{1, 0, 0}, std::tuple{12, 1, 1}, std::tuple{30, 2, 1},
                           std::tuple{25, 0, 3}, std::tuple{40, 3, 0}, std::tuple{9, 4, 4}}) {
    CAPTURE(n);
    CAPTURE(kl);
    CAPTURE(ku);
    BandLu lu;
    lu.resize(std::size_t(n), std::size_t(kl), std::size_t(ku));
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = std::max(0, i - kl); j <= std::min(n - 1, i + ku); ++j) {
        a(i, j) = u(rng) + (i == j && kl == 0 ? 3.0 : 0.0);
        lu.values()[lu.at(std::size_t(i), std::size_t(j))] = a(i, j);
      }
    REQUIRE(lu.factorise());
    Eigen::PartialPivLU<Eigen::MatrixXd> dense(a);
    Eigen::VectorXd b = Eigen::VectorXd::NullaryExpr(n, [&] { return u(rng); });
    Eigen::VectorXd x = b;
    lu.solve(x.data());
    Eigen::VectorXd want = dense.solve(b);
    CHECK((x - want).norm() <= 1e-8 * want.norm());
    // Backward stable: the residual is rounding of the products.
    CHECK((a * x - b).norm() <= 1e-13 * a.norm() * x.norm());
  }
}

TEST_CASE("band LU reports a singular matrix") {
  BandLu lu;
  lu.resize(3, 1, 1);
  // Rows 2 and 3 equal: [[1, 1, 0], [0, 1, 1], [0, 1, 1]].
  for (auto [i, j] : {std::pair{0, 0}, std::pair{0, 1}, std::pair{1, 1}, std::pair{1, 2},
                      std::pair{2, 1}, std::pair{2, 2}})
    lu.values()[lu.at(std::size_t(i), std::size_t(j))] = 1;
  CHECK_FALSE(lu.factorise());
}
