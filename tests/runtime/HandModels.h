//===- tests/runtime/HandModels.h - Models with closed forms --------------===//
//
// Two switched models written by hand (HandSystem.h) whose events have
// closed forms, shared by the tests of what happens at their events: the
// inelastic collision of two bodies and a bouncing ball without a resting
// mode.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/HandSystem.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace hbgtest {

// ---------------------------------------------------------------------------
// The inelastic collision (HYBRSIM's bullet and wood).
//
// Full state: bullet.p, wood.p, x1, x2. Two free bodies of masses m1, m2;
// the bullet starts at x1 = -0.2 with momentum 1, the wood at rest at
// x2 = 0. The contact 0-junction turns on when (x2 - x1 <= 0)+; in the ON
// mode the wood's momentum is dependent storage, p2 = m2 p1 / m1, and an
// impulse into it is taken out of the bullet (B = -1 in the p1 row). It
// would turn off when (contact.e < 0)-, but nothing pushes the bodies
// apart: the contact effort is 0 in both modes.
//
// Closed forms: impact at t = 0.2 m1 / p1(0) = 0.2; afterwards
// p1 = m1 / (m1 + m2), p2 = m2 / (m1 + m2), momentum 1 throughout.
// ---------------------------------------------------------------------------

constexpr std::uint32_t kGap = 0, kContactEffort = 1;

/// `adjustOn` changes the contact mode's functions (to break its remap).
inline HandSystem collision(double m1, double m2, bool enclose, bool dissipative = false,
                            const std::function<void(ModeSpec &)> &adjustOn = {}) {
  Junction contact = junction(
      "contact", {"off", "on"},
      {transition(0, 1, comparison(kGap, CompareOp::LessEqual, false), "off -> on when (x2 - x1 <= 0)+"),
       transition(1, 0, comparison(kContactEffort, CompareOp::Less, true),
                  "on -> off when (contact.e < 0)-")});
  contact.dissipative = dissipative;
  HandSystem sys({"bullet.p", "wood.p", "x1", "x2"}, {"p1", "p2", "x1", "x2", "momentum"},
                 Switching({contact}, {CompareOp::LessEqual, CompareOp::Less}));

  ModeSpec off;
  off.states = {0, 1, 2, 3};
  off.stateNames = {"bullet.p", "wood.p", "x1", "x2"};
  off.enclose = enclose;
  {
    Guards g;
    g.compareWithZero(g.sub(g.x(3), g.x(2)));
    g.compareWithZero(g.constant(0));
    off.guards = g.tape;
  }
  off.rhs = [=](double, const double *x, double *xdot) {
    xdot[0] = 0;
    xdot[1] = 0;
    xdot[2] = x[0] / m1;
    xdot[3] = x[1] / m2;
  };
  off.outputs = [](double, const double *x, double *y) {
    y[0] = x[0];
    y[1] = x[1];
    y[2] = x[2];
    y[3] = x[3];
    y[4] = x[0] + x[1];
  };
  sys.add({0}, off);

  // In contact: x = (bullet.p, x1, x2), wood.p = m2 bullet.p / m1.
  ModeSpec on;
  on.states = {0, 2, 3};
  on.dependents = {1};
  on.stateNames = {"bullet.p", "x1", "x2"};
  on.enclose = enclose;
  {
    Guards g;
    g.compareWithZero(g.sub(g.x(2), g.x(1)));
    g.compareWithZero(g.constant(0));
    on.guards = g.tape;
  }
  on.rhs = [=](double, const double *x, double *xdot) {
    xdot[0] = 0;
    xdot[1] = x[0] / m1;
    xdot[2] = x[0] / m1;
  };
  on.outputs = [=](double, const double *x, double *y) {
    double p2 = m2 * x[0] / m1;
    y[0] = x[0];
    y[1] = p2;
    y[2] = x[1];
    y[3] = x[2];
    y[4] = x[0] + p2;
  };
  on.dependent = [=](double, const double *x, double *d) { d[0] = m2 * x[0] / m1; };
  on.dependentJacobian = [=](double, const double *, double *jac) {
    jac[0] = m2 / m1;
    jac[1] = 0;
    jac[2] = 0;
  };
  on.impulse = [](double, const double *, double *b) {
    b[0] = -1; // the wood's impulse comes out of the bullet
    b[1] = 0;
    b[2] = 0;
  };
  if (adjustOn)
    adjustOn(on);
  sys.add({1}, on);
  return sys;
}

