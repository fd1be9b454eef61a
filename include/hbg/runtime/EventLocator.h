//===- hbg/runtime/EventLocator.h - The first event inside a step ----------===//
//
// After every accepted step, the comparisons of the transitions enabled in
// the current FSM states, and the kinks of the mode, are examined along the
// stepper's dense output; the first time at which some enabled guard holds
// or some kink's argument leaves its branch's side is the event, and the
// caller cuts the step there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/System.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace hbg::runtime {

class EventLocator {
public:
  /// How the steps were examined: proven by enclosures (with the number of
  /// enclosures and of tolerance-wide leaves decided by point values), or
  /// sampled (a mode whose guards read Newton-solved values, or a step
  /// whose guards hover on their thresholds past the subdivision budget).
  struct Stats {
    std::size_t provenSteps = 0, sampledSteps = 0, unprovenSteps = 0;
    std::size_t enclosures = 0, leaves = 0;
    /// Intervals decided whole by derivative enclosures (at most one
    /// change of each open comparison, located by the Illinois method).
    std::size_t certified = 0;
  } stats;

  /// The first event in the stepper's last step [tPrev, t] of `mode`, in
  /// FSM states `q` whose transitions read comparisons `enabled` (with the
  /// mode's kinks, numbered after the comparisons); `sidesA` and `sidesB`
  /// are the comparison sides at the step's start and end.
  /// `steady` comparisons (time events proven ahead by nextTimeEvent())
  /// keep their values at tPrev over [tPrev, t) and are not examined
  /// inside the step.
  /// Returns NaN when there is none; otherwise its time, with the state
  /// there in `xEvent`. Throws RunError when the guards cannot be evaluated.
  double locate(const Stepper &s, Mode &mode, const Switching &sw,
                const std::vector<std::uint32_t> &q, const std::vector<std::uint32_t> &enabled,
                const std::vector<double> &sidesA, const std::vector<double> &sidesB,
                std::vector<double> &xEvent, const std::vector<std::uint32_t> &steady = {});

  /// Time events: the first time in (ta, tb] at which one of `comparisons`
  /// of `mode` (each a function of time and parameters only, numbered as
  /// in locate()) changes from its value at ta (becomes reached or stops
  /// being reached; for an equality, is reached or crosses); NaN when none
  /// does. Proven with enclosures and derivative enclosures like locate(),
  /// then narrowed to neighbouring doubles: a step that ends there ends on
  /// the event. `clearTo` is how far the comparisons are proven to keep
  /// their values at ta: over [ta, clearTo], or [ta, clearTo) when that is
  /// the event; less only where an interval a millionth of the window wide
  /// could not be decided. `x` is any state of the mode (the comparisons
  /// do not read it).
  double nextTimeEvent(Mode &mode, const Switching &sw,
                       const std::vector<std::uint32_t> &comparisons, double ta, double tb,
                       const std::vector<double> &x, double &clearTo);

  /// Subdivisions allowed per step before falling back to sampling.
  static constexpr std::size_t kMaxEnclosures = 4096;

private:
  /// The guards sampled at points inside the step and located between
  /// them by the Illinois method: only where enclosures are unavailable.
  double locateBySampling(const Stepper &s, Mode &mode,
                          const std::vector<std::uint32_t> &enabled,
                          const std::vector<double> &sidesA, const std::vector<double> &sidesB,
                          std::vector<double> &xEvent);
  /// The event inside the tolerance-wide [a, b], closer: where a
  /// comparison that changes there changes, if a guard holds at that point.
  double refine(const Stepper &s, Mode &mode, const std::vector<std::uint32_t> &enabled,
                double a, double b, const std::vector<double> &sidesA,
                const std::vector<double> &atB);
  /// Deciding an interval [a, b] of the last step whose enclosures leave
  /// some comparisons open, without halving it: when derivative
  /// enclosures prove each open comparison's margin strictly monotone
  /// there, each changes at most once, and its end values say whether;
  /// the changes are located and taken in order.
  enum class Certified { Free, Event, Unknown, NoSlopes };
  Certified certify(const Stepper &s, Mode &mode, const std::vector<std::uint32_t> &enabled,
                    double a, double b, const std::vector<double> &sidesA,
                    const std::vector<double> &sidesB, double &te);
  /// Whether comparison k's margin is strictly monotone where `slope_`
  /// holds derivative enclosures of the comparisons.
  bool monotone(std::uint32_t k) const;
  /// The event at `te` in the last step: the state there in `xEvent`.
  double eventAt(const Stepper &s, double te, std::vector<double> &xEvent);
  /// Both sides of every comparison at `tau` on the dense output.
  void sidesAt(const Stepper &s, Mode &mode, double tau, std::vector<double> &out);

  /// What the caller is looking for: comparison k's operator (kinks are
  /// `lhs <= rhs`), and whether an enabled transition or a kink may fire
  /// where the comparisons have these truths, or these sides.
  CompareOp opOf(std::uint32_t k) const {
    return k < numGuardComparisons_ ? sw_->op(k) : CompareOp::LessEqual;
  }
  Truth anyEvent(const Truth *truths) const;
  bool anyEvent(const double *sides, const std::vector<std::uint32_t> *forced = nullptr) const;

  const Switching *sw_ = nullptr;
  const std::vector<std::uint32_t> *q_ = nullptr;
  /// Guard comparisons, and those with the kinks after them.
  std::size_t numGuardComparisons_ = 0, numComparisons_ = 0;
  /// Buffers kept between calls: this runs after every step.
  std::vector<double> times_, x_, buffer_, pointA_, pointB_, refineSides_;
  std::vector<std::vector<double>> sides_;
  std::vector<Interval> box_, enclosure_, slopeBox_, values_, slope_;
  /// locate()'s step: the dense output's coefficients of each state the
  /// guards read (five each, in the order of Mode::guardStates()), taken
  /// once for all the intervals enclosed.
  std::vector<double> dense_;
  std::vector<Truth> certTruths_;
  /// certify()'s comparisons that change once in the interval, with their
  /// margins at its ends and where they change (NaN until located).
  struct Change {
    std::uint32_t k;
    double fa, fb, at;
  };
  std::vector<Change> changing_;
  /// Indices into changing_ of the comparisons whose margins agree, so far,
  /// with the one being located.
  std::vector<std::size_t> replays_;
  std::vector<std::pair<double, std::uint32_t>> changes_;
  std::vector<Truth> truths_, refineTruths_, steadyTruth_;
  std::vector<std::uint32_t> open_;
  /// The width of the last interval decided by nextTimeEvent(), and by
  /// locate(): where their next march starts.
  double marchWidth_ = 0, locateWidth_ = 0;
};

} // namespace hbg::runtime
