//===- runtime/Run.h - The state of one simulation run ---------------------===//
//
// Internal to hbg_runtime: what simulate() keeps while it runs, and the
// steps of the loop, each defined in the file of its concept
// (Simulate.cpp, ModeIteration.cpp, Kinks.cpp, Zeno.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/EventLocator.h"
#include "hbg/runtime/Periodic.h"
#include "hbg/runtime/Remap.h"
#include "hbg/runtime/Simulate.h"

#include "Sliding.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace hbg::runtime {

class Run {
public:
  Run(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
      RunRecord &record);
  /// The loop over the output grid; throws RunError.
  void simulate();
  /// Step by step (SteppedRun): the state at tStart and the events there,
  /// then integration to tStop (events handled on the way), as often as
  /// asked. Without simulate()'s grid, no output row is recorded.
  void start();
  void advance(double tStop);
  /// The values the modes read changed between steps (inputs): dependent
  /// storage and kinks follow, and mode iteration runs at time().
  void refresh();
  void outputs(double *y);
  /// Model exchange (ExchangeRun): the caller integrates. setState() takes
  /// the full state and recomputes the current mode's dependent storage;
  /// derivatives() gives the full state's, dependent storage's by the
  /// chain rule; indicators() the margin by which each comparison holds
  /// (comparisonMargin) where a transition out of the current states
  /// uses it (1 elsewhere), then
  /// each kink's, padded with 1 to n, never exactly 0 (a value on its
  /// threshold is the smallest double on the side it is judged on);
  /// eventUpdate() runs mode iteration at (t, X) and says whether the mode
  /// changed. The caller locates a crossing no closer than its step: an
  /// equality whose indicator changed sign between the last two times it
  /// was read holds at the event.
  void setTime(double t) {
    t_ = t;
    yAfterKept_ = false;
  }
  void setState(const double *X);
  void derivatives(double *dX);
  void indicators(double *z, std::size_t n);
  bool eventUpdate();
  double nextTimeEvent(double horizon);
  double time() const { return t_; }
  const std::vector<double> &state() const { return X_; }
  const std::string &modeName() { return modeText(q_); }
  /// `d` placed where the run was: in the real mode it was in, and during
  /// an event in the mode the event started from (not a mode passed
  /// through or entered, which the message names).
  RunDiagnostic locate(RunDiagnostic d) {
    if (!std::isnan(d.time))
      d.mode = eventFrom_ ? *eventFrom_ : modeText(q_);
    return d;
  }

private:
  /// The mode of FSM states `q`, compiled on first use.
  Mode &mode(const std::vector<std::uint32_t> &q);
  /// Switching::modeText(q), kept for the run; while kinks of the mode
  /// slide, followed by `sliding(sign(...))`, and a sliding junction's
  /// `j=sliding(a, b)`: a slide is a mode of its own in the event log and
  /// plots.
  const std::string &modeText(const std::vector<std::uint32_t> &q);
  /// The mode's ODE and stepper, kept for the run.
  struct Integration;
  Integration &integration(Mode &m);
  /// The mode's independent states out of X.
  std::vector<double> gather(const Mode &m) const;
  void gather(const Mode &m, std::vector<double> &x) const;
  /// Stores a mode's states into X and computes its dependent storage.
  void complete(Mode &m, const double *x);
  /// Model exchange: the indicators read at the latest time and at the
  /// time before it, and the equalities an event treats as holding.
  std::vector<double> zSeen_, zBefore_;
  double zSeenTime_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::uint32_t> reachedEqualities_;
  /// The outputs at the run's time and state, in its mode.
  void outputsNow(std::vector<double> &y);
  /// In a mode whose sources short-circuit each other: the first
  /// stand-in whose source the rest of the network pushes from its value
  /// (the sources disagree), or -1 where they all agree.
  int disagreeing(Mode &m, double t, const double *x);
  /// For each dependent storage of `m`: a stand-in whose source agrees
  /// with the rest of the network (to rounding, 1e-10 of
  /// buf_.standInScale, the terms that form it).
  const std::vector<char> &standInsAgree(Mode &m, double t, const double *x);
  /// Adds a stepper's counters to the record (before it is reset).
  void tally(const Stepper &s);
  /// Evaluates the held values (`pre`) in `m` at X.
  void holdValues(Mode &m);
  /// Once an event has settled in `m`: the held values' second pass, where
  /// `edge(b)` clocks record b and their discrete values update; whether
  /// one did (System::settleSlot).
  bool settleEdges(Mode &m);
  /// The discrete values (System::discretes()) as the run holds them.
  void discreteValues(std::vector<double> &out) const;
  /// Both sides of every guard comparison, in `m` at X.
  /// (`evaluated`: m's text when it is not the mode the run is in.)
  void guardSides(Mode &m, std::vector<double> &sides, const std::string *evaluated = nullptr);
  /// The text of mode q for an error, when it is not the one the run is
  /// in (during an event, the mode the event started from).
  const std::string *otherMode(const std::vector<std::uint32_t> &q) {
    const std::string *text = &modeText(q);
    return text == (eventFrom_ ? eventFrom_ : &modeText(q_)) ? nullptr : text;
  }
  /// An output row of `m` at (t, x); `y`: its outputs there, when the
  /// caller has them.
  void sample(Mode &m, double t, const double *x, const std::vector<double> *y = nullptr);
  /// Comparisons of the transitions enabled in the current FSM states,
  /// then the kinks of their mode `m`.
  const std::vector<std::uint32_t> &enabledComparisons(const Mode &m);
  /// Sets the kinks' branches of `m` at t_ and X (Kinks.cpp), until no
  /// branch changes; one round of it. A `sign` driven back to zero from
  /// both sides starts sliding, and a sliding one whose branch has left
  /// [-1, 1] stops (Sliding.h).
  void chooseBranches(Mode &m);
  void chooseBranchesOnce(Mode &m);
  /// The branches of the floor kinks of time alone (clocks, PWM carriers),
  /// as chooseBranches() would set them here: before values are held at
  /// an event, whose clock ticks they tell.
  void chooseTimeFloors(Mode &m);
  /// The sliding wrapper of mode `m` (or `m` itself when it is one),
  /// made on first use and kept for the run: its integration is keyed by
  /// its address.
  SlidingMode &slider(Mode &m);
  /// The step size the run has reached (a thousandth of the span before
  /// the first step): what kinks and slides take their rates over.
  double stepScale() const;
  /// Moves the mode's states `x` (and X) by the least, measured in each
  /// state's scale, that brings g(x) to `aim` or beyond it on `side` (+1
  /// or -1), and `past` scaled units of state further (along g's scaled
  /// gradient, by differences: exact for g affine in the state), in up to
  /// four rounds that each aim past what rounding left. A move longer
  /// than `within` scaled units is not made. True when g is there.
  bool moveState(Mode &m, std::vector<double> &x, const std::function<double(const double *)> &g,
                 double aim, double side, double past = 0,
                 double within = std::numeric_limits<double>::infinity());
  /// Where guard `g` holds in mode `m` at its states `x`, moves the state
  /// off each of its comparisons that holds (onto the threshold of a
  /// strict one, past a non-strict one by its tolerance), when that takes
  /// no more than `within` scaled units of state; true when `g` then no
  /// longer holds.
  bool moveOffGuard(Mode &m, const GuardNode &g, std::vector<double> &x, double within);
  /// At an event whose round comes back to the real mode it started from:
  /// moves the state off the guards of the transitions `taken` (junction,
  /// transition) by the integration's tolerance at most, where the motion
  /// leaves them; true when it did (the state is unchanged otherwise).
  bool nudgeOffGuards(const std::vector<std::pair<std::size_t, std::size_t>> &taken);
  /// When kink k's argument is not on `side` of zero by a few ulps of the
  /// states, moves the mode's states `x` (and X) by the least, measured in
  /// each state's scale, that puts it there.
  void zeroArgument(Mode &m, std::size_t k, double side, std::vector<double> &x);

