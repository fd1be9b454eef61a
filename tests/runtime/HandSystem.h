//===- tests/runtime/HandSystem.h - Switched models written by hand -------===//
//
// A runtime::System and its Modes written by hand against the System/Mode
// interface, without parser or JIT, for the tests of simulate() on
// switched models (mode iteration, remapping, Zeno detection, the energy
// audit, run-time errors), and the pieces of their Switching.
//
// Guards are runtime::Tapes (three results per comparison: lhs, rhs and
// lhs - rhs), evaluated on doubles for the point values and on intervals
// for event location; a mode built with `enclose = false` refuses to
// enclose its guards, so that its events are found by sampling instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Simulate.h"
#include "hbg/runtime/Tape.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hbgtest {

using namespace hbg;
using namespace hbg::runtime;

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

inline GuardNode comparison(std::uint32_t k, CompareOp op, bool minus) {
  GuardNode g;
  g.comparison = k;
  g.op = op;
  g.minus = minus;
  return g;
}

inline GuardNode both(GuardNode a, GuardNode b) {
  GuardNode g;
  g.kind = GuardNode::And;
  g.children = {std::move(a), std::move(b)};
  return g;
}

inline Transition transition(std::uint32_t from, std::uint32_t to, GuardNode guard,
                             std::string text) {
  Transition t;
  t.from = from;
  t.to = to;
  t.guard = std::move(guard);
  t.text = std::move(text);
  return t;
}

inline Junction junction(std::string name, std::vector<std::string> states,
                  std::vector<Transition> transitions) {
  Junction j;
  j.name = std::move(name);
  j.stateNames = std::move(states);
  j.transitions = std::move(transitions);
  return j;
}

/// The rows of the output whose time is exactly `t`.
inline std::vector<std::size_t> rowsAt(const RunRecord &r, double t) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < r.columns[0].size(); ++i)
    if (r.columns[0][i] == t)
      rows.push_back(i);
  return rows;
}

} // namespace hbgtest
