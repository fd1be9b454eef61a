//===- compiler/driver/CompiledSystem.h - A Model as the runtime sees it --===//
#pragma once

#include "ModelImpl.h"

#include "hbg/runtime/Program.h"

namespace hbg {

/// One run's view of a compiled model: the runtime's ProgramSystem whose
/// modes are analysed and compiled on first entry and cached in the
/// Model, each run with an evaluator that keeps its Newton solves
/// warm-started for the run.
class CompiledSystem final : public runtime::ProgramSystem {
public:
  CompiledSystem(const Model &model, std::vector<double> params);
  ~CompiledSystem() override;

  const std::string &modelName() const override { return model_.name(); }
  const std::vector<std::string> &stateNames() const override { return m_.stateNames; }
  const std::vector<std::string> &outputNames() const override { return m_.outputNames; }
  const runtime::Switching &switching() const override { return m_.switching; }
  const std::vector<runtime::PowerElement> &powerElements() const override {
    return m_.powerElements;
  }
  void runSpan(double t0, double tEnd) override { m_.tiers->runSpan(t0, tEnd); }
  const std::vector<std::pair<std::string, std::uint32_t>> &discretes() const override {
    return discretes_;
  }
  std::int64_t settleSlot() const override { return settle_; }
  const std::vector<std::uint32_t> &integralStates() const override { return integrals_; }

protected:
  std::shared_ptr<const runtime::ModeProgram> program(const std::vector<std::uint32_t> &q,
                                                      std::string &why) override;

private:
  const Model &model_;
  const Model::Impl &m_;
  std::vector<std::uint32_t> integrals_;
  std::vector<std::pair<std::string, std::uint32_t>> discretes_;
  std::int64_t settle_ = -1;
};

} // namespace hbg
