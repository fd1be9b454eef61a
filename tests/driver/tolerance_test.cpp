//===- tests/driver/tolerance_test.cpp - Tolerances in physical units -----===//
//
// With default options, rtol alone sets the accuracy whatever the units:
// each state's absolute tolerance scales with its nominal magnitude. Checked
// against closed forms and matrix exponentials, never against hbg itself.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "RunDefaults.h"
#include "TaylorExponential.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

hbg::Result run(const std::string &text, double tEnd, double dtOut) {
  hbg::Model model = hbg::Compiler().compileString(text, "test.hbg");
  return runAtDefaults(model, tEnd, dtOut);
}

/// A series RLC driven by a 1 V step, as text, and the worst error of its
/// capacitor voltage against the closed form, relative to the 1 V step.
double rlcError(double L, double C, double R) {
  std::ostringstream os;
  os.precision(17);
  os << "model RLC {\n  parameter L = " << L << "; parameter C = " << C
     << "; parameter R = " << R << ";\n"
     << "  Se v(1); R r(R); I coil(L) { p0 = 0; } C cap(C) { q0 = 0; } 1 loop;\n"
     << "  bond v -> loop; bond loop -> r; bond loop -> coil; bond loop -> cap;\n"
     << "  output vc = cap.e;\n}\n";
  double w0 = 1 / std::sqrt(L * C), zeta = R / 2 * std::sqrt(C / L);
  double wd = w0 * std::sqrt(1 - zeta * zeta), tEnd = 20 / w0;
  hbg::Result r = run(os.str(), tEnd, tEnd / 200);
  const std::vector<double> &t = r.at("time"), &v = r.at("vc");
  double worst = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    double s = t[k];
    double exact = 1 - std::exp(-zeta * w0 * s) *
                           (std::cos(wd * s) + zeta * w0 / wd * std::sin(wd * s));
    worst = std::max(worst, std::abs(v[k] - exact));
  }
  return worst;
}

} // namespace

TEST_CASE("an RLC at pF and uH has the relative error it has at F and H") {
  // zeta = 0.5 at both scales: R = sqrt(L / C).
  double big = rlcError(1, 1, 1), small = rlcError(1e-6, 1e-12, 1e3);
  CAPTURE(big);
  CAPTURE(small);
  CHECK(big < 1e-5);
  CHECK(small < 1e-5);
  CHECK(small < 2 * big);
  CHECK(big < 2 * small);
}

namespace {

/// A transmission line of N LC sections (Z0 = 50 ohm, one-way delay 1 us)
/// between a 1 V source behind 50 ohm and a 50 ohm load.
constexpr double kZ0 = 50, kDelay = 1e-6;

std::string lineModel(int n) {
  std::ostringstream os;
  os.precision(17);
  os << "model Line {\n  parameter Ls = " << kZ0 * kDelay / n
     << "; parameter Cs = " << kDelay / kZ0 / n << ";\n"
     << "  Se src(1); R rs(" << kZ0 << "); R load(" << kZ0 << "); 1 s;\n"
     << "  bond src -> s; bond s -> rs; bond s -> l1;\n";
  for (int k = 1; k <= n; ++k) {
    os << "  I coil" << k << "(Ls) { p0 = 0; } C cap" << k << "(Cs) { q0 = 0; } 1 l" << k
       << "; 0 n" << k << ";\n"
       << "  bond l" << k << " -> coil" << k << "; bond l" << k << " -> n" << k << "; bond n" << k
       << " -> cap" << k << ";\n";
    if (k < n)
      os << "  bond n" << k << " -> l" << k + 1 << ";\n";
  }
  os << "  bond n" << n << " -> load;\n  output v = cap" << n << ".e;\n}\n";
  return os.str();
}

/// The exact load voltage of the N-section line at times 0, dt, 2 dt, ...,
/// steps dt: exp(A dt) applied by a Taylor series on substeps short
/// enough that each term's norm shrinks, in energy coordinates
/// u = p / sqrt(Ls), w = q / sqrt(Cs) (where A's entries are N / delay
/// and R / Ls, of one size).
std::vector<double> exactLine(int n, double dt, int steps) {
  double Ls = kZ0 * kDelay / n, Cs = kDelay / kZ0 / n;
  double a = 1 / std::sqrt(Ls * Cs), rs = kZ0 / Ls, rl = 1 / (kZ0 * Cs);
  double src = 1 / std::sqrt(Ls);
  // y = (u_1..u_N, w_1..w_N); dy/dt = A y + b.
  auto apply = [&](const std::vector<double> &y, std::vector<double> &out, double b) {
    for (int k = 0; k < n; ++k) {
      double vPrev = k == 0 ? 0 : y[n + k - 1];
      out[k] = a * (vPrev - y[n + k]) - (k == 0 ? rs * y[0] : 0) + (k == 0 ? b * src : 0);
      double iNext = k + 1 < n ? y[k + 1] : 0;
      out[n + k] = a * (y[k] - iNext) - (k + 1 == n ? rl * y[n + k] : 0);
    }
  };
  return taylorExponential(2 * n, 2 * a + rs + rl, dt, steps, apply,
                           [&](const std::vector<double> &y) { return y[2 * n - 1] / std::sqrt(Cs); });
}

} // namespace

