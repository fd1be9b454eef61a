//===- runtime/Sliding.h - Sliding modes of sign laws (Filippov) ----------===//
//
// Internal to hbg_runtime. A `sign(c)` kink whose argument both branches
// drive back to zero (Coulomb friction that holds a body still, a relay
// that would chatter) slides: c is held at zero, and the branch b takes
// the value in [-1, 1] for which c does not move, Filippov's equivalent
// control. For Coulomb friction `e = Fk * sign(f)`, Fk b is then the
// force the contact must carry, and it slips again, as an event, when b
// reaches -1 or 1: the force has left [-Fk, Fk].
//
// SlidingMode wraps a mode while some of its kinks slide. Before each
// evaluation it solves for their branches: the rate of each sliding
// argument along the flow is affine in the branches (they enter the
// right-hand side linearly, and the rate is linear in the state's
// derivative), so s + 1 evaluations give the linear system exactly. A
// sliding kink's comparison in guards() is replaced by 1 - |b| <= 0, so
// that the exit is located like any event, by sampling (the enclosures
// of the compiled guards do not know b).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/System.h"

#include <utility>
#include <vector>

namespace hbg::runtime {

class SlidingMode final : public Mode {
public:
  /// `inner` outlives this; `numComparisons` is the model's guard
  /// comparisons (kink k's comparison follows them).
  SlidingMode(Mode &inner, std::size_t numComparisons)
      : inner_(inner), numComparisons_(numComparisons) {}

  Mode &inner() { return inner_; }
  bool active() const { return !kinks_.empty(); }
  bool sliding(std::size_t k) const;
  /// Kinks of the inner mode that slide, in the order they started.
  const std::vector<std::size_t> &kinks() const { return kinks_; }
  /// Starts or stops kink k sliding; clear() stops all.
  void start(std::size_t k);
  void stop(std::size_t k);
  void clear() {
    kinks_.clear();
    exited_.clear();
  }
  /// Kinks that stopped sliding at this event, with the branch they left
  /// on: their argument is at zero, and the branch is the edge's sign, not
  /// what a test of the motion at zero (tangential there) would give.
  void exit(std::size_t k, double branch) {
    stop(k);
    exited_.push_back({k, branch});
  }
  const std::vector<std::pair<std::size_t, double>> &exited() const { return exited_; }
  void forgetExits() { exited_.clear(); }
  /// The difference interval of the rates, a small fraction of a step,
  /// and the time over which a sliding argument that rounding moved off
  /// zero is brought back (a step).
  void setScales(double delta, double relax) {
    delta_ = delta;
    relax_ = relax;
  }
  /// Sets the sliding kinks' branches at (t, x) so that their arguments
  /// stand still. Where the branches do not determine the rates (the
  /// surfaces are not independent), the last kink to start stops sliding,
  /// held at branch 0 by the others.
  void solve(double t, const double *x);
  /// The branch of sliding kink k that holds its argument still, as last
  /// solved: Filippov's equivalent control, whose leaving [-1, 1] ends the
  /// slide. (The branch the right-hand side uses also brings back what
  /// rounding moved the argument by, which is not the law's business.)
  double equivalent(std::size_t k) const { return equivalent_[k]; }

