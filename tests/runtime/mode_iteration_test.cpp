//===- tests/runtime/mode_iteration_test.cpp - Events on hand-written Systems ===//
//
// simulate() on switched models written by hand against the System/Mode
// interface, without parser or JIT, checked against closed forms:
//
//  - the inelastic collision of two bodies (HYBRSIM's bullet and wood):
//    event time, the state before and after, the event log, and momentum
//    conservation by the exact and by the iterative remap;
//  - two valves whose first opening enables the second (tank and valves):
//    the event passes through a mythical mode, state unchanged, into the
//    real one, and the trajectory after it follows the closed form;
//  - junctions that switch back and forth at one instant: the run stops
//    with "the modes do not settle", naming the junctions, and keeps the
//    output before the event;
//  - a bouncing ball without a resting mode: Zeno behaviour reported near
//    the closed-form accumulation point t1 (1 + e) / (1 - e);
//  - a `-` comparison judged on a priori values and the same comparison
//    marked `+` judged on a posteriori values ending an event in different
//    modes;
//  - the energy audit of the collision (3/8 of 1/2 J removed), with and
//    without the contact declared dissipative;
//  - a short circuit's impulse judged before real storage's.
//
// Guards are runtime::Tapes (three results per comparison: lhs, rhs and
// lhs - rhs), evaluated on doubles for the point values and on intervals
// for event location; a mode built with `enclose = false` refuses to
// enclose its guards, so that its events are found by sampling instead.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Simulate.h"
#include "hbg/runtime/Tape.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;

namespace {

using Q = std::vector<std::uint32_t>;
/// A function of time and the mode's independent states writing an array.
using Fn = std::function<void(double t, const double *x, double *out)>;

/// Guard tapes: instructions emitted one by one, and comparisons recorded
/// as their three results.
class Guards {
public:
  std::uint32_t constant(double v) { return emit(TapeOp::Const, 0, 0, v); }
  std::uint32_t x(std::uint32_t i) { return emit(TapeOp::X, i); }
  std::uint32_t time() { return emit(TapeOp::Time); }
  /// A value `pre(...)` holds: the System's parameter array is its held values.
  std::uint32_t held(std::uint32_t i) { return emit(TapeOp::P, i); }
  std::uint32_t sub(std::uint32_t a, std::uint32_t b) { return emit(TapeOp::Sub, a, b); }
  std::uint32_t mul(std::uint32_t a, std::uint32_t b) { return emit(TapeOp::Mul, a, b); }
  /// The next comparison: `lhs op rhs`.
  Guards &compare(std::uint32_t lhs, std::uint32_t rhs) {
    std::uint32_t diff = sub(lhs, rhs);
    tape.results.insert(tape.results.end(), {lhs, rhs, diff});
    return *this;
  }
  /// The next comparison: `lhs op 0`.
  Guards &compareWithZero(std::uint32_t lhs) { return compare(lhs, constant(0)); }
  Tape tape;

private:
  std::uint32_t emit(TapeOp op, std::uint32_t a = 0, std::uint32_t b = 0, double value = 0) {
    tape.code.push_back({op, a, b, 0, value});
    return static_cast<std::uint32_t>(tape.code.size() - 1);
  }
};

/// What one mode of a hand-written model computes.
struct ModeSpec {
  std::vector<std::uint32_t> states, dependents;
  std::vector<std::string> stateNames;
  Tape guards;
  /// False: encloseGuards() refuses, and events are found by sampling.
  bool enclose = true;
  Fn rhs, outputs;
  /// Held values (`pre`), dependent storage D(x), its Jacobian
  /// (dependent x state) and the impulse matrix B (state x dependent);
  /// unset for a mode without them.
  Fn held, dependent, dependentJacobian, impulse;
  /// Each guard side's impulse per unit jump of each dependent storage
  /// (side x dependent); unset: none.
  Fn guardImpulses;
  /// Non-empty: sources short-circuit each other in this mode.
  std::string shortCircuit;
};

/// A Mode whose functions are the spec's; guards read the System's held
/// values as parameters.
class HandMode final : public Mode {
public:
  HandMode(std::string name, ModeSpec spec, std::shared_ptr<const std::vector<double>> held)
      : name_(std::move(name)), s_(std::move(spec)), held_(std::move(held)) {
    reads_ = s_.guards.xRead();
    REQUIRE(s_.guards.verify().empty());
    REQUIRE(s_.stateNames.size() == s_.states.size());
  }
  const std::string &name() const override { return name_; }
  const std::vector<std::uint32_t> &stateSlots() const override { return s_.states; }
  const std::vector<std::uint32_t> &dependentSlots() const override { return s_.dependents; }
  const std::string &stateName(std::size_t i) const override { return s_.stateNames[i]; }
  bool rhs(double t, const double *x, double *xdot) override { return run(s_.rhs, t, x, xdot); }
  bool outputs(double t, const double *x, double *y) override { return run(s_.outputs, t, x, y); }
  bool guards(double t, const double *x, double *sides) override {
    values_.resize(s_.guards.results.size());
    s_.guards.evaluate(t, x, held_->data(), values_.data(), scratch_);
    for (std::size_t k = 0; 3 * k < values_.size(); ++k) {
      sides[2 * k] = values_[3 * k];
      sides[2 * k + 1] = values_[3 * k + 1];
    }
    return true;
  }
  bool encloseGuards(Interval t, const Interval *x, Interval *out) override {
    if (!s_.enclose)
      return false;
    s_.guards.evaluate(t, x, held_->data(), out, intervalScratch_);
    return true;
  }
  const std::vector<std::uint32_t> &guardStates() const override { return reads_; }
  bool held(double t, const double *x, double *v) override { return run(s_.held, t, x, v); }
  bool dependent(double t, const double *x, double *d) override {
    return run(s_.dependent, t, x, d);
  }
  bool dependentJacobian(double t, const double *x, double *jac) override {
    return run(s_.dependentJacobian, t, x, jac);
  }
  bool impulse(double t, const double *x, double *b) override { return run(s_.impulse, t, x, b); }
  bool guardImpulses(double t, const double *x, double *out) override {
    return s_.guardImpulses && run(s_.guardImpulses, t, x, out);
  }
  const std::string &shortCircuit() const override { return s_.shortCircuit; }
  const LoopFailure &failure() const override { return failure_; }

private:
  static bool run(const Fn &f, double t, const double *x, double *out) {
    if (f)
      f(t, x, out);
    return true;
  }
  std::string name_;
  LoopFailure failure_{"hand-written mode", "", 0};
  ModeSpec s_;
  std::shared_ptr<const std::vector<double>> held_;
  std::vector<std::uint32_t> reads_;
  std::vector<double> values_, scratch_;
  std::vector<Interval> intervalScratch_;
};

/// A System of hand-written modes. Modes not added cannot be entered. The
/// held values live in a shared vector, so that the modes' functions can
/// read them wherever the System is moved.
class HandSystem final : public System {
public:
  HandSystem(std::vector<std::string> states, std::vector<std::string> outputs, Switching sw,
             std::size_t numHeld = 0)
      : states_(std::move(states)), outputs_(std::move(outputs)), sw_(std::move(sw)),
        held_(std::make_shared<std::vector<double>>(numHeld, 0.0)) {}
  void add(const Q &q, ModeSpec spec) {
    modes_[q] = std::make_unique<HandMode>(sw_.modeText(q), std::move(spec), held_);
  }
  /// The held values, for the modes' functions.
  std::shared_ptr<const std::vector<double>> heldValues() const { return held_; }
  /// The energy of each slot of the full state; unset: the System cannot say.
  std::function<void(const double *X, double *energy)> energy;
  bool storedEnergy(double, const double *X, double *out) override {
    if (!energy)
      return false;
    energy(X, out);
    return true;
  }

