//===- tests/driver/stdlib_test.cpp - The standard library ----------------===//
//
// Each component of stdlib/ in a small circuit, against a closed form; and
// imports: by name from the standard library, from --lib-path and HBG_PATH
// directories, and by path relative to the importing file.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

hbg::Result run(const std::string &text, double tEnd, double dtOut,
                hbg::CompilerOptions copts = {}) {
  hbg::Model model = hbg::Compiler(copts).compileString(text, "stdlib.hbg");
  hbg::SimulationOptions o;
  o.tEnd = tEnd;
  o.dtOut = dtOut;
  o.rtol = 1e-10;
  hbg::Result r = hbg::Simulation(model, o).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

/// The clutch test's closed form (below): speeds and torque at t, locked
/// from `lock` (the located event) to 4.
void clutchClosedForm(double t, double lock, double &w1, double &w2, double &tau) {
  if (t < lock)
    w1 = 10 - 2 * t, w2 = 2 * t, tau = 2;
  else if (t < 4)
    w1 = w2 = 5, tau = 0;
  else if (t < 6)
    w1 = 5 + 6 * (t - 4), w2 = 5 + 2 * (t - 4), tau = 2;
  else
    w1 = 17 + 8 * (t - 6), w2 = 9, tau = 0;
}

std::string compileError(const std::string &text, const std::string &name = "stdlib.hbg",
                         hbg::CompilerOptions copts = {}) {
  try {
    hbg::Compiler(copts).compileString(text, name);
  } catch (const hbg::CompileError &e) {
    return e.what();
  }
  return "";
}

/// A scratch directory, removed at the end of the test.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    dir = std::filesystem::temp_directory_path() /
          ("hbg_stdlib_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::create_directories(dir);
  }
  ~Scratch() { std::filesystem::remove_all(dir); }
  static int &counter() {
    static int n = 0;
    return n;
  }
  std::string write(const std::string &name, const std::string &text) const {
    std::filesystem::path p = dir / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

} // namespace

TEST_CASE("stdlib electrical: RC charging through a resistor") {
  // v_C = V (1 - exp(-t / (R C))), i = V / R exp(-t / (R C)).
  hbg::Result r = run(R"(
import electrical;
model RC {
    VoltageSource src(V = 5);
    Resistor r(R = 2);
    Capacitor c(C = 0.25);
    Ground gnd;
    0 a; 0 b; 0 z;
    bond src.p -> a; bond a -> r.p; bond r.n -> b; bond b -> c.p; bond c.n -> z;
    bond z -> src.n; bond z -> gnd.p;
    output vc = c.v, i = r.i;
}
)",
                      2, 0.25);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("vc")[k] == doctest::Approx(5 * (1 - std::exp(-t / 0.5))).epsilon(1e-8));
    CHECK(r.at("i")[k] == doctest::Approx(2.5 * std::exp(-t / 0.5)).epsilon(1e-8));
  }
}

TEST_CASE("stdlib electrical: an inductor fed by a current source through a resistor") {
  // A current source I into R parallel to L (i_L(0) = 0): i_L = I (1 -
  // exp(-t R / L)), v = I R exp(-t R / L).
  hbg::Result r = run(R"(
import electrical;
model RL {
    CurrentSource src(I = 2);
    Resistor r(R = 4);
    Inductor l(L = 2);
    Ground gnd;
    0 a; 0 z;
    bond src.p -> a; bond a -> r.p; bond r.n -> z; bond a -> l.p; bond l.n -> z;
    bond z -> src.n; bond z -> gnd.p;
    output il = l.i, v = l.v;
}
)",
                      2, 0.5);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("il")[k] == doctest::Approx(2 * (1 - std::exp(-2 * t))).epsilon(1e-8));
    CHECK(r.at("v")[k] == doctest::Approx(8 * std::exp(-2 * t)).epsilon(1e-7));
  }
}

TEST_CASE("stdlib electrical: a switch driven by a step input, and an initial voltage") {
  // A capacitor charged to 3 V discharges through R once the switch closes
  // at t = 1: v = 3 before, 3 exp(-(t - 1) / (R C)) after.
  hbg::Result r = run(R"(
import electrical;
model Discharge {
    Capacitor c(C = 0.5, v0 = 3);
    IdealSwitch s(on = step(1));
    Resistor r(R = 2);
    Ground gnd;
    0 a; 0 b; 0 z;
    bond c.n -> z; bond a -> c.p; bond z -> gnd.p;
    bond z -> r.p; bond r.n -> b; bond b -> s.p; bond s.n -> a;
    output v = c.v;
}
)",
                      3, 0.5);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].time == 1.0);
  CHECK(r.events[0].modes.back() == "s.j=closed");
  const std::vector<double> &t = r.at("time"), &v = r.at("v");
  for (std::size_t k = 0; k < t.size(); ++k) {
    bool before = t[k] < 1 || (t[k] == 1 && k + 1 < t.size() && t[k + 1] == 1);
    CHECK(std::abs(v[k]) == doctest::Approx(before ? 3 : 3 * std::exp(-(t[k] - 1))).epsilon(1e-8));
  }
}

