//===- tests/driver/defaults_test.cpp - Well-posed models at default options ===//
//
// Models written as engineers write them, run with no options but their
// span: states that start at zero with no source behind them (the far end
// of a struck chain), a line driven through a filter of `integral`
// signals, initial values that decay to 1e-32. Every state has a scale
// (docs/numerics.md), so none of them collapses the step at t = 0. Each is
// checked against its eigenmodes or its matrix exponential.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "RunDefaults.h"
#include "TaylorExponential.h"
#include "TestMethod.h"

#include <Eigen/Dense>
#include <doctest/doctest.h>
#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// The velocities of a chain of n masses m between two walls, joined by
/// springs k, the first struck with v = 1: v(t) = V cos(w t) V^T e1 with
/// K / m = V diag(w^2) V^T.
struct ChainModes {
  ChainModes(int n, double m, double k) : n(n) {
    Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i) {
      K(i, i) = 2 * k / m;
      if (i + 1 < n)
        K(i, i + 1) = K(i + 1, i) = -k / m;
    }
    eig.compute(K);
    w = eig.eigenvalues().cwiseSqrt();
  }
  double velocity(int i, double t) const {
    double sum = 0;
    for (int j = 0; j < n; ++j)
      sum += eig.eigenvectors()(i, j) * eig.eigenvectors()(0, j) * std::cos(w(j) * t);
    return sum;
  }
  int n;
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig;
  Eigen::VectorXd w;
};

/// The worst error of `column` against `exact(t)` over the run.
template <typename F> double worstError(const hbg::Result &r, const std::string &column, F exact) {
  const std::vector<double> &t = r.at("time"), &y = r.at(column);
  double worst = 0;
  for (std::size_t k = 0; k < t.size(); ++k)
    worst = std::max(worst, std::abs(y[k] - exact(t[k])));
  return worst;
}

} // namespace

TEST_CASE("three masses and four springs between walls, the first struck, at default options") {
  // The masses at rest grow like t^3 and t^5 from exactly zero; with no
  // source behind them they take their scale from the energy the blow
  // gives the chain.
  hbg::Model model = hbg::Compiler().compileString(R"(import mechanical;
model ThreeMasses {
    parameter m = 1;
    parameter k = 100;
    Fixed left; Fixed right;
    Mass m1(m = m, v0 = 1); Mass m2(m = m); Mass m3(m = m);
    Spring s1(k = k); Spring s2(k = k); Spring s3(k = k); Spring s4(k = k);
    bond left.a -> s1.a; bond s1.b -> m1.a;
    bond m1.a -> s2.a; bond s2.b -> m2.a;
    bond m2.a -> s3.a; bond s3.b -> m3.a;
    bond m3.a -> s4.a; bond s4.b -> right.a;
    output m1.v, m2.v, m3.v;
})",
                                                   "three_masses.hbg");
  hbg::Result r = runAtDefaults(model, 2, 0.01);
  ChainModes modes(3, 1, 100);
  // Peak velocity 1 (the blow).
  for (int i = 0; i < 3; ++i) {
    std::string column = "m" + std::to_string(i + 1) + ".v";
    CAPTURE(column);
    CHECK(worstError(r, column, [&](double t) { return modes.velocity(i, t); }) < 1e-5);
  }
}

TEST_CASE("examples/mass_chain.hbg runs as written, with no absolute tolerance") {
  hbg::Model model =
      hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/mass_chain.hbg");
  hbg::Result r = hbg::Simulation(model).run(); // its experiment block: t_end and dt_out
  REQUIRE_MESSAGE(r.ok(), r.error);
  ChainModes modes(20, 0.1, 1000);
  CHECK(worstError(r, "mass[1].v", [&](double t) { return modes.velocity(0, t); }) < 1e-5);
  CHECK(worstError(r, "mass[20].v", [&](double t) { return modes.velocity(19, t); }) < 1e-5);
}