  const std::string &name() const override { return inner_.name(); }
  const std::vector<std::uint32_t> &stateSlots() const override { return inner_.stateSlots(); }
  const std::vector<std::uint32_t> &dependentSlots() const override {
    return inner_.dependentSlots();
  }
  const std::string &shortCircuit() const override { return inner_.shortCircuit(); }
  const std::string &stateName(std::size_t i) const override { return inner_.stateName(i); }
  bool rhs(double t, const double *x, double *xdot) override;
  bool outputs(double t, const double *x, double *y) override;
  bool guards(double t, const double *x, double *sides) override;
  /// The compiled enclosures do not know the sliding branches: events
  /// are found by sampling while a kink slides.
  bool encloseGuards(Interval, const Interval *, Interval *) override { return false; }
  const std::vector<std::uint32_t> &guardStates() const override { return inner_.guardStates(); }
  const std::vector<std::uint32_t> &timeComparisons() const override {
    return inner_.timeComparisons();
  }
  bool held(double t, const double *x, double *values) override;
  bool dependent(double t, const double *x, double *d) override;
  bool dependentJacobian(double t, const double *x, double *jac) override;
  bool impulse(double t, const double *x, double *b) override;
  bool guardImpulses(double t, const double *x, double *out) override;
  const LoopFailure &failure() const override { return inner_.failure(); }
  std::size_t numKinks() const override { return inner_.numKinks(); }
  bool kinkFloor(std::size_t k) const override { return inner_.kinkFloor(k); }
  bool kinkSlides(std::size_t k) const override { return inner_.kinkSlides(k); }
  const std::string &kinkText(std::size_t k) const override { return inner_.kinkText(k); }
  bool kinkArguments(double t, const double *x, double *c) override {
    return inner_.kinkArguments(t, x, c);
  }
  /// NaN for a sliding kink: its branch is no longer one of the kink's
  /// own, and the event log shows it as `sliding`.
  double branch(std::size_t k) const override;
  void setBranch(std::size_t k, double b) override { inner_.setBranch(k, b); }

private:
  /// Sets the sliding kinks' branches to their equivalent values.
  void useEquivalent();
  /// The rates of the sliding arguments at (t, x) under the branches set,
  /// into `rate`; false when the mode cannot evaluate them.
  bool rates(double t, const double *x, std::vector<double> &rate);

  Mode &inner_;
  std::size_t numComparisons_;
  std::vector<std::size_t> kinks_;
  std::vector<std::pair<std::size_t, double>> exited_;
  double delta_ = 1e-9, relax_ = 1e-6;
  std::vector<double> equivalent_, held_, f_, xp_, xm_, cp_, cm_, r0_, r1_, matrix_;
};

} // namespace hbg::runtime

namespace hbg::runtime {

/// A switched junction held on a guard surface that attracts from both
/// sides (a relay without hysteresis): the run is in neither of the two
/// modes A and B the junction switches between, but in Filippov's convex
/// combination of their dynamics, f = (1 - a) fA + a fB, with the weight a
/// in [0, 1] for which the surface's function g (both sides of the
/// comparison that would switch back, lhs - rhs) stands still. g's rate
/// along each mode's flow is affine in a, so the weight comes from the two
/// rates, each by central differences along the flow (exact for g affine
/// in the state). The two modes share their states and have no dependent
/// storage or kinks (Run::enterSlide checks).
///
/// Outputs and guard sides are combined with the same weight: an output
/// `activeState(j.s)` reads the fraction of time the relay spends in s,
/// its duty. The comparison that would switch back is held unreached;
/// the slide ends at its exit (numKinks), where one mode alone no longer
/// drives the state back to the surface.
class FilippovMode final : public Mode {
public:
  /// `a` and `b` outlive this; `comparison` is the surface's (reached,
  /// with operator `op`, where the junction would switch from b back to
  /// a); the model has `numComparisons` comparisons, `numOutputs` outputs
  /// and `numHeld` held values.
  FilippovMode(Mode &a, Mode &b, std::uint32_t comparison, CompareOp op, std::string name,
               std::size_t numComparisons, std::size_t numOutputs, std::size_t numHeld);
  /// The guards of the junction's transitions from b back to a and from
  /// a to b, whose other conditions must go on holding for the slide to
  /// go on (a thermostat on a schedule), with the comparisons of each
  /// that sit on the surface and count as holding. `sw` outlives this.
  void setGuards(const Switching &sw, const GuardNode &back, std::vector<std::uint32_t> backOn,
                 const GuardNode &forward, std::vector<std::uint32_t> forwardOn) {
    sw_ = &sw;
    back_ = &back;
    forward_ = &forward;
    backOn_ = std::move(backOn);
    forwardOn_ = std::move(forwardOn);
  }
  /// Where the slide ends because a guard's other conditions stopped
  /// holding, the mode that remains possible (b when the way back to a is
  /// closed, a when the way to b is); null while both hold. `sides`
  /// holds the combined sides of guards().
  Mode *blocked(const double *sides) const;