TEST_CASE("stdlib electrical: a half-wave rectifier with the ideal diode") {
  // Conducting, the source fixes the load: v = V sin(w t) - Vf.
  hbg::Result r = run(R"(
import electrical;
model HalfWave {
    VoltageSource src(v = 10 * sin(2 * pi * 50 * time));
    IdealDiode d(Vf = 0.6);
    Resistor load(R = 100);
    Ground gnd;
    0 a; 0 b; 0 z;
    bond src.p -> a; bond a -> d.p; bond d.n -> b; bond b -> load.p; bond load.n -> z;
    bond z -> src.n; bond z -> gnd.p;
    output v = load.v, i = d.i;
}
)",
                      0.04, 2.5e-4);
  double w = 2 * 3.141592653589793 * 50;
  int conducting = 0, blocking = 0;
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k], exact = 10 * std::sin(w * t) - 0.6;
    if (r.at("i")[k] > 0) {
      ++conducting;
      CHECK(r.at("v")[k] == doctest::Approx(exact).epsilon(1e-9));
    } else {
      ++blocking;
      // 0, but for the row before each turn-off: the current there has
      // just crossed zero (the event), a few 1e-14 A.
      CHECK(std::abs(r.at("v")[k]) <= 1e-9);
      CHECK(exact <= 1e-9); // blocking only while the source is below the drop
    }
  }
  CHECK(conducting > 50);
  CHECK(blocking > 50);
  CHECK(r.events.size() == 4); // on and off in each of two periods
}

TEST_CASE("stdlib electrical: a PWM source's average through a resistor") {
  // The charge through R over whole periods: V D / R per second.
  hbg::Result r = run(R"(
import electrical;
model Pwm {
    PwmVoltage src(V = 12, f = 100, D = 0.25);
    Resistor r(R = 3);
    Ground gnd;
    0 a; 0 z;
    bond src.p -> a; bond a -> r.p; bond r.n -> z; bond z -> src.n; bond z -> gnd.p;
    signal charge = integral(r.i);
    output charge;
}
)",
                      0.1, 0.1);
  CHECK(r.at("charge").back() == doctest::Approx(12 * 0.25 / 3 * 0.1).epsilon(1e-9));
}

TEST_CASE("stdlib mechanical: a mass on a spring, set moving") {
  // m = 1, k = 4, v(0) = 1: v = cos(2 t), the spring's extension
  // sin(2 t) / 2, its force 2 sin(2 t).
  hbg::Result r = run(R"(
import mechanical;
model Osc {
    Mass m(m = 1, v0 = 1);
    Spring s(k = 4);
    Fixed wall;
    bond m.a -> s.a; bond s.b -> wall.a;
    output v = m.v, x = s.x, f = s.f;
}
)",
                      3, 0.5);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("v")[k] == doctest::Approx(std::cos(2 * t)).epsilon(1e-8));
    CHECK(r.at("x")[k] == doctest::Approx(std::sin(2 * t) / 2).epsilon(1e-8));
    CHECK(r.at("f")[k] == doctest::Approx(2 * std::sin(2 * t)).epsilon(1e-8));
  }
}

TEST_CASE("stdlib mechanical: a damped mass pushed by a step force") {
  // x'' + 3 x' + 2 x = 2 from rest, the force switched on at t = 0.5:
  // x = 1 - 2 exp(-s) + exp(-2 s), s = t - 0.5.
  hbg::Result r = run(R"(
import mechanical;
model Push {
    Force push(f = 2 * step(0.5));
    Mass m(m = 1);
    Spring s(k = 2);
    Damper d(d = 3);
    Fixed wall;
    bond push.a -> m.a;
    bond m.a -> s.a; bond s.b -> wall.a;
    bond m.a -> d.a; bond d.b -> wall.a;
    output x = s.x, fd = d.f;
}
)",
                      4, 0.5);
  const std::vector<double> &t = r.at("time"), &x = r.at("x"), &fd = r.at("fd");
  for (std::size_t k = 0; k < t.size(); ++k) {
    double s = t[k] - 0.5;
    bool before = s < 0 || (s == 0 && k + 1 < t.size() && t[k + 1] == 0.5);
    double exact = before ? 0 : 1 - 2 * std::exp(-s) + std::exp(-2 * s);
    double rate = before ? 0 : 2 * std::exp(-s) - 2 * std::exp(-2 * s);
    CHECK(x[k] == doctest::Approx(exact).epsilon(1e-8));
    CHECK(fd[k] == doctest::Approx(3 * rate).epsilon(1e-7));
  }
}

TEST_CASE("stdlib mechanical: a moving support drags a damper") {
  // v = 0.5 at the support, a damper d = 4 to a fixed wall: the damper's
  // force 2, which the support delivers and the wall takes.
  hbg::Result r = run(R"(
import mechanical;
model Drag {
    VelocitySource support(v = 0.5);
    Damper d(d = 4);
    Fixed wall;
    bond support.a -> d.a; bond d.b -> wall.a;
    output fd = d.f, fs = support.f, fw = wall.f;
}
)",
                      1, 0.5);
  CHECK(r.at("fd").back() == doctest::Approx(2).epsilon(1e-12));
  CHECK(r.at("fs").back() == doctest::Approx(2).epsilon(1e-12));
  CHECK(r.at("fw").back() == doctest::Approx(2).epsilon(1e-12));
}

