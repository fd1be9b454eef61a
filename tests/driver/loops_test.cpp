//===- tests/driver/loops_test.cpp - For loops and indexed names ----------===//
//
// Models written with `for` loops and indexed names, against references
// computed independently: a chain of masses against the eigen-
// decomposition of its stiffness matrix, parallel capacitors in a
// component whose size is a parameter of each instance, and switches in
// a loop whose guards read indexed names; structural parameters set when
// compiling and refused at run time.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <Eigen/Dense>
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

hbg::Result run(const hbg::Model &model, double tEnd, double dtOut) {
  hbg::SimulationOptions o;
  o.tEnd = tEnd;
  o.dtOut = dtOut;
  o.rtol = 1e-10;
  hbg::Result r = hbg::Simulation(model, o).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

std::string compileError(const std::string &text) {
  try {
    hbg::Compiler().compileString(text, "loops.hbg");
  } catch (const hbg::CompileError &e) {
    return e.what();
  }
  return "";
}

/// N unit masses between two walls, joined by springs k: the first set
/// moving at 1.
const char *const kChain = R"(
import mechanical;
model Chain {
    parameter N = 6;
    parameter k = 4;
    Fixed left;  Fixed right;
    for i in 1:N {
        Mass mass[i](m = 1, v0 = if i < 2 then 1 else 0);
        Spring spring[i](k = k);    // between mass[i - 1] (the wall) and mass[i]
        bond spring[i].b -> mass[i].a;
    }
    bond left.a -> spring[1].a;
    for i in 2:N {
        bond mass[i - 1].a -> spring[i].a;
    }
    Spring last(k = k);
    bond mass[N].a -> last.a;  bond last.b -> right.a;
    for i in 1:N {
        output v[i] = mass[i].v;
    }
    output mass[N].v, x = last.x;
}
)";

} // namespace

TEST_CASE("loops: a chain of masses matches the eigenmodes of its stiffness matrix") {
  for (int n : {6, 11}) {
    hbg::CompilerOptions copts;
    copts.parameters["N"] = n;
    hbg::Model model = hbg::Compiler(copts).compileString(kChain, "chain.hbg");
    CHECK(model.stateNames().size() == std::size_t(2 * n + 1));
    double built = 0;
    CHECK(model.structural("N", &built));
    CHECK(built == n);
    CHECK_FALSE(model.structural("k"));
    hbg::Result r = run(model, 3, 0.25);
    REQUIRE(r.names.size() == std::size_t(n + 3));
    CHECK(r.names[1] == "v[1]");
    CHECK(r.names[n + 1] == "mass[" + std::to_string(n) + "].v");

    // x'' = -K x, K = k tridiag(-1, 2, -1): x = V sin(W t) W^-1 V^T v0,
    // v = V cos(W t) V^T v0.
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i) {
      K(i, i) = 8;
      if (i + 1 < n)
        K(i, i + 1) = K(i + 1, i) = -4;
    }
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
    Eigen::VectorXd v0 = Eigen::VectorXd::Zero(n);
    v0(0) = 1;
    Eigen::VectorXd c = eig.eigenvectors().transpose() * v0;
    for (std::size_t row = 0; row < r.at("time").size(); ++row) {
      double t = r.at("time")[row];
      Eigen::VectorXd w = eig.eigenvalues().cwiseSqrt();
      Eigen::VectorXd cv(n), cx(n);
      for (int j = 0; j < n; ++j) {
        cv(j) = std::cos(w(j) * t) * c(j);
        cx(j) = std::sin(w(j) * t) / w(j) * c(j);
      }
      Eigen::VectorXd v = eig.eigenvectors() * cv, x = eig.eigenvectors() * cx;
      for (int i = 0; i < n; ++i)
        CHECK(r.at("v[" + std::to_string(i + 1) + "]")[row] ==
              doctest::Approx(v(i)).epsilon(1e-7).scale(1));
      CHECK(r.at("x")[row] == doctest::Approx(x(n - 1)).epsilon(1e-7).scale(1));
    }

    // N built the chain: a run may not change it.
    hbg::Simulation sim(model);
    sim.setParameter("N", n);
    try {
      sim.setParameter("N", n + 1);
      FAIL("setting a structural parameter did not throw");
    } catch (const std::invalid_argument &e) {
      CHECK(std::string(e.what()).find("parameter `N` is structural") != std::string::npos);
    }
    sim.setParameter("k", 5);
  }
}