  const std::string &modelName() const override { return name_; }
  const std::vector<std::string> &stateNames() const override { return states_; }
  const std::vector<std::string> &outputNames() const override { return outputs_; }
  const Switching &switching() const override { return sw_; }
  std::size_t numHeld() const override { return held_->size(); }
  void setHeld(const double *values) override {
    std::copy(values, values + held_->size(), held_->begin());
  }
  Mode *mode(const std::vector<std::uint32_t> &q, std::string &why) override {
    auto it = modes_.find(q);
    if (it == modes_.end()) {
      why = "mode " + sw_.modeText(q) + " is not part of this test";
      return nullptr;
    }
    return it->second.get();
  }

private:
  std::string name_ = "hand";
  std::vector<std::string> states_, outputs_;
  Switching sw_;
  std::shared_ptr<std::vector<double>> held_;
  std::map<Q, std::unique_ptr<HandMode>> modes_;
};

GuardNode comparison(std::uint32_t k, CompareOp op, bool minus) {
  GuardNode g;
  g.comparison = k;
  g.op = op;
  g.minus = minus;
  return g;
}

GuardNode both(GuardNode a, GuardNode b) {
  GuardNode g;
  g.kind = GuardNode::And;
  g.children = {std::move(a), std::move(b)};
  return g;
}

Transition transition(std::uint32_t from, std::uint32_t to, GuardNode guard, std::string text) {
  Transition t;
  t.from = from;
  t.to = to;
  t.guard = std::move(guard);
  t.text = std::move(text);
  return t;
}

Junction junction(std::string name, std::vector<std::string> states,
                  std::vector<Transition> transitions) {
  Junction j;
  j.name = std::move(name);
  j.stateNames = std::move(states);
  j.transitions = std::move(transitions);
  return j;
}

/// The rows of the output whose time is exactly `t`.
std::vector<std::size_t> rowsAt(const RunRecord &r, double t) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < r.columns[0].size(); ++i)
    if (r.columns[0][i] == t)
      rows.push_back(i);
  return rows;
}

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
// HYBRSIM's iteration with factor F (equal masses) moves the gap
// p1 - p2 by (1 - 2F) each step: p1_k = 0.5 + 0.5 (1 - 2F)^k.
// ---------------------------------------------------------------------------

constexpr std::uint32_t kGap = 0, kContactEffort = 1;

/// `adjustOn` changes the contact mode's functions (to break its remap).
HandSystem collision(double m1, double m2, bool enclose, bool dissipative = false,
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

SimulateOptions collisionOptions() {
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = 0.5;
  o.dtOut = 0.03; // no grid point on the impact
  return o;
}

/// The checks every collision run shares: one event at 0.2 from OFF into
/// ON, the state before and after, the rows at the event and the end.
void checkCollision(const RunRecord &r, double m1, double m2) {
  INFO("error: " << r.error);
  REQUIRE(r.error.empty());
  REQUIRE(r.events.size() == 1);
  const Event &ev = r.events[0];
  double tImpact = 0.2 * m1; // gap 0.2 closed at speed p1(0) / m1 = 1 / m1
  CHECK(ev.time == doctest::Approx(tImpact).epsilon(1e-12));
  CHECK(ev.transitions == std::vector<std::string>{"contact: off -> on when (x2 - x1 <= 0)+"});
  CHECK(ev.modes == std::vector<std::string>{"contact=off", "contact=on"});
  CHECK(ev.real == std::vector<bool>{true, true});

  double x = -0.2 + tImpact / m1; // both bodies at the origin
  REQUIRE(ev.before.size() == 4);
  CHECK(ev.before[0] == 1);
  CHECK(ev.before[1] == 0);
  CHECK(ev.before[2] == doctest::Approx(x).epsilon(1e-12));
  CHECK(ev.before[3] == 0);
  double p1 = m1 / (m1 + m2), p2 = m2 / (m1 + m2);
  REQUIRE(ev.after.size() == 4);
  CHECK(ev.after[0] == doctest::Approx(p1).epsilon(1e-12));
  CHECK(ev.after[1] == doctest::Approx(p2).epsilon(1e-12));
  CHECK(ev.after[0] + ev.after[1] == doctest::Approx(1).epsilon(1e-12)); // momentum
  CHECK(ev.after[2] == ev.before[2]); // positions do not jump
  CHECK(ev.after[3] == ev.before[3]);
  REQUIRE(ev.states.size() == 2);
  CHECK(ev.states[0] == ev.before);
  CHECK(ev.states[1] == ev.after);

  // A row before the impact and one after it, at the impact time.
  std::vector<std::size_t> rows = rowsAt(r, ev.time);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1] == rows[0] + 1);
  CHECK(r.columns[1][rows[0]] == 1);
  CHECK(r.columns[2][rows[0]] == 0);
  CHECK(r.columns[1][rows[1]] == doctest::Approx(p1).epsilon(1e-12));
  CHECK(r.columns[2][rows[1]] == doctest::Approx(p2).epsilon(1e-12));
  // At the end the bodies move together at 1 / (m1 + m2).
  double tEnd = r.columns[0].back(), v = 1 / (m1 + m2);
  CHECK(tEnd == 0.5);
  CHECK(r.columns[3].back() == doctest::Approx(x + v * (tEnd - tImpact)).epsilon(1e-12));
  CHECK(r.columns[4].back() == doctest::Approx(x + v * (tEnd - tImpact)).epsilon(1e-12));
  for (double momentum : r.columns[5])
    CHECK(momentum == doctest::Approx(1).epsilon(1e-12));
}

} // namespace

TEST_CASE("inelastic collision: the exact remap conserves momentum") {
  for (bool enclose : {true, false}) {
    CAPTURE(enclose);
    HandSystem sys = collision(1, 1, enclose);
    RunRecord r;
    simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
    checkCollision(r, 1, 1);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].after == std::vector<double>{0.5, 0.5, r.events[0].before[2], 0});
    CHECK(r.events[0].remapIterations.empty());
  }
}

TEST_CASE("inelastic collision of unequal masses: p1 = m1 / (m1 + m2) after the impact") {
  // m1 = 1, m2 = 3: the bullet keeps a quarter of its momentum.
  HandSystem sys = collision(1, 3, true);
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
  checkCollision(r, 1, 3);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].after[0] == doctest::Approx(0.25).epsilon(1e-14));
  CHECK(r.events[0].after[1] == doctest::Approx(0.75).epsilon(1e-14));
}