TEST_CASE("a transmission line of 40, 160 and 1280 sections follows its exact solution") {
  // The tolerances follow each state's scale: the sections' charges are
  // 1e-14 to 1e-11 C and their momenta 1e-11 to 1e-9 V s, which a fixed
  // absolute tolerance of 1e-8 left uncontrolled (the load swung by
  // thousands of volts). What remains is the integrator's global error:
  // the step's local error is held to rtol in every state (a maximum
  // norm, not an RMS one that lets the few sections at the wave front err
  // by the square root of the line's size), but the ringing at the
  // grid's cut-off frequency gains phase error over every step (2,100 at
  // N = 160, 13,000 at N = 1280): 4.0e-4 V at default options for
  // N = 1280, 4.8e-5 for N = 160, 1.1e-5 for N = 40, and down in
  // proportion to rtol.
  const double dt = 1e-7;
  const int steps = 40; // to 4 us: the wave crosses four times
  for (int n : {40, 160, 1280}) {
    CAPTURE(n);
    hbg::Model model = hbg::Compiler().compileString(lineModel(n), "line.hbg");
    std::vector<double> exact = exactLine(n, dt, steps);
    // Matched at both ends: half the source once the wave has arrived.
    CHECK(std::abs(exact.back() - 0.5) < 0.05);
    for (double rtol : {1e-6, 1e-8}) {
      CAPTURE(rtol);
      hbg::SimulationOptions opts; // defaults but for rtol, the span and the grid
      opts.tEnd = steps * dt;
      opts.dtOut = dt;
      opts.rtol = rtol;
      hbg::Result r = hbg::Simulation(model, opts).run();
      REQUIRE_MESSAGE(r.ok(), r.error);
      const std::vector<double> &t = r.at("time"), &v = r.at("v");
      REQUIRE(t.size() == exact.size());
      double worst = 0;
      for (std::size_t k = 0; k < t.size(); ++k)
        worst = std::max(worst, std::abs(v[k] - exact[k]));
      CAPTURE(worst);
      CHECK(worst < 500 * rtol * (n >= 1280 ? 1.0 : n >= 160 ? 0.12 : 0.03));
    }
  }
}

namespace {
/// The entry of `nominal` (Model::nominalState's) for state `name`.
double nominalOf(const hbg::Model &model, const std::vector<double> &nominal,
                 const std::string &name) {
  const std::vector<std::string> &names = model.stateNames();
  auto it = std::find(names.begin(), names.end(), name);
  REQUIRE(it != names.end());
  return nominal[static_cast<std::size_t>(it - names.begin())];
}
} // namespace

TEST_CASE("nominal magnitudes from sources, parameters and the `nominal` attribute") {
  hbg::Model model = hbg::Compiler().compileString(R"(model Scales {
    parameter V = 10;
    parameter C1 = 1e-6;
    MSe v(V * sin(100 * time));
    Se dc(-3);
    R r1(2); R r2(500);
    C c1(C1) { q0 = 0; }
    C c2(1e-12) { q0 = 0; nominal = 4e-12; }
    I coil(1e-3) { p0 = 0; }
    C soft(e = q^3) { q0 = 0; }
    C firm(e = q / C1 + q^3) { q0 = 0; }
    1 loop; 0 node; 1 back;
    bond v -> loop; bond loop -> r1; bond loop -> coil; bond loop -> node;
    bond node -> c1; bond node -> back; bond back -> r2; bond back -> c2;
    bond dc -> back; bond back -> soft; bond back -> firm;
    signal angle = integral(c1.e);
    output c1.q, angle;
  })", "scales.hbg");
  std::vector<double> p = model.parameterValues();
  std::vector<double> nominal = model.nominalState(p);
  auto of = [&](const std::string &name) { return nominalOf(model, nominal, name); };
  // Effort scale: the larger amplitude of 10 sin(...) and -3, so 10 V;
  // flow scale: 10 V over the largest resistance, 0.02 A; derived
  // magnitudes are 1e-3 of the scale times the parameter.
  CHECK(of("c1.q") == doctest::Approx(1e-3 * 1e-6 * 10));
  CHECK(of("coil.p") == doctest::Approx(1e-3 * 1e-3 * 10.0 / 500));
  // Given, it takes precedence. A nonlinear law acts as its slope at the
  // initial state; where the slope is zero (a cubic at rest), and for an
  // integral of a signal, the unit default is left.
  CHECK(of("c2.q") == 4e-12);
  CHECK(of("firm.q") == doctest::Approx(1e-3 * 1e-6 * 10));
  CHECK(of("soft.q") == 1);
  CHECK(of("angle.integral") == 1);
  // Parameters move it.
  std::vector<std::string> pn = model.parameterNames();
  std::size_t c1 = static_cast<std::size_t>(std::find(pn.begin(), pn.end(), "C1") - pn.begin());
  p[c1] = 2e-6;
  nominal = model.nominalState(p);
  CHECK(of("c1.q") == doctest::Approx(1e-3 * 2e-6 * 10));
  CHECK(of("firm.q") == doctest::Approx(1e-3 * 2e-6 * 10));
}

