//===- tests/runtime/events_test.cpp - Event location without a compiler --===//
//
// The EventLocator on hand-written ODEs and guard tapes: every event that a
// brute-force grid on the stepper's dense output sees is found, and found
// first, including crossings that come and go within one step.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/EventLocator.h"
#include "hbg/runtime/Tape.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace hbg;
using namespace hbg::runtime;

namespace {

/// Builds a tape instruction by instruction.
struct TapeBuilder {
  Tape tape;
  std::uint32_t emit(TapeOp op, std::uint32_t a = 0, std::uint32_t b = 0, double value = 0) {
    tape.code.push_back({op, a, b, 0, value});
    return static_cast<std::uint32_t>(tape.code.size() - 1);
  }
  std::uint32_t constant(double v) { return emit(TapeOp::Const, 0, 0, v); }
  std::uint32_t time() { return emit(TapeOp::Time); }
  std::uint32_t x(std::uint32_t i) { return emit(TapeOp::X, i); }
  std::uint32_t add(std::uint32_t a, std::uint32_t b) { return emit(TapeOp::Add, a, b); }
  std::uint32_t sub(std::uint32_t a, std::uint32_t b) { return emit(TapeOp::Sub, a, b); }
  std::uint32_t mul(std::uint32_t a, std::uint32_t b) { return emit(TapeOp::Mul, a, b); }
  std::uint32_t sin(std::uint32_t a) { return emit(TapeOp::Sin, a); }
  /// Comparison `lhs op 0`: results lhs, 0 and lhs - 0.
  void compareWithZero(std::uint32_t lhs) {
    std::uint32_t zero = constant(0);
    tape.results.insert(tape.results.end(), {lhs, zero, lhs});
  }
};

/// A mode given by an ODE and a guard tape (three results per comparison).
class TapeMode final : public Mode {
public:
  using Rhs = std::function<void(double t, const double *x, double *xdot)>;
  TapeMode(std::size_t n, Rhs rhs, Tape tape) : rhs_(std::move(rhs)), tape_(std::move(tape)) {
    for (std::uint32_t i = 0; i < n; ++i)
      slots_.push_back(i);
    reads_ = tape_.xRead();
  }
  const std::string &name() const override { return name_; }
  const std::vector<std::uint32_t> &stateSlots() const override { return slots_; }
  const std::vector<std::uint32_t> &dependentSlots() const override { return none_; }
  const std::string &stateName(std::size_t) const override { return name_; }
  bool rhs(double t, const double *x, double *xdot) override {
    rhs_(t, x, xdot);
    return true;
  }
  bool outputs(double, const double *, double *) override { return true; }
  bool guards(double t, const double *x, double *sides) override {
    values_.resize(tape_.results.size());
    tape_.evaluate(t, x, nullptr, values_.data(), scratch_);
    for (std::size_t k = 0; 3 * k < values_.size(); ++k) {
      sides[2 * k] = values_[3 * k];
      sides[2 * k + 1] = values_[3 * k + 1];
    }
    return true;
  }
  bool encloseGuards(Interval t, const Interval *x, Interval *out) override {
    tape_.evaluate(t, x, nullptr, out, intervalScratch_);
    return true;
  }
  bool encloseGuardSlopes(Interval t, const Interval *x, const Interval *xdot, Interval *out,
                          Interval *outDot) override {
    if (!slopes)
      return false;
    tape_.evaluateSlope(t, x, xdot, nullptr, out, outDot, intervalScratch_, slopeScratch_);
    return true;
  }
  /// Whether encloseGuardSlopes() gives derivative enclosures.
  bool slopes = true;
  const std::vector<std::uint32_t> &guardStates() const override { return reads_; }
  bool held(double, const double *, double *) override { return true; }
  bool dependent(double, const double *, double *) override { return true; }
  bool dependentJacobian(double, const double *, double *) override { return true; }
  bool impulse(double, const double *, double *) override { return true; }
  const LoopFailure &failure() const override { return failure_; }

private:
  Rhs rhs_;
  Tape tape_;
  std::string name_;
  LoopFailure failure_;
  std::vector<std::uint32_t> slots_, none_, reads_;
  std::vector<double> values_, scratch_;
  std::vector<Interval> intervalScratch_, slopeScratch_;
};

class Ode final : public OdeSystem {
public:
  explicit Ode(Mode &m) : m_(m) {}
  std::size_t numStates() const override { return m_.stateSlots().size(); }
  void rhs(double t, const double *x, double *xdot) override { m_.rhs(t, x, xdot); }

private:
  Mode &m_;
};

/// One junction `j`, off -> on when every comparison given holds.
Switching oneJunction(std::vector<CompareOp> ops) {
  Junction j;
  j.name = "j";
  j.stateNames = {"off", "on"};
  Transition t;
  t.from = 0;
  t.to = 1;
  t.guard.kind = GuardNode::And;
  for (std::uint32_t k = 0; k < ops.size(); ++k) {
    GuardNode c;
    c.comparison = k;
    c.op = ops[k];
    t.guard.children.push_back(c);
  }
  if (ops.size() == 1)
    t.guard = t.guard.children[0];
  j.transitions.push_back(t);
  return Switching({j}, ops);
}

/// Steps `mode` from x0 with `opts` until the locator finds an event or
/// tEnd; returns the event time (NaN if none). `check(stepper)` runs after
/// every step before the locator.
/// How the last firstEvent() call examined its steps.
EventLocator::Stats lastStats;

double firstEvent(Mode &mode, const Switching &sw, std::vector<double> x0, double tEnd,
                  const IntegratorOptions &opts,
                  const std::function<void(const Stepper &, double tEvent)> &check = {}) {
  Ode ode(mode);
  std::unique_ptr<Stepper> s = makeStepper(ode, opts);
  s->reset(0, x0.data());
  EventLocator locator;
  struct Keep {
    EventLocator &l;
    ~Keep() { lastStats = l.stats; }
  } keep{locator};
  std::vector<std::uint32_t> q = {0}, enabled = sw.comparisonsFrom(q);
  std::vector<double> sidesA(2 * sw.numComparisons()), sidesB(sidesA.size()), xEvent;
  mode.guards(0, x0.data(), sidesA.data());
  while (s->t() < tEnd) {
    REQUIRE(s->step(tEnd) == StepStatus::Ok);
    mode.guards(s->t(), s->x().data(), sidesB.data());
    double te = locator.locate(*s, mode, sw, q, enabled, sidesA, sidesB, xEvent);
    if (check)
      check(*s, te);
    if (!std::isnan(te))
      return te;
    sidesA = sidesB;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

/// The first point of an n-point grid on the step's dense output at which
/// some transition of `sw` leaving q = {0} is enabled, or NaN.
double firstOnGrid(const Stepper &s, Mode &mode, const Switching &sw, int n) {
  std::vector<double> x(s.x().size()), sides(2 * sw.numComparisons());
  for (int i = 1; i <= n; ++i) {
    double tau = s.tPrev() + (s.t() - s.tPrev()) * i / n;
    s.interpolate(tau, x.data());
    mode.guards(tau, x.data(), sides.data());
    if (sw.anyEnabled({0}, sides.data()))
      return tau;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

IntegratorOptions loose() {
  IntegratorOptions o;
  o.rtol = 1e-4;
  o.atol = 1e-6;
  return o;
}

} // namespace

TEST_CASE("a guard that crosses and comes back within one step is found") {
  // x' = 1; the guard sin(40 t) > 0.999 holds only near t = (pi/2 + 2 pi k) / 40
  // for about 1.8e-3 s, inside steps of about 1 s.
  TapeBuilder b;
  std::uint32_t g = b.sub(b.sin(b.mul(b.constant(40), b.time())), b.constant(0.999));
  b.compareWithZero(g);
  TapeMode mode(1, [](double, const double *, double *xdot) { xdot[0] = 1; }, b.tape);
  Switching sw = oneJunction({CompareOp::Greater});
  IntegratorOptions opts = loose();
  opts.step = 1.0;
  double te = firstEvent(mode, sw, {0}, 10, opts);
  // sin(40 t) = 0.999 first at t = asin(0.999) / 40.
  CHECK(te == doctest::Approx(std::asin(0.999) / 40).epsilon(1e-9));
}

TEST_CASE("two crossings inside one step: the first is the event") {
  // A parabola on the state: x' = 1, x(0) = 0; the guard (x - 0.3)(0.7 - x) > 0
  // holds on (0.3, 0.7), a single dopri5 step covers [0, 1].
  TapeBuilder b;
  std::uint32_t x = b.x(0);
  std::uint32_t g = b.mul(b.sub(x, b.constant(0.3)), b.sub(b.constant(0.7), x));
  b.compareWithZero(g);
  TapeMode mode(1, [](double, const double *, double *xdot) { xdot[0] = 1; }, b.tape);
  Switching sw = oneJunction({CompareOp::Greater});
  IntegratorOptions opts = loose();
  opts.step = 1.0;
  bool oneStep = false;
  double te = firstEvent(mode, sw, {0}, 1, opts, [&](const Stepper &s, double) {
    oneStep = s.tPrev() == 0 && s.t() == 1;
  });
  CHECK(oneStep);
  CHECK(te == doctest::Approx(0.3).epsilon(1e-10));
}

TEST_CASE("an and of two comparisons fires where both hold") {
  // sin(t) > 0.5 and x > 2 with x = t: both from t = 2 (sin(2) = 0.909).
  TapeBuilder b;
  b.compareWithZero(b.sub(b.sin(b.time()), b.constant(0.5)));
  b.compareWithZero(b.sub(b.x(0), b.constant(2)));
  TapeMode mode(1, [](double, const double *, double *xdot) { xdot[0] = 1; }, b.tape);
  Switching sw = oneJunction({CompareOp::Greater, CompareOp::Greater});
  IntegratorOptions opts = loose();
  opts.step = 5.0;
  CHECK(firstEvent(mode, sw, {0}, 5, opts) == doctest::Approx(2).epsilon(1e-10));
}

TEST_CASE("an equality guard fires where its sides cross") {
  TapeBuilder b;
  b.compareWithZero(b.sub(b.x(0), b.constant(0.25)));
  TapeMode mode(1, [](double, const double *, double *xdot) { xdot[0] = 1; }, b.tape);
  Switching sw = oneJunction({CompareOp::Equal});
  CHECK(firstEvent(mode, sw, {0}, 1, loose()) == doctest::Approx(0.25).epsilon(1e-10));
}

/// 600 guards g(t, x) > 0 of sums of sines in time, polynomials in the
/// states and products of time and states, on a damped oscillator
/// integrated with large steps; each step's dense output is also sampled
/// on a grid of 4000 points. The first event must come no later than the
/// grid's first enabled point, and nothing on the grid may hold before it.
/// `slopes`: whether the locator may decide intervals by derivative
/// enclosures, or only halves them.
static void randomGuards(bool slopes) {
  std::uint64_t seed = 12345;
  auto uniform = [&seed](double lo, double hi) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<double>(seed >> 11) * 0x1.0p-53;
  };
  int events = 0;
  std::size_t certified = 0;
  for (int trial = 0; trial < 600; ++trial) {
    TapeBuilder b;
    std::uint32_t t = b.time(), x0 = b.x(0), x1 = b.x(1);
    std::uint32_t g = b.constant(0);
    int shape = trial % 3;
    for (int i = 0; i < 3; ++i) {
      double amp = uniform(-1, 1), freq = uniform(0.5, 60), phase = uniform(0, 6.3);
      std::uint32_t wave = b.sin(b.add(b.mul(b.constant(freq), t), b.constant(phase)));
      g = b.add(g, b.mul(b.constant(amp), wave));
    }
    if (shape >= 1) { // polynomials in the states
      g = b.add(g, b.mul(b.constant(uniform(-2, 2)), x0));
      g = b.add(g, b.mul(b.constant(uniform(-2, 2)), b.mul(x1, x1)));
      g = b.add(g, b.mul(b.constant(uniform(-1, 1)), b.mul(x0, b.mul(x0, x1))));
    }
    if (shape == 2) // products of time and states
      g = b.add(g, b.mul(b.constant(uniform(-1, 1)), b.mul(t, x0)));
    // Starts false: the offset puts g(0) below zero.
    double start[2] = {1, 0};
    std::vector<double> scratch, g0(1);
    Tape probe = b.tape;
    probe.results = {g};
    probe.evaluate(0, start, nullptr, g0.data(), scratch);
    g = b.sub(g, b.constant(g0[0] + uniform(0.05, 1.5)));
    b.compareWithZero(g);

    double omega = uniform(1, 20), zeta = uniform(0, 0.2);
    TapeMode mode(2,
                  [=](double, const double *x, double *xdot) {
                    xdot[0] = x[1];
                    xdot[1] = -omega * omega * x[0] - 2 * zeta * omega * x[1];
                  },
                  b.tape);
    mode.slopes = slopes;
    Switching sw = oneJunction({CompareOp::Greater});
    IntegratorOptions opts = loose();
    opts.step = 0.5;
    double te = firstEvent(mode, sw, {1, 0}, 3, opts, [&](const Stepper &s, double tEvent) {
      double grid = firstOnGrid(s, mode, sw, 4000);
      double h = s.t() - s.tPrev();
      if (!std::isnan(grid)) {
        // Not missed: the event is no later than the grid's first point.
        REQUIRE_FALSE(std::isnan(tEvent));
        CHECK(tEvent <= grid + 1e-12 * h);
      }
      if (!std::isnan(tEvent)) {
        // Not early: the guard holds there (checked by the locator) and
        // nothing on the grid before it holds.
        CHECK((std::isnan(grid) || grid >= tEvent - h / 4000 - 1e-12 * h));
      }
    });
    events += !std::isnan(te);
    certified += lastStats.certified;
  }
  // Most guards do fire: the test is about events.
  CHECK(events > 400);
  // The derivative enclosures decide many intervals when allowed to.
  if (slopes)
    CHECK(certified > 600);
  else
    CHECK(certified == 0);
}

TEST_CASE("random guards, halving only: no event a fine grid sees is missed or found late") {
  randomGuards(false);
}

TEST_CASE("random guards, with derivative enclosures: none missed or found late either") {
  randomGuards(true);
}

TEST_CASE("Tape::evaluateSlope encloses the time derivative along a trajectory") {
  // g(t, x) = sin(3 t) x0 + x0^3 - exp(t) / (1 + x1^2) + sqrt(2 + cos(x1)) * tanh(t)
  // - |x0 - t| along x0 = cos(t), x1 = 1 + t^2 / 2: on small boxes around
  // points of the trajectory, the enclosure of dg/dt holds the central
  // difference quotient of g(t, x(t)).
  TapeBuilder b;
  std::uint32_t t = b.time(), x0 = b.x(0), x1 = b.x(1);
  std::uint32_t g = b.mul(b.sin(b.mul(b.constant(3), t)), x0);
  g = b.add(g, b.mul(x0, b.mul(x0, x0)));
  g = b.sub(g, b.emit(TapeOp::Div, b.emit(TapeOp::Exp, t),
                      b.add(b.constant(1), b.mul(x1, x1))));
  g = b.add(g, b.mul(b.emit(TapeOp::Sqrt, b.add(b.constant(2), b.emit(TapeOp::Cos, x1))),
                     b.emit(TapeOp::Tanh, t)));
  g = b.sub(g, b.emit(TapeOp::Abs, b.sub(x0, t)));
  b.tape.results = {g};
  auto point = [&](double tau) {
    double x[2] = {std::cos(tau), 1 + tau * tau / 2};
    std::vector<double> scratch, out(1);
    b.tape.evaluate(tau, x, nullptr, out.data(), scratch);
    return out[0];
  };
  std::vector<Interval> scratch, slopes;
  int checked = 0;
  for (double tau = 0.05; tau < 3; tau += 0.173) {
    double r = 1e-3, h = 1e-6;
    Interval box[2] = {{std::cos(tau + r), std::cos(tau - r)}, {1 + (tau - r) * (tau - r) / 2, 1 + (tau + r) * (tau + r) / 2}};
    Interval slope[2] = {{-std::sin(tau + r), -std::sin(tau - r)}, {tau - r, tau + r}};
    if (box[0].lo > box[0].hi)
      std::swap(box[0].lo, box[0].hi);
    Interval value, dot;
    b.tape.evaluateSlope({tau - r, tau + r}, box, slope, nullptr, &value, &dot, scratch, slopes);
    double fd = (point(tau + h) - point(tau - h)) / (2 * h);
    CHECK(value.contains(point(tau)));
    CHECK(dot.lo <= fd + 1e-6);
    CHECK(dot.hi >= fd - 1e-6);
    // Tight enough to prove monotonicity where |dg/dt| is not small.
    if (!dot.isWhole())
      CHECK(dot.hi - dot.lo < 0.2 + 0.1 * std::abs(fd));
    ++checked;
  }
  CHECK(checked == 18);
}

TEST_CASE("an equality that holds only at the step's start does not hold after it") {
  // x = t from x(0) = 0: x = 0 holds at t = 0 only, so `x = 0 and time >=
  // 0.5` never fires (an equality left true would fire it at 0.5).
  TapeBuilder b;
  b.compareWithZero(b.x(0));
  b.compareWithZero(b.sub(b.time(), b.constant(0.5)));
  for (bool slopes : {false, true}) {
    TapeMode mode(1, [](double, const double *, double *xdot) { xdot[0] = 1; }, b.tape);
    mode.slopes = slopes;
    Switching sw = oneJunction({CompareOp::Equal, CompareOp::GreaterEqual});
    IntegratorOptions opts = loose();
    opts.step = 2.0;
    CHECK(std::isnan(firstEvent(mode, sw, {0}, 2, opts)));
  }
}

/// Time events: 300 pairs of comparisons of time alone (sums of sines and
/// a slope, with every operator), looked ahead over windows of random
/// width as the simulation loop does. Each change nextTimeEvent() reports
/// is the first one a grid of 1000 points per window sees (nothing on the
/// grid before it differs from the window's start, and a comparison
/// differs at it); a window with none has none on the grid. Steps that
/// end on those changes are then examined with the comparisons steady
/// and without: the same events.
TEST_CASE("time events ahead are the first changes, and steady comparisons agree") {
  std::uint64_t seed = 987654321;
  auto uniform = [&seed](double lo, double hi) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<double>(seed >> 11) * 0x1.0p-53;
  };
  const CompareOp ops[] = {CompareOp::Less, CompareOp::LessEqual, CompareOp::Greater,
                           CompareOp::GreaterEqual};
  int changes = 0, stepEvents = 0;
  for (int trial = 0; trial < 300; ++trial) {
    TapeBuilder b;
    std::uint32_t t = b.time();
    for (int c = 0; c < 2; ++c) {
      std::uint32_t g = b.mul(b.constant(uniform(-0.3, 0.3)), t);
      for (int i = 0; i < 2; ++i) {
        double amp = uniform(-1, 1), freq = uniform(0.5, 40), phase = uniform(0, 6.3);
        g = b.add(g, b.mul(b.constant(amp), b.sin(b.add(b.mul(b.constant(freq), t),
                                                         b.constant(phase)))));
      }
      b.compareWithZero(b.sub(g, b.constant(uniform(-0.5, 0.5))));
    }
    // A state comparison too: the guards are `c0 and c1` and `c2`, where
    // c2 is x0 > 2 on x0' = 1 (at t = 2, after the windows).
    b.compareWithZero(b.sub(b.x(0), b.constant(2)));
    TapeMode mode(1, [](double, const double *, double *xdot) { xdot[0] = 1; }, b.tape);
    std::vector<CompareOp> cmp = {ops[trial % 4], ops[(trial / 4) % 4], CompareOp::Greater};
    Junction j;
    j.name = "j";
    j.stateNames = {"off", "on"};
    Transition both;
    both.guard.kind = trial % 2 ? GuardNode::And : GuardNode::Or;
    for (std::uint32_t k = 0; k < 2; ++k) {
      GuardNode n;
      n.comparison = k;
      n.op = cmp[k];
      both.guard.children.push_back(n);
    }
    Transition state;
    state.guard.comparison = 2;
    state.guard.op = CompareOp::Greater;
    j.transitions = {both, state};
    for (Transition &tr : j.transitions)
      tr.to = 1;
    Switching sw({j}, cmp);
    const std::vector<std::uint32_t> timed = {0, 1}, q = {0}, enabled = {0, 1, 2};

    EventLocator ahead, steadyLocator, plainLocator;
    double x = 0;
    std::vector<double> xs = {x}, at(6), ref(6), sidesA(6), sidesB(6), xEvent;
    auto changedFrom = [&](const std::vector<double> &a, const std::vector<double> &v) {
      for (std::uint32_t k : timed)
        if (comparisonReached(cmp[k], a[2 * k], a[2 * k + 1]) !=
            comparisonReached(cmp[k], v[2 * k], v[2 * k + 1]))
          return true;
      return false;
    };
    // Windows from 0 to 1.5, each starting where the last change was.
    for (double from = 0; from < 1.5;) {
      double reach = std::min(1.5, from + uniform(0.01, 0.5)), clearTo = 0;
      double te = ahead.nextTimeEvent(mode, sw, timed, from, reach, xs, clearTo);
      mode.guards(from, xs.data(), ref.data());
      double end = std::isnan(te) ? reach : te;
      for (int i = 0; i < 1000; ++i) {
        double tau = from + (end - from) * i / 1000;
        mode.guards(tau, xs.data(), at.data());
        if (changedFrom(ref, at)) {
          FAIL_CHECK("trial " << trial << ": a change at " << tau << " before " << end);
          break;
        }
      }
      if (std::isnan(te)) {
        CHECK(clearTo == reach);
        from = reach;
        continue;
      }
      mode.guards(te, xs.data(), at.data());
      CHECK(changedFrom(ref, at));
      CHECK(clearTo == te);
      ++changes;

      // A step from `from` that ends on te: steady or not, the same event.
      Ode ode(mode);
      IntegratorOptions opts = loose();
      opts.step = te - from;
      std::unique_ptr<Stepper> s = makeStepper(ode, opts);
      double x0 = from;
      s->reset(from, &x0);
      REQUIRE(s->step(te) == StepStatus::Ok);
      if (s->t() == te) {
        mode.guards(from, &x0, sidesA.data());
        mode.guards(te, s->x().data(), sidesB.data());
        double e1 = steadyLocator.locate(*s, mode, sw, q, enabled, sidesA, sidesB, xEvent, timed);
        double e2 = plainLocator.locate(*s, mode, sw, q, enabled, sidesA, sidesB, xEvent);
        CHECK(std::isnan(e1) == std::isnan(e2));
        if (!std::isnan(e1))
          CHECK(std::abs(e1 - e2) <= 1e-12 * (te - from));
        stepEvents += !std::isnan(e1);
      }
      from = te;
    }
  }
  CHECK(changes > 1000);
  CHECK(stepEvents > 300);
}