TEST_CASE("inelastic collision: HYBRSIM's iterative remap converges to the same state") {
  HandSystem sys = collision(1, 1, true);
  SimulateOptions o = collisionOptions();
  o.remap = SimulateOptions::Remap::Iterative;
  o.remapFactor = 0.4;
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, o, r);
  checkCollision(r, 1, 1);
  REQUIRE(r.events.size() == 1);
  const Event &ev = r.events[0];
  // p1_k = 0.5 + 0.5 * 0.2^k (HYBRSIM's Table 1: 1, 0.6, 0.52, 0.504, ...);
  // the gap p1_k - p2_k = 0.2^k first drops below the tolerance 1e-12 at
  // k = 18, and every iterate is recorded from k = 0.
  int last = 0;
  while (std::pow(0.2, last) > o.remapTolerance)
    ++last;
  CHECK(last == 18);
  REQUIRE(ev.remapIterations.size() == static_cast<std::size_t>(last + 1));
  for (int k = 0; k <= last; ++k) {
    CAPTURE(k);
    const std::vector<double> &s = ev.remapIterations[k];
    REQUIRE(s.size() == 4);
    CHECK(s[0] == doctest::Approx(0.5 + 0.5 * std::pow(0.2, k)).epsilon(1e-14));
    CHECK(s[1] == doctest::Approx(0.5 - 0.5 * std::pow(0.2, k)).epsilon(1e-14));
    CHECK(s[2] == ev.before[2]);
    CHECK(s[3] == ev.before[3]);
  }
  CHECK(ev.remapIterations[1][0] == doctest::Approx(0.6).epsilon(1e-15));
  CHECK(ev.remapIterations[2][0] == doctest::Approx(0.52).epsilon(1e-15));
  CHECK(ev.remapIterations[3][0] == doctest::Approx(0.504).epsilon(1e-15));
  CHECK(ev.after == ev.remapIterations.back());
  CHECK(std::abs(ev.after[0] - ev.after[1]) <= o.remapTolerance);
}

// ---------------------------------------------------------------------------
// A mythical mode: the tank with two pressure-controlled valves.
//
// Full state: tank.q (capacity A, e = q / A), filled at Fin. Valve 1 opens
// when (tank.e >= P1)+ and closes when (tank.e < P2)+; valve 2 opens when
// (pipe.e >= P2)+ and closes when (pipe.e < P2 / 2)+. The pipe's pressure
// depends on the mode: 0 while valve 1 is closed (isolated, or drained by
// R2), the tank's with only valve 1 open (no flow yet), and tank.e R2 / Rt
// with both open (outflow tank.e / Rt, Rt = R1 + R2).
//
// Closed forms (Fin = 1, A = 2, R1 = 1, R2 = 3, P1 = 2, P2 = 1): valve 1
// opens at t1 = A P1 / Fin = 4; in the configuration it opens into, the
// pipe is at P1 >= P2, so valve 2 opens in the same instant and
// (valve1=open, valve2=closed) is mythical. Afterwards
// tank.e(t) = Fin Rt + (P1 - Fin Rt) exp(-(t - t1) / (Rt A)).
// ---------------------------------------------------------------------------

namespace {

constexpr double kFin = 1, kA = 2, kR1 = 1, kR2 = 3, kP1 = 2, kP2 = 1;

HandSystem tankValves(bool enclose) {
  Junction valve1 = junction("valve1", {"closed", "open"},
                             {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                         "closed -> open when (tank.e >= P1)+"),
                              transition(1, 0, comparison(1, CompareOp::Less, false),
                                         "open -> closed when (tank.e < P2)+")});
  Junction valve2 = junction("valve2", {"closed", "open"},
                             {transition(0, 1, comparison(2, CompareOp::GreaterEqual, false),
                                         "closed -> open when (pipe.e >= P2)+"),
                              transition(1, 0, comparison(3, CompareOp::Less, false),
                                         "open -> closed when (pipe.e < P2 / 2)+")});
  HandSystem sys({"tank.q"}, {"tank", "pipe", "outflow"},
                 Switching({valve1, valve2}, {CompareOp::GreaterEqual, CompareOp::Less,
                                              CompareOp::GreaterEqual, CompareOp::Less}));
  for (std::uint32_t v1 : {0u, 1u})
    for (std::uint32_t v2 : {0u, 1u}) {
      bool flowing = v1 && v2;
      // pipe.e = pipeGain * tank.e.
      double pipeGain = !v1 ? 0.0 : (v2 ? kR2 / (kR1 + kR2) : 1.0);
      ModeSpec m;
      m.states = {0};
      m.stateNames = {"tank.q"};
      m.enclose = enclose;
      Guards g;
      std::uint32_t tank = g.mul(g.x(0), g.constant(1 / kA));
      std::uint32_t pipe = g.mul(tank, g.constant(pipeGain));
      g.compare(tank, g.constant(kP1));
      g.compare(tank, g.constant(kP2));
      g.compare(pipe, g.constant(kP2));
      g.compare(pipe, g.constant(kP2 / 2));
      m.guards = g.tape;
      m.rhs = [=](double, const double *x, double *xdot) {
        xdot[0] = kFin - (flowing ? x[0] / kA / (kR1 + kR2) : 0.0);
      };
      m.outputs = [=](double, const double *x, double *y) {
        double tank = x[0] / kA;
        y[0] = tank;
        y[1] = pipeGain * tank;
        y[2] = flowing ? tank / (kR1 + kR2) : 0.0;
      };
      sys.add({v1, v2}, m);
    }
  return sys;
}

} // namespace

TEST_CASE("tank and valves: the event passes through a mythical mode") {
  for (bool enclose : {true, false}) {
    CAPTURE(enclose);
    HandSystem sys = tankValves(enclose);
    SimulateOptions o;
    o.tStart = 0;
    o.tEnd = 10;
    o.dtOut = 0.3;
    o.rtol = 1e-10;
    o.atol = 1e-12;
    RunRecord r;
    simulate(sys, {0}, o, r);
    INFO("error: " << r.error);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    double t1 = kA * kP1 / kFin;
    CHECK(ev.time == doctest::Approx(t1).epsilon(1e-12));
    CHECK(ev.transitions == std::vector<std::string>{
                                "valve1: closed -> open when (tank.e >= P1)+",
                                "valve2: closed -> open when (pipe.e >= P2)+"});
    CHECK(ev.modes == std::vector<std::string>{"valve1=closed, valve2=closed",
                                               "valve1=open, valve2=closed",
                                               "valve1=open, valve2=open"});
    CHECK(ev.real == std::vector<bool>{true, false, true});
    // No dependent storage: the state is the same in every mode passed through.
    REQUIRE(ev.before.size() == 1);
    CHECK(ev.before[0] == doctest::Approx(kA * kP1).epsilon(1e-12));
    REQUIRE(ev.states.size() == 3);
    for (const std::vector<double> &s : ev.states)
      CHECK(s == ev.before);
    CHECK(ev.after == ev.before);
    CHECK(ev.remapIterations.empty());

    // The output: the tank fills linearly, then drains towards Fin Rt.
    std::vector<std::size_t> rows = rowsAt(r, ev.time);
    REQUIRE(rows.size() == 2);
    CHECK(r.columns[2][rows[0]] == 0);                                     // pipe cut off
    CHECK(r.columns[2][rows[1]] == doctest::Approx(kP1 * kR2 / (kR1 + kR2)).epsilon(1e-12));
    double rt = kR1 + kR2;
    for (std::size_t i = 0; i < r.columns[0].size(); ++i) {
      double t = r.columns[0][i];
      bool after = t > ev.time || (t == ev.time && i == rows[1]);
      double tank = after ? kFin * rt + (kP1 - kFin * rt) * std::exp(-(t - t1) / (rt * kA))
                          : kFin * t / kA;
      CAPTURE(t);
      CHECK(r.columns[1][i] == doctest::Approx(tank).epsilon(1e-8));
      CHECK(r.columns[2][i] == doctest::Approx(after ? tank * kR2 / rt : 0).epsilon(1e-8));
    }
    CHECK(r.columns[0].back() == 10);
  }
}