TEST_CASE("stdlib mechanical: stick-slip of a mass on a belt (examples/stick_slip.hbg)") {
  // The closed form of examples/stick_slip.hbg: stuck until k x = Fs at
  // t = 0.5 (x = 0.1); slipping with Fk for 0.70827442804 s, to x =
  // (2 Fk - Fs) / k = 0.02; stuck for 2 (Fs - Fk) / (k v0) = 0.4 s; and so
  // on with period P = 1.10827442804 s. While slipping,
  // x = Fk / k + A cos(w s) + v0 / w sin(w s), A = (Fs - Fk) / k.
  hbg::Result r = run(R"(
import mechanical;
model Belt {
    VelocitySource belt(V = 0.2);
    Mass mass(m = 0.5, v0 = 0.2);
    Spring spring(k = 20);
    Fixed wall;
    Friction fr(Fs = 2, Fk = 1.2);
    bond belt.a -> fr.a; bond fr.b -> mass.a;
    bond mass.a -> spring.a; bond spring.b -> wall.a;
    output x = spring.x, v = mass.v, f = fr.f, slipping = fr.slipping;
}
)",
                      3.5, 0.05);
  const double P = 1.10827442804, slip = 0.70827442804, w = std::sqrt(40.0), A = 0.04;
  const double Fk = 1.2, k = 20, v0 = 0.2;
  REQUIRE(r.events.size() == 6);
  for (std::size_t n = 0; n < 3; ++n) {
    CHECK(r.events[2 * n].time == doctest::Approx(0.5 + n * P).epsilon(1e-8));
    CHECK(r.events[2 * n + 1].time == doctest::Approx(0.5 + n * P + slip).epsilon(1e-8));
    CHECK(r.events[2 * n].modes.back() == "fr.slip=forward");
    CHECK(r.events[2 * n + 1].modes.back() == "fr.slip=stuck");
  }
  // The event log names the instance's junction and its variables.
  CHECK(r.events[0].transitions[0] == "fr.slip: stuck -> forward when (fr.j.e > fr.Fs)+");
  const std::vector<double> &t = r.at("time"), &x = r.at("x"), &f = r.at("f");
  for (std::size_t i = 0; i < t.size(); ++i) {
    double since = t[i] - 0.5;
    double phase = since < 0 ? 0 : std::fmod(since, P);
    if (since < 0)
      CHECK(x[i] == doctest::Approx(v0 * t[i]).epsilon(1e-8));
    else if (phase > 1e-6 && phase < slip - 1e-6) {
      CHECK(r.at("slipping")[i] == 1);
      CHECK(f[i] == doctest::Approx(Fk));
      CHECK(x[i] == doctest::Approx(Fk / k + A * std::cos(w * phase) + v0 / w * std::sin(w * phase))
                        .epsilon(1e-7));
    } else if (phase > slip + 1e-6 && phase < P - 1e-6) {
      CHECK(r.at("slipping")[i] == 0);
      CHECK(x[i] == doctest::Approx(0.02 + v0 * (phase - slip)).epsilon(1e-7));
      CHECK(f[i] == doctest::Approx(k * x[i]).epsilon(1e-9));
    }
  }
}

TEST_CASE("stdlib mechanical: a bullet hits a block through a contact with restitution") {
  // m1 = 1 at v1 = 1 closes a gap of 0.2 at t = 0.2 on m2 = 3 at rest;
  // e = 0.6: v1' = (m1 v1 - m2 e v1) / (m1 + m2) = -0.2,
  // v2' = m1 (1 + e) v1 / (m1 + m2) = 0.4; the gap then opens at 0.6.
  hbg::Result r = run(R"(
import mechanical;
model Bullet {
    Mass bullet(m = 1, v0 = 1);
    Mass block(m = 3);
    Contact c(e = 0.6, d0 = 0.2);
    bond bullet.a -> c.a; bond c.b -> block.a;
    output v1 = bullet.v, v2 = block.v, d = c.d;
}
)",
                      1, 0.1);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].time == doctest::Approx(0.2).epsilon(1e-9));
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i < t.size(); ++i) {
    double te = r.events[0].time;
    bool after = t[i] > te || (i > 0 && t[i] == te && t[i - 1] == te);
    CHECK(r.at("v1")[i] == doctest::Approx(after ? -0.2 : 1.0).epsilon(1e-9));
    CHECK(r.at("v2")[i] == doctest::Approx(after ? 0.4 : 0.0).epsilon(1e-9));
    double d = after ? 0.6 * (t[i] - te) : 0.2 - t[i];
    CHECK(r.at("d")[i] == doctest::Approx(d).epsilon(1e-9).scale(1));
  }
}

TEST_CASE("stdlib mechanical: a mass crosses a backlash gap and bounces off its stop") {
  // m = 1 at v = 1 from the middle of a gap of half-width 0.1: free until
  // t = 0.1, on the stop (k = 100, w = 10) for pi / 10, then back at -1.
  hbg::Result r = run(R"(
import mechanical;
model Backlash {
    Mass m(m = 1, v0 = 1);
    Gap g(b0 = 0.1, k = 100);
    Fixed wall;
    bond m.a -> g.a; bond g.b -> wall.a;
    output x = g.x, v = m.v, f = g.f;
}
)",
                      0.6, 0.05);
  const double t1 = 0.1, t2 = 0.1 + std::acos(-1.0) / 10;
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i < t.size(); ++i) {
    double x, v;
    if (t[i] <= t1)
      x = t[i], v = 1;
    else if (t[i] <= t2)
      x = 0.1 + std::sin(10 * (t[i] - t1)) / 10, v = std::cos(10 * (t[i] - t1));
    else
      x = 0.1 - (t[i] - t2), v = -1;
    CHECK(r.at("x")[i] == doctest::Approx(x).epsilon(1e-8).scale(1));
    CHECK(r.at("v")[i] == doctest::Approx(v).epsilon(1e-8).scale(1));
    CHECK(r.at("f")[i] == doctest::Approx(x > 0.1 ? 100 * (x - 0.1) : 0).epsilon(1e-6).scale(1));
  }
}

