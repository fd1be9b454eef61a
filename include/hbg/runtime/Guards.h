//===- hbg/runtime/Guards.h - Guard comparisons and state machines --------===//
//
// What the runtime knows of a switched model's discrete part: each switched
// junction's state machine, its transitions, and their guards as trees of
// comparisons `lhs op rhs`. Comparisons are numbered across the model; a
// mode's guard function writes both sides of every comparison, and the
// truth of a guard is judged from those sides with a small tolerance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Interval.h"
#include "hbg/support/Compare.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace hbg::runtime {

/// The tolerance of `lhs op rhs`: relative to the sides' magnitudes (and a
/// tiny absolute floor for sides that are both zero up to rounding), so
/// that a value equal to its threshold up to rounding is neither strictly
/// above nor strictly below it.
inline double comparisonTolerance(double lhs, double rhs) {
  return 1e-11 * (std::abs(lhs) + std::abs(rhs)) + 1e-14;
}

/// Whether `lhs op rhs` holds, with comparisonTolerance(): `a > b` needs
/// a - b above the tolerance, `a >= b` accepts a - b down to minus the
/// relative part of it, `a = b` holds within it.
inline bool comparisonHolds(CompareOp op, double lhs, double rhs) {
  double g = lhs - rhs, tol = comparisonTolerance(lhs, rhs);
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

/// A continuous function of the two sides, positive where the comparison
/// holds: non-strict comparisons and equalities change sign at the
/// threshold itself, strict ones beyond the tolerance, so that a strict
/// guard does not fire on a value that merely touches its threshold.
inline double comparisonMargin(CompareOp op, double lhs, double rhs) {
  double g = lhs - rhs, tol = comparisonTolerance(lhs, rhs);
  switch (op) {
  case CompareOp::Less: return -g - tol;
  case CompareOp::LessEqual: return -g;
  case CompareOp::Greater: return g - tol;
  case CompareOp::GreaterEqual: return g;
  case CompareOp::Equal: return g;
  }
  return 0;
}

/// What is known of a comparison over an interval of time.
enum class Truth : std::uint8_t { False, True, Unknown };

/// Whether a comparison has been reached along a trajectory, which is
/// what event location looks for: its margin is positive, or zero for a
/// non-strict comparison (`x >= 0.3` is reached at 0.3 itself, not
/// within the tolerance before it). An equality is reached where its sides
/// are equal, and also (judged by the caller, over an interval) where they
/// cross.
inline bool comparisonReached(CompareOp op, double lhs, double rhs) {
  double m = comparisonMargin(op, lhs, rhs);
  switch (op) {
  case CompareOp::Less:
  case CompareOp::Greater: return m > 0;
  case CompareOp::LessEqual:
  case CompareOp::GreaterEqual: return m >= 0;
  case CompareOp::Equal: return m == 0;
  }
  return false;
}

/// Whether comparisonReached() holds for all, or for none, of the values
/// enclosed by `lhs` and `rhs`, given that `diff` encloses lhs - rhs;
/// Unknown when the enclosures cannot tell.
Truth comparisonTruth(CompareOp op, Interval lhs, Interval rhs, Interval diff);

/// A guard: a tree of comparisons combined by and, or, not.
struct GuardNode {
  enum Kind { Compare, And, Or, Not } kind = Compare;
  /// Compare: the comparison's number, its operator and its mark: `+`
  /// comparisons are judged on the values of the configuration being
  /// entered (a posteriori), `-` ones on the last real mode's (a priori).
  std::uint32_t comparison = 0;
  CompareOp op = CompareOp::Less;
  bool minus = false;
  std::vector<GuardNode> children;
};

/// The comparisons of guard `g` that are not under a `not`, in order.
void comparisonsOf(const GuardNode &g, std::vector<const GuardNode *> &out);

/// One transition of a junction's state machine.
struct Transition {
  std::uint32_t from = 0, to = 0;
  GuardNode guard;
  /// As written, for the event log: `off -> on when (x2 - x1 <= 0)+`.
  std::string text;
};

/// A switched junction's state machine.
struct Junction {
  std::string name;
  std::vector<std::string> stateNames;
  std::uint32_t initial = 0;
  /// Declared `switched dissipative`: stored energy that its events remove
  /// is lost by design (a plastic impact), and the energy audit is silent.
  bool dissipative = false;
  /// In declaration order: the first enabled one is taken.
  std::vector<Transition> transitions;
};

/// The discrete part of a model. A mode is identified by the FSM state of
/// every junction (a vector indexed like `junctions`).
class Switching {
public:
  Switching() = default;
  /// `ops[k]` is comparison k's operator.
  Switching(std::vector<Junction> junctions, std::vector<CompareOp> ops);

  const std::vector<Junction> &junctions() const { return junctions_; }
  std::size_t numComparisons() const { return ops_.size(); }
  CompareOp op(std::uint32_t comparison) const { return ops_[comparison]; }
  /// The FSM states every junction starts in.
  std::vector<std::uint32_t> initialStates() const;
  /// `j1=open, j2=closed`.
  std::string modeText(const std::vector<std::uint32_t> &q) const;

  /// The sides of comparison k sit at sides[2k] and sides[2k + 1].
  /// `forced` comparisons (equalities located at their crossing) hold.
  bool holds(const GuardNode &g, const double *plus, const double *minus,
             const std::vector<std::uint32_t> *forced = nullptr) const;
  /// The first transition of junction `j` from `state` whose guard holds, or -1.
  int enabledTransition(std::size_t j, std::uint32_t state, const double *plus,
                        const double *minus,
                        const std::vector<std::uint32_t> *forced = nullptr) const;
  /// Whether any junction has an enabled transition in FSM states `q`, all
  /// comparisons judged on `sides`.
  bool anyEnabled(const std::vector<std::uint32_t> &q, const double *sides,
                  const std::vector<std::uint32_t> *forced = nullptr) const;
  /// The comparisons of the transitions leaving FSM states `q`, sorted.
  std::vector<std::uint32_t> comparisonsFrom(const std::vector<std::uint32_t> &q) const;

  /// Three-valued truth of a guard from per-comparison truths, where a
  /// comparison may be unknown (its value changes somewhere in an interval).
  Truth truth(const GuardNode &g, const Truth *comparisons) const;
  /// Whether some transition leaving `q` may be enabled somewhere where the
  /// comparisons have the given truths: True (certainly, throughout),
  /// Unknown, or False (certainly not anywhere).
  Truth anyEnabled(const std::vector<std::uint32_t> &q, const Truth *comparisons) const;

private:
  std::vector<Junction> junctions_;
  std::vector<CompareOp> ops_;
};

} // namespace hbg::runtime