namespace {

/// ScalableTestSuite's TransmissionLine as an engineer writes it: N RLC
/// sections (Z0 = 50 ohm, one-way delay 1 us, 5 ohm in all) matched at the
/// load, driven by a unit step through a critically damped second-order
/// filter (w = 2e7 rad/s) of two `integral` signals into an MSe. The
/// source reads states, so no source amplitude reaches the line but
/// through the filter's states.
constexpr double kZ0 = 50, kDelay = 1e-6, kRtotal = 5, kW = 2e7;

std::string filteredLine(int n) {
  std::ostringstream os;
  os.precision(17);
  os << "model Line {\n  parameter Ls = " << kZ0 * kDelay / n
     << "; parameter Cs = " << kDelay / kZ0 / n << "; parameter Rs = " << kRtotal / n
     << "; parameter w = " << kW << ";\n"
     << "  signal y = integral(z);\n"
     << "  signal z = integral(w * w * (1 - y) - 2 * w * z);\n"
     << "  MSe src(y); R load(" << kZ0 << "); 1 s0;\n"
     << "  bond src -> s0; bond s0 -> l1;\n";
  for (int k = 1; k <= n; ++k) {
    os << "  I coil" << k << "(Ls); R r" << k << "(Rs); C cap" << k << "(Cs); 1 l" << k << "; 0 n"
       << k << ";\n"
       << "  bond l" << k << " -> coil" << k << "; bond l" << k << " -> r" << k << "; bond l" << k
       << " -> n" << k << "; bond n" << k << " -> cap" << k << ";\n";
    if (k < n)
      os << "  bond n" << k << " -> l" << k + 1 << ";\n";
  }
  os << "  bond n" << n << " -> load;\n  output v = cap" << n << ".e;\n}\n";
  return os.str();
}

/// The exact load voltage of filteredLine(n) at 0, dt, 2 dt, ..., in
/// coordinates where A's entries are of one size: the
/// filter's output y and its rate over w, and the sections' u = p /
/// sqrt(Ls) and v = q / sqrt(Cs).
std::vector<double> exactFilteredLine(int n, double dt, int steps) {
  double Ls = kZ0 * kDelay / n, Cs = kDelay / kZ0 / n, Rs = kRtotal / n;
  double a = 1 / std::sqrt(Ls * Cs), rs = Rs / Ls, rl = 1 / (kZ0 * Cs), in = 1 / std::sqrt(Ls);
  int m = 2 + 2 * n; // y, z / w, u_1..u_n, v_1..v_n
  auto apply = [&](const std::vector<double> &y, std::vector<double> &out, double step) {
    out[0] = kW * y[1];
    out[1] = kW * (step - y[0]) - 2 * kW * y[1];
    for (int k = 0; k < n; ++k) {
      double before = k == 0 ? in * y[0] : a * y[2 + n + k - 1];
      out[2 + k] = before - a * y[2 + n + k] - rs * y[2 + k];
      double next = k + 1 < n ? y[2 + k + 1] : 0;
      out[2 + n + k] = a * (y[2 + k] - next) - (k + 1 == n ? rl * y[2 + n + k] : 0);
    }
  };
  return taylorExponential(m, 2 * a + rs + rl + in + 3 * kW, dt, steps, apply,
                           [&](const std::vector<double> &y) { return y[m - 1] / std::sqrt(Cs); });
}

} // namespace