TEST_CASE("stdlib rotational: a clutch slips, locks, slips under load and opens") {
  // J1 = J2 = 1, w1(0) = 10, w2(0) = 0, Tk = 2, Ts = 3, engaged until
  // t = 6. Slipping: w1 = 10 - 2 t, w2 = 2 t, locked at t = 2.5, w = 5.
  // A torque 8 on J1 from t = 4 needs 4 > Ts through the clutch to hold:
  // it slips at once, w1 = 5 + 6 (t - 4), w2 = 5 + 2 (t - 4); open from
  // t = 6: w1 = 17 + 8 (t - 6), w2 = 9.
  hbg::Result r = run(R"(
import rotational;
model Drive {
    Inertia j1(J = 1, w0 = 10);
    Inertia j2(J = 1);
    Torque drive(tau = 8 * step(4));
    Clutch c(Ts = 3, Tk = 2, engage = 1 - step(6));
    bond drive.a -> j1.a;
    bond j1.a -> c.a; bond c.b -> j2.a;
    output w1 = j1.w, w2 = j2.w, tau = c.tau, slipping = c.slipping;
}
)",
                      7, 0.25);
  REQUIRE(r.events.size() == 4);
  CHECK(r.events[0].modes.back() == "c.slip=forward");
  CHECK(r.events[1].time == doctest::Approx(2.5).epsilon(1e-9));
  CHECK(r.events[1].modes.back() == "c.slip=locked");
  CHECK(r.events[2].time == 4);
  CHECK(r.events[2].modes.back() == "c.slip=forward");
  CHECK(r.events[3].time == 6);
  CHECK(r.events[3].modes.back() == "c.slip=open");
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i + 1] == t[i])
      continue; // the row before an event
    double w1, w2, tau;
    clutchClosedForm(t[i], r.events[1].time, w1, w2, tau);
    CHECK(r.at("w1")[i] == doctest::Approx(w1).epsilon(1e-8));
    CHECK(r.at("w2")[i] == doctest::Approx(w2).epsilon(1e-8));
    CHECK(r.at("tau")[i] == doctest::Approx(tau).epsilon(1e-8).scale(1));
  }
}

TEST_CASE("stdlib rotational: a one-way clutch drives a load, then lets it overrun") {
  // J1 = 1 driven by 4 from rest picks up J2 = 3 at once: both at
  // w = t, 3 N m through the clutch; the torque reverses at t = 2: the
  // clutch frees, J2 keeps w = 2, J1 slows at 4 rad/s^2.
  hbg::Result r = run(R"(
import rotational;
model Freewheel {
    Inertia j1(J = 1);
    Inertia j2(J = 3);
    Torque drive(tau = 4 * (1 - 2 * step(2)));
    OneWayClutch c;
    bond drive.a -> j1.a;
    bond j1.a -> c.a; bond c.b -> j2.a;
    output w1 = j1.w, w2 = j2.w, tau = c.tau, locked = c.locked;
}
)",
                      4, 0.25);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time < 1e-9);
  CHECK(r.events[1].time == 2);
  CHECK(r.events[1].modes.back() == "c.slip=free");
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i + 1] == t[i] || t[i] < 1e-9)
      continue;
    bool locked = t[i] < 2;
    CHECK(r.at("locked")[i] == (locked ? 1 : 0));
    CHECK(r.at("w1")[i] == doctest::Approx(locked ? t[i] : 2 - 4 * (t[i] - 2)).epsilon(1e-8).scale(1));
    CHECK(r.at("w2")[i] == doctest::Approx(locked ? t[i] : 2).epsilon(1e-8));
    CHECK(r.at("tau")[i] == doctest::Approx(locked ? 3 : 0).epsilon(1e-8).scale(1));
  }
  CHECK(r.warnings.empty());
}

TEST_CASE("stdlib rotational: a DC motor drives a geared load (examples/dc_motor.hbg)") {
  // x = (i, w): x' = A x + B V, eigenvalues real and distinct here, so
  // x(t) = x_ss + c1 v1 exp(l1 t) + c2 v2 exp(l2 t) from rest.
  const double V = 12, Ra = 1, La = 0.01, K = 0.05, n = 0.1, J = 0.02, b = 0.01;
  hbg::Result r = run(R"(
import electrical;
import rotational;
model Drive {
    VoltageSource supply(V = 12);
    Ground gnd;
    DcMotor motor(Ra = 1, La = 0.01, K = 0.05);
    Gear gear(n = 0.1);
    Inertia load(J = 0.02);
    RotationalDamper friction(d = 0.01);
    FixedShaft frame;
    0 a; 0 z;
    bond supply.p -> a; bond a -> motor.p; bond motor.n -> z; bond z -> supply.n;
    bond z -> gnd.p;
    bond motor.shaft -> gear.a; bond gear.b -> load.a;
    bond load.a -> friction.a; bond friction.b -> frame.a;
    output i = motor.i, w = load.w, tau = motor.tau;
}
)",
                      1, 0.05);
  const double a11 = -Ra / La, a12 = -K / (n * La), a21 = K / (n * J), a22 = -b / J;
  const double tr = a11 + a22, det = a11 * a22 - a12 * a21, disc = tr * tr / 4 - det;
  REQUIRE(disc > 0);
  const double l1 = tr / 2 + std::sqrt(disc), l2 = tr / 2 - std::sqrt(disc);
  const double wss = V * K * n / (Ra * b * n * n + K * K), iss = b * n * wss / K;
  const double v1a = a12, v1b = l1 - a11, v2a = a12, v2b = l2 - a11, d0 = -iss, d1 = -wss;
  const double den = v1a * v2b - v2a * v1b;
  const double c1 = (d0 * v2b - v2a * d1) / den, c2 = (v1a * d1 - d0 * v1b) / den;
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    double i = iss + c1 * v1a * std::exp(l1 * t) + c2 * v2a * std::exp(l2 * t);
    double w = wss + c1 * v1b * std::exp(l1 * t) + c2 * v2b * std::exp(l2 * t);
    CHECK(r.at("i")[k] == doctest::Approx(i).epsilon(1e-7).scale(1));
    CHECK(r.at("w")[k] == doctest::Approx(w).epsilon(1e-7).scale(1));
    CHECK(r.at("tau")[k] == doctest::Approx(K * i).epsilon(1e-7).scale(1));
  }
}