TEST_CASE("loops: the same chain written out by hand gives the same trajectory") {
  // The loops and indices are only notation: the chain of 6 written flat,
  // name by name, is the same model.
  std::string flat = "import mechanical;\nmodel Chain {\n    parameter N = 6;\n    parameter k = 4;\n"
                     "    Fixed left;  Fixed right;\n";
  for (int i = 1; i <= 6; ++i) {
    std::string s = std::to_string(i);
    flat += "    Mass mass[" + s + "](m = 1, v0 = " + (i == 1 ? "1" : "0") + ");\n";
    flat += "    Spring spring[" + s + "](k = k);\n";
    flat += "    bond spring[" + s + "].b -> mass[" + s + "].a;\n";
  }
  flat += "    bond left.a -> spring[1].a;\n";
  for (int i = 2; i <= 6; ++i)
    flat += "    bond mass[" + std::to_string(i - 1) + "].a -> spring[" + std::to_string(i) + "].a;\n";
  flat += "    Spring last(k = k);\n    bond mass[6].a -> last.a;  bond last.b -> right.a;\n";
  for (int i = 1; i <= 6; ++i)
    flat += "    output v[" + std::to_string(i) + "] = mass[" + std::to_string(i) + "].v;\n";
  flat += "    output mass[6].v, x = last.x;\n}\n";
  hbg::Result a = run(hbg::Compiler().compileString(kChain, "chain.hbg"), 2, 0.5);
  hbg::Result b = run(hbg::Compiler().compileString(flat, "flat.hbg"), 2, 0.5);
  REQUIRE(a.names == b.names);
  CHECK(a.columns == b.columns);
}

TEST_CASE("loops: a component sized by its own parameter, per instance") {
  // n capacitors C in parallel discharge through R: v = v0 exp(-t / (R n C)).
  hbg::Model model = hbg::Compiler().compileString(R"(
component Bank {
    parameter n = 2;
    parameter C = 1;
    parameter v0 = 1;
    port p = node;
    0 node;
    for i in 1:n {
        C cell[i](C) { q0 = C * v0; }
        bond node -> cell[i];
    }
    signal v = cell[1].e;
}
model Two {
    parameter m = 3;
    Bank small(n = 2, v0 = 1);
    Bank large(n = m + 1, v0 = 2);
    R r1(1); R r2(0.5);
    bond small.p -> r1;  bond large.p -> r2;
    output a = small.v, b = large.v;
}
)",
                                                   "bank.hbg");
  // Parallel capacitors: one independent state per bank.
  CHECK(model.stateNames().size() == 2);
  CHECK(model.structural("small.n"));
  CHECK(model.structural("large.n"));
  CHECK(model.structural("m"));
  hbg::Result r = run(model, 4, 0.5);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("a")[k] == doctest::Approx(std::exp(-t / 2)).epsilon(1e-8));
    CHECK(r.at("b")[k] == doctest::Approx(2 * std::exp(-t / 2)).epsilon(1e-8));
  }
}

