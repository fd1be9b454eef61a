//===- hbg/runtime/Simulate.h - The simulation loop ------------------------===//
//
// One loop for every model: integrate the current mode, sample its outputs
// on a grid, locate the first event in each step on the stepper's dense
// output, cut the step there, iterate modes (mythical modes included),
// remap the state, and go on in the new mode. A model without switched
// junctions is one mode without events.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/System.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hbg::runtime {

struct Event;
struct RunTrace;

/// How far a run has come (SimulateOptions::onStep).
struct Progress {
  double t = 0, tStart = 0, tEnd = 0;
  std::size_t steps = 0, events = 0;
};

/// Settings of one run: the integrator's (method, step, tolerances,
/// maximum step and step budget) and the run's own. The embedding API
/// calls it hbg::SimulationOptions; a model's `experiment { ... }` block
/// gives some of them (ExperimentValues::apply, runtime/Setup.h).
struct SimulateOptions : IntegratorOptions {
  double tStart = 0, tEnd = 1;
  /// Output sampling interval; 0 means (tEnd - tStart) / 100.
  double dtOut = 0;
  /// The nominal magnitude of each slot of the full state, in its own
  /// unit: its absolute tolerance is rtol times the larger of this and the
  /// largest value the slot has had (IntegratorOptions). Empty: zeros.
  /// (The embedding API fills it from Model::nominalState().)
  std::vector<double> nominal;
  /// State remapping at mode changes: one exact solve by conservation of
  /// state, or HYBRSIM's iteration moving `remapFactor` of the remaining
  /// inconsistency per step until it is below `remapTolerance`.
  enum class Remap { Exact, Iterative } remap = Remap::Exact;
  double remapFactor = 0.4;
  double remapTolerance = 1e-12;
  /// A run stops with an error after `maxEvents` events, and reports Zeno
  /// behaviour when `zenoEvents` events in a row fall within `zenoSpan`
  /// (relative to max(1, |t|)), or when the spacing of the last ten events
  /// shrinks geometrically towards a point closer than that.
  std::size_t maxEvents = 1'000'000;
  std::size_t zenoEvents = 200;
  double zenoSpan = 1e-8;
  /// The record keeps every event unless this bounds it: then only the
  /// last `keepEvents` (and those Zeno detection looks back at) are kept,
  /// and RunRecord::eventsDropped counts the others (a co-simulated model
  /// that runs for as long as its importer says).
  std::size_t keepEvents = SIZE_MAX;
  /// Called with each output row (time, then the outputs) as it is
  /// computed. When set, rows are handed over instead of kept in
  /// RunRecord::columns: the caller writes or reduces them, and a run of
  /// any length needs no memory for them.
  std::function<void(const double *row)> onRow;
  /// Called after every accepted step (and event) with the progress so
  /// far; returning false stops the run there (RunRecord::stopped, and
  /// RunRecord::error says when): a progress bar, Ctrl-C, a time budget.
  std::function<bool(const Progress &)> onStep;
  /// Called with each event once it is complete (before keepEvents may
  /// drop it): a log or a plot of any number of events.
  std::function<void(const Event &)> onEvent;
  /// The FSM states (one per switched junction) the run starts in; empty:
  /// each junction's initial state.
  std::vector<std::uint32_t> initialModes;
  /// When set, the run records its segments and events into it, for the
  /// derivative of its end state (runtime/Periodic.h).
  RunTrace *trace = nullptr;
};

/// One event of a switched model: a guard became true, junctions switched
/// (through mythical modes when one switch enables another) and the state
/// was remapped into the new real mode.
struct Event {
  double time = 0;
  /// The transitions taken, in order: `contact: off -> on when (x2 - x1 <= 0)+`.
  std::vector<std::string> transitions;
  /// Every mode passed through, as `j1=on, j2=off` with FSM state names:
  /// the real mode before, mythical modes, and each real mode entered.
  std::vector<std::string> modes;
  /// Which entries of `modes` are real (continuous behaviour or remapped into).
  std::vector<bool> real;
  /// The full state in each entry of `modes`: unchanged through mythical
  /// modes, remapped in each real one.
  std::vector<std::vector<double>> states;
  /// The full state (System::stateNames()) before and after.
  std::vector<double> before, after;
  /// The outputs (System::outputNames()) before and after: what the model
  /// calls its variables (a coil's current, a capacitor's voltage) where
  /// the states are its storage's charges and momenta.
  std::vector<double> outputsBefore, outputsAfter;
  /// The discrete values (System::discretes()) before and after: a tick
  /// or an edge in the event sets them.
  std::vector<double> discreteBefore, discreteAfter;
  /// Iterative remapping: the state after each iteration.
  std::vector<std::vector<double>> remapIterations;
  /// The energy audit (System::storedEnergy()): the energy of each slot of
  /// the full state before and after, their sums, and what the jump
  /// removed (storedBefore - storedAfter; negative when sources supplied
  /// energy through the jump). Empty vectors and NaN sums when the model
  /// cannot say.
  std::vector<double> energyBefore, energyAfter;
  double storedBefore = 0, storedAfter = 0, removed = 0;
  /// Junctions that took a transition in this event, by index in
  /// Switching::junctions() (mythical modes included).
  std::vector<std::uint32_t> junctionsSwitched;
};

