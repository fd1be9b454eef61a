//===- tests/driver/large_loop_test.cpp - Loops solved by a sparse LU -----===//
//
// Linear loops above eq::kRunTimeLoopMin tearing variables are solved at
// run time by a sparse LU. Each model here is checked against a reference
// written straight from circuit or mechanics laws (nodal analysis, force
// balance), solved by Eigen, with nothing of the compiler in it.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "hbg/driver/Internal.h"

#include <Eigen/Dense>
#include <Eigen/SparseLU>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// Deterministic values in [lo, hi).
struct Values {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  double next(double lo, double hi) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1p-53;
  }
};

/// An n x n grid of resistors, each with a parameter of its own, between
/// a capacitor at node (0, 0) and a resistor to ground at node
/// (n-1, n-1). Node voltages are outputs `u<i>_<j>`.
struct Grid {
  int n;
  std::vector<double> resistance; // by resistor, in declaration order
  std::vector<std::pair<int, int>> ends; // node indices i*n+j
  double rg = 0.5, c = 2.0;

  explicit Grid(int size) : n(size) {
    Values v;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (j + 1 < n) {
          ends.push_back({i * n + j, i * n + j + 1});
          resistance.push_back(v.next(0.5, 2));
        }
        if (i + 1 < n) {
          ends.push_back({i * n + j, (i + 1) * n + j});
          resistance.push_back(v.next(0.5, 2));
        }
      }
  }

  std::string text() const {
    std::ostringstream os;
    os.precision(17);
    os << "model Grid {\n  parameter Rg = " << rg << "; parameter Cv = " << c << ";\n"
       << "  C cap(Cv) { q0 = 1; }\n  R rg(Rg);\n";
    for (int k = 0; k < n * n; ++k)
      os << "  0 n" << k << ";\n";
    for (std::size_t r = 0; r < ends.size(); ++r)
      os << "  parameter R" << r << " = " << resistance[r] << "; 1 b" << r << "; R r" << r
         << "(R" << r << "); bond n" << ends[r].first << " -> b" << r << "; bond b" << r
         << " -> n" << ends[r].second << "; bond b" << r << " -> r" << r << ";\n";
    os << "  bond n0 -> cap;\n  bond n" << n * n - 1 << " -> rg;\n  output cap.q, ";
    for (int k = 0; k < n * n; ++k)
      os << (k ? ", " : "") << "u" << k << " = n" << k << ".e";
    os << ";\n}\n";
    return os.str();
  }

  /// Node voltages for a capacitor voltage of 1, by nodal analysis:
  /// G u = 0 at every node but the capacitor's, where u = 1.
  Eigen::VectorXd voltages(const std::vector<double> &r) const {
    int m = n * n;
    std::vector<Eigen::Triplet<double>> g;
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(m);
    g.emplace_back(0, 0, 1.0);
    rhs(0) = 1;
    auto stamp = [&](int a, int b, double cond) {
      if (a != 0) {
        g.emplace_back(a, a, cond);
        if (b >= 0)
          g.emplace_back(a, b, -cond);
      }
    };
    for (std::size_t k = 0; k < ends.size(); ++k) {
      stamp(ends[k].first, ends[k].second, 1 / r[k]);
      stamp(ends[k].second, ends[k].first, 1 / r[k]);
    }
    stamp(m - 1, -1, 1 / rg);
    Eigen::SparseMatrix<double> a(m, m);
    a.setFromTriplets(g.begin(), g.end());
    Eigen::SparseLU<Eigen::SparseMatrix<double>> lu(a);
    REQUIRE(lu.info() == Eigen::Success);
    return lu.solve(rhs);
  }

  /// The current out of the capacitor at a voltage of 1: the input
  /// conductance.
  double conductance(const std::vector<double> &r, const Eigen::VectorXd &u) const {
    double i = 0;
    for (std::size_t k = 0; k < ends.size(); ++k)
      if (ends[k].first == 0 || ends[k].second == 0)
        i += std::fabs(u(ends[k].first) - u(ends[k].second)) / r[k];
    return i;
  }
};

void checkGrid(const hbg::Model &model, const Grid &grid, const std::vector<double> &p,
               const std::vector<double> &r) {
  Eigen::VectorXd u = grid.voltages(r);
  double g = grid.conductance(r, u);
  const double q = 0.75, e = q / grid.c; // cap.e = q / C
  double xdot = 0;
  model.rhs(0, &q, p.data(), &xdot);
  CHECK(xdot == doctest::Approx(-e * g).epsilon(1e-11));
  std::vector<double> y(model.outputNames().size());
  model.outputs(0, &q, p.data(), y.data());
  double worst = 0;
  for (int k = 0; k < grid.n * grid.n; ++k)
    worst = std::max(worst, std::fabs(y[static_cast<std::size_t>(k) + 1] - e * u(k)));
  CHECK(worst <= 1e-12 * e);
}

} // namespace

