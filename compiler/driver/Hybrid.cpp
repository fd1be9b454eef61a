//===- compiler/driver/Hybrid.cpp - Simulating switched models ------------===//
//
// Continuous integration in one real mode at a time, with events:
//
//  - detection: after every accepted step the guards of the transitions
//    enabled in the current FSM states are evaluated; a comparison's truth
//    allows a small tolerance around zero (relative to its two sides);
//  - location: each comparison whose truth changed inside the step is
//    located on the stepper's dense output by a bracketing root finder to
//    1e-12 of the step; the earliest crossing (those within the tolerance
//    of it together) at which some guard holds is the event, and the step
//    is cut there, so no step is integrated across an event;
//  - mode iteration (the mythical mode algorithm): every enabled transition
//    switches; comparisons marked + are judged in the new configuration,
//    those marked - in the last real mode, both from the unchanged state;
//    repeat until no junction switches; then the state is remapped into
//    the new real mode and the iteration starts anew from it, until the
//    mode is stable. A mode seen twice is a cycle: an error;
//  - remapping by conservation of state: one solve for the state after
//    the jump (or HYBRSIM's iterative redistribution).
//
//===----------------------------------------------------------------------===//

#include "Hybrid.h"

#include "hbg/runtime/RootFind.h"

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace hbg {

namespace {

std::string timeText(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", t);
  return buf;
}

using Clock = std::chrono::steady_clock;

/// A run-time failure: the message becomes Result::error.
struct RunError {
  std::string message;
};

/// The tolerance of `lhs op rhs`: relative to the sides' magnitudes (and a
/// tiny absolute floor for sides that are both zero up to rounding), so
/// that a value that equals its threshold up to rounding is neither
/// strictly above nor strictly below it.
double tolerance(double lhs, double rhs) {
  return 1e-11 * (std::abs(lhs) + std::abs(rhs)) + 1e-14;
}

/// A continuous function of the two sides whose sign change locates where
/// the comparison starts or stops holding: non-strict comparisons and
/// equalities change at the threshold itself (where they hold within the
/// tolerance), strict ones only beyond the tolerance, so that a strict
/// guard does not fire on a value that merely touches its threshold.
double margin(CompareOp op, double lhs, double rhs) {
  double g = lhs - rhs, tol = tolerance(lhs, rhs);
  switch (op) {
  case CompareOp::Less: return -g - tol;
  case CompareOp::LessEqual: return -g;
  case CompareOp::Greater: return g - tol;
  case CompareOp::GreaterEqual: return g;
  case CompareOp::Equal: return g;
  }
  return 0;
}

bool holds(CompareOp op, double lhs, double rhs) {
  double g = lhs - rhs, tol = tolerance(lhs, rhs);
  // Non-strict comparisons accept rounding relative to the sides only: an
  // absolute allowance would let a small quantity (a ball's height over a
  // short bounce) count as touching its threshold all the time.
  double relative = 1e-11 * (std::abs(lhs) + std::abs(rhs));
  switch (op) {
  case CompareOp::Less: return g < -tol;
  case CompareOp::LessEqual: return g <= relative;
  case CompareOp::Greater: return g > tol;
  case CompareOp::GreaterEqual: return g >= -relative;
  case CompareOp::Equal: return std::abs(g) <= tol;
  }
  return false;
}

} // namespace

HybridRun::HybridRun(const Model &model, const SimulationOptions &opts,
                     const std::map<std::string, double> &overrides, Result &result)
    : model_(model), m_(*model.impl()), o_(opts), r_(result) {
  std::vector<double> params = model.parameterValues(overrides);
  np_ = params.size();
  p_ = params;
  p_.resize(np_ + m_.initial->equations.numHeld, 0.0);
  X_ = model.initialState(params);
  q_ = m_.initialStates;
  r_.stateNames = m_.stateNames;
}

std::shared_ptr<ModeCode> HybridRun::mode(const std::vector<std::uint32_t> &q) {
  auto known = modes_.find(q);
  if (known != modes_.end())
    return known->second;
  bg::Mode mode = bg::initialMode(*m_.graph);
  mode.on.resize(m_.graph->elements.size(), true);
  for (std::size_t j = 0; j < m_.junctions.size(); ++j)
    mode.on[m_.junctions[j].element] =
        m_.graph->elements[m_.junctions[j].element].fsm->states[q[j]].on;
  std::size_t before = m_.modesCompiled();
  auto start = Clock::now();
  try {
    std::shared_ptr<ModeCode> code = m_.modeCode(mode);
    if (m_.modesCompiled() != before) {
      r_.compileSeconds += std::chrono::duration<double>(Clock::now() - start).count();
      ++r_.modesCompiled;
    }
    modes_.emplace(q, code);
    return code;
  } catch (const CompileError &e) {
    std::string what = e.what();
    while (!what.empty() && what.back() == '\n')
      what.pop_back();
    throw RunError{"entering mode " + modeText(q) + " at t = " + timeText(t_) +
                   ", which cannot be analysed:\n" + what};
  }
}

HybridRun::Integration &HybridRun::integration(const ModeCode &mc, Evaluator &e,
                                               const runtime::IntegratorOptions &io) {
  Integration &in = integrations_[&mc];
  if (!in.stepper) {
    in.ode = std::make_unique<EvaluatorOde>(e);
    in.stepper = runtime::makeStepper(*in.ode, io);
  }
  return in;
}

Evaluator &HybridRun::evaluator(const ModeCode &mc) {
  std::unique_ptr<Evaluator> &e = evaluators_[&mc];
  if (!e)
    e = std::make_unique<Evaluator>(mc, p_.data());
  return *e;
}

std::string HybridRun::modeText(const std::vector<std::uint32_t> &q) const {
  std::string out;
  for (std::size_t j = 0; j < m_.junctions.size(); ++j) {
    const bg::Fsm &fsm = *m_.graph->elements[m_.junctions[j].element].fsm;
    out += (j ? ", " : "") + m_.junctions[j].name + "=" + fsm.states[q[j]].name;
  }
  return out;
}

std::vector<double> HybridRun::gather(const ModeCode &mc) const {
  std::vector<double> x;
  x.reserve(mc.stateSlots.size());
  for (std::uint32_t s : mc.stateSlots)
    x.push_back(X_[s]);
  return x;
}

void HybridRun::evaluate(Evaluator &e, codegen::CompiledFn f, const double *x, double *out,
                         const char *what) {
  if (!e.call(f, t_, x, out))
    throw RunError{e.failure() + " (" + what + ", mode " + e.code().modeName + ")"};
}

void HybridRun::complete(Evaluator &e, const double *x) {
  const ModeCode &mc = e.code();
  for (std::size_t i = 0; i < mc.stateSlots.size(); ++i)
    X_[mc.stateSlots[i]] = x[i];
  if (mc.dependentSlots.empty())
    return;
  std::vector<double> d(mc.dependentSlots.size());
  evaluate(e, mc.dependent, x, d.data(), "dependent storage");
  for (std::size_t k = 0; k < d.size(); ++k)
    X_[mc.dependentSlots[k]] = d[k];
}

void HybridRun::holdValues(const ModeCode &mc) {
  if (p_.size() == np_)
    return;
  Evaluator &e = evaluator(mc);
  std::vector<double> x = gather(mc), h(p_.size() - np_);
  evaluate(e, mc.held, x.data(), h.data(), "held values");
  std::copy(h.begin(), h.end(), p_.begin() + np_);
}

std::vector<double> HybridRun::guardSides(const ModeCode &mc) {
  Evaluator &e = evaluator(mc);
  std::vector<double> x = gather(mc), sides(2 * m_.comparisons.size());
  evaluate(e, mc.guards, x.data(), sides.data(), "guards");
  return sides;
}

bool HybridRun::guardHolds(const bg::Guard &g, const double *plus, const double *minus,
                           std::uint32_t &leaf, const std::vector<std::uint32_t> *forced) const {
  switch (g.kind) {
  case bg::Guard::Compare: {
    std::uint32_t k = leaf++;
    if (forced && std::find(forced->begin(), forced->end(), k) != forced->end())
      return true;
    const double *s = g.mark == '-' ? minus : plus;
    return holds(g.op, s[2 * k], s[2 * k + 1]);
  }
  case bg::Guard::Not: {
    bool v = guardHolds(g.children[0], plus, minus, leaf, forced);
    return !v;
  }
  case bg::Guard::And:
  case bg::Guard::Or: {
    // Every child is evaluated so that `leaf` advances past all of them.
    bool all = true, any = false;
    for (const bg::Guard &c : g.children) {
      bool v = guardHolds(c, plus, minus, leaf, forced);
      all = all && v;
      any = any || v;
    }
    return g.kind == bg::Guard::And ? all : any;
  }
  }
  return false;
}

int HybridRun::enabledTransition(std::size_t j, std::uint32_t state, const double *plus,
                                 const double *minus,
                                 const std::vector<std::uint32_t> *forced) const {
  const SwitchedJunction &sj = m_.junctions[j];
  for (std::size_t i = 0; i < sj.transitions.size(); ++i) {
    const SwitchedJunction::Transition &t = sj.transitions[i];
    if (t.from != state)
      continue;
    std::uint32_t leaf = t.firstComparison;
    if (guardHolds(*t.guard, plus, minus, leaf, forced))
      return static_cast<int>(i);
  }
  return -1;
}

bool HybridRun::anyEnabled(const double *sides, const std::vector<std::uint32_t> *forced) const {
  for (std::size_t j = 0; j < m_.junctions.size(); ++j)
    if (enabledTransition(j, q_[j], sides, sides, forced) >= 0)
      return true;
  return false;
}

const std::vector<std::uint32_t> &HybridRun::enabledComparisons() {
  if (enabledFor_ == q_)
    return enabled_;
  enabled_.clear();
  for (std::size_t j = 0; j < m_.junctions.size(); ++j)
    for (const SwitchedJunction::Transition &t : m_.junctions[j].transitions) {
      if (t.from != q_[j])
        continue;
      for (std::uint32_t k = t.firstComparison; k < t.endComparison; ++k)
        enabled_.push_back(k);
    }
  std::sort(enabled_.begin(), enabled_.end());
  enabled_.erase(std::unique(enabled_.begin(), enabled_.end()), enabled_.end());
  enabledFor_ = q_;
  return enabled_;
}

void HybridRun::remapExact(Evaluator &e) {
  const ModeCode &mc = e.code();
  std::size_t n = mc.stateSlots.size(), nd = mc.dependentSlots.size();
  std::vector<double> x0 = gather(mc), d0(nd);
  for (std::size_t k = 0; k < nd; ++k)
    d0[k] = X_[mc.dependentSlots[k]];
  // x+ - x- = B (D(x+) - d-): the impulse into dependent storage is taken
  // out of the independent storage along the junction structure, and the
  // new mode's constraints d = D(x) hold afterwards. Newton on x+ (one
  // step when the storage is linear).
  Eigen::MatrixXd B(n, nd), A(nd, n);
  std::vector<double> buf(std::max<std::size_t>(1, n * nd));
  evaluate(e, mc.impulse, x0.data(), buf.data(), "impulse");
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < nd; ++k)
      B(i, k) = buf[i * nd + k];
  Eigen::VectorXd x = Eigen::Map<Eigen::VectorXd>(x0.data(), n), d(nd);
  for (int it = 0;; ++it) {
    evaluate(e, mc.dependent, x.data(), d.data(), "dependent storage");
    Eigen::VectorXd F = x - Eigen::Map<Eigen::VectorXd>(x0.data(), n) -
                        B * (d - Eigen::Map<Eigen::VectorXd>(d0.data(), nd));
    double scale = 1 + (n ? x.cwiseAbs().maxCoeff() : 0.0);
    if (n == 0 || F.cwiseAbs().maxCoeff() <= 1e-15 * scale)
      break;
    if (it == 20)
      throw RunError{"state remapping into mode " + modeText(q_) + " did not converge at t = " +
                     timeText(t_)};
    if (mc.equations.unknowns.empty()) {
      evaluate(e, mc.dependentJacobian, x.data(), buf.data(), "dependent storage");
      for (std::size_t k = 0; k < nd; ++k)
        for (std::size_t i = 0; i < n; ++i)
          A(k, i) = buf[k * n + i];
    } else {
      // Dependent storage defined through Newton-solved loops (nonlinear
      // laws): the symbolic derivative would miss the loops' dependence on
      // the states, so difference it (central, step ~ cbrt(eps)).
      Eigen::VectorXd xp = x, dp(nd), dm(nd);
      for (std::size_t i = 0; i < n; ++i) {
        double h = 6e-6 * std::max(1.0, std::abs(x[i]));
        xp[i] = x[i] + h;
        evaluate(e, mc.dependent, xp.data(), dp.data(), "dependent storage");
        xp[i] = x[i] - h;
        evaluate(e, mc.dependent, xp.data(), dm.data(), "dependent storage");
        xp[i] = x[i];
        A.col(i) = (dp - dm) / (2 * h);
      }
    }
    Eigen::MatrixXd J = Eigen::MatrixXd::Identity(n, n) - B * A;
    Eigen::FullPivLU<Eigen::MatrixXd> lu(J);
    if (!lu.isInvertible())
      throw RunError{"state remapping into mode " + modeText(q_) + " is singular at t = " +
                     timeText(t_) + ": the storage elements' impulses do not determine the state"};
    Eigen::VectorXd step = lu.solve(F);
    x -= step;
    if (!x.allFinite())
      throw RunError{"state remapping into mode " + modeText(q_) + " is not finite at t = " +
                     timeText(t_)};
    // Loops solved by Newton's method leave D accurate to their own
    // tolerance only: a negligible step ends the iteration too.
    if (!mc.equations.unknowns.empty() && step.cwiseAbs().maxCoeff() <= 1e-13 * scale) {
      evaluate(e, mc.dependent, x.data(), d.data(), "dependent storage");
      break;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    X_[mc.stateSlots[i]] = x[i];
  for (std::size_t k = 0; k < nd; ++k)
    X_[mc.dependentSlots[k]] = d[k];
}

void HybridRun::remapIterative(Evaluator &e, Event &ev) {
  const ModeCode &mc = e.code();
  std::size_t n = mc.stateSlots.size(), nd = mc.dependentSlots.size();
  std::vector<double> x = gather(mc), d(nd), target(nd), B(std::max<std::size_t>(1, n * nd));
  for (std::size_t k = 0; k < nd; ++k)
    d[k] = X_[mc.dependentSlots[k]];
  evaluate(e, mc.impulse, x.data(), B.data(), "impulse");
  auto store = [&] {
    for (std::size_t i = 0; i < n; ++i)
      X_[mc.stateSlots[i]] = x[i];
    for (std::size_t k = 0; k < nd; ++k)
      X_[mc.dependentSlots[k]] = d[k];
  };
  // HYBRSIM: a fraction of the difference between what the constraints
  // demand and what dependent storage holds is put into it and taken out
  // of independent storage along the junction structure, until the
  // difference is below the tolerance.
  const std::size_t maxIterations = 1'000'000;
  for (std::size_t it = 0;; ++it) {
    evaluate(e, mc.dependent, x.data(), target.data(), "dependent storage");
    store();
    ev.remapIterations.push_back(X_);
    double gap = 0, scale = 1;
    for (std::size_t k = 0; k < nd; ++k) {
      gap = std::max(gap, std::abs(target[k] - d[k]));
      scale = std::max(scale, std::abs(target[k]));
    }
    if (gap <= o_.remapTolerance * scale)
      break;
    if (it == maxIterations)
      throw RunError{"iterative state remapping into mode " + modeText(q_) +
                     " did not converge in " + std::to_string(maxIterations) +
                     " iterations at t = " + timeText(t_)};
    for (std::size_t k = 0; k < nd; ++k) {
      double delta = o_.remapFactor * (target[k] - d[k]);
      d[k] += delta;
      for (std::size_t i = 0; i < n; ++i)
        x[i] += B[i * nd + k] * delta;
    }
  }
}

bool HybridRun::iterateModes() {
  Event ev;
  ev.time = t_;
  ev.before = X_;
  ev.modes.push_back(modeText(q_));
  ev.real.push_back(true);
  ev.states.push_back(X_);
  // The a priori values of the event: what `pre(...)` holds from now on.
  holdValues(*mode(q_));
  // A round that starts from a mode and state it started from before would
  // repeat itself for ever.
  std::set<std::pair<std::vector<std::uint32_t>, std::vector<double>>> roundStarts;
  bool switched = false;
  for (int round = 0;; ++round) {
    if (!roundStarts.insert({q_, X_}).second || round == 1000)
      throw RunError{"the modes do not settle at t = " + timeText(t_) + ": " +
                     cycleText(ev, ev.modes, modeText(q_))};
    std::shared_ptr<ModeCode> real = mode(q_);
    std::vector<double> minus = guardSides(*real), plus = minus;
    std::vector<std::uint32_t> cur = q_;
    std::set<std::vector<std::uint32_t>> visited{cur};
    std::vector<std::string> seen{modeText(cur)};
    for (;;) {
      std::vector<std::uint32_t> next = cur;
      bool any = false;
      for (std::size_t j = 0; j < m_.junctions.size(); ++j) {
        int i = enabledTransition(j, cur[j], plus.data(), minus.data(), nullptr);
        if (i < 0)
          continue;
        const SwitchedJunction::Transition &t = m_.junctions[j].transitions[i];
        next[j] = t.to;
        ev.transitions.push_back(m_.junctions[j].name + ": " + t.text);
        any = true;
      }
      ++r_.modeIterations;
      if (!any)
        break;
      cur = next;
      if (!visited.insert(cur).second)
        throw RunError{"the modes do not settle at t = " + timeText(t_) + ": " +
                       cycleText(ev, seen, modeText(cur))};
      seen.push_back(modeText(cur));
      ev.modes.push_back(modeText(cur));
      ev.real.push_back(false);
      ev.states.push_back(X_);
      plus = guardSides(*mode(cur));
    }
    if (cur == q_)
      break;
    switched = true;
    ev.real.back() = true;
    std::shared_ptr<ModeCode> to = mode(cur);
    q_ = cur;
    if (!to->dependentSlots.empty()) {
      auto start = Clock::now();
      Evaluator &e = evaluator(*to);
      if (o_.remap == SimulationOptions::Remap::Iterative)
        remapIterative(e, ev);
      else
        remapExact(e);
      r_.remapSeconds += std::chrono::duration<double>(Clock::now() - start).count();
    }
    ev.states.back() = X_; // the real mode's state: remapped
  }
  if (!switched)
    return false;
  ev.after = X_;
  r_.events.push_back(std::move(ev));
  checkZeno();
  return true;
}

std::string HybridRun::cycleText(const Event &ev, const std::vector<std::string> &modes,
                                 const std::string &again) const {
  // The junctions that switched, then the cycle from the first occurrence
  // of the repeated mode.
  std::vector<std::string> junctions;
  for (const std::string &t : ev.transitions) {
    std::string j = "`" + t.substr(0, t.find(':')) + "`";
    if (std::find(junctions.begin(), junctions.end(), j) == junctions.end())
      junctions.push_back(j);
  }
  std::string out = junctions.size() == 1 ? "junction " : "junctions ";
  for (std::size_t i = 0; i < junctions.size(); ++i)
    out += (i ? ", " : "") + junctions[i];
  auto first = std::find(modes.begin(), modes.end(), again);
  out += junctions.size() == 1 ? " switches in a cycle through " : " switch in a cycle through ";
  for (auto it = first; it != modes.end(); ++it)
    out += "(" + *it + ") -> ";
  out += "(" + again + ")";
  return out;
}

void HybridRun::checkZeno() {
  std::size_t n = r_.events.size();
  if (n > o_.maxEvents)
    throw RunError{"more than " + std::to_string(o_.maxEvents) + " events by t = " +
                   timeText(t_)};
  // Zeno behaviour: many events within a tiny span, or events whose
  // spacing shrinks geometrically towards an accumulation point that is
  // closer than that span.
  double span = o_.zenoSpan * std::max(1.0, std::abs(t_));
  std::size_t window = 0;
  if (o_.zenoEvents >= 2 && n >= o_.zenoEvents &&
      t_ - r_.events[n - o_.zenoEvents].time <= span)
    window = o_.zenoEvents;
  const std::size_t geometric = 10;
  if (!window && n > geometric + 1) {
    bool shrinking = true;
    double ratio = 0;
    for (std::size_t k = n - geometric; k < n && shrinking; ++k) {
      double last = r_.events[k].time - r_.events[k - 1].time;
      double before = r_.events[k - 1].time - r_.events[k - 2].time;
      ratio = before > 0 ? last / before : 1;
      shrinking = ratio > 0 && ratio < 0.99;
    }
    double interval = r_.events[n - 1].time - r_.events[n - 2].time;
    if (shrinking && interval * ratio / (1 - ratio) <= span)
      window = geometric + 1;
  }
  if (!window)
    return;
  double first = r_.events[n - window].time, last = r_.events[n - 1].time;
  std::set<std::string> junctions;
  for (std::size_t k = n - window; k < n; ++k)
    for (const std::string &t : r_.events[k].transitions)
      junctions.insert(t.substr(0, t.find(':')));
  std::string names;
  for (const std::string &j : junctions)
    names += (names.empty() ? "`" : ", `") + j + "`";
  throw RunError{"Zeno behaviour: events of " + names + " accumulate at t = " + timeText(last) +
                 " (" + std::to_string(window) + " events since t = " + timeText(first) +
                 "); the model needs a resting mode"};
}

void HybridRun::sample(Evaluator &e, double t, const double *x) {
  std::vector<double> y(m_.outputNames.size());
  if (!e.outputs(t, x, y.data()))
    throw RunError{e.failure() + " (outputs, mode " + e.code().modeName + ")"};
  r_.columns[0].push_back(t);
  for (std::size_t i = 0; i < y.size(); ++i)
    r_.columns[i + 1].push_back(y[i]);
}

double HybridRun::locate(runtime::Stepper &s, Evaluator &e, const std::vector<double> &sidesA,
                         const std::vector<double> &sidesB, std::vector<double> &xEvent) {
  double ta = s.tPrev(), tb = s.t(), tol = 1e-12 * (tb - ta);
  std::size_t n = e.code().equations.states.size();
  // Buffers are members: this runs after every step.
  std::vector<double> &x = probeX_, &buffer = probeBuffer_;
  x.resize(n);
  buffer.resize(sidesA.size());
  auto sidesAt = [&](double tau) -> const std::vector<double> & {
    s.interpolate(tau, x.data());
    if (!e.call(e.code().guards, tau, x.data(), buffer.data()))
      throw RunError{e.failure() + " (guards, mode " + e.code().modeName + ")"};
    return buffer;
  };
  // The guards at a few points inside the step as well, so that a
  // comparison that goes and comes back within one step (a short flight of
  // a bouncing ball) is not missed.
  // A comparison that starts the step on its threshold (just after an
  // event: a ball leaving the floor) is also looked at very early in the
  // step, where it has left the threshold in its direction of motion.
  const std::vector<std::uint32_t> &enabled = enabledComparisons();
  bool onThreshold = false;
  for (std::uint32_t k : enabled) {
    double lhs = sidesA[2 * k], rhs = sidesA[2 * k + 1];
    onThreshold = onThreshold || std::abs(lhs - rhs) <= 2 * tolerance(lhs, rhs);
  }
  static const double kEarly[] = {1e-9, 1e-7, 1e-5, 1e-3}, kInside[] = {0.25, 0.5, 0.75, 1.0};
  std::vector<double> &times = probeTimes_;
  std::vector<std::vector<double>> &sides = probeSides_;
  std::size_t count = 0;
  auto probe = [&](double tau, const std::vector<double> &values) {
    if (sides.size() <= count)
      sides.emplace_back();
    sides[count].assign(values.begin(), values.end());
    times.resize(count + 1);
    times[count++] = tau;
  };
  probe(ta, sidesA);
  bool any = false;
  for (int part = onThreshold ? 0 : 1; part < 2; ++part)
    for (double f : part == 0 ? kEarly : kInside) {
      double tau = f < 1 ? ta + (tb - ta) * f : tb;
      probe(tau, f < 1 ? sidesAt(tau) : sidesB);
      any = any || anyEnabled(sides[count - 1].data(), nullptr);
    }
  // An equality holds only at an instant, which the probes rarely hit: its
  // sign change counts too.
  for (std::uint32_t k : enabled) {
    if (any || m_.comparisons[k]->op != CompareOp::Equal)
      continue;
    for (std::size_t i = 1; i < count && !any; ++i)
      any = (sides[i - 1][2 * k] - sides[i - 1][2 * k + 1] < 0) !=
            (sides[i][2 * k] - sides[i][2 * k + 1] < 0);
  }
  if (!any)
    return std::numeric_limits<double>::quiet_NaN();

  struct Crossing {
    double t;
    std::uint32_t leaf;
  };
  std::vector<Crossing> crossings;
  for (std::uint32_t k : enabled) {
    const bg::Guard &g = *m_.comparisons[k];
    bool strict = g.op == CompareOp::Less || g.op == CompareOp::Greater;
    // The margin as a function of time, with zero moved to the side it
    // belongs to (true for <= and >=, false for < and >), so that the
    // bracket's end on the later side has the later truth.
    auto f = [&, k](double tau) {
      const std::vector<double> &sd = sidesAt(tau);
      double m = margin(g.op, sd[2 * k], sd[2 * k + 1]);
      if (m == 0 && g.op != CompareOp::Equal)
        m = strict ? -std::numeric_limits<double>::denorm_min()
                   : std::numeric_limits<double>::denorm_min();
      return m;
    };
    for (std::size_t i = 1; i < count; ++i) {
      const std::vector<double> &A = sides[i - 1], &B = sides[i];
      double fa = margin(g.op, A[2 * k], A[2 * k + 1]), fb = margin(g.op, B[2 * k], B[2 * k + 1]);
      bool hA = holds(g.op, A[2 * k], A[2 * k + 1]), hB = holds(g.op, B[2 * k], B[2 * k + 1]);
      bool crossed = g.op == CompareOp::Equal ? (fa < 0) != (fb < 0) : hA != hB;
      if (!crossed)
        continue;
      if (g.op != CompareOp::Equal) {
        if (fa == 0)
          fa = hA ? std::numeric_limits<double>::denorm_min()
                  : -std::numeric_limits<double>::denorm_min();
        if (fb == 0)
          fb = hB ? std::numeric_limits<double>::denorm_min()
                  : -std::numeric_limits<double>::denorm_min();
      }
      if ((fa < 0) == (fb < 0) || fa == 0 || fb == 0) {
        crossings.push_back({times[i], k});
        continue;
      }
      runtime::Bracket br = runtime::locateSignChange(f, times[i - 1], fa, times[i], fb, tol);
      crossings.push_back({br.hi, k});
    }
  }
  std::sort(crossings.begin(), crossings.end(),
            [](const Crossing &a, const Crossing &b) { return a.t < b.t; });
  for (std::size_t i = 0; i < crossings.size();) {
    // Crossings within the tolerance of each other are handled together.
    std::size_t j = i;
    double tc = crossings[i].t;
    std::vector<std::uint32_t> forced;
    while (j < crossings.size() && crossings[j].t <= crossings[i].t + tol) {
      tc = crossings[j].t;
      if (m_.comparisons[crossings[j].leaf]->op == CompareOp::Equal)
        forced.push_back(crossings[j].leaf);
      ++j;
    }
    std::vector<double> sd = tc == tb ? sidesB : sidesAt(tc);
    if (anyEnabled(sd.data(), &forced)) {
      if (tc == tb)
        xEvent = s.x();
      else
        s.interpolate(tc, xEvent.data());
      return tc;
    }
    i = j;
  }
  // A guard holds somewhere but no located crossing makes it hold (it held
  // at a sample point only through rounding): take the first such point.
  for (std::size_t i = 1; i < count; ++i)
    if (anyEnabled(sides[i].data(), nullptr)) {
      if (times[i] == tb)
        xEvent = s.x();
      else
        s.interpolate(times[i], xEvent.data());
      return times[i];
    }
  return std::numeric_limits<double>::quiet_NaN();
}

void HybridRun::run() {
  auto runStart = Clock::now();
  r_.names.push_back("time");
  for (const std::string &n : m_.outputNames)
    r_.names.push_back(n);
  r_.columns.resize(r_.names.size());
  try {
    simulate();
  } catch (const RunError &e) {
    r_.error = "model `" + model_.name() + "`: " + e.message;
  }
  r_.runSeconds = std::chrono::duration<double>(Clock::now() - runStart).count();
}

void HybridRun::simulate() {
  for (std::size_t i = 0; i < X_.size(); ++i)
    if (!std::isfinite(X_[i]))
      throw RunError{"initial value of state `" + m_.stateNames[i] + "` is not finite"};
  double span = o_.tEnd - o_.tStart;
  if (!(span >= 0))
    throw RunError{"end time is before start time"};
  double dtOut = o_.dtOut > 0 ? o_.dtOut : (span > 0 ? span / 100 : 1);
  runtime::OutputGrid grid(o_.tStart, o_.tEnd, dtOut);

  t_ = o_.tStart;
  {
    // Dependent storage follows the initial mode; iterateModes() holds the
    // values of `pre` here.
    std::shared_ptr<ModeCode> mc = mode(q_);
    std::vector<double> x = gather(*mc);
    complete(evaluator(*mc), x.data());
  }
  iterateModes();

  runtime::IntegratorOptions io;
  io.method = o_.method;
  io.step = o_.step;
  io.rtol = o_.rtol;
  io.atol = o_.atol;
  bool adaptive = o_.method == runtime::Method::DormandPrince;
  std::size_t k = 0;
  double next = grid.at(0);
  bool eventRow = false; // the last row is an event's "after" row at t_

  for (;;) {
    std::shared_ptr<ModeCode> mc = mode(q_);
    Evaluator &e = evaluator(*mc);
    std::vector<double> x = gather(*mc);
    // The mode's ODE and stepper, kept for the next time the run enters it.
    Integration &in = integration(*mc, e, io);
    EvaluatorOde &ode = *in.ode;
    // The row after an event; grid times up to it were sampled before it,
    // so only the start can still have a grid time here.
    if (eventRow)
      sample(e, t_, x.data());
    while (next <= t_) {
      sample(e, t_, x.data());
      next = next == o_.tEnd ? std::numeric_limits<double>::infinity() : grid.at(++k);
    }
    if (t_ >= o_.tEnd)
      return;
    runtime::Stepper *stepper = in.stepper.get();
    stepper->reset(t_, x.data());
    std::vector<double> sidesA = guardSides(*mc), xEvent(x.size()), dense(x.size());
    bool event = false;
    while (!event) {
      if (r_.steps + r_.rejectedSteps + stepper->acceptedSteps() + stepper->rejectedSteps() >=
          io.maxSteps)
        throw RunError{"too many steps (" + std::to_string(io.maxSteps) + ") at t = " +
                       timeText(stepper->t())};
      runtime::StepStatus st = stepper->step(adaptive ? o_.tEnd : std::min(next, o_.tEnd));
      if (st != runtime::StepStatus::Ok) {
        r_.steps += stepper->acceptedSteps();
        r_.rejectedSteps += stepper->rejectedSteps();
        r_.rhsCalls += stepper->rhsCalls();
        if (!ode.failure().empty())
          throw RunError{ode.failure() + " (mode " + mc->modeName + ")"};
        if (st == runtime::StepStatus::StepSizeUnderflow)
          throw RunError{"step size underflow at t = " + timeText(stepper->t()) + " in mode " +
                         modeText(q_)};
        const runtime::NonFiniteInfo &bad = stepper->nonFinite();
        throw RunError{std::string(bad.derivative ? "the derivative of " : "") + "state `" +
                       mc->equations.states[bad.index].name + "` is not finite at t = " +
                       timeText(bad.t) + " in mode " + modeText(q_)};
      }
      double tEnd = stepper->t();
      std::vector<double> sidesB(sidesA.size());
      if (!e.call(mc->guards, tEnd, stepper->x().data(), sidesB.data()))
        throw RunError{e.failure() + " (guards, mode " + e.code().modeName + ")"};
      double tEvent = locate(*stepper, e, sidesA, sidesB, xEvent);
      if (!std::isnan(tEvent)) {
        tEnd = tEvent;
        event = true;
      }
      // Samples up to the end of the step (or the event).
      while (next <= tEnd) {
        if (next == stepper->t()) {
          sample(e, next, stepper->x().data());
        } else {
          stepper->interpolate(next, dense.data());
          sample(e, next, dense.data());
        }
        next = next == o_.tEnd ? std::numeric_limits<double>::infinity() : grid.at(++k);
      }
      t_ = tEnd;
      if (event) {
        complete(e, xEvent.data());
      } else {
        complete(e, stepper->x().data());
        sidesA = std::move(sidesB);
        if (t_ >= o_.tEnd)
          break;
      }
    }
    r_.steps += stepper->acceptedSteps();
    r_.rejectedSteps += stepper->rejectedSteps();
    r_.rhsCalls += stepper->rhsCalls();
    if (!event)
      return;
    // The event: the state before it (sampled unless a grid point fell on
    // it), then mode iteration and remapping; the row after is sampled in
    // the new mode at the top of the loop.
    if (r_.columns[0].empty() || r_.columns[0].back() != t_)
      sample(e, t_, xEvent.data());
    eventRow = iterateModes();
  }
}

void Result::writeEventsCsv(std::ostream &os) const {
  os << "event,time,phase,mode,transitions";
  for (const std::string &n : stateNames)
    os << "," << n;
  os << "\n";
  char buf[32];
  auto row = [&](std::size_t k, const Event &ev, const char *phase, const std::string &mode,
                 const std::string &transitions, const std::vector<double> &x) {
    std::snprintf(buf, sizeof buf, "%.17g", ev.time);
    os << k << "," << buf << "," << phase << ",\"" << mode << "\",\"" << transitions << "\"";
    for (double v : x) {
      std::snprintf(buf, sizeof buf, "%.17g", v);
      os << "," << buf;
    }
    os << "\n";
  };
  for (std::size_t k = 0; k < events.size(); ++k) {
    const Event &ev = events[k];
    std::string transitions;
    for (const std::string &t : ev.transitions)
      transitions += (transitions.empty() ? "" : "; ") + t;
    row(k, ev, "before", ev.modes.front(), transitions, ev.before);
    for (std::size_t i = 1; i + 1 < ev.modes.size(); ++i)
      row(k, ev, ev.real[i] ? "real" : "mythical", ev.modes[i], "", ev.states[i]);
    for (std::size_t i = 0; i < ev.remapIterations.size(); ++i)
      row(k, ev, "remap", std::to_string(i), "", ev.remapIterations[i]);
    row(k, ev, "after", ev.modes.back(), "", ev.after);
  }
}

} // namespace hbg