TEST_CASE("nominal magnitudes from the energy a source-free model starts with") {
  // A struck mass between springs, and a wall's Sf(0), whose zero
  // amplitude says nothing: |p| <= sqrt(2 m W) and |q| <= sqrt(2 W / k)
  // with W = m v0^2 / 2, each times 1e-3.
  hbg::Model model = hbg::Compiler().compileString(R"(model Struck {
    parameter m = 2; parameter k = 50; parameter v0 = 3;
    Sf wall(0);
    I mass(m) { p0 = m * v0; } C left(1 / k) { q0 = 0; } C right(1 / k) { q0 = 0; }
    1 body; 1 fixed; 0 a; 0 b;
    bond wall -> fixed; bond fixed -> a; bond a -> left; bond a -> body;
    bond body -> mass; bond body -> b; bond b -> right; bond b -> fixed;
    output mass.f;
  })", "struck.hbg");
  std::vector<double> p = model.parameterValues();
  std::vector<double> nominal = model.nominalState(p);
  auto of = [&](const std::string &name) { return nominalOf(model, nominal, name); };
  double w = 2 * 3.0 * 3.0 / 2;
  CHECK(of("mass.p") == doctest::Approx(1e-3 * std::sqrt(2 * 2 * w)));
  CHECK(of("left.q") == doctest::Approx(1e-3 * std::sqrt(2 * w / 50)));
  CHECK(of("right.q") == doctest::Approx(1e-3 * std::sqrt(2 * w / 50)));
  // At rest, nothing gives a magnitude: the unit default.
  p[2] = 0; // v0
  nominal = model.nominalState(p);
  CHECK(of("mass.p") == 1);
  CHECK(of("left.q") == 1);
}

TEST_CASE("the Rosenbrock method: an RC of 1 ns beside one of 1 s, to t = 1") {
  // v1 = 1 - exp(-t / 1e-9), v2 = 1 - exp(-t): the fast cell settles at
  // once, and the steps follow the slow one.
  hbg::Model model = hbg::Compiler().compileString(R"(model StiffPair {
    Se v(1);
    R r1(1); C c1(1e-9) { q0 = 0; }
    R r2(1); C c2(1) { q0 = 0; }
    0 n; 1 a; 1 b;
    bond v -> n; bond n -> a; bond a -> r1; bond a -> c1;
    bond n -> b; bond b -> r2; bond b -> c2;
    output v1 = c1.e, v2 = c2.e;
  })", "stiff.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 0.01;
  opts.method = hbg::runtime::Method::Rosenbrock;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.steps < 1000);
  // Linear with constant coefficients: J once, its LU kept while h is.
  CHECK(r.jacobianCalls == 1);
  CHECK(r.factorisations < r.steps);
  const std::vector<double> &t = r.at("time"), &v1 = r.at("v1"), &v2 = r.at("v2");
  for (std::size_t k = 1; k < t.size(); ++k) {
    CHECK(std::abs(v1[k] - 1) < 1e-5);
    CHECK(std::abs(v2[k] - (1 - std::exp(-t[k]))) < 1e-4);
  }
}

TEST_CASE("the Rosenbrock method through events: the bouncing ball's impacts") {
  // Impacts at t1 (2 e^k sums) as examples/bouncing_ball.hbg's comment
  // gives; events are located on the Rosenbrock steps' Hermite output.
  hbg::Model model =
      hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/bouncing_ball.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 3;
  opts.dtOut = 0.01;
  opts.rtol = 1e-9;
  opts.method = hbg::runtime::Method::Rosenbrock;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  const double g = 9.81, h0 = 1, e = 0.8, v0 = std::sqrt(2 * g * h0), t1 = v0 / g;
  std::vector<double> impacts;
  for (const hbg::Event &ev : r.events)
    if (std::find(ev.modes.begin(), ev.modes.end(), "floor.touch=impact") != ev.modes.end())
      impacts.push_back(ev.time);
  REQUIRE(impacts.size() >= 5);
  double tk = t1;
  for (int k = 0; k < 5; ++k) {
    CHECK(std::abs(impacts[k] - tk) < 1e-6);
    tk += 2 * v0 / g * std::pow(e, k + 1);
  }
}