TEST_CASE("a filtered step into a transmission line of 10 to 1280 RLC sections, at default options") {
  // Worst errors at default options (docs/numerics.md): 4.4e-6 V (N = 10),
  // 1.5e-5 (40), 6.9e-5 (160), 5.9e-5 (1280).
  const double dt = 1e-7;
  const int steps = 40; // to 4 us
  for (int n : {10, 40, 160, 1280}) {
    CAPTURE(n);
    hbg::Model model = hbg::Compiler().compileString(filteredLine(n), "line.hbg");
    std::vector<double> exact = exactFilteredLine(n, dt, steps);
    // The step has arrived, less the line's resistive drop.
    CHECK(exact.back() == doctest::Approx(kZ0 / (kZ0 + kRtotal)).epsilon(0.03));
    hbg::Result r = runAtDefaults(model, steps * dt, dt);
    const std::vector<double> &t = r.at("time"), &v = r.at("v");
    REQUIRE(t.size() == exact.size());
    double worst = 0;
    for (std::size_t k = 0; k < t.size(); ++k)
      worst = std::max(worst, std::abs(v[k] - exact[k]));
    CAPTURE(worst);
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("oscillators whose initial displacements decay to 1e-32 run at default options") {
  // N masses on springs to a wall, each coupled to the next by a softer
  // spring; the ground springs start stretched by 0.4^(i - 1), the last
  // of 80 by 2.5e-32. A tiny initial value sets no scale: the energy the
  // model starts with does. Checked against exp(A t) of its state
  // equations: p' = -k g + kc (c_i - c_{i+1}), g' = p / m, c' = (p_{i-1}
  // - p_i) / m.
  for (int n : {40, 80}) {
    CAPTURE(n);
    std::ostringstream text;
    text << "import mechanical;\nmodel Oscillators {\n  parameter N = " << n << R"(;
    parameter m = 1; parameter k = 1; parameter r = 0.4;
    Fixed wall;
    for i in 1:N {
        Mass mass[i](m = m);
        Spring ground[i](k = k, x0 = r ^ (i - 1));
        bond mass[i].a -> ground[i].a; bond ground[i].b -> wall.a;
    }
    for i in 2:N {
        Spring couple[i](k = 0.1 * k);
        bond mass[i - 1].a -> couple[i].a; bond couple[i].b -> mass[i].a;
    }
    output mass[1].v, mass[2].v;
})";
    hbg::Model model = hbg::Compiler().compileString(text.str(), "oscillators.hbg");
    for (hbg::runtime::Method method :
         {hbg::runtime::Method::Auto, hbg::runtime::Method::Rosenbrock}) {
      hbg::Result r = runAtDefaults(model, 10, 0.5, method);
      int size = 3 * n - 1;
      auto P = [](int i) { return i; };
      auto G = [n](int i) { return n + i; };
      auto C = [n](int i) { return 2 * n + i - 1; }; // coupling springs 1..n-1
      Eigen::MatrixXd A = Eigen::MatrixXd::Zero(size, size);
      Eigen::VectorXd x0 = Eigen::VectorXd::Zero(size);
      for (int i = 0; i < n; ++i) {
        A(P(i), G(i)) -= 1;
        if (i >= 1) {
          A(P(i), C(i)) += 0.1;
          A(C(i), P(i - 1)) += 1;
          A(C(i), P(i)) -= 1;
        }
        if (i + 1 < n)
          A(P(i), C(i + 1)) -= 0.1;
        A(G(i), P(i)) = 1;
        x0(G(i)) = std::pow(0.4, i);
      }
      const std::vector<double> &t = r.at("time");
      double worst = 0;
      for (std::size_t k = 0; k < t.size(); ++k) {
        Eigen::VectorXd x = (A * t[k]).exp() * x0;
        worst = std::max({worst, std::abs(r.at("mass[1].v")[k] - x(P(0))),
                          std::abs(r.at("mass[2].v")[k] - x(P(1)))});
      }
      CAPTURE(worst);
      CHECK(worst < 1e-5); // of a peak velocity of 0.97
    }
  }
}

TEST_CASE("a PWM of duty 0 and comparisons on their threshold at t = 0, under every method") {
  // A soft start's PWM of duty 0 never switches on, but its comparison
  // touches its threshold at t = 0, and so do `time >= 0` and `step(0)`:
  // the next time event is a few ulps after 0. The stiff method cannot
  // divide by a step that small, and a step that no longer moved t was
  // retried forever; now each lands there and goes on. An RC of 1 ms
  // driven by 10 V (or 0 V) against its closed form; ctest's time limit
  // on this test catches a run that spins.
  for (const char *drive : {"10 * pwm(1000, 0)", "10 * step(0)", "if time >= 0 then 10 else 0"}) {
    std::string text = std::string(R"(import electrical;
model SoftStart {
    VoltageSource src(v = )") + drive + R"();
    Resistor r(R = 10); Capacitor c(C = 1e-4); Ground gnd;
    0 a; 0 b; 0 z;
    bond src.p -> a; bond a -> r.p; bond r.n -> b; bond b -> c.p; bond c.n -> z;
    bond z -> src.n; bond z -> gnd.p;
    output v = c.v;
})";
    hbg::Model model = hbg::Compiler().compileString(text, "soft_start.hbg");
    double amplitude = std::string(drive).find("pwm") != std::string::npos ? 0 : 10;
    for (hbg::runtime::Method method : kEveryMethod) {
      CAPTURE(drive);
      CAPTURE(static_cast<int>(method));
      hbg::Result r = runAtDefaults(model, 0.01, 1e-4, method);
      CHECK(worstError(r, "v", [&](double t) { return amplitude * (1 - std::exp(-t / 1e-3)); }) <
            1e-5 * 10);
    }
  }
}

