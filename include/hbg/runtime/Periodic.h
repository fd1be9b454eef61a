//===- hbg/runtime/Periodic.h - Periodic steady state by shooting ----------===//
//
// The periodic steady state of a model driven with period T: the state
// X0 at a time t0 whose run over one period returns to it, P(X0) = X0.
// Newton's method on P(X) - X (Aprille and Trick's shooting method) needs
// the period map's derivative, the monodromy matrix M = dP/dX0. A run
// records what it went through (RunTrace: each mode's segment of time and
// each event), and M is the product, in time order, of
//
//  - each segment's state-transition matrix: the solution of the
//    variational equations dPhi/dt = J(t, x(t)) Phi with the mode's
//    Jacobian, or exactly exp(J h) where the Jacobian is constant (a
//    linear mode), extended to the full state by the dependent storage's
//    Jacobian;
//  - each event's saltation matrix: the derivative of the event's jump
//    (the values `pre` holds, then each remap into the real modes entered)
//    corrected for the event time moving with the state,
//
//        S = E_X - (E_X f- + E_t - f+) g_X^T / (g_X f- + g_t),
//
//    where g is the comparison that reached its threshold, f- and f+ the
//    full state's derivatives before and after, and E the jump.
//
// docs/numerics.md, "Periodic steady state", describes the method, its
// fallbacks and its diagnostics.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Losses.h"
#include "hbg/runtime/Simulate.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hbg::runtime {

/// What a run went through, in time order, for the derivative of where it
/// ended with respect to where it started (SimulateOptions::trace).
struct RunTrace {
  /// A stretch of time integrated in one mode.
  struct Segment {
    Mode *mode = nullptr;
    double t0 = 0, t1 = 0;
    /// The full state at t0 (its dependent storage consistent with it).
    std::vector<double> X0;
    /// The mode's kink branches, and the values `pre` holds, meanwhile.
    std::vector<double> branches, held;
  };
  /// A real mode an event entered, its kinks' branches there, and whether
  /// the state was remapped into it.
  struct Entry {
    Mode *mode = nullptr;
    std::vector<double> branches;
    bool remapped = false;
  };
  struct Jump {
    double time = 0;
    /// The real mode the event started from and its branches then.
    Mode *from = nullptr;
    std::vector<double> fromBranches;
    /// The full state before and after.
    std::vector<double> before, after;
    /// The comparisons (kinks after the model's) of the transitions the
    /// event took first and of the kinks whose branch changed: one of them
    /// reached its threshold.
    std::vector<std::uint32_t> comparisons;
    std::vector<Entry> entries;
  };
  /// Segments and jumps in time order: item k is segments[index] when
  /// `isJump[k]` is false, jumps[index] otherwise.
  std::vector<Segment> segments;
  std::vector<Jump> jumps;
  std::vector<std::pair<bool, std::size_t>> order;
  /// Non-empty when the run did something whose derivative is not formed
  /// (a junction or a kink sliding on a surface): what.
  std::string unsupported;
  /// Called after each accepted step with the mode, the stepper and the
  /// part [ta, tb] of its last step the run kept (an event may end it
  /// early): quadrature of the outputs.
  std::function<void(Mode &m, const Stepper &s, double ta, double tb)> onStep;

  void clear() {
    segments.clear();
    jumps.clear();
    order.clear();
    unsupported.clear();
  }
};

/// Settings of the periodic steady-state analysis.
struct SteadyOptions {
  /// The period (required, > 0) and the phase of the period the result
  /// starts at: the period reported is [phase, phase + T) of the
  /// excitation, from which the search picks its own start (away from
  /// events).
  double period = 0;
  /// Periods of transient from the initial state before shooting, and
  /// how many more each fallback runs.
  std::size_t warmupPeriods = 5, fallbackPeriods = 20;
  /// Newton iterations before falling back, and fallbacks in all.
  std::size_t maxIterations = 30, maxFallbacks = 3;
  /// Converged when every state's change over a period is below this,
  /// relative to the larger of the state's largest magnitude over the
  /// period and its nominal magnitude.
  double tolerance = 1e-11;
  /// Output rows per period in the period's record (events add theirs).
  std::size_t rowsPerPeriod = 1000;
  /// Measure each R element's and source's mean power and the losses at
  /// events over the period found (SteadyResult::losses).
  bool losses = false;
};

/// One Newton iteration's figures.
struct SteadyIteration {
  /// The residual (max over states of |P(X) - X| / scale) at the iterate,
  /// the step length taken (1: a full Newton step), and the number of
  /// events in its period.
  double residual = 0, step = 1;
  std::size_t events = 0;
  /// `newton`, `damped`, or `transient` (a fallback's periods).
  std::string kind;
};

/// Per output: the figures over one period.
struct OutputFigures {
  double mean = 0, rms = 0, min = 0, max = 0;
  double peakToPeak() const { return max - min; }
};

struct SteadyResult {
  /// The start of the period found, its full state and FSM states, and
  /// the time from which its record's rows are shifted to [0, T).
  double t0 = 0;
  std::vector<double> X0;
  std::vector<std::uint32_t> q0;
  /// The residual at the end (relative, as SteadyIteration::residual).
  double residual = 0;
  std::vector<SteadyIteration> iterations;
  /// `integral(...)` states that nothing but outputs read (a shaft's
  /// angle): they drift, by the amount given per period, and the search
  /// leaves them out. Their names.
  std::vector<std::pair<std::string, double>> drifting;
  /// The eigenvalues of the monodromy matrix at the solution (Floquet
  /// multipliers, largest magnitude first), as (re, im).
  std::vector<std::pair<double, double>> multipliers;
  /// The modes in the period, in order, from its start; and the times
  /// they are entered (the first at the period's start), shifted to
  /// [0, T).
  std::vector<std::string> modes;
  std::vector<double> modeTimes;
  /// One period of output rows (time shifted to [0, T]), events, and the
  /// run's counters: the final period's record.
  RunRecord period;
  /// The figures of each output over the period.
  std::vector<OutputFigures> figures;
  /// SteadyOptions::losses: the powers over the period.
  std::optional<PowerFigures> losses;
  /// Transient periods simulated and periods simulated in all (Newton's
  /// included).
  std::size_t transientPeriods = 0, periodsSimulated = 0;
  /// Empty on success; otherwise what failed (`failure` when it is a
  /// diagnostic). What was computed so far stays.
  std::string error;
  std::optional<RunDiagnostic> failure;
  bool ok() const { return error.empty(); }
};

/// Finds the periodic steady state of `system` from the full state `x0` at
/// `base.tStart`, integrating with `base`'s settings (its tEnd, dtOut and
/// onRow are the analysis's own).
void findSteadyState(System &system, const std::vector<double> &x0, const SimulateOptions &base,
                     const SteadyOptions &opts, SteadyResult &result);

/// The monodromy of a traced run over [t0, t1] that ended at X1: d X(t1)
/// / d X(t0), column major, N x N for a full state of N. Differences are
/// taken at 1e-6 of each slot's magnitude (the largest it had in the run,
/// at least `nominal`) and of `timeScale` (the period) in time. Throws
/// RunError where the derivative cannot be formed (a grazing event, a
/// failed evaluation).
std::vector<double> monodromy(System &system, const RunTrace &trace, const std::vector<double> &X1,
                              const std::vector<double> &nominal, double timeScale);

} // namespace hbg::runtime
