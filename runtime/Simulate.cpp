//===- runtime/Simulate.cpp - The simulation loop --------------------------===//
//
// Continuous integration in one real mode at a time, with events:
//
//  - after every accepted step the EventLocator looks for the first time
//    inside it at which an enabled guard holds; the step is cut there, so
//    no step is integrated across an event;
//  - at the event, mode iteration (ModeIteration.cpp) switches junctions
//    and remaps the state; the output gets a row before the event and one
//    after it;
//  - integration goes on in the new mode from the event.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>

namespace hbg::runtime {

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

/// A mode's right-hand side as an ODE system. A failed loop solve yields
/// NaN derivatives, which the integrator reports (after retrying shorter
/// steps); the latest failure is kept (the shortest retry's, nearest the
/// run's time), with what was being evaluated.
class ModeOde : public OdeSystem {
public:
  explicit ModeOde(Mode &m) : m_(m), n_(m.stateSlots().size()) {}
  std::size_t numStates() const override { return n_; }
  void rhs(double t, const double *x, double *xdot) override {
    if (!m_.rhs(t, x, xdot)) {
      std::fill(xdot, xdot + n_, std::numeric_limits<double>::quiet_NaN());
      fail("state derivatives");
    }
  }
  const SparsePattern *jacobianPattern() override { return m_.jacobianPattern(); }
  bool jacobian(double t, const double *x, double *values, double *dfdt) override {
    if (m_.jacobian(t, x, values, dfdt))
      return true;
    fail("Jacobian of the state derivatives");
    return false;
  }
  JacobianConstancy jacobianConstancy() override { return m_.jacobianConstancy(); }
  bool failed() const { return failed_; }
  const LoopFailure &failure() const { return failure_; }
  /// What failed: "state derivatives" or their Jacobian.
  const char *what() const { return what_; }
  /// Forgets a failure that the integrator recovered from (a trial step
  /// retried shorter): called after each accepted step that met one.
  void clearFailure() { failed_ = false; }

private:
  void fail(const char *what) {
    failure_ = m_.failure();
    what_ = what;
    failed_ = true;
  }
  Mode &m_;
  std::size_t n_;
  LoopFailure failure_;
  const char *what_ = "";
  bool failed_ = false;
};

struct Run::Integration {
  std::unique_ptr<ModeOde> ode;
  std::unique_ptr<Stepper> stepper;
};

Run::Run(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
         RunRecord &record)
    : sys_(system), sw_(system.switching()), o_(opts), r_(record), X_(x0),
      q_(opts.initialModes.empty() ? sw_.initialStates() : opts.initialModes), peak_(x0.size()) {
  if (q_.size() != sw_.junctions().size())
    throw std::invalid_argument("the run's initial modes name " + std::to_string(q_.size()) +
                                " junctions; the model has " +
                                std::to_string(sw_.junctions().size()));
  for (std::size_t i = 0; i < x0.size(); ++i)
    peak_[i] = std::abs(x0[i]);
  for (const Junction &j : sw_.junctions()) {
    labels_.emplace_back();
    for (const Transition &t : j.transitions)
      labels_.back().push_back(j.name + ": " + t.text);
  }
}

Run::ModeEntry &Run::entry(const std::vector<std::uint32_t> &q) {
  // One state per junction: comparing them in place beats memcmp's call.
  auto same = [&](const std::vector<std::uint32_t> &a) {
    if (a.size() != q.size())
      return false;
    for (std::size_t j = 0; j < a.size(); ++j)
      if (a[j] != q[j])
        return false;
    return true;
  };
  for (ModeEntry *e : recent_)
    if (e && same(*e->q))
      return *e;
  auto known = modes_.find(q);
  if (known == modes_.end()) {
    known = modes_.emplace(q, ModeEntry{}).first;
    known->second.text = sw_.modeText(q);
    known->second.q = &known->first;
  }
  recent_[recentNext_++ % std::size(recent_)] = &known->second;
  return known->second;
}

SlidingMode *Run::sliderOf(ModeEntry &e) {
  // Wrappers are made once and kept for the run.
  if (!e.slider && e.mode) {
    auto known = sliders_.find(e.mode);
    if (known != sliders_.end())
      e.slider = known->second.get();
  }
  return e.slider;
}

const std::string &Run::modeText(const std::vector<std::uint32_t> &q) {
  if (slide_.active && q == slide_.q)
    return slide_.text;
  ModeEntry &e = entry(q);
  SlidingMode *slider = sliderOf(e);
  if (!slider || !slider->active())
    return e.text;
  const SlidingMode &s = *slider;
  std::string kinks;
  for (std::size_t k : s.kinks())
    kinks += (kinks.empty() ? "" : ", ") + e.mode->kinkText(k);
  e.sliding = e.text + (e.text.empty() ? "" : ", ") + "sliding(" + kinks + ")";
  return e.sliding;
}

Mode &Run::mode(const std::vector<std::uint32_t> &q) {
  if (slide_.active && q == slide_.q)
    return *slide_.mode;
  ModeEntry &e = entry(q);
  if (e.mode) {
    SlidingMode *slider = sliderOf(e);
    if (slider && slider->active())
      return *slider;
    return *e.mode;
  }
  std::string why;
  Mode *m = sys_.mode(q, why);
  if (!m) {
    while (!why.empty() && why.back() == '\n')
      why.pop_back();
    throw RunError(DiagKind::RunModeUnavailable, t_, modeText(q_), {DiagArg::mode(e.text), why});
  }
  e.mode = m;
  return *m;
}

SlidingMode &Run::slider(Mode &m) {
  if (auto *s = dynamic_cast<SlidingMode *>(&m))
    return *s;
  std::unique_ptr<SlidingMode> &s = sliders_[&m];
  if (!s)
    s = std::make_unique<SlidingMode>(m, sw_.numComparisons());
  return *s;
}

Run::Integration &Run::integration(Mode &m) {
  std::unique_ptr<Integration> &in = integrations_[&m];
  if (!in) {
    in = std::make_unique<Integration>();
    in->ode = std::make_unique<ModeOde>(m);
    in->stepper = makeStepper(*in->ode, o_);
  }
  return *in;
}

std::vector<double> Run::gather(const Mode &m) const {
  std::vector<double> x;
  gather(m, x);
  return x;
}

void Run::gather(const Mode &m, std::vector<double> &x) const {
  x.clear();
  for (std::uint32_t s : m.stateSlots())
    x.push_back(X_[s]);
}

void Run::tally(const Stepper &s) {
  r_.steps += s.acceptedSteps();
  r_.rejectedSteps += s.rejectedSteps();
  r_.rhsCalls += s.rhsCalls();
  r_.jacobianCalls += s.jacobianCalls();
  r_.factorisations += s.factorisations();
}

RunError loopError(const LoopFailure &f, const Mode &m, const char *what,
                   const std::string *evaluated) {
  // The run places the error in the mode it was in (Run::locate); a mode
  // an event passes through or enters is named here.
  std::string of = std::string("the ") + what;
  if (evaluated && !evaluated->empty())
    of += " of mode `" + *evaluated + "`";
  // A Mode without loops to name (one written by hand) says only why.
  DiagArg loops = f.loops.empty() ? DiagArg("its equations") : DiagArg::loop(f.loops);
  return RunError(DiagKind::RunLoopFailed, f.time, m.name(), {f.reason, loops, of});
}

void call(bool ok, Mode &m, const char *what, const std::string *evaluated) {
  if (!ok)
    throw loopError(m.failure(), m, what, evaluated);
}

void Run::complete(Mode &m, const double *x) {
  const std::vector<std::uint32_t> &slots = m.stateSlots();
  for (std::size_t i = 0; i < slots.size(); ++i)
    X_[slots[i]] = x[i];
  if (m.dependentSlots().empty())
    return;
  std::vector<double> &d = buf_.dependent;
  d.resize(m.dependentSlots().size());
  call(m.dependent(t_, x, d.data()), m, "dependent storage");
  for (std::size_t k = 0; k < d.size(); ++k)
    if (m.dependentSlots()[k] != kNoSlot)
      X_[m.dependentSlots()[k]] = d[k];
  // A mode whose ideal conductors join sources in parallel is real while
  // the sources agree; where they stop agreeing, the flow between them is
  // not determined.
  if (!m.shortCircuit().empty()) {
    int k = disagreeing(m, t_, x);
    if (k >= 0)
      throw RunError(DiagKind::RunSourcesDisagree, t_, m.name(),
                     {d[std::size_t(k)], m.shortCircuit()});
  }
}

void Run::outputsNow(std::vector<double> &y) {
  Mode &m = mode(q_);
  gather(m, buf_.outputX);
  y.resize(sys_.numOutputs());
  call(m.outputs(t_, buf_.outputX.data(), y.data()), m, "outputs");
}

int Run::disagreeing(Mode &m, double t, const double *x) {
  const std::vector<char> &agree = standInsAgree(m, t, x);
  for (std::size_t k = 0; k < agree.size(); ++k)
    if (m.dependentSlots()[k] == kNoSlot && !agree[k])
      return int(k);
  return -1;
}

const std::vector<char> &Run::standInsAgree(Mode &m, double t, const double *x) {
  // A stand-in's dependent value is how far the rest of the network
  // pushes its source from the source's value: zero to rounding of the
  // terms that form it where the sources agree.
  const std::vector<std::uint32_t> &dep = m.dependentSlots();
  std::size_t n = m.stateSlots().size(), nd = dep.size();
  std::vector<double> &d = buf_.standInD, &jac = buf_.standInJac;
  std::vector<double> &scale = buf_.standInScale;
  std::vector<char> &agree = buf_.standInAgree;
  d.resize(nd);
  jac.resize(nd * n);
  scale.assign(nd, 1.0);
  agree.assign(nd, 0);
  call(m.dependent(t, x, d.data()), m, "dependent storage");
  if (n > 0)
    call(m.dependentJacobian(t, x, jac.data()), m, "dependent storage");
  for (std::size_t k = 0; k < nd; ++k) {
    if (dep[k] != kNoSlot)
      continue;
    for (std::size_t i = 0; i < n; ++i)
      scale[k] += std::abs(jac[k * n + i] * x[i]);
    agree[k] = std::abs(d[k]) <= 1e-10 * scale[k];
  }
  return agree;
}

void Run::traceSegment(Mode &m) {
  RunTrace &trace = *o_.trace;
  if (slide_.active || sliding(q_))
    trace.unsupported = "a junction or a kink sliding on its surface";
  if (sys_.sampled())
    trace.unsupported = "the updates of discrete values (`discrete`) at the ticks of their clocks";
  RunTrace::Segment seg;
  seg.mode = &m;
  seg.t0 = seg.t1 = t_;
  seg.X0 = X_;
  for (std::size_t k = 0; k < m.numKinks(); ++k)
    seg.branches.push_back(m.branch(k));
  if (sys_.numHeld() > 0)
    seg.held = buf_.held;
  trace.order.push_back({false, trace.segments.size()});
  trace.segments.push_back(std::move(seg));
}

void Run::holdValues(Mode &m) {
  if (sys_.numHeld() == 0)
    return;
  gather(m, buf_.heldX);
  buf_.held.resize(sys_.numHeld());
  call(m.held(t_, buf_.heldX.data(), buf_.held.data()), m, "held values");
  sys_.setHeld(buf_.held.data());
}

void Run::discreteValues(std::vector<double> &out) const {
  const auto &d = sys_.discretes();
  out.resize(d.size());
  for (std::size_t i = 0; i < d.size(); ++i)
    out[i] = d[i].second < buf_.held.size() ? buf_.held[d[i].second] : 0.0;
}

bool Run::settleEdges(Mode &m) {
  std::int64_t slot = sys_.settleSlot();
  if (slot < 0)
    return false;
  std::size_t s = std::size_t(slot);
  // The held function's second call: the values held as they are, with
  // `settle` 1 (System::settleSlot).
  std::vector<double> &in = buf_.settleIn;
  in = buf_.held;
  in.resize(sys_.numHeld(), 0.0);
  in[s] = 1;
  sys_.setHeld(in.data());
  gather(m, buf_.heldX);
  buf_.held.resize(sys_.numHeld());
  call(m.held(t_, buf_.heldX.data(), buf_.held.data()), m, "held values");
  bool fired = buf_.held[s + 1] > 0.5;
  buf_.held[s] = buf_.held[s + 1] = 0;
  sys_.setHeld(buf_.held.data());
  return fired;
}

void Run::guardSides(Mode &m, std::vector<double> &sides, const std::string *evaluated) {
  sides.resize(2 * (sw_.numComparisons() + m.numKinks()));
  if (sides.empty())
    return;
  gather(m, buf_.guardX);
  call(m.guards(t_, buf_.guardX.data(), sides.data()), m, "guards", evaluated);
}

void Run::sample(Mode &m, double t, const double *x, const std::vector<double> *given) {
  if (!m.shortCircuit().empty()) {
    // No row from a mode whose sources stopped agreeing (complete()).
    int k = disagreeing(m, t, x);
    if (k >= 0)
      throw RunError(DiagKind::RunSourcesDisagree, t, m.name(),
                     {buf_.standInD[std::size_t(k)], m.shortCircuit()});
  }
  std::size_t ny = sys_.numOutputs();
  std::vector<double> &y = buf_.y;
  if (given) {
    y = *given;
  } else {
    y.resize(ny);
    call(m.outputs(t, x, y.data()), m, "outputs");
  }
  for (std::size_t i = 0; i < ny; ++i)
    if (!std::isfinite(y[i]))
      throw RunError(DiagKind::RunOutputNotFinite, t, m.name(),
                     {DiagArg::element(sys_.outputNames()[i])});
  if (o_.onRow) {
    std::vector<double> &row = buf_.row;
    row.resize(ny + 1);
    row[0] = t;
    std::copy(y.begin(), y.end(), row.begin() + 1);
    o_.onRow(row.data());
  } else {
    r_.columns[0].push_back(t);
    for (std::size_t i = 0; i < ny; ++i)
      r_.columns[i + 1].push_back(y[i]);
  }
  ++r_.rows;
  lastRowTime_ = t;
  const std::vector<std::uint32_t> &slots = m.stateSlots();
  for (std::size_t k = 0; k < slots.size(); ++k)
    peak_[slots[k]] = std::max(peak_[slots[k]], std::abs(x[k]));
}

const std::vector<std::uint32_t> &Run::enabledComparisons(const Mode &m) {
  if (!enabledValid_ || enabledFor_ != q_) {
    // Computed once per FSM states and number of kinks (a slide's mode
    // may have others), and kept with the states' entry.
    ModeEntry &e = entry(q_);
    if (e.enabledKinks != m.numKinks()) {
      e.enabled = sw_.comparisonsFrom(q_);
      for (std::size_t k = 0; k < m.numKinks(); ++k)
        e.enabled.push_back(static_cast<std::uint32_t>(sw_.numComparisons() + k));
      e.enabledKinks = m.numKinks();
    }
    enabled_ = e.enabled;
    enabledFor_ = q_;
    enabledValid_ = true;
  }
  return enabled_;
}

void Run::checkCrawl(Mode &m, const std::vector<double> &x) {
  // Events that follow each other closer than rounding noise in t, many
  // times in a row: a guard that holds again right after its event (one
  // that reads `pre(time)`, say), or a kink whose argument hovers at zero.
  double span = o_.tEnd - o_.tStart;
  bool tiny = t_ - lastEventTime_ <= 1e-12 * std::max(std::abs(t_), span);
  lastEventTime_ = t_;
  crawl_ = tiny ? crawl_ + 1 : 0;
  const std::size_t kCrawl = 1000;
  if (crawl_ < kCrawl)
    return;
  std::vector<double> sides(2 * (sw_.numComparisons() + m.numKinks()));
  call(m.guards(t_, x.data(), sides.data()), m, "guards");
  std::string what;
  for (std::size_t j = 0; j < sw_.junctions().size(); ++j) {
    int i = sw_.enabledTransition(j, q_[j], sides.data(), sides.data());
    if (i >= 0)
      what += (what.empty() ? "`" : ", `") + sw_.junctions()[j].name + ": " +
              sw_.junctions()[j].transitions[i].text + "`";
  }
  for (std::size_t k = 0; k < m.numKinks(); ++k) {
    std::size_t c = sw_.numComparisons() + k;
    if (comparisonReached(CompareOp::LessEqual, sides[2 * c], sides[2 * c + 1]))
      what += (what.empty() ? "`" : ", `") + m.kinkText(k) + "`";
  }
  throw RunError(DiagKind::RunEventCrawl, t_, m.name(),
                 {kCrawl, what.empty() ? "guards that hold again right after their event" : what});
}

void Run::simulate() {
  double span = o_.tEnd - o_.tStart;
  if (!(span >= 0))
    throw RunError(DiagKind::RunEndBeforeStart, kNoTime, "",
                   {DiagArg::time(o_.tEnd), DiagArg::time(o_.tStart)});
  double dtOut = o_.dtOut > 0 ? o_.dtOut : (span > 0 ? span / 100 : 1);
  grid_.emplace(o_.tStart, o_.tEnd, dtOut);
  next_ = grid_->at(0);
  sys_.runSpan(o_.tStart, o_.tEnd);
  start();
  advance(o_.tEnd);
}

void Run::start() {
  const std::vector<std::string> &names = sys_.stateNames();
  for (std::size_t i = 0; i < X_.size(); ++i)
    if (!std::isfinite(X_[i]))
      throw RunError(DiagKind::RunInitialNotFinite, kNoTime, "", {DiagArg::element(names[i])});
  t_ = o_.tStart;
  {
    // Dependent storage follows the initial mode and the held values at
    // the start: discrete values their initial values, or their updates
    // where a clock ticks at the start time (a system keeps its held
    // values from run to run: they start from 0, `started` among them);
    // iterateModes() holds the values of `pre` here again.
    Mode &m = mode(q_);
    if (sys_.numHeld() > 0) {
      buf_.held.assign(sys_.numHeld(), 0.0);
      sys_.setHeld(buf_.held.data());
      chooseBranches(m);
      holdValues(m);
    }
    chooseBranches(m);
    std::vector<double> x = gather(m);
    complete(m, x.data());
  }
  // An event at the start time: its row before the event comes first.
  eventRow_ = iterateModes();

  const IntegratorOptions &io = o_;
  bool adaptive = isAdaptive(io.method);
  if (!(io.maxStep > 0) || (!adaptive && !(io.step > 0 && std::isfinite(io.step))))
    throw RunError(DiagKind::RunStepNotPositive, kNoTime, "");
}

void Run::refresh() {
  // Dependent storage and kinks follow the new values at once; guards that
  // now hold make an event here.
  yAfterKept_ = false;
  Mode &m = mode(q_);
  chooseBranches(m);
  std::vector<double> x = gather(m);
  complete(m, x.data());
  iterateModes();
}

void Run::setState(const double *X) {
  yAfterKept_ = false;
  std::copy(X, X + X_.size(), X_.begin());
  Mode &m = mode(q_);
  std::vector<double> x = gather(m);
  complete(m, x.data());
}

void Run::derivatives(double *dX) {
  Mode &m = mode(q_);
  std::vector<double> x = gather(m), xdot(x.size());
  call(m.rhs(t_, x.data(), xdot.data()), m, "derivatives");
  std::fill(dX, dX + X_.size(), 0.0);
  const std::vector<std::uint32_t> &slots = m.stateSlots(), &dep = m.dependentSlots();
  for (std::size_t i = 0; i < slots.size(); ++i)
    dX[slots[i]] = xdot[i];
  if (dep.empty())
    return;
  // d/dt d(t, x(t)) = dd/dx x' + dd/dt, the last by central differences.
  std::size_t n = x.size(), nd = dep.size();
  std::vector<double> jac(nd * n), up(nd), down(nd);
  call(m.dependentJacobian(t_, x.data(), jac.data()), m, "dependent storage");
  double h = 1e-6 * std::max(1.0, std::abs(t_));
  call(m.dependent(t_ + h, x.data(), up.data()), m, "dependent storage");
  call(m.dependent(t_ - h, x.data(), down.data()), m, "dependent storage");
  for (std::size_t k = 0; k < nd; ++k) {
    if (dep[k] == kNoSlot)
      continue;
    double v = (up[k] - down[k]) / (2 * h);
    for (std::size_t i = 0; i < n; ++i)
      v += jac[k * n + i] * xdot[i];
    dX[dep[k]] = v;
  }
}

void Run::indicators(double *z, std::size_t n) {
  Mode &m = mode(q_);
  std::vector<double> sides;
  guardSides(m, sides);
  // The margin by which each comparison holds (comparisonMargin): it
  // crosses zero where the run's own event location puts the event.
  std::fill(z, z + n, 1.0);
  std::size_t nc = sw_.numComparisons();
  for (std::uint32_t k : enabledComparisons(m))
    if (k < n) {
      CompareOp op = k < nc ? sw_.op(k) : CompareOp::LessEqual;
      z[k] = comparisonMargin(op, sides[2 * k], sides[2 * k + 1]);
      // A master takes a sign change for an event, and a zero for neither
      // side: on its threshold (just after an event), the side it holds on.
      if (z[k] == 0)
        z[k] = comparisonHolds(op, sides[2 * k], sides[2 * k + 1])
                   ? std::numeric_limits<double>::min()
                   : -std::numeric_limits<double>::min();
    }
  if (!(t_ == zSeenTime_))
    zBefore_ = zSeen_;
  zSeen_.assign(z, z + n);
  zSeenTime_ = t_;
}

double Run::nextTimeEvent(double horizon) {
  Mode &m = mode(q_);
  const std::vector<std::uint32_t> &enabled = enabledComparisons(m);
  std::vector<std::uint32_t> timed;
  for (std::uint32_t k : m.timeComparisons())
    if (std::find(enabled.begin(), enabled.end(), k) != enabled.end())
      timed.push_back(k);
  if (timed.empty() || !(horizon > t_))
    return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = gather(m);
  double clearTo = t_;
  return locator_.nextTimeEvent(m, sw_, timed, t_, horizon, x, clearTo);
}

bool Run::eventUpdate() {
  // An equality whose indicator changed sign since the step before: the
  // master put the event past the crossing, by up to its step, where the
  // equality no longer holds to rounding; it was reached.
  reachedEqualities_.clear();
  std::size_t nc = sw_.numComparisons();
  for (std::size_t k = 0; k < nc && k < zSeen_.size() && k < zBefore_.size(); ++k)
    if (sw_.op(k) == CompareOp::Equal && (zSeen_[k] > 0) != (zBefore_[k] > 0))
      reachedEqualities_.push_back(std::uint32_t(k));
  Mode &m = mode(q_);
  chooseBranches(m);
  bool changed = iterateModes();
  reachedEqualities_.clear();
  return changed;
}

void Run::outputs(double *y) {
  Mode &m = mode(q_);
  std::vector<double> x = gather(m);
  call(m.outputs(t_, x.data(), y), m, "outputs");
}

void Run::advance(double tStop) {
  if (!(tStop >= t_))
    throw RunError(DiagKind::RunAdvanceBackwards, t_, modeText(q_), {DiagArg::time(tStop)});
  const IntegratorOptions &io = o_;
  bool adaptive = isAdaptive(io.method);
  double span = std::max(o_.tEnd - o_.tStart, tStop - o_.tStart);
  std::size_t &k = k_;
  double &next = next_;
  bool &eventRow = eventRow_;

  for (;;) {
    // What the last stepper's states grew to carries over to other modes.
    if (last_.stepper && last_.stepper->nominal()) {
      const std::vector<std::uint32_t> &slots = last_.mode->stateSlots();
      const double *grown = last_.stepper->nominal();
      for (std::size_t i = 0; i < slots.size(); ++i)
        peak_[slots[i]] = std::max(peak_[slots[i]], grown[i]);
    }
    Mode &m = mode(q_);
    std::vector<double> &x = buf_.x;
    gather(m, x);
    // The mode's ODE and stepper, kept for the next time the run enters it.
    Integration &in = integration(m);
    ModeOde &ode = *in.ode;
    // The row after an event; grid times up to it were sampled before it,
    // so only the start can still have a grid time here.
    if (eventRow && grid_)
      sample(m, t_, x.data(), yAfterKept_ ? &buf_.yAfter : nullptr);
    yAfterKept_ = false;
    while (next <= t_) {
      sample(m, t_, x.data());
      next = next == o_.tEnd ? std::numeric_limits<double>::infinity() : grid_->at(++k);
    }
    if (t_ >= tStop) {
      r_.finalState = X_;
      r_.finalMode = modeText(q_);
      r_.finalModes = q_;
      return;
    }
    Stepper *stepper = in.stepper.get();
    stepper->reset(t_, x.data());
    if (o_.trace)
      traceSegment(m);
    // Each state's nominal magnitude: the model's, grown to the largest
    // value the state has had in any mode so far.
    {
      const std::vector<std::uint32_t> &slots = m.stateSlots();
      std::vector<double> &nominal = buf_.nominal;
      nominal.resize(slots.size());
      for (std::size_t i = 0; i < slots.size(); ++i)
        nominal[i] = std::max(slots[i] < o_.nominal.size() ? o_.nominal[slots[i]] : 0.0,
                              peak_[slots[i]]);
      stepper->setNominal(nominal.data());
      last_ = {&m, stepper};
    }
    // After an event, go on with the step size reached before it.
    stepper->proposeStep(lastStep_);
    std::vector<double> &sidesA = buf_.sidesA, &sidesB = buf_.sidesB, &xEvent = buf_.xEvent,
                        &dense = buf_.dense;
    guardSides(m, sidesA);
    sidesB.resize(sidesA.size());
    xEvent.resize(x.size());
    dense.resize(x.size());
    bool event = false;
    std::size_t tinySteps = 0;
    // Time events ahead: the enabled comparisons of time only, the next
    // time one of them changes, and how far none is known to.
    std::vector<std::uint32_t> &timed = buf_.timed;
    timed.clear();
    for (std::uint32_t k : m.timeComparisons()) {
      const std::vector<std::uint32_t> &en = enabledComparisons(m);
      if (std::find(en.begin(), en.end(), k) != en.end())
        timed.push_back(k);
    }
    double timeEvent = std::numeric_limits<double>::quiet_NaN(), searchedTo = t_;
    // The time comparisons keep their values at steadyFrom over
    // [steadyFrom, steadyTo), and at steadyTo too when steadyClosed.
    double steadyFrom = t_, steadyTo = t_;
    bool steadyClosed = false;
    const std::vector<std::uint32_t> none;
    while (!event) {
      if (r_.steps + r_.rejectedSteps + stepper->acceptedSteps() + stepper->rejectedSteps() >=
          io.maxSteps)
        throw RunError(DiagKind::RunTooManySteps, stepper->t(), m.name(), {io.maxSteps});
      double limit = adaptive ? tStop : std::min(next, tStop);
      if (adaptive && !timed.empty()) {
        // Look a little beyond the step the integrator proposes, and end
        // the step on the first time event there.
        double t0 = stepper->t();
        if (!(timeEvent > t0)) {
          double h = std::min(stepper->proposedStep(), io.maxStep);
          double reach = h > 0 ? std::min(tStop, t0 + 2 * h) : tStop;
          double from = std::max(t0, searchedTo);
          if (reach > from) {
            auto start = std::chrono::steady_clock::now();
            double clearTo = from;
            timeEvent = locator_.nextTimeEvent(m, sw_, timed, from, reach, x, clearTo);
            r_.eventSearchSeconds += secondsSince(start);
            if (std::isnan(timeEvent))
              searchedTo = reach;
            if (!(steadyClosed && from == steadyTo))
              steadyFrom = from;
            steadyTo = clearTo;
            steadyClosed = std::isnan(timeEvent) || clearTo < timeEvent;
          }
        }
        if (timeEvent > t0)
          limit = std::min(limit, timeEvent);
      }
      StepStatus st = stepper->step(limit);
      if (st == StepStatus::Ok && ode.failed())
        ode.clearFailure(); // a trial failed, a shorter one succeeded
      if (st != StepStatus::Ok) {
        tally(*stepper);
        if (ode.failed())
          throw loopError(ode.failure(), m, ode.what());
        if (st == StepStatus::StepSizeUnderflow) {
          // Driven down by a state's error, or (a fixed step, or one
          // bounded by --max-step before any error estimate) by the
          // settings.
          std::size_t i = stepper->errorLeader();
          if (!adaptive || i >= x.size())
            throw RunError(DiagKind::RunStepTooSmall, stepper->t(), m.name());
          // A state judged against a value that vanishes with the step
          // needs a scale; one judged against its scale, a smoother or
          // stiffer method.
          ScaleCollapse why = stepper->scaleCollapse();
          const double *nominal = stepper->nominal();
          double scale = nominal ? nominal[i] : 0;
          if (why.vanishing && why.leader == i)
            throw RunError(DiagKind::RunStepUnderflowScale, stepper->t(), m.name(),
                           {DiagArg::element(m.stateName(i)), stepper->x()[i], why.floor});
          throw RunError(DiagKind::RunStepUnderflow, stepper->t(), m.name(),
                         {DiagArg::element(m.stateName(i)), stepper->x()[i], scale});
        }
        const NonFiniteInfo &bad = stepper->nonFinite();
        if (bad.jacobian && bad.index < x.size())
          throw RunError(DiagKind::RunJacobianNotFinite, bad.t, m.name(),
                         {DiagArg::element(m.stateName(bad.index))});
        // A Jacobian that could not be evaluated failed a loop (ode.failed()
        // above): what is left is the stiff method's matrix.
        if (bad.jacobian || bad.index >= x.size())
          throw RunError(DiagKind::RunStiffSingular, bad.t, m.name());
        throw RunError(bad.derivative ? DiagKind::RunDerivativeNotFinite
                                      : DiagKind::RunStateNotFinite,
                       bad.t, m.name(), {DiagArg::element(m.stateName(bad.index))});
      }
      double tEnd = stepper->t();
      // Steps that stay below 1e-12 of t, many in a row: the integrator
      // crawls (a kink or a stiff mode it cannot pass).
      const std::size_t kTinySteps = 1000;
      tinySteps = adaptive && stepper->t() - stepper->tPrev() < 1e-12 * std::max(std::abs(tEnd), span)
                      ? tinySteps + 1
                      : 0;
      if (tinySteps >= kTinySteps) {
        std::size_t i = stepper->errorLeader();
        if (i >= x.size()) // no state to blame: the settings hold the steps down
          throw RunError(DiagKind::RunStepTooSmall, tEnd, m.name());
        throw RunError(DiagKind::RunTinySteps, tEnd, m.name(),
                       {kTinySteps, DiagArg::element(m.stateName(i))});
      }
      double tEvent = std::numeric_limits<double>::quiet_NaN();
      const std::vector<std::uint32_t> &enabled = enabledComparisons(m);
      if (!enabled.empty()) {
        call(m.guards(tEnd, stepper->x().data(), sidesB.data()), m, "guards");
        auto start = std::chrono::steady_clock::now();
        bool steady = !timed.empty() && steadyFrom <= stepper->tPrev() && tEnd <= steadyTo;
        tEvent = locator_.locate(*stepper, m, sw_, q_, enabled, sidesA, sidesB, xEvent,
                                 steady ? timed : none);
        r_.eventSearchSeconds += secondsSince(start);
      }
      if (!std::isnan(tEvent)) {
        tEnd = tEvent;
        event = true;
      }
      recordSpan(r_.methods, stepper->method(), stepper->tPrev(), tEnd);
      if (o_.trace) {
        o_.trace->segments.back().t1 = tEnd;
        if (o_.trace->onStep)
          o_.trace->onStep(m, *stepper, stepper->tPrev(), tEnd);
      }
      // Samples up to the end of the step (or the event).
      while (next <= tEnd) {
        if (next == stepper->t()) {
          sample(m, next, stepper->x().data());
        } else {
          stepper->interpolate(next, dense.data());
          sample(m, next, dense.data());
        }
        next = next == o_.tEnd ? std::numeric_limits<double>::infinity() : grid_->at(++k);
      }
      t_ = tEnd;
      if (o_.onStep) {
        Progress p{t_, o_.tStart, o_.tEnd, r_.steps + stepper->acceptedSteps(),
                   r_.events.size() + r_.eventsDropped};
        if (!o_.onStep(p)) {
          tally(*stepper);
          r_.stopped = true;
          throw RunError(DiagKind::RunStopped, t_, m.name());
        }
      }
      if (event) {
        complete(m, xEvent.data());
      } else {
        complete(m, stepper->x().data());
        std::swap(sidesA, sidesB);
        if (t_ >= tStop)
          break;
      }
    }
    tally(*stepper);
    lastStep_ = stepper->proposedStep();
    if (!event) {
      r_.finalState = X_;
      r_.finalMode = modeText(q_);
      r_.finalModes = q_;
      return;
    }
    // The event: the state before it (sampled unless a grid point fell on
    // it), then mode iteration and remapping; the row after is sampled in
    // the new mode at the top of the loop.
    // X holds xEvent in m's slots (complete()): the row's outputs are the
    // event's outputs before.
    bool sampled = grid_ && (r_.rows == 0 || lastRowTime_ != t_);
    if (sampled)
      sample(m, t_, xEvent.data());
    checkCrawl(m, xEvent);
    eventRow = iterateModes(sampled ? &buf_.y : nullptr);
  }
}

void simulate(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
              RunRecord &record) {
  record.columns.assign(1 + system.numOutputs(), {});
  std::optional<Run> run;
  try {
    run.emplace(system, x0, opts, record);
    run->simulate();
  } catch (const RunError &e) {
    record.fail(run ? run->locate(e.diagnostic) : e.diagnostic);
  }
}

SteppedRun::SteppedRun(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
                       RunRecord &record)
    : run_(std::make_unique<Run>(system, x0, opts, record)), record_(record) {
  record.columns.assign(1 + system.numOutputs(), {});
  system.runSpan(opts.tStart, std::numeric_limits<double>::infinity());
}

SteppedRun::~SteppedRun() = default;

template <class F> bool SteppedRun::guarded(F &&f) {
  if (!record_.error.empty())
    return false;
  try {
    f();
    return true;
  } catch (const RunError &e) {
    record_.fail(run_->locate(e.diagnostic));
  } catch (const std::exception &e) {
    record_.error = std::string("internal error: ") + e.what();
  } catch (...) {
    record_.error = "internal error";
  }
  return false;
}

bool SteppedRun::start() {
  return guarded([&] { run_->start(); });
}
bool SteppedRun::advance(double t) {
  return guarded([&] { run_->advance(t); });
}
bool SteppedRun::refresh() {
  return guarded([&] { run_->refresh(); });
}
bool SteppedRun::outputs(double *y) {
  return guarded([&] { run_->outputs(y); });
}
void SteppedRun::setTime(double t) { run_->setTime(t); }
bool SteppedRun::setState(const double *X) {
  return guarded([&] { run_->setState(X); });
}
bool SteppedRun::derivatives(double *dX) {
  return guarded([&] { run_->derivatives(dX); });
}
bool SteppedRun::indicators(double *z, std::size_t n) {
  return guarded([&] { run_->indicators(z, n); });
}
bool SteppedRun::eventUpdate(bool &modeChanged) {
  return guarded([&] { modeChanged = run_->eventUpdate(); });
}
bool SteppedRun::nextTimeEvent(double horizon, double &t) {
  return guarded([&] { t = run_->nextTimeEvent(horizon); });
}
double SteppedRun::time() const { return run_->time(); }
const std::vector<double> &SteppedRun::state() const { return run_->state(); }
std::string SteppedRun::mode() const { return run_->modeName(); }

} // namespace hbg::runtime