// ---------------------------------------------------------------------------
// Modes that do not settle. x' = 1 from 0 in every mode; the first switch
// comes at x = 0.5.
// ---------------------------------------------------------------------------

namespace {

/// A mode integrating x' = 1 and outputting x; `lhs` gives each
/// comparison's left side (the right one is 0) in this mode.
ModeSpec rampMode(std::vector<std::function<std::uint32_t(Guards &)>> lhs) {
  ModeSpec m;
  m.states = {0};
  m.stateNames = {"x"};
  Guards g;
  for (auto &f : lhs)
    g.compareWithZero(f(g));
  m.guards = g.tape;
  m.rhs = [](double, const double *, double *xdot) { xdot[0] = 1; };
  m.outputs = [](double, const double *x, double *y) { y[0] = x[0]; };
  return m;
}

std::function<std::uint32_t(Guards &)> xMinusHalf() {
  return [](Guards &g) { return g.sub(g.x(0), g.constant(0.5)); };
}
std::function<std::uint32_t(Guards &)> constantLhs(double v) {
  return [v](Guards &g) { return g.constant(v); };
}

/// The output before the failed event: x = t on the grid 0, 0.1, ..., 0.4,
/// then the row before the event at t = 0.5 (which may come after a grid
/// row at 0.5 when the event is located a rounding later).
void checkRowsUpToHalf(const RunRecord &r) {
  REQUIRE(r.columns.size() == 2);
  const std::vector<double> &t = r.columns[0];
  REQUIRE(t.size() >= 6);
  REQUIRE(t.size() <= 7);
  for (std::size_t k = 0; k < 5; ++k)
    CHECK(t[k] == doctest::Approx(0.1 * static_cast<double>(k)).epsilon(1e-15));
  for (std::size_t k = 5; k < t.size(); ++k)
    CHECK(t[k] == doctest::Approx(0.5).epsilon(1e-12));
  for (std::size_t i = 0; i < t.size(); ++i)
    CHECK(r.columns[1][i] == doctest::Approx(t[i]).epsilon(1e-12));
}

SimulateOptions rampOptions() {
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = 1;
  o.dtOut = 0.1;
  return o;
}

} // namespace

TEST_CASE("a junction that switches back at once: the modes do not settle") {
  // j: off -> on when (x >= 0.5)+, on -> off when (w > 0)+, where w is 1 in
  // the ON configuration (0 in OFF): judged a posteriori, ON turns itself
  // off again in the same instant, and OFF turns on again.
  Junction j = junction("j", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "off -> on when (x >= 0.5)+"),
                         transition(1, 0, comparison(1, CompareOp::Greater, false),
                                    "on -> off when (w > 0)+")});
  HandSystem sys({"x"}, {"x"}, Switching({j}, {CompareOp::GreaterEqual, CompareOp::Greater}));
  sys.add({0}, rampMode({xMinusHalf(), constantLhs(0)}));
  sys.add({1}, rampMode({xMinusHalf(), constantLhs(1)}));
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunModesDoNotSettle);
  CHECK(r.failure->time == 0.5);
  CHECK(r.error == "at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` switches "
                   "in a cycle through `j=off` -> `j=on` -> `j=off`");
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

TEST_CASE("two junctions that chase each other: the modes do not settle") {
  // a: off -> on when (x >= 0.5)+, on -> off when (b's flag > 0)+;
  // b: off -> on when (a's flag > 0)+, on -> off when (a's flag <= 0)+,
  // a flag being 1 in the configurations where its junction is on. From
  // (off, off) at x = 0.5: a turns on; then b follows; then a turns off;
  // then a turns on again and b off: (on, off) a second time.
  Junction a = junction("a", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "off -> on when (x >= 0.5)+"),
                         transition(1, 0, comparison(1, CompareOp::Greater, false),
                                    "on -> off when (b.flag > 0)+")});
  Junction b = junction("b", {"off", "on"},
                        {transition(0, 1, comparison(2, CompareOp::Greater, false),
                                    "off -> on when (a.flag > 0)+"),
                         transition(1, 0, comparison(3, CompareOp::LessEqual, false),
                                    "on -> off when (a.flag <= 0)+")});
  HandSystem sys({"x"}, {"x"},
                 Switching({a, b}, {CompareOp::GreaterEqual, CompareOp::Greater,
                                    CompareOp::Greater, CompareOp::LessEqual}));
  for (std::uint32_t qa : {0u, 1u})
    for (std::uint32_t qb : {0u, 1u})
      sys.add({qa, qb}, rampMode({xMinusHalf(), constantLhs(qb), constantLhs(qa),
                                  constantLhs(qa)}));
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  CHECK(r.error == "at t = 0.5 in mode `a=off, b=off`: the modes do not settle: junctions `a`, "
                   "`b` switch in a cycle through `a=on, b=off` -> `a=on, b=on` -> `a=off, b=on` "
                   "-> `a=on, b=off`");
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

namespace {

/// j: off -> on when (u >= 0.5)-, on -> off when (w > 0)-, where u is x in
/// OFF and 0 in ON, w is 1 in ON and 0 in OFF. Judged a priori, each round
/// of mode iteration switches once: OFF -> ON (real), ON -> OFF (real),
/// and the third round starts from OFF with the same state as the first.
HandSystem realModeCycle() {
  Junction j = junction("j", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, true),
                                    "off -> on when (u >= 0.5)-"),
                         transition(1, 0, comparison(1, CompareOp::Greater, true),
                                    "on -> off when (w > 0)-")});
  HandSystem sys({"x"}, {"x"}, Switching({j}, {CompareOp::GreaterEqual, CompareOp::Greater}));
  sys.add({0}, rampMode({xMinusHalf(), constantLhs(0)}));
  sys.add({1}, rampMode({constantLhs(-0.5), constantLhs(1)}));
  return sys;
}

} // namespace

TEST_CASE("a cycle over real modes: a round starts from a mode and state seen before") {
  // The message lists the cycle once: (j=off) -> (j=on) -> (j=off).
  HandSystem sys = realModeCycle();
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunModesDoNotSettle);
  CHECK(r.failure->time == 0.5);
  CHECK(r.error == "at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` switches "
                   "in a cycle through `j=off` -> `j=on` -> `j=off`");
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

TEST_CASE("a cycle over real modes is reported") {
  // The run stops at the first switch, naming the junction, whatever the
  // wording of the end of the cycle.
  HandSystem sys = realModeCycle();
  RunRecord r;
  simulate(sys, {0}, rampOptions(), r);
  CHECK(r.error.rfind("at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` "
                      "switches in a cycle through `j=off` -> `j=on` -> `j=off`",
                      0) == 0);
  CHECK(r.events.empty());
  checkRowsUpToHalf(r);
}

