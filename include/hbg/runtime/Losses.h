//===- hbg/runtime/Losses.h - Mean powers and losses over a window ---------===//
//
// Where a switching model's power goes: the mean power each R element
// dissipates and each source delivers over a window of a run (a period of
// the steady state, or [t0, t1] of a transient), integrated over the
// run's accepted steps by Gauss-Legendre quadrature of the dense output,
// and the energy lost at events, which no R element accounts for: at an
// ideal switching instant, the sources' work through the jump minus what
// the storage gained (a capacitor switched across a source at another
// voltage loses C dV^2 / 2).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Simulate.h"
#include "hbg/runtime/System.h"

#include <cstddef>
#include <string>
#include <vector>

namespace hbg::runtime {

/// What a PowerMeter measured over [t0, t1].
struct PowerFigures {
  double t0 = 0, t1 = 0;
  /// The elements (System::powerElements()) and the mean power of each
  /// over the window: dissipated (R) or delivered into the model (sources;
  /// their work through the events' jumps included).
  std::vector<PowerElement> elements;
  std::vector<double> mean;
  /// Events in [t0, t1): how many, the energy they removed from storage
  /// (Event::removed summed), the work the sources did through their
  /// jumps, and the loss at events: that work plus the energy removed,
  /// divided by the window's length (a power). `audited` is false when
  /// some event carried no energy audit (the loss is then that of the
  /// others).
  std::size_t events = 0;
  double removed = 0, sourceWork = 0;
  double eventLoss = 0;
  bool audited = true;
  /// The sums over sources and over R elements of the mean powers.
  double delivered() const;
  double dissipated() const;
  /// The sum of the mean powers of the elements at `at` (indices into
  /// `elements`, as findElements gives them).
  double sumOf(const std::vector<std::size_t> &at) const;
  /// The efficiency OUT/IN (`--efficiency`): the mean power of the
  /// elements `out` names over that of those `in` names, each a list of
  /// element paths separated by commas. NaN, with `error` set (the unknown
  /// name, the closest ones), when a name is not one of `elements`.
  double efficiency(const std::string &out, const std::string &in, std::string &error) const;
};

/// Integrates System::powerElements()' powers over the steps of a run
/// between t0 and t1 and sums the events' losses there. Feed it every
/// accepted step (RunTrace::onStep) and every event (SimulateOptions::
/// onEvent), or let attach() do it.
class PowerMeter {
public:
  PowerMeter(const System &system, double t0, double t1);
  /// The part of [ta, tb] inside the window of a step of `m`, by five-
  /// point Gauss-Legendre quadrature of `s`'s dense output. Throws
  /// RunError when the powers cannot be evaluated.
  void step(Mode &m, const Stepper &s, double ta, double tb);
  /// An event: counted when in [t0, t1). Its sources' work is evaluated
  /// in the mode it entered, at the start of the next step.
  void event(const Event &e);
  /// Sets `o` up to feed this meter: `trace` (which the run then fills;
  /// only its last segment is kept) with onStep, and onEvent after any
  /// the options have.
  void attach(SimulateOptions &o, RunTrace &trace);
  /// The figures (means over the window's length).
  PowerFigures figures() const;

private:
  void settle(Mode &m);
  double t0_, t1_;
  std::vector<PowerElement> elements_;
  std::vector<double> energy_, values_, xs_;
  std::size_t events_ = 0;
  double removed_ = 0, work_ = 0;
  bool audited_ = true;
  /// Events whose sources' work awaits the mode they entered.
  std::vector<Event> pending_;
};

/// The elements a `--efficiency` side names: element paths separated by
/// commas. Empty, with `error` set (the unknown name, the closest ones),
/// when a name is not one of `elements`.
std::vector<std::size_t> findElements(const std::vector<PowerElement> &elements,
                                      const std::string &list, std::string &error);

} // namespace hbg::runtime