TEST_CASE("a resistor grid behind a capacitor matches nodal analysis") {
  Grid grid(16); // 256 nodes, 480 resistors: 225 meshes in one loop
  hbg::Model model = hbg::Compiler().compileString(grid.text(), "grid.hbg");
  const hbg::eq::EquationSystem &eqs = hbg::driver::equations(model);
  REQUIRE(eqs.loops.size() == 1);
  CHECK(eqs.loops[0].linear);
  CHECK(eqs.loops[0].unknowns.size() > hbg::eq::kRunTimeLoopMin);
  CHECK(eqs.dump().find("linear, solved at run time by a sparse LU") != std::string::npos);

  std::vector<double> p = model.parameterValues();
  checkGrid(model, grid, p, grid.resistance);

  // Other resistances: the matrix is factorised again for the new values.
  std::vector<double> r = grid.resistance;
  Values v;
  for (std::size_t k = 0; k < model.parameterNames().size(); ++k) {
    const std::string &name = model.parameterNames()[k];
    if (name.size() > 1 && name[0] == 'R' && name != "Rg") {
      std::size_t index = std::stoul(name.substr(1));
      r[index] = p[k] = v.next(0.1, 10);
    }
  }
  checkGrid(model, grid, p, r);

  // The simulated discharge: q(t) = q0 exp(-t G / C).
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 1;
  opts.rtol = 1e-10;
  hbg::Result result = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(result.ok(), result.error);
  double g = grid.conductance(grid.resistance, grid.voltages(grid.resistance));
  CHECK(result.at("cap.q").back() == doctest::Approx(std::exp(-g / grid.c)).epsilon(1e-8));
}

namespace {

/// A square lattice of massless nodes joined by springs in parallel with
/// dampers (each link its own c and b), a mass at node 0 and the wall at
/// the last node. The dampers make one linear loop over the free nodes'
/// velocities.
struct Lattice {
  int n;
  double m = 1.5;
  std::vector<std::pair<int, int>> ends;
  std::vector<double> c, b;

  explicit Lattice(int size) : n(size) {
    Values v;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        for (int down = 0; down < 2; ++down) {
          int other = down ? (i + 1 < n ? (i + 1) * n + j : -1) : (j + 1 < n ? i * n + j + 1 : -1);
          if (other < 0)
            continue;
          ends.push_back({i * n + j, other});
          c.push_back(v.next(0.5, 2));
          b.push_back(v.next(0.2, 3));
        }
      }
  }

  std::string text() const {
    std::ostringstream os;
    os.precision(17);
    os << "model Lattice {\n  I mass(" << m << ") { p0 = 0; }\n  Sf wall(0);\n";
    for (int k = 0; k < n * n; ++k)
      os << "  1 v" << k << ";\n";
    os << "  bond v0 -> mass;\n  bond wall -> v" << n * n - 1 << ";\n";
    for (std::size_t l = 0; l < ends.size(); ++l)
      os << "  0 f" << l << "; 1 d" << l << "; C s" << l << "(" << c[l] << ") { q0 = 0; } R k"
         << l << "(" << b[l] << ");\n  bond v" << ends[l].first << " -> f" << l << "; bond f"
         << l << " -> v" << ends[l].second << "; bond f" << l << " -> d" << l << "; bond d"
         << l << " -> s" << l << "; bond d" << l << " -> k" << l << ";\n";
    os << "}\n";
    return os.str();
  }