// ---------------------------------------------------------------------------
// Zeno: a bouncing ball without a resting mode.
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
// t_inf = t1 (1 + e) / (1 - e). The spacing of the events shrinks by e, so
// the detector's estimate of the time left after bounce k,
// (t_k - t_(k-1)) e / (1 - e) = 2 t1 e^k / (1 - e), is exact; it reports
// the first bounce k with 2 t1 e^k / (1 - e) <= zenoSpan max(1, t_k).
// ---------------------------------------------------------------------------

namespace {

constexpr double kG = 9.81, kH0 = 1, kE = 0.8, kM = 1;

HandSystem bouncingBall(bool enclose) {
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

/// Runs the ball to t = 5 and checks the bounces and the Zeno report
/// against the closed forms.
void checkBouncingBall(bool enclose) {
  HandSystem sys = bouncingBall(enclose);
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = 5;
  RunRecord r;
  simulate(sys, {kH0, 0}, o, r);

  double v0 = std::sqrt(2 * kG * kH0), t1 = v0 / kG, tInf = t1 * (1 + kE) / (1 - kE);
  CHECK(tInf == doctest::Approx(4.0637).epsilon(1e-5)); // the example's number

  // The bounces up to the report, against the closed form.
  std::size_t expected = 0;
  {
    double t = t1;
    for (std::size_t k = 1;; ++k) {
      if (k > 11 && 2 * t1 * std::pow(kE, k) / (1 - kE) <= o.zenoSpan * std::max(1.0, t)) {
        expected = k;
        break;
      }
      t += 2 * t1 * std::pow(kE, k);
    }
  }
  CHECK(r.events.size() == expected);
  double tk = t1;
  for (std::size_t k = 1; k <= std::min<std::size_t>(r.events.size(), 20); ++k) {
    CAPTURE(k);
    const Event &ev = r.events[k - 1];
    CHECK(ev.time == doctest::Approx(tk).epsilon(1e-10));
    CHECK(ev.modes == std::vector<std::string>{"floor=flying", "floor=impact", "floor=flying"});
    CHECK(ev.real == std::vector<bool>{true, true, true});
    CHECK(ev.transitions == std::vector<std::string>{
                                "floor: flying -> impact when (h <= 0)+ and (ball.f < 0)-",
                                "floor: impact -> flying when (ball.f > 0)-"});
    REQUIRE(ev.before.size() == 2);
    double speed = v0 * std::pow(kE, k - 1);
    CHECK(ev.before[0] == doctest::Approx(0).epsilon(1e-10));
    CHECK(ev.before[1] == doctest::Approx(-kM * speed).epsilon(1e-9));
    CHECK(ev.after[0] == ev.before[0]);
    CHECK(ev.after[1] == doctest::Approx(-kE * ev.before[1]).epsilon(1e-15));
    tk += 2 * t1 * std::pow(kE, k);
  }

  // The report: the junction, and a time inside the detector's window
  // before the accumulation point: no more than zenoSpan max(1, t) before
  // it, and (the bounce before was not reported) more than e times that.
  INFO("error: " << r.error);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunZeno);
  CHECK(r.failure->message.rfind("Zeno behaviour: events of `floor` accumulate (", 0) == 0);
  double reported = r.failure->time;
  double window = o.zenoSpan * tInf;
  CHECK(reported < tInf);
  CHECK(tInf - reported <= window * (1 + 1e-3));
  CHECK(tInf - reported > kE * window * (1 - 1e-3));
  REQUIRE_FALSE(r.events.empty());
  CHECK(reported == r.events.back().time);
  CHECK(r.error.find("the model needs a resting mode") != std::string::npos);
  // The output before the report is kept: the first flight is a parabola.
  REQUIRE(r.columns[0].size() > 10);
  for (std::size_t i = 0; i < r.columns[0].size() && r.columns[0][i] < t1; ++i) {
    double t = r.columns[0][i];
    CHECK(r.columns[1][i] == doctest::Approx(kH0 - kG * t * t / 2).epsilon(1e-10));
  }
}

} // namespace

TEST_CASE("bouncing ball without a resting mode: Zeno behaviour at t1 (1 + e) / (1 - e)") {
  checkBouncingBall(true);
}

TEST_CASE("a bounded event history keeps the last events, counts the rest, finds the same Zeno") {
  SimulateOptions o;
  o.tEnd = 5;
  o.zenoEvents = 10; // keeps 22 events, trimmed beyond 44: fewer than the ball's
  RunRecord all, bounded;
  HandSystem a = bouncingBall(true), b = bouncingBall(true);
  simulate(a, {kH0, 0}, o, all);
  o.keepEvents = 0; // the record keeps what Zeno detection needs
  simulate(b, {kH0, 0}, o, bounded);
  REQUIRE(all.events.size() > 2 * (o.zenoEvents + 12));
  CHECK(bounded.events.size() <= 2 * (o.zenoEvents + 12));
  CHECK(bounded.events.size() + bounded.eventsDropped == all.events.size());
  CHECK(bounded.error == all.error);
  CHECK(bounded.events.back().time == all.events.back().time);
  CHECK(bounded.events.front().time == all.events[bounded.eventsDropped].time);
}

TEST_CASE("bouncing ball, events found by sampling: the same bounces and report") {
  // The guards refuse enclosures, as a mode whose guards read Newton-solved
  // values does. Each bounce, located by sampling to 1e-12 of its step,
  // leaves the ball a little below the floor (h = -2.2e-12 after the
  // first); the flight's first step grows long ([0.4515, 5]) and h <= 0
  // holds at its start and at its first quarter. Only the probes very
  // early in the step, where the ball has risen above the floor, show the
  // landing in between as a crossing.
  checkBouncingBall(false);
}

// ---------------------------------------------------------------------------
// `-` against `+` at one event.
//
// The collision again, with a second junction `alarm`: off -> on when
// (engaged > 0)+ and (v1 - v2 > 0.5)±, where `engaged` is 1 in the
// configurations with the contact on, and v1 - v2 the bodies' relative
// speed (0 while they are in contact, whose constraint makes v2 = v1).
// At the impact the contact turns on first; alarm's guard needs the
// contact on, so it is judged in the next step of the iteration, in the
// configuration (contact=on, alarm=off):
//  - marked `-`, the speed is the a priori one, 1 > 0.5: the alarm turns
//    on in the same step; (contact=on, alarm=off) is mythical and the
//    event ends in (contact=on, alarm=on);
//  - marked `+`, the speed is the a posteriori one, 0: the alarm stays off
//    and the event ends in (contact=on, alarm=off), which is real; the next
//    round judges it on the remapped state, where it is still 0.
// ---------------------------------------------------------------------------