TEST_CASE("loops: switches in a loop, their guards reading indexed names") {
  // n branches R from a source V, branch i opening at t = i / 2 when the
  // loop's guard reads its own current: the source's current steps down
  // by V / R at each.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Branches {
    parameter n = 4;
    Se source(2);
    0 bus;
    bond source -> bus;
    for i in 1:n {
        1 branch[i] switched {
            on closed initial;  off open;
            closed -> open when (time >= i / 2)+ and (branch[i].f > 0)-;
        }
        R load[i](4);
        bond bus -> branch[i];  bond branch[i] -> load[i];
    }
    output total = source.f;
}
)",
                                                   "branches.hbg");
  hbg::Result r = run(model, 2.5, 0.25);
  REQUIRE(r.events.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(r.events[k].time == doctest::Approx(0.5 * (k + 1)));
    // The event log names what the model has: the loop's values, not `i`.
    std::string b = "branch[" + std::to_string(k + 1) + "]";
    CHECK(r.events[k].transitions[0] == b + ": closed -> open when (time >= " + std::to_string(k + 1) +
                                            " / 2)+ and (" + b + ".f > 0)-");
  }
  const std::vector<double> &t = r.at("time");
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k + 1] == t[k])
      continue;
    double open = std::min(4.0, std::floor(t[k] / 0.5));
    CHECK(r.at("total")[k] == doctest::Approx(0.5 * (4 - open)));
  }
}

TEST_CASE("loops: nested loops, two indices, and errors") {
  // A 3 x 2 grid of RC branches on a 1 V node, named cell[i, j], each
  // C = i j through R = 1: q = C (1 - exp(-t / C)), 6 states.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Grid {
    Se source(1);
    0 node;
    bond source -> node;
    for i in 1:3 {
        for j in 1:2 {
            1 branch[i, j];
            R r[i, j](1);
            C cell[i, j](i * j) { q0 = 0; }
            bond node -> branch[i, j];
            bond branch[i, j] -> r[i, j];  bond branch[i, j] -> cell[i, j];
        }
    }
    output cell[3, 2].q, cell[1, 2].q;
}
)",
                                                   "grid.hbg");
  REQUIRE(model.stateNames().size() == 6);
  CHECK(model.stateNames()[5] == "cell[3,2].q");
  hbg::Result r = run(model, 2, 1);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("cell[3,2].q")[k] == doctest::Approx(6 * (1 - std::exp(-t / 6))).epsilon(1e-8));
    CHECK(r.at("cell[1,2].q")[k] == doctest::Approx(2 * (1 - std::exp(-t / 2))).epsilon(1e-8));
  }

  auto model1 = [](const std::string &body) {
    return "model M {\n    parameter n = 2;\n    Se s(1);\n    0 node;\n    bond s -> node;\n" + body +
           "}\n";
  };
  CHECK(compileError(model1("    for i in 1:n { R r[i](1); bond node -> r[i + 1]; }\n"))
            .find("`r[3]`") != std::string::npos);
  CHECK(compileError(model1("    for i in 1:n { R r[i](1); bond node -> r[i]; }\n"
                            "    output r[n + 1].e;\n"))
            .find("`r[3]`") != std::string::npos);
  CHECK(compileError(model1("    for i in 1:n { R r[i](1); bond node -> r[i]; }\n"
                            "    output r[time].e;\n"))
            .find("an index is computed when the model is built") != std::string::npos);
  CHECK(compileError(model1("    for i in 1:n { for i in 1:2 { R r[i](1); } }\n"))
            .find("loop variable `i` hides a loop variable") != std::string::npos);
  CHECK(compileError(model1("    for i in 1:n { port p = node; }\n"))
            .find("a port cannot be declared inside a `for` loop") != std::string::npos);
  CHECK(compileError(model1("    for i in 0.5:n { R r[i](1); }\n"))
            .find("a loop bound must be an integer, not 0.5") != std::string::npos);
  CHECK(compileError("model M {\n    parameter N = K + 1;\n    parameter K = N - 1;\n"
                     "    for i in 1:N { 0 j[i]; }\n}\n")
            .find("parameter `N` depends on itself: `N` -> `K` -> `N`") != std::string::npos);
}