  Mode &a() { return a_; }
  Mode &b() { return b_; }
  std::uint32_t comparison() const { return c_; }
  /// As SlidingMode::setScales.
  void setScales(double delta, double relax) {
    delta_ = delta;
    relax_ = relax;
  }
  /// The weight of mode b that holds the surface's function still at
  /// (t, x), NaN where the modes do not determine one (both rates equal);
  /// false when a mode could not be evaluated.
  bool weight(double t, const double *x, double &w);

  const std::string &name() const override { return name_; }
  const std::vector<std::uint32_t> &stateSlots() const override { return a_.stateSlots(); }
  const std::vector<std::uint32_t> &dependentSlots() const override { return a_.dependentSlots(); }
  const std::string &stateName(std::size_t i) const override { return a_.stateName(i); }
  bool rhs(double t, const double *x, double *xdot) override;
  /// J = (1 - w) JA + w JB + (fB - fA) grad(w)^T, dense, from the modes'
  /// own Jacobians (null, and differences, when either has none). With
  /// grad(ra) = JA^T grad(g) for g affine in the state (grad(g) by
  /// differences of the guards over the states they read), an affine g
  /// stays still under the stiff method as under the explicit ones.
  const SparsePattern *jacobianPattern() override;
  bool jacobian(double t, const double *x, double *values, double *dfdt) override;
  bool outputs(double t, const double *x, double *y) override;
  bool guards(double t, const double *x, double *sides) override;
  /// The enclosures of the compiled guards know neither mode's weight:
  /// events are found by sampling while the junction slides.
  bool encloseGuards(Interval, const Interval *, Interval *) override { return false; }
  const std::vector<std::uint32_t> &guardStates() const override { return guardStates_; }
  const std::vector<std::uint32_t> &timeComparisons() const override { return timeComparisons_; }
  bool held(double t, const double *x, double *values) override;
  bool dependent(double, const double *, double *) override { return true; }
  bool dependentJacobian(double, const double *, double *) override { return true; }
  bool impulse(double, const double *, double *) override { return true; }
  const LoopFailure &failure() const override { return failed_->failure(); }
  /// The exit is watched as a kink of the combination: its comparison
  /// (after the model's) is reached where the weight holding the surface
  /// leaves [0, 1], or a guard's other conditions stop holding. Its
  /// branch means nothing and is never chosen (Run::chooseBranches).
  std::size_t numKinks() const override { return 1; }
  const std::string &kinkText(std::size_t) const override { return name_; }

private:
  /// The rate of the surface's function along mode m's flow at (t, x),
  /// into `rate`, with the function's value there into `g`.
  bool rate(Mode &m, double t, const double *x, double &rate, double &g);
  /// Both modes' rates (and the surface's function, their mean).
  bool rates(double t, const double *x, double &ra, double &rb, double &g);
  /// (1 - w) va + w vb into `out`, from both modes' function `f`.
  template <class F> bool combine(double w, std::size_t count, double *out, F f);

  Mode &a_, &b_;
  Mode *failed_;
  std::uint32_t c_;
  CompareOp op_;
  std::string name_;
  std::size_t numComparisons_, numOutputs_, numHeld_;
  const Switching *sw_ = nullptr;
  const GuardNode *back_ = nullptr, *forward_ = nullptr;
  std::vector<std::uint32_t> backOn_, forwardOn_;
  std::vector<std::uint32_t> guardStates_, timeComparisons_;
  double delta_ = 1e-9, relax_ = 1e-6;
  std::vector<double> fa_, fb_, xp_, xm_, sp_, sm_, va_, vb_;
  /// The dense pattern, and each mode's Jacobian values and df/dt.
  SparsePattern dense_;
  bool patternKnown_ = false, hasPattern_ = false;
  std::vector<double> ja_, jb_, dta_, dtb_, grad_;
};

} // namespace hbg::runtime