namespace {

HandSystem alarmedCollision(bool minus) {
  Junction contact = junction("contact", {"off", "on"},
                              {transition(0, 1, comparison(0, CompareOp::LessEqual, false),
                                          "off -> on when (x2 - x1 <= 0)+")});
  std::string mark = minus ? "-" : "+";
  Junction alarm = junction(
      "alarm", {"off", "on"},
      {transition(0, 1, both(comparison(1, CompareOp::Greater, false),
                             comparison(2, CompareOp::Greater, minus)),
                  "off -> on when (engaged > 0)+ and (v1 - v2 > 0.5)" + mark)});
  HandSystem sys({"bullet.p", "wood.p", "x1", "x2"}, {"p1", "p2", "alarm"},
                 Switching({contact, alarm},
                           {CompareOp::LessEqual, CompareOp::Greater, CompareOp::Greater}));
  for (std::uint32_t alarmOn : {0u, 1u}) {
    // Unit masses; the alarm does not change the dynamics.
    ModeSpec off;
    off.states = {0, 1, 2, 3};
    off.stateNames = {"bullet.p", "wood.p", "x1", "x2"};
    Guards g;
    g.compareWithZero(g.sub(g.x(3), g.x(2)));
    g.compareWithZero(g.constant(0));
    g.compare(g.sub(g.x(0), g.x(1)), g.constant(0.5));
    off.guards = g.tape;
    off.rhs = [](double, const double *x, double *xdot) {
      xdot[0] = 0;
      xdot[1] = 0;
      xdot[2] = x[0];
      xdot[3] = x[1];
    };
    off.outputs = [=](double, const double *x, double *y) {
      y[0] = x[0];
      y[1] = x[1];
      y[2] = alarmOn;
    };
    if (!alarmOn) // (contact=off, alarm=on) is never entered
      sys.add({0, alarmOn}, off);

    ModeSpec on;
    on.states = {0, 2, 3};
    on.dependents = {1};
    on.stateNames = {"bullet.p", "x1", "x2"};
    Guards h;
    h.compareWithZero(h.sub(h.x(2), h.x(1)));
    h.compareWithZero(h.constant(1));
    h.compare(h.constant(0), h.constant(0.5));
    on.guards = h.tape;
    on.rhs = [](double, const double *x, double *xdot) {
      xdot[0] = 0;
      xdot[1] = x[0];
      xdot[2] = x[0];
    };
    on.outputs = [=](double, const double *x, double *y) {
      y[0] = x[0];
      y[1] = x[0];
      y[2] = alarmOn;
    };
    on.dependent = [](double, const double *x, double *d) { d[0] = x[0]; };
    on.dependentJacobian = [](double, const double *, double *jac) {
      jac[0] = 1;
      jac[1] = 0;
      jac[2] = 0;
    };
    on.impulse = [](double, const double *, double *b) {
      b[0] = -1;
      b[1] = 0;
      b[2] = 0;
    };
    sys.add({1, alarmOn}, on);
  }
  return sys;
}

} // namespace

TEST_CASE("a `-` comparison is judged a priori, a `+` one a posteriori") {
  for (bool minus : {true, false}) {
    CAPTURE(minus);
    HandSystem sys = alarmedCollision(minus);
    RunRecord r;
    simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
    INFO("error: " << r.error);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    CHECK(ev.time == doctest::Approx(0.2).epsilon(1e-12));
    // The remap is the same either way: the alarm does not change the dynamics.
    REQUIRE(ev.after.size() == 4);
    CHECK(ev.after[0] == doctest::Approx(0.5).epsilon(1e-14));
    CHECK(ev.after[1] == doctest::Approx(0.5).epsilon(1e-14));
    if (minus) {
      CHECK(ev.transitions ==
            std::vector<std::string>{"contact: off -> on when (x2 - x1 <= 0)+",
                                     "alarm: off -> on when (engaged > 0)+ and (v1 - v2 > 0.5)-"});
      CHECK(ev.modes == std::vector<std::string>{"contact=off, alarm=off",
                                                 "contact=on, alarm=off", "contact=on, alarm=on"});
      CHECK(ev.real == std::vector<bool>{true, false, true});
      REQUIRE(ev.states.size() == 3);
      CHECK(ev.states[1] == ev.before); // unchanged through the mythical mode
      CHECK(ev.states[2] == ev.after);
      CHECK(r.columns[3].back() == 1); // the alarm is on at the end
    } else {
      CHECK(ev.transitions == std::vector<std::string>{"contact: off -> on when (x2 - x1 <= 0)+"});
      CHECK(ev.modes == std::vector<std::string>{"contact=off, alarm=off", "contact=on, alarm=off"});
      CHECK(ev.real == std::vector<bool>{true, true});
      REQUIRE(ev.states.size() == 2);
      CHECK(ev.states[1] == ev.after);
      CHECK(r.columns[3].back() == 0); // the alarm stays off
    }
  }
}

// ---------------------------------------------------------------------------
// The energy audit, on the collision: p^2 / 2m per body, nothing for the
// positions.
// ---------------------------------------------------------------------------

TEST_CASE("the energy audit records the energy before and after, and warns of a loss") {
  for (bool dissipative : {false, true}) {
    CAPTURE(dissipative);
    const double m1 = 1, m2 = 3;
    HandSystem sys = collision(m1, m2, true, dissipative);
    sys.energy = [=](const double *X, double *e) {
      e[0] = X[0] * X[0] / (2 * m1);
      e[1] = X[1] * X[1] / (2 * m2);
      e[2] = e[3] = 0;
    };
    RunRecord r;
    simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    // 1/2 before; (1/4)^2 / 2 + (3/4)^2 / 6 = 1/8 after: 3/8 removed.
    CHECK(ev.energyBefore == std::vector<double>{0.5, 0, 0, 0});
    CHECK(ev.storedBefore == 0.5);
    CHECK(ev.storedAfter == doctest::Approx(0.125).epsilon(1e-14));
    CHECK(ev.removed == doctest::Approx(0.375).epsilon(1e-14));
    CHECK(ev.junctionsSwitched == std::vector<std::uint32_t>{0});
    if (dissipative) {
      CHECK(r.warnings.empty());
      continue;
    }
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].kind == DiagKind::RunEnergyVanished);
    CHECK(r.warnings[0].time == doctest::Approx(0.2).epsilon(1e-14));
    CHECK(r.warnings[0].message ==
          "the event into mode `contact=on` removed 0.375 J of the 0.5 J stored "
          "(bullet 0.5 J -> 0.0312 J) with no dissipative junction switching (contact): an "
          "ideal switching element may leave no path for what the storage holds; if the loss "
          "is physical (a plastic impact), declare the junction `switched dissipative`");
  }
}

TEST_CASE("the energy audit says nothing about a System that cannot say") {
  HandSystem sys = collision(1, 1, true);
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].energyBefore.empty());
  CHECK(std::isnan(r.events[0].removed));
  CHECK(r.warnings.empty());
}

// ---------------------------------------------------------------------------
// Impulse tiers. Junction `j` closes at t = 0.5 onto a short circuit: in
// the candidate (j=on, d=conducting) a source's stand-in (dependent
// storage outside the state) and the real storage x both jump. Diode `d`
// blocks when (s < 0)+, and s carries the stand-in's impulse with
// strength +1 per unit and x's with -1 per unit. The stand-in jumps by
// -1e-6 from zero, x by -1 from 1: together s's strength would be
// +0.999999, but the short circuit's impulse is unbounded and dominates,
// so the diode blocks and the run goes on in (j=on, d=blocking). A
// stand-in that does not jump (the sources agree) is judged as the limit
// of a jump of -epsilon, with the same result. When it jumps by +1e-6,
// its impulse keeps the diode on, and entering the short-circuited mode
// stops the run.
// ---------------------------------------------------------------------------

