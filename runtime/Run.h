//===- runtime/Run.h - The state of one simulation run ---------------------===//
//
// Internal to hbg_runtime: what simulate() keeps while it runs, and the
// steps of the loop, each defined in the file of its concept
// (Simulate.cpp, ModeIteration.cpp, Zeno.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/EventLocator.h"
#include "hbg/runtime/Simulate.h"

#include <map>
#include <memory>

namespace hbg::runtime {

class Run {
public:
  Run(System &system, const std::vector<double> &x0, const SimulateOptions &opts,
      RunRecord &record);
  /// The loop; throws RunError.
  void simulate();

private:
  /// The mode of FSM states `q`, compiled on first use.
  Mode &mode(const std::vector<std::uint32_t> &q);
  /// The mode's ODE and stepper, kept for the run.
  struct Integration;
  Integration &integration(Mode &m);
  /// The mode's independent states out of X.
  std::vector<double> gather(const Mode &m) const;
  /// Stores a mode's states into X and computes its dependent storage.
  void complete(Mode &m, const double *x);
  /// Evaluates the held values (`pre`) in `m` at X.
  void holdValues(Mode &m);
  /// Both sides of every guard comparison, in `m` at X.
  std::vector<double> guardSides(Mode &m);
  void sample(Mode &m, double t, const double *x);
  /// Comparisons of the transitions enabled in the current FSM states.
  const std::vector<std::uint32_t> &enabledComparisons();

  /// Mode iteration at t_ from X (ModeIteration.cpp); returns true when
  /// the mode changed (and records the event).
  bool iterateModes();
  void remap(Mode &to, Event &ev);
  std::string cycleText(const Event &ev, const std::vector<std::string> &modes,
                        const std::string &again) const;
  /// Stops the run on too many events or Zeno behaviour (Zeno.cpp).
  void checkZeno();

  System &sys_;
  const Switching &sw_;
  const SimulateOptions &o_;
  RunRecord &r_;
  std::vector<double> X_;
  std::vector<std::uint32_t> q_;
  double t_ = 0;
  std::map<std::vector<std::uint32_t>, Mode *> modes_;
  std::map<const Mode *, std::unique_ptr<Integration>> integrations_;
  EventLocator locator_;
  /// enabledComparisons() for the FSM states `enabledFor_`.
  std::vector<std::uint32_t> enabled_, enabledFor_;
  bool enabledValid_ = false;
};

} // namespace hbg::runtime
