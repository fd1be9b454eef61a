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
#include <cmath>
#include <cstdio>
#include <limits>

namespace hbg::runtime {

std::string timeText(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", t);
  return buf;
}

/// A mode's right-hand side as an ODE system. A failed loop solve yields
/// NaN derivatives, which the integrator reports (after retrying shorter
/// steps); the first failure's reason is kept.
class ModeOde : public OdeSystem {
public:
  explicit ModeOde(Mode &m) : m_(m), n_(m.stateSlots().size()) {}
  std::size_t numStates() const override { return n_; }
  void rhs(double t, const double *x, double *xdot) override {
    if (!m_.rhs(t, x, xdot)) {
      std::fill(xdot, xdot + n_, std::numeric_limits<double>::quiet_NaN());
      if (failure_.empty())
        failure_ = m_.failure();
    }
  }
  const std::string &failure() const { return failure_; }

private:
  Mode &m_;
  std::size_t n_;
  std::string failure_;
};

struct Run::Integration {
  std::unique_ptr<ModeOde> ode;
  std::unique_ptr<Stepper> stepper;
};

Run::Run(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
         RunRecord &record)
    : sys_(system), sw_(system.switching()), o_(opts), r_(record), X_(x0),
      q_(sw_.initialStates()) {}

Mode &Run::mode(const std::vector<std::uint32_t> &q) {
  auto known = modes_.find(q);
  if (known != modes_.end())
    return *known->second;
  std::string why;
  Mode *m = sys_.mode(q, why);
  if (!m) {
    while (!why.empty() && why.back() == '\n')
      why.pop_back();
    throw RunError{"entering mode " + sw_.modeText(q) + " at t = " + timeText(t_) +
                   ", which cannot be analysed:\n" + why};
  }
  modes_.emplace(q, m);
  return *m;
}

Run::Integration &Run::integration(Mode &m) {
  std::unique_ptr<Integration> &in = integrations_[&m];
  if (!in) {
    in = std::make_unique<Integration>();
    in->ode = std::make_unique<ModeOde>(m);
    in->stepper = makeStepper(*in->ode, o_.integrator);
  }
  return *in;
}

std::vector<double> Run::gather(const Mode &m) const {
  std::vector<double> x;
  x.reserve(m.stateSlots().size());
  for (std::uint32_t s : m.stateSlots())
    x.push_back(X_[s]);
  return x;
}

namespace {
void call(bool ok, Mode &m, const char *what) {
  if (!ok)
    throw RunError{m.failure() + " (" + what + (m.name().empty() ? "" : ", mode " + m.name()) +
                   ")"};
}
} // namespace

void Run::complete(Mode &m, const double *x) {
  for (std::size_t i = 0; i < m.stateSlots().size(); ++i)
    X_[m.stateSlots()[i]] = x[i];
  if (m.dependentSlots().empty())
    return;
  std::vector<double> d(m.dependentSlots().size());
  call(m.dependent(t_, x, d.data()), m, "dependent storage");
  for (std::size_t k = 0; k < d.size(); ++k)
    X_[m.dependentSlots()[k]] = d[k];
}

void Run::holdValues(Mode &m) {
  if (sys_.numHeld() == 0)
    return;
  std::vector<double> x = gather(m), h(sys_.numHeld());
  call(m.held(t_, x.data(), h.data()), m, "held values");
  sys_.setHeld(h.data());
}

std::vector<double> Run::guardSides(Mode &m) {
  std::vector<double> sides(2 * sw_.numComparisons());
  if (sides.empty())
    return sides;
  std::vector<double> x = gather(m);
  call(m.guards(t_, x.data(), sides.data()), m, "guards");
  return sides;
}

void Run::sample(Mode &m, double t, const double *x) {
  std::size_t ny = sys_.numOutputs();
  std::vector<double> y(ny);
  call(m.outputs(t, x, y.data()), m, "outputs");
  r_.columns[0].push_back(t);
  for (std::size_t i = 0; i < ny; ++i)
    r_.columns[i + 1].push_back(y[i]);
}

const std::vector<std::uint32_t> &Run::enabledComparisons() {
  if (!enabledValid_ || enabledFor_ != q_) {
    enabled_ = sw_.comparisonsFrom(q_);
    enabledFor_ = q_;
    enabledValid_ = true;
  }
  return enabled_;
}

void Run::simulate() {
  const std::vector<std::string> &names = sys_.stateNames();
  for (std::size_t i = 0; i < X_.size(); ++i)
    if (!std::isfinite(X_[i]))
      throw RunError{"initial value of state `" + names[i] + "` is not finite"};
  double span = o_.tEnd - o_.tStart;
  if (!(span >= 0))
    throw RunError{"end time is before start time"};
  double dtOut = o_.dtOut > 0 ? o_.dtOut : (span > 0 ? span / 100 : 1);
  OutputGrid grid(o_.tStart, o_.tEnd, dtOut);

  t_ = o_.tStart;
  {
    // Dependent storage follows the initial mode; iterateModes() holds the
    // values of `pre` here.
    Mode &m = mode(q_);
    std::vector<double> x = gather(m);
    complete(m, x.data());
  }
  // An event at the start time: its row before the event comes first.
  bool atStartEvent = iterateModes();

  const IntegratorOptions &io = o_.integrator;
  bool adaptive = io.method == Method::DormandPrince;
  if (!(io.maxStep > 0) || (!adaptive && !(io.step > 0 && std::isfinite(io.step))))
    throw RunError{"step sizes must be positive"};
  std::size_t k = 0;
  double next = grid.at(0);
  bool eventRow = atStartEvent; // the last row is an event's "after" row at t_
  double lastStep = 0;

  for (;;) {
    Mode &m = mode(q_);
    std::vector<double> x = gather(m);
    // The mode's ODE and stepper, kept for the next time the run enters it.
    Integration &in = integration(m);
    ModeOde &ode = *in.ode;
    // The row after an event; grid times up to it were sampled before it,
    // so only the start can still have a grid time here.
    if (eventRow)
      sample(m, t_, x.data());
    while (next <= t_) {
      sample(m, t_, x.data());
      next = next == o_.tEnd ? std::numeric_limits<double>::infinity() : grid.at(++k);
    }
    if (t_ >= o_.tEnd)
      return;
    Stepper *stepper = in.stepper.get();
    stepper->reset(t_, x.data());
    // After an event, go on with the step size reached before it.
    stepper->proposeStep(lastStep);
    std::vector<double> sidesA = guardSides(m), sidesB(sidesA.size()), xEvent(x.size()),
                        dense(x.size());
    bool event = false;
    while (!event) {
      if (r_.steps + r_.rejectedSteps + stepper->acceptedSteps() + stepper->rejectedSteps() >=
          io.maxSteps)
        throw RunError{"too many steps (" + std::to_string(io.maxSteps) + ") at t = " +
                       timeText(stepper->t())};
      StepStatus st = stepper->step(adaptive ? o_.tEnd : std::min(next, o_.tEnd));
      if (st != StepStatus::Ok) {
        r_.steps += stepper->acceptedSteps();
        r_.rejectedSteps += stepper->rejectedSteps();
        r_.rhsCalls += stepper->rhsCalls();
        std::string inMode = m.name().empty() ? "" : " in mode " + sw_.modeText(q_);
        if (!ode.failure().empty())
          throw RunError{ode.failure() + (m.name().empty() ? "" : " (mode " + m.name() + ")")};
        if (st == StepStatus::StepSizeUnderflow)
          throw RunError{"step size underflow at t = " + timeText(stepper->t()) + inMode};
        const NonFiniteInfo &bad = stepper->nonFinite();
        throw RunError{std::string(bad.derivative ? "the derivative of " : "") + "state `" +
                       m.stateName(bad.index) + "` is not finite at t = " + timeText(bad.t) +
                       inMode};
      }
      double tEnd = stepper->t();
      double tEvent = std::numeric_limits<double>::quiet_NaN();
      const std::vector<std::uint32_t> &enabled = enabledComparisons();
      if (!enabled.empty()) {
        call(m.guards(tEnd, stepper->x().data(), sidesB.data()), m, "guards");
        tEvent = locator_.locate(*stepper, m, sw_, q_, enabled, sidesA, sidesB, xEvent);
      }
      if (!std::isnan(tEvent)) {
        tEnd = tEvent;
        event = true;
      }
      // Samples up to the end of the step (or the event).
      while (next <= tEnd) {
        if (next == stepper->t()) {
          sample(m, next, stepper->x().data());
        } else {
          stepper->interpolate(next, dense.data());
          sample(m, next, dense.data());
        }
        next = next == o_.tEnd ? std::numeric_limits<double>::infinity() : grid.at(++k);
      }
      t_ = tEnd;
      if (event) {
        complete(m, xEvent.data());
      } else {
        complete(m, stepper->x().data());
        std::swap(sidesA, sidesB);
        if (t_ >= o_.tEnd)
          break;
      }
    }
    r_.steps += stepper->acceptedSteps();
    r_.rejectedSteps += stepper->rejectedSteps();
    r_.rhsCalls += stepper->rhsCalls();
    lastStep = stepper->proposedStep();
    if (!event)
      return;
    // The event: the state before it (sampled unless a grid point fell on
    // it), then mode iteration and remapping; the row after is sampled in
    // the new mode at the top of the loop.
    if (r_.columns[0].empty() || r_.columns[0].back() != t_)
      sample(m, t_, xEvent.data());
    eventRow = iterateModes();
  }
}

void simulate(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
              RunRecord &record) {
  record.columns.assign(1 + system.numOutputs(), {});
  try {
    Run(system, x0, opts, record).simulate();
  } catch (const RunError &e) {
    record.error = e.message;
  }
}

} // namespace hbg::runtime