TEST_CASE("a brake brings an inertia to rest and holds it, under every method") {
  // The standard library's Clutch with one flange on a FixedShaft, as an
  // engineer writes a brake: kinetic torque 2 on J = 1 spinning at 10,
  // so w = 10 - 2 t until it stops at t = 5, then held (the holding
  // torque 0 is inside Ts). At the lock the body's momentum jumps from
  // the ~1e-14 left at the located crossing to 0: no jump at the scale
  // the inertia has (the energy it starts with), where a zero nominal
  // judged that rounding as an impulse and the run ended in Zeno.
  hbg::Model model = hbg::Compiler().compileString(R"(import rotational;
model Brake {
    parameter J = 1;
    parameter w0 = 10;
    Inertia body(J = J, w0 = w0);
    Clutch brake(Ts = 3, Tk = 2);
    FixedShaft ground;
    bond body.a -> brake.a; bond brake.b -> ground.a;
    output w = body.w, slipping = brake.slipping;
})",
                                                   "brake.hbg");
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runAtDefaults(model, 8, 0.05, method);
    REQUIRE(r.events.size() == 2);
    CHECK(r.events[1].time == doctest::Approx(5).epsilon(1e-9));
    CHECK(r.events[1].modes.back() == "brake.slip=locked");
    CHECK(worstError(r, "w", [](double t) { return std::max(10 - 2 * t, 0.0); }) < 1e-8);
    CHECK(r.at("slipping").back() == 0);
  }
}

TEST_CASE("a velocity step into storage in derivative causality: the impulse by the exact remap") {
  // MSf V step(1) on a 0-junction with masses m1 and m2: their
  // velocities add up to V, and the impulse through the common force is
  // equal on both: each takes the momentum V m1 m2 / (m1 + m2) = 1.5, not
  // V m2 = 6 into the mass the causality made dependent. The source
  // supplies the energy 1.5^2 / 2 (1 / m1 + 1 / m2) = 1.5.
  const char *text = R"(model VelocityStep {
    parameter V = 2; parameter m1 = 1; parameter m2 = 3;
    MSf drive(V * step(1));
    I a(m1); I b(m2);
    0 j;
    bond drive -> j; bond j -> a; bond j -> b;
    output pa = a.p, pb = b.p;
})";
  hbg::Model model = hbg::Compiler().compileString(text, "velocity_step.hbg");
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runAtDefaults(model, 2, 0.25, method);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].time == doctest::Approx(1).epsilon(1e-12));
    CHECK(r.events[0].removed == doctest::Approx(-1.5).epsilon(1e-12));
    CHECK(r.at("pa").back() == doctest::Approx(1.5).epsilon(1e-12));
    CHECK(r.at("pb").back() == doctest::Approx(1.5).epsilon(1e-12));
    CHECK(r.at("pa").front() == 0);
    CHECK(r.warnings.empty());
  }
  // Back down: the source takes the energy back, which is no loss the
  // audit warns of. Before the step, a holds 0 and b 6 (they start with
  // b following the source); each gives up 1.5.
  std::string down = text;
  down.replace(down.find("V * step(1)"), 11, "V - V * step(1)");
  hbg::Model back = hbg::Compiler().compileString(down, "velocity_step_down.hbg");
  hbg::Result r = runAtDefaults(back, 2, 0.25);
  CHECK(r.at("pa").back() == doctest::Approx(-1.5).epsilon(1e-12));
  CHECK(r.at("pb").back() == doctest::Approx(4.5).epsilon(1e-12));
  CHECK(r.events.at(0).removed == doctest::Approx(6 - 1.5 * 1.5 / 2 - 4.5 * 4.5 / 6).epsilon(1e-12));
  CHECK(r.warnings.empty());
}

