//===- compiler/driver/Hybrid.h - Simulating switched models --------------===//
#pragma once

#include "ModelImpl.h"

#include "hbg/runtime/Integrator.h"

namespace hbg {

/// One run of a switched model (see Hybrid.cpp for the algorithm). The
/// full state X holds every storage element and integrator; a mode
/// integrates its independent states and computes its dependent storage.
class HybridRun {
public:
  HybridRun(const Model &model, const SimulationOptions &opts,
            const std::map<std::string, double> &overrides, Result &result);
  /// Fills the result; failures end up in Result::error with the
  /// trajectory and events up to them.
  void run();

private:
  void simulate();
  /// The compiled code of the mode of FSM states `q` (compiled on first use).
  std::shared_ptr<ModeCode> mode(const std::vector<std::uint32_t> &q);
  /// The mode's evaluator for this run (warm-starting its Newton solves).
  Evaluator &evaluator(const ModeCode &mc);
  /// The mode's ODE and stepper for this run.
  struct Integration {
    std::unique_ptr<EvaluatorOde> ode;
    std::unique_ptr<runtime::Stepper> stepper;
  };
  Integration &integration(const ModeCode &mc, Evaluator &e, const runtime::IntegratorOptions &io);
  /// `j1=open, j2=closed`: FSM state names.
  std::string modeText(const std::vector<std::uint32_t> &q) const;
  /// The mode's independent states out of X.
  std::vector<double> gather(const ModeCode &mc) const;
  /// Stores a mode's states into X and computes its dependent storage.
  void complete(Evaluator &e, const double *x);
  /// Evaluates the held values (`pre`) in `mc` at X.
  void holdValues(const ModeCode &mc);
  /// Both sides of every guard comparison, in `mc` at X.
  std::vector<double> guardSides(const ModeCode &mc);
  void evaluate(Evaluator &e, codegen::CompiledFn f, const double *x, double *out,
                const char *what);
  /// Guard truth: comparisons marked + read `plus`, those marked - read
  /// `minus`; `leaf` counts comparisons in depth-first order; `forced`
  /// comparisons (equalities located at their crossing) hold.
  bool guardHolds(const bg::Guard &g, const double *plus, const double *minus,
                  std::uint32_t &leaf, const std::vector<std::uint32_t> *forced) const;
  /// The first transition of junction `j` from `state` whose guard holds, or -1.
  int enabledTransition(std::size_t j, std::uint32_t state, const double *plus,
                        const double *minus, const std::vector<std::uint32_t> *forced) const;
  bool anyEnabled(const double *sides, const std::vector<std::uint32_t> *forced) const;
  /// Comparisons of the transitions enabled in the current FSM states.
  const std::vector<std::uint32_t> &enabledComparisons();
  /// Locates the first event in the stepper's last step: returns its time
  /// and the state there.
  double locate(runtime::Stepper &s, Evaluator &e, const std::vector<double> &sidesA,
                const std::vector<double> &sidesB, std::vector<double> &xEvent);
  /// Mode iteration at t_ from X; returns true when the mode changed (and
  /// records the event).
  bool iterateModes();
  void remapExact(Evaluator &e);
  void remapIterative(Evaluator &e, Event &ev);
  /// Stops the run on too many events or Zeno behaviour.
  void checkZeno();
  std::string cycleText(const Event &ev, const std::vector<std::string> &modes,
                        const std::string &again) const;
  void sample(Evaluator &e, double t, const double *x);

  const Model &model_;
  const Model::Impl &m_;
  const SimulationOptions &o_;
  Result &r_;
  /// Parameters, then held values.
  std::vector<double> p_;
  std::size_t np_ = 0;
  std::vector<double> X_;
  std::vector<std::uint32_t> q_;
  double t_ = 0;
  /// Modes entered in this run, by FSM states (saves the model's cache).
  std::map<std::vector<std::uint32_t>, std::shared_ptr<ModeCode>> modes_;
  std::map<const ModeCode *, std::unique_ptr<Evaluator>> evaluators_;
  std::map<const ModeCode *, Integration> integrations_;
  /// locate()'s buffers: probe times and guard values, a state, guard values.
  std::vector<double> probeTimes_;
  std::vector<std::vector<double>> probeSides_;
  std::vector<double> probeX_, probeBuffer_;
  /// enabledComparisons() for the FSM states `enabledFor_`.
  std::vector<std::uint32_t> enabled_, enabledFor_;
};

} // namespace hbg