/// What a run produced, kept up to a failure.
struct RunRecord {
  /// `time`, then one column per output (empty with SimulateOptions::onRow).
  std::vector<std::vector<double>> columns;
  /// Output rows computed (kept or handed to onRow).
  std::size_t rows = 0;
  /// The run was stopped by SimulateOptions::onStep (`error` says when).
  bool stopped = false;
  std::vector<Event> events;
  /// Events dropped from the front of `events` (SimulateOptions::keepEvents).
  std::size_t eventsDropped = 0;
  /// A run that reached tEnd: the full state there and its mode's text
  /// (empty otherwise).
  std::vector<double> finalState;
  std::string finalMode;
  /// The FSM states of finalMode (one per switched junction).
  std::vector<std::uint32_t> finalModes;
  /// What the run found suspicious without stopping: stored energy that
  /// vanished at events where no junction that switched is declared
  /// dissipative, one per storage set and mode, with the number of
  /// events alike.
  std::vector<RunDiagnostic> warnings;
  /// Empty on success; otherwise what failed, where and when:
  /// `at t = 0.5 in mode `sw=on`: output `y` is not finite`.
  std::string error;
  /// The failure as a diagnostic (none for an internal error).
  std::optional<RunDiagnostic> failure;
  /// The error as a user reads it: `model `M` at t = 0.5: ...`.
  std::string errorText(const std::string &model) const {
    return failure ? failure->text(model) : "model `" + model + "`: " + error;
  }
  /// Records `d` as the run's failure.
  void fail(const RunDiagnostic &d) {
    failure = d;
    std::string at = d.where();
    error = at.empty() ? d.message : at + ": " + d.message;
  }
  std::size_t steps = 0, rejectedSteps = 0, rhsCalls = 0;
  /// Jacobian evaluations and LU factorisations of the stiff method.
  std::size_t jacobianCalls = 0, factorisations = 0;
  /// Which method took the accepted steps over which spans of time (one
  /// span for a fixed method; auto switches between them).
  std::vector<MethodSpan> methods;
  /// Mode-iteration steps (junction switches evaluated) over all events.
  std::size_t modeIterations = 0;
  /// Time spent remapping states at mode changes.
  double remapSeconds = 0;
  /// Time spent proving steps event-free and locating events (guards and
  /// kinks), time events ahead of steps included.
  double eventSearchSeconds = 0;
};

/// Runs `system` from the full state `x0` at opts.tStart to opts.tEnd.
/// Never throws for numerical failures: they end up in `record.error`
/// with everything computed up to them.
void simulate(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
              RunRecord &record);

class Run;

/// simulate()'s loop driven from outside, step by step: start() settles
/// the state at opts.tStart (events there included), each advance(t)
/// integrates to exactly t, handling every event on the way, and
/// refresh() follows values the modes read that the caller changed in
/// between (inputs). No output rows are recorded; events, counters and
/// warnings go to `record`. Each call returns false on a run-time
/// failure, with `record.error` saying what failed, where and when; the
/// state stays where the run stopped, and later calls fail at once.
/// `system`, `opts` and `record` must outlive this.
class SteppedRun {
public:
  SteppedRun(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
             RunRecord &record);
  ~SteppedRun();
  bool start();
  bool advance(double t);
  bool refresh();
  /// The outputs at time(), into y (System::numOutputs() values).
  bool outputs(double *y);
  /// Model exchange, where the caller (an FMI master) integrates the full
  /// state: it sets the time and the state (the current mode's dependent
  /// storage is recomputed from the rest), reads the full state's
  /// derivatives (dependent storage's by the chain rule) and `n` event
  /// indicators (the margin by which each guard comparison holds,
  /// comparisonMargin, while a transition out of the current FSM states
  /// uses it, 1 otherwise, then the current mode's kinks, then 1: each
  /// turns positive where the run's own event location puts an event),
  /// and at an event runs mode iteration and the
  /// remap at (time(), state()); `modeChanged` says whether the state
  /// may have jumped.
  void setTime(double t);
  bool setState(const double *X);
  bool derivatives(double *dX);
  bool indicators(double *z, std::size_t n);
  bool eventUpdate(bool &modeChanged);
  /// The next time event of the current mode (a comparison of time and
  /// parameters only that changes) after time() and no later than
  /// `horizon`, proven as the run's own steps prove them; NaN when none.
  bool nextTimeEvent(double horizon, double &t);
  double time() const;
  /// The full state (System::stateNames()) and its mode's text.
  const std::vector<double> &state() const;
  std::string mode() const;

private:
  template <class F> bool guarded(F &&f);
  std::unique_ptr<Run> run_;
  RunRecord &record_;
};

} // namespace hbg::runtime