inline SimulateOptions collisionOptions() {
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = 0.5;
  o.dtOut = 0.03; // no grid point on the impact
  return o;
}

// ---------------------------------------------------------------------------
// A bouncing ball without a resting mode (Zeno behaviour).
//
// Full state: h, ball.p (mass m, gravity g). The floor junction is
// `flying` (OFF) until (h <= 0)+ and (ball.f < 0)-, then `impact` (ON),
// where ball.p is dependent storage imposed by the held velocity:
// ball.p = -e m pre(ball.f), with no impulse on h (B = 0), so the remap
// reverses the velocity. It flies again when (ball.f > 0)-, judged on the
// remapped state in the next round of the same event.
//
// Closed forms (h0 = 1, g = 9.81, e = 0.8): v0 = sqrt(2 g h0),
// t1 = v0 / g, bounce k at t_k = t1 + 2 t1 (e + ... + e^(k-1)), with
// speed v0 e^(k-1) before and v0 e^k after; accumulation at
// t_inf = t1 (1 + e) / (1 - e).
// ---------------------------------------------------------------------------

constexpr double kG = 9.81, kH0 = 1, kE = 0.8, kM = 1;

inline HandSystem bouncingBall(bool enclose) {
  Junction floor = junction(
      "floor", {"flying", "impact"},
      {transition(0, 1, both(comparison(0, CompareOp::LessEqual, false),
                             comparison(1, CompareOp::Less, true)),
                  "flying -> impact when (h <= 0)+ and (ball.f < 0)-"),
       transition(1, 0, comparison(2, CompareOp::Greater, true), "impact -> flying when (ball.f > 0)-")});
  HandSystem sys({"h", "ball.p"}, {"h", "v"},
                 Switching({floor}, {CompareOp::LessEqual, CompareOp::Less, CompareOp::Greater}),
                 /*numHeld=*/1);

  ModeSpec flying;
  flying.states = {0, 1};
  flying.stateNames = {"h", "ball.p"};
  flying.enclose = enclose;
  {
    Guards g;
    std::uint32_t v = g.mul(g.x(1), g.constant(1 / kM));
    g.compareWithZero(g.x(0));
    g.compareWithZero(v);
    g.compareWithZero(v);
    flying.guards = g.tape;
  }
  flying.rhs = [](double, const double *x, double *xdot) {
    xdot[0] = x[1] / kM;
    xdot[1] = -kM * kG;
  };
  flying.outputs = [](double, const double *x, double *y) {
    y[0] = x[0];
    y[1] = x[1] / kM;
  };
  flying.held = [](double, const double *x, double *h) { h[0] = x[1] / kM; }; // pre(ball.f)
  sys.add({0}, flying);

  // At impact: x = (h), ball.p = -e m pre(ball.f).
  std::shared_ptr<const std::vector<double>> pre = sys.heldValues();
  ModeSpec impact;
  impact.states = {0};
  impact.dependents = {1};
  impact.stateNames = {"h"};
  impact.enclose = enclose;
  {
    Guards g;
    std::uint32_t v = g.mul(g.held(0), g.constant(-kE));
    g.compareWithZero(g.x(0));
    g.compareWithZero(v);
    g.compareWithZero(v);
    impact.guards = g.tape;
  }
  impact.rhs = [pre](double, const double *, double *xdot) { xdot[0] = -kE * (*pre)[0]; };
  impact.outputs = [pre](double, const double *x, double *y) {
    y[0] = x[0];
    y[1] = -kE * (*pre)[0];
  };
  impact.held = [pre](double, const double *, double *h) { h[0] = -kE * (*pre)[0]; };
  impact.dependent = [pre](double, const double *, double *d) { d[0] = -kE * kM * (*pre)[0]; };
  impact.dependentJacobian = [](double, const double *, double *jac) { jac[0] = 0; };
  impact.impulse = [](double, const double *, double *b) { b[0] = 0; };
  sys.add({1}, impact);
  return sys;
}

} // namespace hbgtest
