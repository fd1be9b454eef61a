//===- compiler/driver/CompiledSystem.h - A Model as the runtime sees it --===//
#pragma once

#include "ModelImpl.h"

#include "hbg/runtime/System.h"

#include <map>
#include <memory>

namespace hbg {

/// One run's view of a compiled model: its modes (compiled on first entry
/// and cached in the Model), each with an Evaluator that keeps its Newton
/// solves warm-started for the run, and the parameter array they all read
/// (parameters, then held values; each mode keeps a copy followed by its
/// kink branches).
class CompiledSystem : public runtime::System {
public:
  CompiledSystem(const Model &model, std::vector<double> params);
  ~CompiledSystem() override;

  const std::string &modelName() const override { return model_.name(); }
  const std::vector<std::string> &stateNames() const override { return m_.stateNames; }
  const std::vector<std::string> &outputNames() const override { return m_.outputNames; }
  const runtime::Switching &switching() const override { return m_.switching; }
  std::size_t numHeld() const override { return p_.size() - np_; }
  void setHeld(const double *values) override;
  runtime::Mode *mode(const std::vector<std::uint32_t> &q, std::string &why) override;
  bool storedEnergy(double t, const double *X, double *energy) override;

  /// Sets one entry of the parameter array (an input, between steps).
  void setParameter(std::size_t slot, double value);
  /// Modes compiled during this run, and the time spent compiling them
  /// and their Jacobians.
  std::size_t modesCompiled = 0;
  double compileSeconds = 0;

private:
  class CompiledMode;
  const Model &model_;
  const Model::Impl &m_;
  std::vector<double> p_;
  std::size_t np_;
  /// By the mode's compiled code: FSM states that differ only in names
  /// share one compiled mode (and one evaluator).
  std::map<const ModeCode *, std::unique_ptr<CompiledMode>> modes_;
  std::vector<double> energyScratch_;
};

} // namespace hbg