  /// Switched junctions held on a guard surface (JunctionSliding.cpp).
  /// After an event that switched one junction from FSM states `from` to
  /// q_, when the junction would switch straight back (the surface
  /// attracts from both sides): the run slides, in the modes' Filippov
  /// combination (FilippovMode), and `ev` ends in the sliding mode. When
  /// the two modes cannot be combined, why is kept for the chattering
  /// diagnostic.
  void enterSlide(const std::vector<std::uint32_t> &from, Event &ev);
  /// At an event while sliding: the run goes on in the mode whose weight
  /// is the larger (at an exit, the one that alone keeps the state off the
  /// surface), moved off the surface's comparisons by rounding if need
  /// be; true when it slid.
  bool leaveSlide(Event &ev);
  /// The kinks of `m` with their branches, and, as event-log transitions,
  /// how the branches of `m` differ from those of the same calls in
  /// `before` (kinks of other modes are matched by their text).
  static std::vector<std::pair<std::string, double>> branches(const Mode &m);
  static std::vector<std::string>
  branchChanges(const std::vector<std::pair<std::string, double>> &before, const Mode &m);

  /// SimulateOptions::trace: a segment of integration in `m` starts at t_
  /// and X (Simulate.cpp); an event is complete (ModeIteration.cpp).
  void traceSegment(Mode &m);
  /// Whether kinks of mode q slide.
  bool sliding(const std::vector<std::uint32_t> &q) {
    SlidingMode *s = sliderOf(entry(q));
    return s && s->active();
  }
  void traceEntry(Mode &m, bool remapped);
  void traceJump(Mode &from, const std::vector<double> &fromBranches, const Event &ev);
  /// The event under way's real modes entered and comparisons reached.
  std::vector<RunTrace::Entry> traceEntries_;
  std::vector<std::uint32_t> traceComparisons_;
  /// Mode iteration at t_ from X (ModeIteration.cpp); returns true when
  /// the mode changed (and records the event). `yBefore`: the outputs of
  /// the run's mode at t_ and X, when the caller has them (it has just
  /// written the row before the event).
  bool iterateModes(const std::vector<double> *yBefore = nullptr);
  /// An empty event, with the storage of one the record dropped when
  /// there is one (SimulateOptions::keepEvents): a run that keeps few
  /// events then records each without allocating.
  Event newEvent();
  /// How many events the record keeps when it drops old ones: the
  /// options' keepEvents, and at least what Zeno detection looks back at.
  std::size_t eventsKept() const;
  /// Empties `ev` into the pool below.
  void recycle(Event &ev);
  /// Appends a mode passed through (its text, whether it is real, the
  /// state X there) and a transition taken to `ev`, in pooled storage.
  void addMode(Event &ev, const std::string &text, bool real);
  void addTransition(Event &ev, const std::string &text);
  /// Storage of dropped events: the events emptied, and the strings and
  /// state vectors they held.
  struct EventPool {
    std::vector<Event> events;
    std::vector<std::string> strings;
    std::vector<std::vector<double>> vectors;
  } pool_;
  void remap(Mode &to, Event &ev);
  /// `plus` holds the guard sides of candidate mode `m` at X: comparisons
  /// whose sides carry the impulses of the jump into `m` are rewritten to
  /// be judged on them (ModeIteration.cpp).
  void judgeImpulses(Mode &m, std::vector<double> &plus);
  /// The event's energy before (at its start, before `pre` takes new
  /// values), then the rest of its audit once the state is remapped, with
  /// a warning when stored energy vanished and no dissipative junction
  /// switched (Audit.cpp).
  void energyBefore(Event &ev);
  void auditEnergy(Event &ev);
  RunError cycleError(const Event &ev, const std::vector<std::string> &modes,
                      const std::string &again) const;
  /// Stops the run on too many events or Zeno behaviour (Zeno.cpp), and
  /// on a junction chattering across a guard surface that attracts from
  /// both sides.
  void checkZeno();
  void checkChattering();
  /// Stops the run when located events, recorded or not, keep following
  /// each other within rounding noise of t (Simulate.cpp).
  void checkCrawl(Mode &m, const std::vector<double> &x);