TEST_CASE("the MSL Rotational Friction example: its sequence of stick and slip, under every method") {
  // Modelica.Mechanics.Rotational.Examples.Friction with the standard
  // library: a motor torque 200 sin(100 t) until t = 0.5 on inertia3
  // (1 kg m^2, 100 rad/s), a clutch of 80 N m to inertia2 (0.05, 90 rad/s),
  // a spring-damper (160, 1) to inertia1 (1, 90 rad/s), which a brake of
  // 800 N m holds from t = 0.5. The reference is an independent
  // event-driven solution (SciPy's DOP853 at rtol 1e-13, phases restarted
  // at each event, agreeing to 1e-12 s across tolerances and methods and
  // with a time-stepping solution of the contacts).
  hbg::Model model = hbg::Compiler().compileString(R"(import rotational;
model Friction {
    MSe motor(200 * sin(100 * time) * (1 - step(0.5)));
    Inertia inertia3(J = 1, w0 = 100);
    Clutch clutch(Ts = 80, Tk = 80);
    Inertia inertia2(J = 0.05, w0 = 90);
    TorsionSpring spring(k = 160);
    RotationalDamper damper(d = 1);
    Inertia inertia1(J = 1, w0 = 90);
    Clutch brake(Ts = 800, Tk = 800, engage = step(0.5));
    FixedShaft ground;
    bond motor -> inertia3.a;
    bond inertia3.a -> clutch.a; bond clutch.b -> inertia2.a;
    bond inertia2.a -> spring.a; bond spring.b -> inertia1.a;
    bond inertia2.a -> damper.a; bond damper.b -> inertia1.a;
    bond inertia1.a -> brake.a; bond brake.b -> ground.a;
    output w1 = inertia1.w, w2 = inertia2.w, w3 = inertia3.w;
})",
                                                   "friction.hbg");
  // The clutch locks, slips forward, locks; the brake engages slipping at
  // 0.5; the clutch slips; the brake locks; the clutch locks.
  const std::vector<std::pair<double, std::string>> events = {
      {0, "clutch.slip=forward, brake.slip=open"},
      {0.006779708878, "clutch.slip=locked, brake.slip=open"},
      {0.059339284027, "clutch.slip=forward, brake.slip=open"},
      {0.109289826824, "clutch.slip=locked, brake.slip=open"},
      {0.5, "clutch.slip=locked, brake.slip=forward"},
      {0.534248338546, "clutch.slip=forward, brake.slip=forward"},
      {0.640613940788, "clutch.slip=forward, brake.slip=locked"},
      {1.663641442789, "clutch.slip=locked, brake.slip=locked"}};
  const std::vector<std::vector<double>> speeds = {
      {0.25, 97.0367871015, 92.8388640712, 92.8388640712},
      {1.0, 0, -0.1131638173, 53.0913774984},
      {2.0, 0, 4.4492787392, 4.4492787392},
      {3.0, 0, 2.2898714711, 2.2898714711}};
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runAtDefaults(model, 3, 0.25, method);
    REQUIRE(r.events.size() == events.size());
    for (std::size_t k = 0; k < events.size(); ++k) {
      CAPTURE(k);
      CHECK(std::abs(r.events[k].time - events[k].first) < 1e-5);
      CHECK(r.events[k].modes.back() == events[k].second);
    }
    const std::vector<double> &t = r.at("time");
    for (const std::vector<double> &s : speeds) {
      auto row = std::find(t.begin(), t.end(), s[0]);
      REQUIRE(row != t.end());
      std::size_t i = std::size_t(row - t.begin());
      // 1e-5 of the speeds' scale, 100 rad/s.
      CHECK(std::abs(r.at("w1")[i] - s[1]) < 1e-3);
      CHECK(std::abs(r.at("w2")[i] - s[2]) < 1e-3);
      CHECK(std::abs(r.at("w3")[i] - s[3]) < 1e-3);
    }
  }
}