  /// dx/dt by force balance, x = [q of each link, p] in that order.
  Eigen::VectorXd rhs(const Eigen::VectorXd &q, double p) const {
    int nodes = n * n, wall = nodes - 1;
    // Unknowns: the velocities of the free nodes 1 .. nodes-2. Node i:
    // sum over links into i of F_l minus links out of i = 0, with
    // F_l = q_l / c_l + b_l (v_a - v_b).
    int u = nodes - 2;
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(u, u);
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(u);
    Eigen::VectorXd known = Eigen::VectorXd::Zero(nodes);
    known(0) = p / m;
    auto col = [&](int node) { return node >= 1 && node < wall ? node - 1 : -1; };
    for (std::size_t l = 0; l < ends.size(); ++l) {
      auto [from, to] = ends[l];
      for (int side = 0; side < 2; ++side) {
        int node = side ? to : from, sign = side ? 1 : -1; // +F into `to`, -F out of `from`
        int row = col(node);
        if (row < 0)
          continue;
        rhs(row) -= sign * q(static_cast<Eigen::Index>(l)) / c[l];
        for (int end = 0; end < 2; ++end) {
          int other = end ? to : from;
          double coeff = sign * b[l] * (end ? -1 : 1);
          if (col(other) >= 0)
            a(row, col(other)) += coeff;
          else
            rhs(row) -= coeff * known(other);
        }
      }
    }
    Eigen::VectorXd v = known;
    v.segment(1, u) = a.fullPivLu().solve(rhs);
    Eigen::VectorXd xdot(static_cast<Eigen::Index>(ends.size()) + 1);
    double pdot = 0;
    for (std::size_t l = 0; l < ends.size(); ++l) {
      auto [from, to] = ends[l];
      auto i = static_cast<Eigen::Index>(l);
      xdot(i) = v(from) - v(to);
      double f = q(i) / c[l] + b[l] * xdot(i);
      pdot += from == 0 ? -f : to == 0 ? f : 0;
    }
    xdot(static_cast<Eigen::Index>(ends.size())) = pdot;
    return xdot;
  }
};

} // namespace

TEST_CASE("a lattice of springs and dampers with massless nodes matches force balance") {
  Lattice lattice(10); // 100 nodes, 180 links
  hbg::Model model = hbg::Compiler().compileString(lattice.text(), "lattice.hbg");
  const hbg::eq::EquationSystem &eqs = hbg::driver::equations(model);
  REQUIRE(eqs.loops.size() == 1);
  CHECK(eqs.loops[0].linear);
  CHECK(eqs.loops[0].unknowns.size() > hbg::eq::kRunTimeLoopMin);
  CHECK(eqs.dependent.empty());

  // hbg's states in the reference's order: s0.q, s1.q, ..., mass.p.
  const std::vector<std::string> &names = model.stateNames();
  REQUIRE(names.size() == lattice.ends.size() + 1);
  std::vector<std::size_t> at(names.size());
  for (std::size_t k = 0; k < names.size(); ++k)
    at[k] = names[k] == "mass.p" ? lattice.ends.size() : std::stoul(names[k].substr(1));

  Values v;
  std::vector<double> p = model.parameterValues();
  for (int trial = 0; trial < 3; ++trial) {
    Eigen::VectorXd ref(static_cast<Eigen::Index>(names.size()));
    for (Eigen::Index k = 0; k < ref.size(); ++k)
      ref(k) = v.next(-1, 1);
    std::vector<double> x(names.size()), xdot(names.size());
    for (std::size_t k = 0; k < names.size(); ++k)
      x[k] = ref(static_cast<Eigen::Index>(at[k]));
    Eigen::VectorXd want =
        lattice.rhs(ref.head(static_cast<Eigen::Index>(lattice.ends.size())), ref(ref.size() - 1));
    model.rhs(0, x.data(), p.data(), xdot.data());
    double worst = 0, scale = want.cwiseAbs().maxCoeff();
    for (std::size_t k = 0; k < names.size(); ++k)
      worst = std::max(worst, std::fabs(xdot[k] - want(static_cast<Eigen::Index>(at[k]))));
    CHECK(worst <= 1e-10 * scale);
  }
}

TEST_CASE("a grid made singular by its parameters stops with an error naming the loop") {
  // Every resistor zero: the nodes are shorted together, and the currents
  // in the grid's meshes are no longer determined.
  Grid grid(4);
  hbg::Model model = hbg::Compiler().compileString(grid.text(), "grid.hbg");
  REQUIRE(hbg::driver::equations(model).loops.size() == 1);
  REQUIRE(!hbg::driver::equations(model).loops[0].unknowns.empty());
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  hbg::Simulation sim(model, opts);
  for (const std::string &name : model.parameterNames())
    if (name[0] == 'R' && name != "Rg")
      sim.setParameter(name, 0);
  hbg::Result result = sim.run();
  CHECK(!result.ok());
  INFO(result.error);
  REQUIRE(result.failure);
  CHECK(result.failure->kind == hbg::DiagKind::RunLoopFailed);
  CHECK(result.failure->time == 0);
  CHECK(!result.failure->loop.empty());
  CHECK(result.error.find(": the loop's Jacobian is singular in the algebraic loops `") !=
        std::string::npos);
}