  System &sys_;
  const Switching &sw_;
  const SimulateOptions &o_;
  RunRecord &r_;
  std::vector<double> X_;
  std::vector<std::uint32_t> q_;
  double t_ = 0;
  /// simulate()'s output grid, the index and time of its next sample, and
  /// whether the last row is an event's "after" row at t_.
  std::optional<OutputGrid> grid_;
  std::size_t k_ = 0;
  double next_ = std::numeric_limits<double>::infinity();
  bool eventRow_ = false;
  /// buf_.yAfter holds the outputs after the last event, in the mode and
  /// at the state it ended in: its row after samples them. Cleared by
  /// anything that may change them before that row.
  bool yAfterKept_ = false;
  /// The step size last reached: after an event the next step starts
  /// from it, and kinks take their direction over a fraction of it.
  double lastStep_ = 0;
  /// The time of the last output row (NaN before the first).
  double lastRowTime_ = std::numeric_limits<double>::quiet_NaN();
  /// The last located event and how many in a row came within rounding
  /// noise of the one before.
  double lastEventTime_ = -std::numeric_limits<double>::infinity();
  /// During an event, the text of the mode it started from (modes_ keeps
  /// it in place).
  const std::string *eventFrom_ = nullptr;
  std::size_t crawl_ = 0;
  /// Modes by FSM states: compiled on first entry (null until then), and
  /// their text.
  struct ModeEntry {
    Mode *mode = nullptr;
    std::string text;
    /// The text while kinks of the mode slide: `sliding(sign(...))` after
    /// it (modeText()).
    std::string sliding;
    /// Its key in modes_.
    const std::vector<std::uint32_t> *q = nullptr;
    /// sliders_'s wrapper of `mode`, once there is one (slider()).
    SlidingMode *slider = nullptr;
    /// enabledComparisons() in these FSM states for a mode of
    /// `enabledKinks` kinks (none computed while SIZE_MAX).
    std::vector<std::uint32_t> enabled;
    std::size_t enabledKinks = SIZE_MAX;
  };
  /// The sliding wrapper of the entry's mode, or null while it has none.
  SlidingMode *sliderOf(ModeEntry &e);
  std::map<std::vector<std::uint32_t>, ModeEntry> modes_;
  ModeEntry &entry(const std::vector<std::uint32_t> &q);
  /// The entries entry() found last: an event looks up the same few modes
  /// many times (map nodes stay where they are).
  ModeEntry *recent_[4] = {};
  std::size_t recentNext_ = 0;
  /// `junction: transition` of junction j's transition i, for the event log.
  std::vector<std::vector<std::string>> labels_;
  /// Buffers kept between events: the loop's, and those of the steps
  /// above (one each, as they call each other).
  struct Buffers {
    std::vector<double> x, sidesA, sidesB, xEvent, dense, y, row, held, heldX, guardX, dependent,
        minus, plus, impulseX, impulseCoef, impulseD, impulseJump, nominal, remapX, remapD,
        slideX, slideXdot, slideAhead, slideNow, standInD, standInJac, standInScale, outputX,
        yAfter, settleIn;
    std::vector<char> standInAgree;
    std::vector<std::uint32_t> timed, cur, next, qBefore, from;
    std::vector<std::vector<std::uint32_t>> path;
    std::vector<std::pair<std::vector<std::uint32_t>, std::vector<double>>> roundStarts;
    std::vector<std::pair<std::size_t, std::size_t>> first;
  } buf_;
  std::map<const Mode *, std::unique_ptr<Integration>> integrations_;
  /// Sliding wrappers by the mode they wrap; mode() gives the wrapper
  /// while one of its kinks slides.
  std::map<const Mode *, std::unique_ptr<SlidingMode>> sliders_;
  /// The junction sliding, if any: the run's FSM states are `q` (mode b's,
  /// the junction's state it switched to), a's differ at `junction`;
  /// mode(q) and modeText(q) give the combination and its text.
  struct Slide {
    bool active = false;
    std::vector<std::uint32_t> q, qa;
    std::size_t junction = 0;
    FilippovMode *mode = nullptr;
    std::string text;
  } slide_;
  /// Combinations by their two modes and surface, kept for the run (their
  /// integrations are keyed by address).
  std::map<std::tuple<const Mode *, const Mode *, std::uint32_t>, std::unique_ptr<FilippovMode>>
      filippov_;
  /// Why the last junction that would have switched straight back could
  /// not slide.
  std::string slideRefused_;
  /// Energy-audit warnings by what they name (elements and mode): their
  /// index in r_.warnings, how many events alike, the first and last time.
  struct Finding {
    std::size_t index = 0, count = 0;
    double first = 0, last = 0;
    /// Where the first event was, and RunEnergyVanished's arguments (the
    /// first storage that lost energy is the diagnostic's element, not
    /// shown apart from the list).
    std::string before, into, removed, stored, lost, junctions, element;
  };
  std::map<std::string, Finding> findings_;
  /// The largest magnitude each slot of the full state has had at output
  /// rows and events: what a jump is measured against.
  std::vector<double> peak_;
  /// The mode and stepper of the last integration segment.
  struct {
    const Mode *mode = nullptr;
    const Stepper *stepper = nullptr;
  } last_;
  EventLocator locator_;
  RemapWorkspace remapWork_;
  /// enabledComparisons() for the FSM states `enabledFor_`.
  std::vector<std::uint32_t> enabled_, enabledFor_;
  bool enabledValid_ = false;
};

} // namespace hbg::runtime