TEST_CASE("stdlib rotational: an inertia on a torsion spring, driven by a torque") {
  // J = 2, k = 8, a torque of 4 from rest.
  hbg::Result r = run(R"(
import rotational;
model Twist {
    Torque drive(T = 4);
    Inertia rotor(J = 2);
    TorsionSpring shaft(k = 8);
    FixedShaft frame;
    bond drive.a -> rotor.a; bond rotor.a -> shaft.a; bond shaft.b -> frame.a;
    output w = rotor.w, phi = shaft.phi;
}
)",
                      2, 0.25);
  // J phi'' = 4 - 8 phi, phi(0) = 0, phi'(0) = 0: phi = 0.5 (1 - cos 2t).
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("phi")[k] == doctest::Approx(0.5 * (1 - std::cos(2 * t))).epsilon(1e-8).scale(1));
    CHECK(r.at("w")[k] == doctest::Approx(std::sin(2 * t)).epsilon(1e-8).scale(1));
  }
}

TEST_CASE("stdlib hydraulic: a tank draining through an orifice (Torricelli)") {
  // A dh/dt = -k sqrt(rho g h): sqrt(h) = sqrt(h0) - k sqrt(rho g) t / (2 A).
  hbg::Result r = run(R"(
import hydraulic;
model Drain {
    Tank tank(A = 2, h0 = 4);
    Orifice out(k = 1e-3);
    Reservoir atmosphere;
    bond tank.a -> out.p; bond out.n -> atmosphere.a;
    output h = tank.h, q = out.q;
}
)",
                      40, 10);
  double rate = 1e-3 * std::sqrt(1000 * 9.81) / (2 * 2);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k], root = 2 - rate * t;
    CHECK(r.at("h")[k] == doctest::Approx(root * root).epsilon(1e-8));
    CHECK(r.at("q")[k] == doctest::Approx(1e-3 * std::sqrt(1000 * 9.81) * root).epsilon(1e-8));
  }
}

TEST_CASE("stdlib hydraulic: a pump against a relief valve with hysteresis") {
  // A pump fills a small tank (C = A / (rho g)); the valve opens at 2e4 Pa,
  // drains through R toward Q R = 1e4 Pa and closes at 1.5e4 Pa; the pump
  // fills again. Linear rises at Q / C, an exponential fall in between.
  hbg::Result r = run(R"(
import hydraulic;
model Relief {
    Reservoir supply; Reservoir drain;
    Pump pump(Q = 1e-3);
    Tank tank(A = 0.01);
    ReliefValve valve(R = 1e7, p_open = 2e4, p_close = 1.5e4);
    bond supply.a -> pump.n; bond pump.p -> tank.a;
    bond tank.a -> valve.p; bond valve.n -> drain.a;
    output p = tank.p;
}
)",
                      40, 1);
  double C = 0.01 / (1000 * 9.81), Q = 1e-3, RC = 1e7 * C;
  double t1 = 2e4 * C / Q, t2 = t1 + RC * std::log((2e4 - 1e4) / (1.5e4 - 1e4));
  double t3 = t2 + (2e4 - 1.5e4) * C / Q, t4 = t3 + (t2 - t1);
  REQUIRE(r.events.size() >= 4);
  CHECK(r.events[0].time == doctest::Approx(t1).epsilon(1e-9));
  CHECK(r.events[1].time == doctest::Approx(t2).epsilon(1e-9));
  CHECK(r.events[2].time == doctest::Approx(t3).epsilon(1e-9));
  CHECK(r.events[3].time == doctest::Approx(t4).epsilon(1e-9));
  CHECK(r.events[0].modes.back() == "valve.j=open");
  CHECK(r.events[1].modes.back() == "valve.j=closed");
  // Between t2 and t3 the pressure rises linearly from p_close.
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    if (t > t2 && t < t3)
      CHECK(r.at("p")[k] == doctest::Approx(1.5e4 + Q / C * (t - t2)).epsilon(1e-8));
    if (t > t1 && t < t2)
      CHECK(r.at("p")[k] ==
            doctest::Approx(1e4 + 1e4 * std::exp(-(t - t1) / RC)).epsilon(1e-8));
  }
}

