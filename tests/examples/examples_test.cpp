// Each example in examples/ is compiled, simulated at tight tolerance and
// compared with its closed-form solution, with the method HBG_TEST_METHOD
// names (TestMethod.h).

#include "hbg/hbg.h"
#include "TestMethod.h"

#include <Eigen/Dense>
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <functional>
#include <string>

namespace {

const std::string kExamples = std::string(HBG_SOURCE_DIR) + "/examples/";

hbg::Result simulate(const std::string &file, double tEnd, double dtOut) {
  hbg::Compiler compiler;
  hbg::Model model = compiler.compileFile(kExamples + file);
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  opts.dtOut = dtOut;
  opts.method = testMethod();
  opts.rtol = 1e-10;
  opts.step = 0;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

/// Largest error of `column` against `exact(t)`, relative to the largest
/// magnitude of the exact solution over the run (so zero crossings of an
/// oscillation do not divide by zero).
double relativeError(const hbg::Result &r, const std::string &column,
                     const std::function<double(double)> &exact) {
  const std::vector<double> &t = r.at("time");
  const std::vector<double> &y = r.at(column);
  double scale = 0, err = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    scale = std::max(scale, std::fabs(exact(t[i])));
  for (std::size_t i = 0; i < t.size(); ++i)
    err = std::max(err, std::fabs(y[i] - exact(t[i])));
  return err / scale;
}

} // namespace

TEST_CASE("rlc: series RLC step response") {
  const double V = 1, R = 1, L = 0.5, C = 0.1;
  const double alpha = R / (2 * L), wd = std::sqrt(1 / (L * C) - alpha * alpha);
  hbg::Result r = simulate("rlc.hbg", 5, 0.01);
  CHECK(r.at("time").size() == 501);
  auto q = [&](double t) {
    return C * V * (1 - std::exp(-alpha * t) * (std::cos(wd * t) + alpha / wd * std::sin(wd * t)));
  };
  auto i = [&](double t) { return V / (L * wd) * std::exp(-alpha * t) * std::sin(wd * t); };
  CHECK(relativeError(r, "capacitor.q", q) < 1e-7);
  CHECK(relativeError(r, "current", i) < 1e-7);
}

TEST_CASE("mass_spring_damper: free damped oscillation") {
  const double m = 2, k = 50, b = 1, x0 = 0.1;
  const double alpha = b / (2 * m), w0 = std::sqrt(k / m), wd = std::sqrt(w0 * w0 - alpha * alpha);
  hbg::Result r = simulate("mass_spring_damper.hbg", 10, 0.01);
  auto x = [&](double t) {
    return x0 * std::exp(-alpha * t) * (std::cos(wd * t) + alpha / wd * std::sin(wd * t));
  };
  auto v = [&](double t) { return -x0 * w0 * w0 / wd * std::exp(-alpha * t) * std::sin(wd * t); };
  CHECK(relativeError(r, "position", x) < 1e-7);
  CHECK(relativeError(r, "velocity", v) < 1e-7);
}

TEST_CASE("dc_motor: steady-state speed, current and torque") {
  const double V = 12, Ra = 1, K = 0.05, n = 0.1, b = 0.01;
  hbg::Result r = simulate("dc_motor.hbg", 3, 0.01);
  // Steady state: K i / n = b omega (load torque balance) and
  // V = Ra i + K omega / n (electrical balance).
  const double omega = V * K * n / (Ra * b * n * n + K * K);
  const double current = b * n * omega / K;
  CHECK(r.at("omega").back() == doctest::Approx(omega).epsilon(1e-7));
  CHECK(r.at("current").back() == doctest::Approx(current).epsilon(1e-7));
  CHECK(r.at("torque").back() == doctest::Approx(K * current).epsilon(1e-7));
  // The motor starts from rest.
  CHECK(r.at("omega").front() == 0);
}

TEST_CASE("dc_motor: transient against the linear system's exact solution") {
  // x = (i, omega): x' = A x + B V with A's eigenvalues real and distinct
  // for these parameters, so x(t) = x_ss + c1 v1 e^{l1 t} + c2 v2 e^{l2 t}.
  const double V = 12, Ra = 1, La = 0.01, K = 0.05, n = 0.1, J = 0.02, b = 0.01;
  const double a11 = -Ra / La, a12 = -K / (n * La), a21 = K / (n * J), a22 = -b / J;
  const double tr = a11 + a22, det = a11 * a22 - a12 * a21;
  const double disc = tr * tr / 4 - det;
  REQUIRE(disc > 0);
  const double l1 = tr / 2 + std::sqrt(disc), l2 = tr / 2 - std::sqrt(disc);
  const double wss = V * K * n / (Ra * b * n * n + K * K), iss = b * n * wss / K;
  // Eigenvectors (a12, l - a11); initial deviation is -x_ss.
  const double v1a = a12, v1b = l1 - a11, v2a = a12, v2b = l2 - a11;
  const double d0 = -iss, d1 = -wss;
  const double den = v1a * v2b - v2a * v1b;
  const double c1 = (d0 * v2b - v2a * d1) / den, c2 = (v1a * d1 - d0 * v1b) / den;
  hbg::Result r = simulate("dc_motor.hbg", 1, 0.001);
  auto i = [&](double t) { return iss + c1 * v1a * std::exp(l1 * t) + c2 * v2a * std::exp(l2 * t); };
  auto w = [&](double t) { return wss + c1 * v1b * std::exp(l1 * t) + c2 * v2b * std::exp(l2 * t); };
  CHECK(relativeError(r, "current", i) < 1e-7);
  CHECK(relativeError(r, "omega", w) < 1e-7);
  // dc_motor_speed.hbg is the same motor with V an input: set to 12 V
  // before the run, the same transient (pi_speed_control.cpp closes the
  // loop around it).
  hbg::Model speed = hbg::Compiler().compileFile(kExamples + "dc_motor_speed.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 0.001;
  opts.method = testMethod();
  opts.rtol = 1e-10;
  hbg::Simulation sim(speed, opts);
  sim.setInput("V", V);
  hbg::Result rs = sim.run();
  REQUIRE_MESSAGE(rs.ok(), rs.error);
  CHECK(relativeError(rs, "current", i) < 1e-7);
  CHECK(relativeError(rs, "omega", w) < 1e-7);
}

TEST_CASE("dc_motor_digital: a sampled PI in the model against the exact sampled closed loop") {
  // Over a period with V held, x = (i, omega) goes to Phi x + Gamma V,
  // Phi = e^{A T}, Gamma = A^{-1} (Phi - 1) B (A's eigenvalues are real
  // and distinct: Sylvester's formula). The controller at tick k reads
  // e_k = r(t_k) - omega_k: a function of time alone that jumps at a tick
  // is read at its value from the tick on (10 at 0.5 s).
  const double Ra = 1, La = 0.01, K = 0.05, n = 0.1, J = 0.02, b = 0.01;
  const double T = 1e-3, Kp = 2, Ki = 30;
  const Eigen::Matrix2d A{{-Ra / La, -K / (n * La)}, {K / (n * J), -b / J}};
  const Eigen::Vector2d B{1 / La, 0};
  const double tr = A.trace(), det = A.determinant();
  const double l1 = tr / 2 + std::sqrt(tr * tr / 4 - det), l2 = tr / 2 - std::sqrt(tr * tr / 4 - det);
  auto sylvester = [&](double f1, double f2) {
    Eigen::Matrix2d I = Eigen::Matrix2d::Identity();
    return Eigen::Matrix2d((f1 * (A - l2 * I) - f2 * (A - l1 * I)) / (l1 - l2));
  };
  const Eigen::Matrix2d Phi = sylvester(std::exp(l1 * T), std::exp(l2 * T));
  const Eigen::Vector2d Gamma = sylvester(std::expm1(l1 * T) / l1, std::expm1(l2 * T) / l2) * B;

  // At the defaults, as a user runs it (its experiment's dt_out puts a
  // row on every tick).
  hbg::Model model = hbg::Compiler().compileFile(kExamples + "dc_motor_digital.hbg");
  hbg::SimulationOptions opts;
  opts.method = testMethod();
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  const std::vector<double> &t = r.at("time"), &omega = r.at("omega"), &volts = r.at("voltage");

  Eigen::Vector2d x(0, 0);
  double integral = 0, worstW = 0, worstV = 0;
  std::size_t row = 0, ticks = 0;
  for (int k = 0; k <= 1000; ++k) {
    double tk = k * T;
    double e = (k < 500 ? 20.0 : 10.0) - x(1);
    integral += T * Ki / Kp * e;
    double V = Kp * (e + integral);
    // The rows at t_k: the last of them is after the tick.
    while (row + 1 < t.size() && t[row + 1] <= tk + 1e-9)
      ++row;
    if (std::fabs(t[row] - tk) < 1e-9) {
      worstW = std::max(worstW, std::fabs(omega[row] - x(1)));
      worstV = std::max(worstV, std::fabs(volts[row] - V));
      ++ticks;
    }
    x = Phi * x + Gamma * V;
  }
  INFO("largest |omega - exact| " << worstW << " rad/s, |V - exact| " << worstV << " V");
  CHECK(ticks == 1001);
  // The plant at the default rtol 1e-6: speeds near 20 rad/s to 2e-5,
  // and the voltage, Kp = 2 times the speed's error, to 4e-5 plus the
  // integral's.
  CHECK(worstW < 2e-5);
  CHECK(worstV < 1e-4);
  // Integral action: the speed settles on the reference.
  CHECK(omega.back() == doctest::Approx(10).epsilon(1e-4));
}

TEST_CASE("falling_drag: terminal velocity through a nonlinear R") {
  const double m = 1, g = 9.81, c = 0.25, vt = std::sqrt(m * g / c);
  hbg::Result r = simulate("falling_drag.hbg", 5, 0.01);
  auto v = [&](double t) { return vt * std::tanh(g * t / vt); };
  // Distance fallen: integral of v = vt^2 / g * ln(cosh(g t / vt)).
  auto h = [&](double t) { return -vt * vt / g * std::log(std::cosh(g * t / vt)); };
  CHECK(relativeError(r, "velocity", v) < 1e-7);
  CHECK(relativeError(r, "height", h) < 1e-7);
}

TEST_CASE("rigid_masses: two rigidly coupled masses oscillate as one") {
  const double m1 = 1, m2 = 3, k = 100, F = 10, w = std::sqrt(k / (m1 + m2));
  hbg::Result r = simulate("rigid_masses.hbg", 3, 0.01);
  auto x = [&](double t) { return F / k * (1 - std::cos(w * t)); };
  auto v = [&](double t) { return F / k * w * std::sin(w * t); };
  CHECK(relativeError(r, "position", x) < 1e-7);
  CHECK(relativeError(r, "velocity", v) < 1e-7);
  // The dependent mass's momentum follows the common velocity, and the
  // force it takes is its share of the net force: m2 / (m1 + m2).
  auto p2 = [&](double t) { return m2 * v(t); };
  auto f2 = [&](double t) { return m2 / (m1 + m2) * (F - k * x(t)); };
  CHECK(relativeError(r, "back_momentum", p2) < 1e-7);
  CHECK(relativeError(r, "contact_force", f2) < 1e-7);
}

TEST_CASE("parallel_capacitors: tau = R (C1 + C2), charge shared by capacitance") {
  const double V = 1, R = 1000, C1 = 1e-4, C2 = 3e-4, tau = R * (C1 + C2);
  hbg::Result r = simulate("parallel_capacitors.hbg", 2, 0.005);
  auto v = [&](double t) { return V * (1 - std::exp(-t / tau)); };
  CHECK(relativeError(r, "voltage", v) < 1e-7);
  CHECK(relativeError(r, "q2", [&](double t) { return C2 * v(t); }) < 1e-7);
  CHECK(relativeError(r, "i2", [&](double t) { return C2 * V / tau * std::exp(-t / tau); }) < 1e-7);
}

TEST_CASE("gear_inertias: effective inertia J1 + n^2 J2") {
  const double T = 2, J1 = 0.01, J2 = 0.5, n = 0.2, b = 0.3;
  const double J = J1 + n * n * J2, B = n * n * b;
  hbg::Result r = simulate("gear_inertias.hbg", 5, 0.01);
  auto w1 = [&](double t) { return T / B * (1 - std::exp(-B * t / J)); };
  CHECK(relativeError(r, "motor_speed", w1) < 1e-7);
  CHECK(relativeError(r, "load_speed", [&](double t) { return n * w1(t); }) < 1e-7);
  CHECK(relativeError(r, "load_momentum", [&](double t) { return J2 * n * w1(t); }) < 1e-7);
}

TEST_CASE("resistor_bridge: the capacitor charges through the bridge's Thevenin equivalent") {
  const double V = 10, R1 = 100, R2 = 220, R3 = 330, R4 = 470, R5 = 150, C = 1e-5;
  // Nodal analysis of nodes b and d with the capacitor removed.
  const double g11 = 1 / R1 + 1 / R3 + 1 / R5, g12 = -1 / R5, g22 = 1 / R2 + 1 / R4 + 1 / R5;
  const double det = g11 * g22 - g12 * g12;
  const double vth = (g11 * (V / R2) - g12 * (V / R1)) / det; // node d, open circuit
  const double rth = g11 / det;                                // seen from node d
  hbg::Result r = simulate("resistor_bridge.hbg", 0.01, 2e-5);
  auto v = [&](double t) { return vth * (1 - std::exp(-t / (rth * C))); };
  CHECK(relativeError(r, "voltage", v) < 1e-7);
  // Bridge current from the node voltages: (vb - vd) / R5.
  auto bridge = [&](double t) {
    double vd = v(t);
    double vb = (V / R1 + vd / R5) / g11;
    return (vb - vd) / R5;
  };
  CHECK(relativeError(r, "bridge_current", bridge) < 1e-7);
}

TEST_CASE("diode_loop: Newton-solved loop settles at the Lambert-W steady state") {
  const double V = 5, R = 100, RL = 1000, Is = 1e-12, Vt = 0.025, Rt = R + RL;
  // w = W(x) with x = Rt Is / Vt exp((V + Rt Is) / Vt), about e^200: solved
  // in logarithms, w + ln w = ln x, by Newton's iteration.
  const double logArg = std::log(Rt * Is / Vt) + (V + Rt * Is) / Vt;
  double w = logArg - std::log(logArg);
  for (int k = 0; k < 50; ++k)
    w -= (w + std::log(w) - logArg) / (1 + 1 / w);
  const double i = Vt / Rt * w - Is;
  hbg::Result r = simulate("diode_loop.hbg", 2, 0.01);
  CHECK(r.at("current").back() == doctest::Approx(i).epsilon(1e-7));
  CHECK(r.at("voltage").back() == doctest::Approx(RL * i).epsilon(1e-7));
  CHECK(r.at("diode_voltage").back() == doctest::Approx(Vt * std::log1p(i / Is)).epsilon(1e-7));
  // At t = 0 the capacitor is empty: the loop alone sets the current,
  // i = Is (exp((V - R i) / Vt) - 1), solved here by bisection.
  double lo = 0, hi = V / R;
  for (int k = 0; k < 200; ++k) {
    double mid = (lo + hi) / 2;
    (mid - Is * std::expm1((V - R * mid) / Vt) < 0 ? lo : hi) = mid;
  }
  CHECK(r.at("current").front() == doctest::Approx(lo).epsilon(1e-9));
}

TEST_CASE("mass_chain: the struck chain of 20 against its eigenmodes") {
  // m x'' = -K x, K = k tridiag(-1, 2, -1): v(t) = V cos(w t) V^T v0 and
  // x(t) = V sin(w t) / w V^T v0, with K / m = V diag(w^2) V^T.
  const int n = 20;
  const double m = 0.1, k = 1000;
  hbg::Result r = simulate("mass_chain.hbg", 0.5, 0.01);
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    K(i, i) = 2 * k / m;
    if (i + 1 < n)
      K(i, i + 1) = K(i + 1, i) = -k / m;
  }
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
  Eigen::VectorXd w = eig.eigenvalues().cwiseSqrt();
  Eigen::VectorXd c = eig.eigenvectors().row(0).transpose(); // V^T v0, v0 = e1
  auto mode = [&](int i, double t, bool velocity) {
    double sum = 0;
    for (int j = 0; j < n; ++j)
      sum += eig.eigenvectors()(i, j) * c(j) *
             (velocity ? std::cos(w(j) * t) : std::sin(w(j) * t) / w(j));
    return sum;
  };
  CHECK(relativeError(r, "mass[1].v", [&](double t) { return mode(0, t, true); }) < 1e-7);
  CHECK(relativeError(r, "mass[20].v", [&](double t) { return mode(n - 1, t, true); }) < 1e-7);
  CHECK(relativeError(r, "end", [&](double t) { return mode(n - 1, t, false); }) < 1e-7);
}

TEST_CASE("every example file has a closed-form test here") {
  // A new example must come with a check in this file: list it here.
  const std::set<std::string> tested = {
      "rlc.hbg",          "mass_spring_damper.hbg",  "dc_motor.hbg",
      "falling_drag.hbg", "rigid_masses.hbg",        "parallel_capacitors.hbg",
      "gear_inertias.hbg", "resistor_bridge.hbg",    "diode_loop.hbg",
      "mass_chain.hbg", "dc_motor_speed.hbg", "dc_motor_digital.hbg",
      // Switched models, checked in hybrid_examples_test.cpp.
      "collision_inelastic.hbg", "collision_elastic.hbg", "bouncing_ball.hbg",
      "tank_valves.hbg", "rectifier.hbg", "buck.hbg", "pwm_rc.hbg", "ideal_switch.hbg",
      "stick_slip.hbg", "freewheel.hbg", "boost.hbg", "three_phase_bridge.hbg",
      "hydraulic_press.hbg", "conveyor.hbg", "relay_motor.hbg", "h_bridge.hbg",
      "synchronous_buck.hbg"};
  std::set<std::string> found;
  for (const auto &entry : std::filesystem::directory_iterator(kExamples))
    if (entry.path().extension() == ".hbg")
      found.insert(entry.path().filename().string());
  CHECK(found == tested);
}