namespace {

HandSystem shortCircuitSystem(double standInJump) {
  Junction j = junction("j", {"off", "on"},
                        {transition(0, 1, comparison(0, CompareOp::GreaterEqual, false),
                                    "off -> on when (time >= 0.5)+")});
  Junction d = junction("d", {"conducting", "blocking"},
                        {transition(0, 1, comparison(1, CompareOp::Less, false),
                                    "conducting -> blocking when (s < 0)+")});
  HandSystem sys({"x"}, {"x"},
                 Switching({j, d}, {CompareOp::GreaterEqual, CompareOp::Less}));
  auto plain = [](bool withTime) {
    ModeSpec m;
    m.states = {0};
    m.stateNames = {"x"};
    Guards g;
    g.compare(withTime ? g.time() : g.constant(0), g.constant(0.5));
    g.compareWithZero(g.constant(1)); // s is +1 between events
    m.guards = g.tape;
    m.rhs = [](double, const double *, double *xdot) { xdot[0] = 0; };
    m.outputs = [](double, const double *x, double *y) { y[0] = x[0]; };
    return m;
  };
  sys.add({0, 0}, plain(true));
  sys.add({1, 1}, plain(false));
  ModeSpec shorted = plain(false);
  shorted.states = {};
  shorted.stateNames = {};
  shorted.dependents = {kNoSlot, 0};
  shorted.shortCircuit = "`a` and `b` both impose the effort";
  shorted.rhs = [](double, const double *, double *) {};
  shorted.outputs = [](double, const double *, double *y) { y[0] = 0; };
  shorted.dependent = [=](double, const double *, double *dep) {
    dep[0] = standInJump; // from zero
    dep[1] = 0;           // x: from 1
  };
  shorted.guardImpulses = [](double, const double *, double *out) {
    // Sides: time, 0.5, s, 0; dependent: stand-in, x.
    std::fill(out, out + 8, 0.0);
    out[2 * 2 + 0] = 1;
    out[2 * 2 + 1] = -1;
  };
  sys.add({1, 0}, shorted);
  return sys;
}

} // namespace

TEST_CASE("a short circuit's impulse is judged before real storage's") {
  SimulateOptions o;
  o.tEnd = 1;
  o.dtOut = 0.25;
  // A stand-in's jump of zero (the sources agree: a switch closed across
  // its conducting 0 V diode) is judged as the limit of its source a
  // little above its value, as a jump of -1e-6 is.
  for (double jump : {-1e-6, 0.0}) {
    CAPTURE(jump);
    HandSystem sys = shortCircuitSystem(jump);
    RunRecord r;
    simulate(sys, {1}, o, r);
    INFO(r.error);
    REQUIRE(r.error.empty());
    REQUIRE(r.events.size() == 1);
    const Event &ev = r.events[0];
    CHECK(ev.time == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(ev.modes == std::vector<std::string>{"j=off, d=conducting", "j=on, d=conducting",
                                               "j=on, d=blocking"});
    CHECK(ev.real == std::vector<bool>{true, false, true});
    CHECK(ev.after == std::vector<double>{1}); // the mythical mode's jump never happens
  }
  {
    HandSystem sys = shortCircuitSystem(1e-6);
    RunRecord r;
    simulate(sys, {1}, o, r);
    INFO(r.error);
    REQUIRE(r.failure);
    CHECK(r.failure->kind == DiagKind::RunModeShortCircuit);
    CHECK(r.error.find("at t = 0.5 in mode `j=off, d=conducting`: entering mode `j=on, "
                       "d=conducting`, in which") != std::string::npos);
    CHECK(r.error.find("in which sources short-circuit each other") != std::string::npos);
    CHECK(r.error.find("`a` and `b` both impose the effort") != std::string::npos);
  }
}

// Run-time errors: each is a diagnostic kind with the time, the mode and
// the element it names as fields of their own.

namespace {
/// One mode and no junctions: dx/dt = rhs(t, x), the states as outputs.
HandSystem plain(const std::vector<std::string> &states, Fn rhs) {
  HandSystem sys(states, states, Switching());
  ModeSpec m;
  for (std::uint32_t i = 0; i < states.size(); ++i)
    m.states.push_back(i);
  m.stateNames = states;
  m.rhs = std::move(rhs);
  m.outputs = [n = states.size()](double, const double *x, double *y) { std::copy(x, x + n, y); };
  sys.add({}, m);
  return sys;
}

RunRecord runPlain(HandSystem &sys, const std::vector<double> &x0, const SimulateOptions &o) {
  RunRecord r;
  simulate(sys, x0, o, r);
  INFO(r.error);
  REQUIRE(r.failure);
  CHECK(r.error ==
        r.failure->where() + (r.failure->where().empty() ? "" : ": ") + r.failure->message);
  return r;
}

Fn constantRate(double c) {
  return [c](double, const double *, double *xdot) { xdot[0] = c; };
}
} // namespace

TEST_CASE("settings a run cannot start with: errors at no time") {
  HandSystem sys = plain({"x"}, constantRate(1));
  SimulateOptions o;
  o.tStart = 0;
  o.tEnd = -1;
  RunRecord r = runPlain(sys, {0}, o);
  CHECK(r.failure->kind == DiagKind::RunEndBeforeStart);
  CHECK(std::isnan(r.failure->time));
  CHECK(r.error == "the end time -1 is before the start time 0");

  o.tEnd = 1;
  o.maxStep = 0;
  r = runPlain(sys, {0}, o);
  CHECK(r.failure->kind == DiagKind::RunStepNotPositive);
  CHECK(r.failure->text("M") == "model `M`: step sizes must be positive");

  o.maxStep = 1;
  r = runPlain(sys, {std::nan("")}, o);
  CHECK(r.failure->kind == DiagKind::RunInitialNotFinite);
  CHECK(r.failure->element == "x");
  CHECK(r.error == "the initial value of state `x` is not finite");
}

TEST_CASE("a step limit, a state that overflows, tiny and collapsing steps: each by kind") {
  SimulateOptions o;
  o.tEnd = 1;
  {
    HandSystem sys = plain({"x"}, constantRate(1));
    o.maxSteps = 5;
    o.maxStep = 0.01;
    RunRecord r = runPlain(sys, {0}, o);
    CHECK(r.failure->kind == DiagKind::RunTooManySteps);
    CHECK(r.failure->time > 0);
    CHECK(r.failure->time <= 0.05);
    CHECK(r.failure->mode.empty());
    CHECK(r.failure->message == "the limit of 5 steps is reached");
    static_cast<IntegratorOptions &>(o) = {};
  }
  {
    // Euler from 0 at 1e308 per unit time: one step of 10 leaves the
    // doubles.
    HandSystem sys = plain({"x"}, constantRate(1e308));
    SimulateOptions e = o;
    e.tEnd = 100;
    e.method = Method::Euler;
    e.step = 10;
    e.dtOut = 10;
    RunRecord r = runPlain(sys, {0}, e);
    CHECK(r.failure->kind == DiagKind::RunStateNotFinite);
    CHECK(r.failure->element == "x");
    CHECK(r.failure->time == 10);
    CHECK(r.error == "at t = 10: state `x` is not finite");
  }
  {
    // Steps held below 1e-12 of t by maxStep: the run says the step
    // collapsed rather than crawl.
    HandSystem sys = plain({"x"}, constantRate(1));
    SimulateOptions c = o;
    c.tStart = 1;
    c.tEnd = 2;
    c.maxStep = 1e-13;
    RunRecord r = runPlain(sys, {0}, c);
    CHECK(r.failure->kind == DiagKind::RunTinySteps);
    CHECK(r.failure->element == "x");
    CHECK(r.failure->time == doctest::Approx(1 + 1000e-13).epsilon(1e-12));
  }
  {
    // x' = x^2 from 1 blows up at t = 1: the steps shrink towards it
    // until they no longer move t.
    HandSystem sys =
        plain({"x"}, [](double, const double *x, double *xdot) { xdot[0] = x[0] * x[0]; });
    SimulateOptions b = o;
    b.tEnd = 2;
    RunRecord r = runPlain(sys, {1}, b);
    INFO(r.error);
    CHECK(r.failure->kind == DiagKind::RunStepUnderflow);
    CHECK(r.failure->element == "x");
    CHECK(r.failure->time == doctest::Approx(1).epsilon(1e-6));
    CHECK(r.failure->message.find("which does not shrink with the step: a right-hand side that "
                                  "is discontinuous, singular or too stiff") != std::string::npos);
  }
  {
    // A chain of integrators from rest, x8 = t^8 / 8!, with no scale for
    // any state (no nominal, no atol): x8's error is judged against its
    // own value, which vanishes with the step as fast as the error does.
    // The message says so, and what gives it a scale.
    std::vector<std::string> names = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"};
    HandSystem sys = plain(names, [](double, const double *x, double *xdot) {
      xdot[0] = 0;
      for (int k = 1; k < 9; ++k)
        xdot[k] = x[k - 1];
    });
    SimulateOptions c = o;
    c.atol = 0;
    RunRecord r = runPlain(sys, {1, 0, 0, 0, 0, 0, 0, 0, 0}, c);
    REQUIRE(r.failure);
    INFO(r.error);
    CHECK(r.failure->kind == DiagKind::RunStepUnderflowScale);
    CHECK(r.failure->time == 0);
    CHECK(r.failure->message.find("it grows from zero, and its error is judged against that "
                                  "value rather than against its scale, whose floor is 0; give "
                                  "it the magnitude it reaches with `nominal = ...`") !=
          std::string::npos);
    // A floor for every state lets it run.
    c.atol = 1e-12;
    RunRecord ok;
    simulate(sys, {1, 0, 0, 0, 0, 0, 0, 0, 0}, c, ok);
    CHECK_MESSAGE(!ok.failure, ok.error);
  }
}

TEST_CASE("steps too short for t, with no state's error to blame: the settings are named") {
  HandSystem sys = plain({"x"}, constantRate(1));
  // A fixed step of 1 at t = 1e17, where neighbouring doubles are 16 apart.
  SimulateOptions o;
  o.tStart = 1e17;
  o.tEnd = 1e17 + 1024;
  o.dtOut = 1024;
  o.method = Method::Euler;
  o.step = 1;
  RunRecord r = runPlain(sys, {0}, o);
  CHECK(r.failure->kind == DiagKind::RunStepTooSmall);
  CHECK(r.failure->time == 1e17);
  CHECK(r.failure->element.empty());
  // An adaptive step bounded below 1e-14 of t before any error estimate.
  SimulateOptions a;
  a.tStart = 1;
  a.tEnd = 2;
  a.maxStep = 1e-15;
  r = runPlain(sys, {0}, a);
  CHECK(r.failure->kind == DiagKind::RunStepTooSmall);
  CHECK(r.failure->time == 1);
}

TEST_CASE("the stiff method's matrix singular at every step size: an error by kind") {
  // f = 1e300 (x0 + x1) (1, 1) is zero at the start, and its Jacobian
  // (1e300 in every entry) swamps 1 / (h gamma) for every step the
  // method could take: I / (h gamma) - J is singular in floating point.
  HandSystem sys = plain({"a", "b"}, [](double, const double *x, double *xdot) {
    xdot[0] = xdot[1] = 1e300 * (x[0] + x[1]);
  });
  SimulateOptions o;
  o.tEnd = 1;
  o.method = Method::Rosenbrock;
  RunRecord r = runPlain(sys, {1, -1}, o);
  CHECK(r.failure->kind == DiagKind::RunStiffSingular);
  CHECK(r.failure->time == 0);
}

TEST_CASE("a stepped run asked to go back in time: an error naming both times") {
  HandSystem sys = plain({"x"}, constantRate(1));
  SimulateOptions o;
  o.tEnd = 1;
  RunRecord r;
  SteppedRun run(sys, {0}, o, r);
  REQUIRE(run.start());
  REQUIRE(run.advance(0.5));
  CHECK_FALSE(run.advance(0.25));
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunAdvanceBackwards);
  CHECK(r.failure->time == 0.5);
  CHECK(r.error == "at t = 0.5: cannot advance to t = 0.25, before the run's time");
}