TEST_CASE("stdlib hydraulic: a check valve between two tanks, both ways round") {
  // Open (the first tank higher): the pressures meet, their difference
  // decaying as exp(-2 t / (R C)) for equal tanks. Closed (lower): nothing
  // moves.
  std::string text = R"(
import hydraulic;
model Levels {
    parameter h1 = 2; parameter h2 = 1;
    Tank t1(A = 1, h0 = h1);
    Tank t2(A = 1, h0 = h2);
    CheckValve v(R = 1e5);
    bond t1.a -> v.p; bond v.n -> t2.a;
    output h1 = t1.h, h2 = t2.h, q = v.q;
}
)";
  hbg::Result open = run(text, 20, 5);
  double C = 1 / (1000 * 9.81), RC = 1e5 * C;
  const std::vector<double> &t = open.at("time");
  for (std::size_t k = 0; k < t.size(); ++k) {
    double diff = std::exp(-2 * t[k] / RC); // h1 - h2, starting at 1
    CHECK(open.at("h1")[k] == doctest::Approx(1.5 + diff / 2).epsilon(1e-8));
    CHECK(open.at("h2")[k] == doctest::Approx(1.5 - diff / 2).epsilon(1e-8));
  }
  hbg::Model m = hbg::Compiler().compileString(text, "levels.hbg");
  hbg::SimulationOptions o;
  o.tEnd = 20;
  o.dtOut = 5;
  hbg::Simulation reversed(m, o);
  reversed.setParameter("h1", 1);
  reversed.setParameter("h2", 2);
  hbg::Result closed = reversed.run();
  REQUIRE(closed.ok());
  CHECK(closed.events.empty());
  CHECK(closed.at("h1").back() == 1);
  CHECK(closed.at("h2").back() == 2);
  CHECK(closed.at("q").back() == 0);
}

TEST_CASE("stdlib hydraulic: a cylinder pushes a ram against a spring") {
  // A pressure P on piston area A is a force A P on the ram (m, spring k):
  // x = (A P / k) (1 - cos(w t)), w = sqrt(k / m); the cylinder draws
  // Q = A v.
  hbg::Result r = run(R"(
import hydraulic;
import mechanical;
model Ram {
    Reservoir sump;
    PressureSource supply(P = 2e5);
    Cylinder cyl(A = 0.01);
    Mass ram(m = 50);
    Spring spring(k = 5e4);
    Fixed frame;
    bond sump.a -> supply.n;  bond supply.p -> cyl.a;
    bond cyl.rod -> ram.a;  bond ram.a -> spring.a;  bond spring.b -> frame.a;
    output x = spring.x, q = supply.q, f = cyl.f;
}
)",
                      0.5, 0.01);
  const double w = std::sqrt(5e4 / 50), X = 0.01 * 2e5 / 5e4;
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("x")[k] == doctest::Approx(X * (1 - std::cos(w * t))).epsilon(1e-8).scale(X));
    CHECK(r.at("q")[k] == doctest::Approx(0.01 * X * w * std::sin(w * t)).epsilon(1e-8).scale(1e-3));
    CHECK(r.at("f")[k] == doctest::Approx(2000));
  }
}

TEST_CASE("imports: by path, through the library path, each file once, cycles and models") {
  Scratch s;
  s.write("parts/springs.hbg", R"(
import "more.hbg";
component Spring { parameter k = 1; port a = j; 0 j; C c(1 / k); bond j -> c; }
)");
  s.write("parts/more.hbg", R"(component Damper { parameter b = 1; port a = j; 0 j; R r(b); bond j -> r; })");
  // A mass on a spring (and a damper of zero resistance), from components
  // in two files, one imported by the other and by the model: each is read
  // once.
  std::string model = s.write("m.hbg", R"(
import "parts/springs.hbg";
import "parts/more.hbg";
model Osc {
    I m(1) { p0 = 1; }
    1 v;
    Spring sp(k = 4);
    Damper d(b = 0);
    bond v -> m; bond v -> sp.a; bond v -> d.a;
    output m.p;
}
)");
  // Undamped: p = cos(2 t) with k = 4, m = 1.
  hbg::Model m = hbg::Compiler().compileFile(model);
  hbg::SimulationOptions o;
  o.tEnd = 1;
  o.dtOut = 0.5;
  o.rtol = 1e-10;
  hbg::Result r = hbg::Simulation(m, o).run();
  REQUIRE(r.ok());
  CHECK(r.at("m.p").back() == doctest::Approx(std::cos(2.0)).epsilon(1e-8));

  // By name from --lib-path (CompilerOptions::libPath), before HBG_PATH.
  s.write("lib/springs.hbg", R"(component Spring { parameter k = 1; port a = j; 0 j; C c(1 / k); bond j -> c; })");
  hbg::CompilerOptions copts;
  copts.libPath = {(s.dir / "lib").string()};
  std::string byName = R"(
import springs;
model Osc { I m(1) { p0 = 1; } 1 v; Spring sp(k = 4); bond v -> m; bond v -> sp.a; output m.p; }
)";
  CHECK(compileError(byName, "x.hbg", copts).empty());
  ::setenv("HBG_PATH", ("/nonexistent:" + (s.dir / "lib").string()).c_str(), 1);
  CHECK(compileError(byName).empty());
  ::unsetenv("HBG_PATH");
  std::string err = compileError(byName);
  CHECK(err.find("x.hbg") == std::string::npos);
  CHECK(err.find("error: no library `springs`: no `springs.hbg` in") != std::string::npos);

  // A cycle of imports, and a model in an imported file.
  s.write("c1.hbg", "import \"c2.hbg\";\ncomponent A { 0 j; port a = j; }\n");
  s.write("c2.hbg", "import \"c1.hbg\";\ncomponent B { 0 j; port a = j; }\n");
  std::string cyc = s.write("cyc.hbg", "import \"c1.hbg\";\nmodel M { C c(1); Sf f(0); bond f -> c; }\n");
  try {
    hbg::Compiler().compileFile(cyc);
    FAIL("a cycle of imports compiled");
  } catch (const hbg::CompileError &e) {
    CHECK(std::string(e.what()).find("error: files import each other: `c1.hbg` -> `c2.hbg` -> `c1.hbg`") !=
          std::string::npos);
  }
  s.write("withmodel.hbg", "model Other { C c(1); Sf f(0); bond f -> c; }\n");
  std::string wm = s.write("wm.hbg", "import \"withmodel.hbg\";\nmodel M { C c(1); Sf f(0); bond f -> c; }\n");
  try {
    hbg::Compiler().compileFile(wm);
    FAIL("an imported model compiled");
  } catch (const hbg::CompileError &e) {
    CHECK(std::string(e.what()).find("error: an imported file declares components only; this is model `Other`") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("wm.hbg:1:8: note: `") != std::string::npos);
  }
  // Two components of one name from two files.
  s.write("d1.hbg", "component Same { 0 j; port a = j; }\n");
  s.write("d2.hbg", "component Same { 1 j; port a = j; }\n");
  std::string dup = s.write("dup.hbg", "import \"d1.hbg\";\nimport \"d2.hbg\";\nmodel M { C c(1); Sf f(0); bond f -> c; }\n");
  try {
    hbg::Compiler().compileFile(dup);
    FAIL("a name clash compiled");
  } catch (const hbg::CompileError &e) {
    CHECK(std::string(e.what()).find("d2.hbg:1:11: error: redefinition of `Same`") != std::string::npos);
    CHECK(std::string(e.what()).find("d1.hbg:1:11: note: `Same` first defined here") != std::string::npos);
  }
}

