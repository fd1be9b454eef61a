//===- runtime/PeriodMap.h - Pieces of a traced run's derivative ----------===//
//
// Internal to hbg_runtime: what the periodic steady state (Periodic.cpp)
// and the small-signal response around it (SmallSignal.cpp) both take
// from a traced run (RunTrace): a mode's Jacobian, the full state's
// derivatives, an event's jump replayed, the comparison an event reached.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Periodic.h"
#include "hbg/runtime/Remap.h"

#include <Eigen/Dense>

#include <cstddef>
#include <vector>

namespace hbg::runtime::periodic {

using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;

/// Restores what evaluating mode `m` reads besides its arguments: its
/// kinks' branches and the values `pre` holds (none when `held` is empty).
void setContext(System &sys, Mode &m, const std::vector<double> &branches,
                const std::vector<double> &held);
/// The mode's independent states out of the full state X.
std::vector<double> gather(const Mode &m, const std::vector<double> &X);
/// df/dx of `m` at (t, x), dense (its Jacobian, or central differences).
Matrix jacobianOf(Mode &m, double t, const std::vector<double> &x);
/// The full state's derivatives in `m` at (t, X): dependent storage's by
/// the chain rule (its time derivative by differences over 1e-6 of
/// `timeScale`), storage no equation of `m` reaches still.
Vector fullDerivative(Mode &m, double t, const std::vector<double> &X, double timeScale);
/// Event `j`'s jump replayed at (t, X): the values `pre` holds from the
/// mode it starts in, then each remap into the real modes it entered.
std::vector<double> replay(System &sys, const RunTrace::Jump &j, double t, std::vector<double> X,
                           RemapWorkspace &work);
/// The comparison of `j` (the model's, then the kinks of the mode it
/// starts from) that sits on its threshold at the event, measured against
/// how much it changes when each state moves by its magnitude `scale`
/// (by full-state slot); false if none.
bool triggering(System &sys, Mode &from, const RunTrace::Jump &j,
                const std::vector<double> &scale, std::size_t &which);
/// An event's jump differentiated by central differences, by the full
/// state before it (EX, steps of 1e-6 of each slot's `scale`) and by its
/// time (Et, 1e-7 of `timeScale`); the values `pre` holds after it; the
/// full state's derivatives before and after it; and, where one of its
/// comparisons reached its threshold (`reached`), that comparison's
/// gradient and its rate along f-, g_X f- + g_t.
struct EventDerivatives {
  Matrix EX;
  Vector Et, fMinus, fPlus, gX;
  std::vector<double> heldAfter;
  bool reached = false;
  std::size_t which = 0;
  double gt = 0, rate = 0;
  /// What the event's moving time adds per unit of it: E_X f- + E_t - f+.
  Vector moved() const { return EX * fMinus + Et - fPlus; }
  /// Throws SteadyGrazing where the comparison is reached tangentially.
  void requireCrossing(System &sys, const RunTrace::Jump &j) const;
};
EventDerivatives eventDerivatives(System &sys, const RunTrace::Jump &j,
                                  const std::vector<double> &heldBefore, Mode &after,
                                  const std::vector<double> &afterBranches,
                                  const std::vector<double> &scale, double timeScale,
                                  RemapWorkspace &work);
/// lhs - rhs of comparison `which` (kinks after the model's) of mode
/// `from` at (t, x).
double comparisonValue(System &sys, Mode &from, std::size_t which, double t,
                       const std::vector<double> &x);
/// Each slot's largest magnitude in the traced run (at least `nominal`).
std::vector<double> scalesOf(const RunTrace &trace, const std::vector<double> &X1,
                             const std::vector<double> &nominal);

/// Visits a trace in time order: `segment(seg, index)` for each segment,
/// and `jump(j, index, heldBefore, after, afterBranches)` for each event,
/// with the values `pre` held before it and the mode (and its branches)
/// the run goes on in after it.
template <class OnSegment, class OnJump>
void visit(const RunTrace &trace, OnSegment &&segment, OnJump &&jump) {
  std::vector<double> held;
  for (std::size_t k = 0; k < trace.order.size(); ++k) {
    auto [isJump, index] = trace.order[k];
    if (!isJump) {
      held = trace.segments[index].held;
      segment(trace.segments[index], index);
      continue;
    }
    const RunTrace::Jump &j = trace.jumps[index];
    const RunTrace::Segment *next = nullptr;
    for (std::size_t l = k + 1; l < trace.order.size() && !next; ++l)
      if (!trace.order[l].first)
        next = &trace.segments[trace.order[l].second];
    Mode *after = next ? next->mode : j.entries.empty() ? j.from : j.entries.back().mode;
    const std::vector<double> &branches = next                ? next->branches
                                          : j.entries.empty() ? j.fromBranches
                                                              : j.entries.back().branches;
    jump(j, index, held, *after, branches);
  }
}

} // namespace hbg::runtime::periodic