TEST_CASE("too many events: an error at the event that passes the limit") {
  HandSystem sys = bouncingBall(true);
  SimulateOptions o;
  o.tEnd = 5;
  o.maxEvents = 3;
  RunRecord r;
  simulate(sys, {kH0, 0}, o, r);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == DiagKind::RunTooManyEvents);
  CHECK(r.events.size() == 4);
  CHECK(r.failure->time == r.events.back().time);
  CHECK(r.failure->mode == "floor=flying");
  CHECK(r.failure->message == "more than 3 events");
}

namespace {
/// The collision with its contact mode changed by `breakIt`: the run
/// fails at the impact, keeping the rows before it.
RunRecord brokenCollision(const std::function<void(ModeSpec &)> &breakIt) {
  HandSystem sys = collision(1, 1, true, false, breakIt);
  RunRecord r;
  simulate(sys, {1, 0, -0.2, 0}, collisionOptions(), r);
  INFO(r.error);
  REQUIRE(r.failure);
  CHECK(r.failure->time == doctest::Approx(0.2).epsilon(1e-12));
  CHECK(r.failure->mode == "contact=off"); // where the run was: the event started there
  CHECK(r.failure->message.rfind("state remapping into mode `contact=on` ", 0) == 0);
  CHECK(r.columns[0].back() <= r.failure->time);
  return r;
}
} // namespace

TEST_CASE("a remap that cannot be done: singular, not finite, not converging, each by kind") {
  // I - B A = 1 - (1)(1): the impulse into the wood goes into the bullet
  // as well.
  RunRecord r = brokenCollision([](ModeSpec &on) {
    on.impulse = [](double, const double *, double *b) { b[0] = 1, b[1] = 0, b[2] = 0; };
  });
  CHECK(r.failure->kind == DiagKind::RunRemapSingular);
  r = brokenCollision([](ModeSpec &on) {
    on.dependent = [](double, const double *, double *d) {
      d[0] = std::numeric_limits<double>::infinity();
    };
  });
  CHECK(r.failure->kind == DiagKind::RunRemapNotFinite);
  // A Jacobian of the wrong sign: each Newton step overshoots 19-fold.
  r = brokenCollision([](ModeSpec &on) {
    on.dependentJacobian = [](double, const double *, double *jac) {
      jac[0] = -0.9, jac[1] = 0, jac[2] = 0;
    };
  });
  CHECK(r.failure->kind == DiagKind::RunRemapNotConverged);
}