TEST_CASE("stdlib mechanical: a ball resting on a shaken table lifts off") {
  // The table moves as A (1 - cos(w t)), A = 5 cm, w = 2 pi 3 Hz, so
  // A w^2 > g. The ball rests on it (the contact carries m (g + A w^2
  // cos(w t))) until that force reaches zero, at t = acos(-g / (A w^2)) /
  // w, then flies freely from the table's speed there and lands again
  // (the root of the flight height minus the table's). At default
  // options.
  hbg::Model model = hbg::Compiler().compileString(R"(
import mechanical;
model Shaker {
    parameter A = 0.05;
    parameter w = 2 * pi * 3;
    parameter g = 9.81;
    VelocitySource table(v = A * w * sin(w * time));
    Mass ball(m = 0.1);
    Force gravity(F = -0.1 * g);
    Contact c(e = 0.5, vrest = 1e-3);
    bond table.a -> c.a; bond c.b -> ball.a; bond gravity.a -> ball.a;
    output d = c.d, v = ball.v, force = c.touch.e;
}
)",
                                                   "shaker.hbg");
  hbg::SimulationOptions o;
  o.tEnd = 0.4;
  o.dtOut = 0.005;
  hbg::Result r = hbg::Simulation(model, o).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  const double A = 0.05, w = 2 * std::acos(-1.0) * 3, g = 9.81;
  const double lift = std::acos(-g / (A * w * w)) / w, v0 = A * w * std::sin(w * lift);
  auto height = [&](double t) { // the ball's height above the table in flight
    double s = t - lift;
    return A * (1 - std::cos(w * lift)) + v0 * s - g / 2 * s * s - A * (1 - std::cos(w * t));
  };
  double lo = lift + 0.1, hi = lift + 0.3; // height > 0 at lo, < 0 at hi
  for (int i = 0; i < 200; ++i)
    (height(0.5 * (lo + hi)) > 0 ? lo : hi) = 0.5 * (lo + hi);
  double land = 0.5 * (lo + hi);
  REQUIRE(r.events.size() >= 3);
  CHECK(r.events[0].modes.back() == "c.touch=resting");
  CHECK(r.events[1].transitions == std::vector<std::string>{"c.touch: resting -> apart when (c.touch.e < 0)-"});
  CHECK(r.events[1].time == doctest::Approx(lift).epsilon(1e-9));
  CHECK(r.events[2].time == doctest::Approx(land).epsilon(1e-6));
  const std::vector<double> &t = r.at("time");
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k] > r.events[0].time && t[k] < r.events[1].time) {
      CHECK(r.at("d")[k] == doctest::Approx(0).scale(1e-9));
      CHECK(r.at("force")[k] == doctest::Approx(0.1 * (g + A * w * w * std::cos(w * t[k]))).scale(1).epsilon(1e-6));
      CHECK(r.at("force")[k] >= -1e-12); // never pulls
    } else if (t[k] > r.events[1].time && t[k] < r.events[2].time) {
      CHECK(r.at("d")[k] == doctest::Approx(height(t[k])).scale(1).epsilon(1e-5));
    }
  }
}

