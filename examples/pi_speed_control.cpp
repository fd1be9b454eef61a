// A PI speed controller in C++ driving the DC motor of
// examples/dc_motor_speed.hbg through hbg's step API.
//
//   pi_speed_control [dc_motor_speed.hbg]
//
// Every T = 1 ms the controller reads the load's speed, and sets the supply
// voltage for the next period (held constant over it, as a digital
// controller's output is):
//
//   e_k = r(t_k) - omega(t_k),   I_k = I_{k-1} + T e_k,   V_k = Kp e_k + Ki I_k
//
// The reference steps from 0 to 20 rad/s at t = 0 and down to 10 rad/s at
// t = 0.5 s. The plant is linear, so the sampled closed loop has an exact
// solution: over a period with V held, x = (i, omega) goes to
// Phi x + Gamma V, Phi = e^{A T} and Gamma = A^{-1} (Phi - 1) B. The
// program prints the trajectory and compares it with that recurrence
// (Phi and Gamma in closed form from A's two real eigenvalues), and exits
// with status 1 when they differ by more than 1e-7 of the reference.

#include "hbg/hbg.h"

#include <cmath>
#include <cstdio>
#include <exception>

namespace {
// The model's parameter defaults.
const double Ra = 1.0, La = 0.01, K = 0.05, n = 0.1, J = 0.02, b = 0.01;
// The controller: period, gains (Ki / Kp puts the PI zero on the
// mechanical pole) and reference.
const double T = 1e-3, Kp = 2.0, Ki = 30.0, tEnd = 1.0;
double reference(double t) { return t < 0.5 ? 20.0 : 10.0; }

/// x_{k+1} = Phi x_k + Gamma V_k for the motor (2 x 2, closed form).
struct Discrete {
  double phi[2][2], gamma[2];
};

Discrete discretise() {
  const double A[2][2] = {{-Ra / La, -K / (n * La)}, {K / (n * J), -b / J}};
  const double B[2] = {1 / La, 0};
  // A's eigenvalues are real and distinct for these parameters; Sylvester:
  // f(A) = (f(l1) (A - l2) - f(l2) (A - l1)) / (l1 - l2).
  double tr = A[0][0] + A[1][1], det = A[0][0] * A[1][1] - A[0][1] * A[1][0];
  double root = std::sqrt(tr * tr / 4 - det);
  double l1 = tr / 2 + root, l2 = tr / 2 - root;
  auto apply = [&](double f1, double f2, double out[2][2]) {
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        double id = r == c ? 1.0 : 0.0;
        out[r][c] = (f1 * (A[r][c] - l2 * id) - f2 * (A[r][c] - l1 * id)) / (l1 - l2);
      }
  };
  Discrete d;
  apply(std::exp(l1 * T), std::exp(l2 * T), d.phi);
  // The integral of e^{A s} over [0, T]: f(l) = (e^{l T} - 1) / l.
  double integral[2][2];
  apply(std::expm1(l1 * T) / l1, std::expm1(l2 * T) / l2, integral);
  for (int r = 0; r < 2; ++r)
    d.gamma[r] = integral[r][0] * B[0] + integral[r][1] * B[1];
  return d;
}
} // namespace

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : "dc_motor_speed.hbg";
  try {
    hbg::Model motor = hbg::Compiler().compileFile(file);
    hbg::SimulationOptions opts;
    opts.rtol = 1e-10;
    opts.atol = 1e-12;
    hbg::Simulation sim(motor, opts);
    sim.start();

    Discrete d = discretise();
    double exact[2] = {0, 0}; // (i, omega)
    double integral = 0, exactIntegral = 0, worst = 0;
    const int steps = static_cast<int>(std::lround(tEnd / T));
    std::printf("time,omega,voltage,omega_exact\n");
    for (int k = 0; k <= steps; ++k) {
      double t = k * T;
      // The controller, on hbg's measurement.
      double e = reference(t) - sim.output("omega");
      integral += T * e;
      double V = Kp * e + Ki * integral;
      // The same controller on the exact recurrence.
      double ex = reference(t) - exact[1];
      exactIntegral += T * ex;
      double Vx = Kp * ex + Ki * exactIntegral;
      worst = std::fmax(worst, std::fabs(sim.output("omega") - exact[1]));
      if (k % 50 == 0)
        std::printf("%.3f,%.9f,%.9f,%.9f\n", t, sim.output("omega"), V, exact[1]);
      if (k == steps)
        break;
      sim.setInput("V", V);
      sim.advance((k + 1) * T);
      double i = exact[0], w = exact[1];
      exact[0] = d.phi[0][0] * i + d.phi[0][1] * w + d.gamma[0] * Vx;
      exact[1] = d.phi[1][0] * i + d.phi[1][1] * w + d.gamma[1] * Vx;
    }
    // Integral action: the speed settles on the reference.
    double settled = std::fabs(sim.output("omega") - reference(tEnd));
    std::fprintf(stderr,
                 "pi_speed_control: %d periods, largest |omega - exact| = %.3g rad/s, "
                 "|omega(1) - r| = %.3g rad/s\n",
                 steps, worst, settled);
    if (worst > 1e-7 * 20 || settled > 1e-3) {
      std::fprintf(stderr, "pi_speed_control: the closed loop does not match its exact solution\n");
      return 1;
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