TEST_CASE("stdlib mechanical and rotational: the backward transitions mirror the forward ones") {
  // Friction and Clutch leave `stuck`/`locked` backward and come back as
  // they do forward: the stick-slip belt and the clutch above, run with
  // every speed and torque negated, give the same event times, the
  // backward modes and the negated trajectories.
  SUBCASE("friction") {
    const char *model = R"(
import mechanical;
model Belt {
    parameter s = 1;
    VelocitySource belt(V = 0.2 * s);
    Mass mass(m = 0.5, v0 = 0.2 * s);
    Spring spring(k = 20);
    Fixed wall;
    Friction fr(Fs = 2, Fk = 1.2);
    bond belt.a -> fr.a; bond fr.b -> mass.a;
    bond mass.a -> spring.a; bond spring.b -> wall.a;
    output x = spring.x, f = fr.f, slipping = fr.slipping;
}
)";
    hbg::Result forward = run(model, 3.5, 0.05);
    hbg::Model m = hbg::Compiler().compileString(model, "belt.hbg");
    hbg::SimulationOptions o;
    o.tEnd = 3.5;
    o.dtOut = 0.05;
    o.rtol = 1e-10;
    hbg::Simulation sim(m, o);
    sim.setParameter("s", -1);
    hbg::Result backward = sim.run();
    REQUIRE_MESSAGE(backward.ok(), backward.error);
    REQUIRE(backward.events.size() == forward.events.size());
    for (std::size_t n = 0; n < forward.events.size(); ++n) {
      CHECK(backward.events[n].time == doctest::Approx(forward.events[n].time).epsilon(1e-9));
      CHECK(backward.events[n].modes.back() ==
            (n % 2 == 0 ? "fr.slip=backward" : "fr.slip=stuck"));
    }
    CHECK(backward.events[0].transitions[0] ==
          "fr.slip: stuck -> backward when (fr.j.e < -fr.Fs)+");
    REQUIRE(backward.at("time").size() == forward.at("time").size());
    for (std::size_t i = 0; i < forward.at("time").size(); ++i) {
      CHECK(backward.at("x")[i] == doctest::Approx(-forward.at("x")[i]).epsilon(1e-7).scale(1e-3));
      CHECK(backward.at("f")[i] == doctest::Approx(-forward.at("f")[i]).epsilon(1e-7).scale(1e-3));
      CHECK(backward.at("slipping")[i] == -forward.at("slipping")[i]);
    }
  }
  SUBCASE("clutch") {
    hbg::Result r = run(R"(
import rotational;
model Drive {
    Inertia j1(J = 1, w0 = -10);
    Inertia j2(J = 1);
    Torque drive(tau = -8 * step(4));
    Clutch c(Ts = 3, Tk = 2, engage = 1 - step(6));
    bond drive.a -> j1.a;
    bond j1.a -> c.a; bond c.b -> j2.a;
    output w1 = j1.w, w2 = j2.w, tau = c.tau;
}
)",
                        7, 0.25);
    REQUIRE(r.events.size() == 4);
    CHECK(r.events[0].modes.back() == "c.slip=backward");
    CHECK(r.events[1].time == doctest::Approx(2.5).epsilon(1e-9));
    CHECK(r.events[1].modes.back() == "c.slip=locked");
    CHECK(r.events[2].time == 4);
    CHECK(r.events[2].modes.back() == "c.slip=backward");
    CHECK(r.events[3].time == 6);
    CHECK(r.events[3].modes.back() == "c.slip=open");
    const std::vector<double> &t = r.at("time");
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i + 1] == t[i])
        continue; // the row before an event
      double w1, w2, tau;
      clutchClosedForm(t[i], r.events[1].time, w1, w2, tau);
      CHECK(r.at("w1")[i] == doctest::Approx(-w1).epsilon(1e-8));
      CHECK(r.at("w2")[i] == doctest::Approx(-w2).epsilon(1e-8));
      CHECK(r.at("tau")[i] == doctest::Approx(-tau).epsilon(1e-8).scale(1));
    }
  }
}

TEST_CASE("stdlib rotational: a clutch engaged at zero slip locks, and opens while locked") {
  // J1 = J2 = 1, both at w = 2 with no torque until t = 1; engaged at
  // t = 1 at zero slip, the clutch locks (open -> locked); the torque 1 on
  // J1 from t = 1 needs 0.5 < Ts through it, so both accelerate at 0.5;
  // disengaged at t = 3 while locked (locked -> open), J1 goes on at 1 and
  // J2 keeps w = 3. (The rows at an event time: after the event.)
  hbg::Result r = run(R"(
import rotational;
model Engage {
    Inertia j1(J = 1, w0 = 2);
    Inertia j2(J = 1, w0 = 2);
    Torque drive(tau = step(1));
    Clutch c(Ts = 3, Tk = 2, engage = step(1) - step(3));
    bond drive.a -> j1.a;
    bond j1.a -> c.a; bond c.b -> j2.a;
    output w1 = j1.w, w2 = j2.w, tau = c.tau;
}
)",
                      4, 0.25);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time == 1);
  CHECK(r.events[0].transitions[0] ==
        "c.slip: open -> locked when (c.engage > 0.5)+ and (c.slip.f >= 0)- and (c.slip.f <= 0)-");
  CHECK(r.events[0].modes.back() == "c.slip=locked");
  CHECK(r.events[1].time == 3);
  CHECK(r.events[1].modes.back() == "c.slip=open");
  const std::vector<double> &t = r.at("time");
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i + 1] == t[i])
      continue; // the row before an event
    double w1 = t[i] <= 1 ? 2 : t[i] <= 3 ? 2 + 0.5 * (t[i] - 1) : 3 + (t[i] - 3);
    double w2 = t[i] <= 1 ? 2 : t[i] <= 3 ? 2 + 0.5 * (t[i] - 1) : 3;
    double tau = t[i] >= 1 && t[i] < 3 ? 0.5 : 0;
    CHECK(r.at("w1")[i] == doctest::Approx(w1).epsilon(1e-8));
    CHECK(r.at("w2")[i] == doctest::Approx(w2).epsilon(1e-8));
    CHECK(r.at("tau")[i] == doctest::Approx(tau).epsilon(1e-8).scale(1));
  }
}
