//===- compiler/driver/SteadyState.cpp - Model::steady --------------------===//
//
// The embedding API's periodic steady state: the runtime's shooting
// (runtime/Periodic.h) on a compiled system of the model, with the period
// from the model's periodic sources unless given, and its result in the
// API's terms (a Result of one period, figures by output, the error as a
// user reads it).
//
//===----------------------------------------------------------------------===//

#include "CompiledSystem.h"
#include "ModelImpl.h"

#include "hbg/support/Diagnostics.h"

#include <cmath>

namespace hbg {

SteadyState Model::steady(const std::map<std::string, double> &parameters,
                          const SteadyOptions &options) const {
  // Names first: a misspelt one is the caller's mistake, not the model's.
  for (const auto &entry : parameters)
    indexOf(parameterNames(), entry.first, "parameter or input", name());
  std::vector<double> p = parameterValues(parameters);
  SimulationOptions base = options.simulation ? *options.simulation : experiment(parameters).apply();
  base.rtol = options.rtol;
  if (base.nominal.empty())
    base.nominal = nominalState(p);

  SteadyState s;
  s.rows.names.push_back("time");
  s.rows.names.insert(s.rows.names.end(), outputNames().begin(), outputNames().end());
  s.rows.stateNames = stateNames();
  runtime::SteadyOptions so;
  if (options.period) {
    so.period = *options.period;
  } else {
    SourcePeriod sp = sourcePeriod(p);
    if (!(sp.period > 0)) {
      s.failure = runDiagnostic(DiagKind::SteadyNoPeriod, runtime::kNoTime, "", {sp.why});
      s.error = s.failure->text(name());
      return s;
    }
    so.period = sp.period;
  }
  s.period = so.period;
  so.warmupPeriods = options.transientPeriods;
  so.tolerance = options.tolerance;
  so.rowsPerPeriod = options.rowsPerPeriod;

  std::vector<double> x0 = initialState(p);
  CompiledSystem system(*this, std::move(p));
  runtime::SteadyResult r;
  runtime::findSteadyState(system, x0, base, so, r);

  static_cast<runtime::RunRecord &>(s.rows) = std::move(r.period);
  s.rows.modesCompiled = system.modesCompiled;
  s.rows.compileSeconds = system.compileSeconds;
  s.figures = std::move(r.figures);
  s.residual = r.residual;
  s.iterations = std::move(r.iterations);
  s.modes = std::move(r.modes);
  s.modePhases = std::move(r.modeTimes);
  for (const auto &[re, im] : r.multipliers)
    s.multipliers.emplace_back(re, im);
  s.state = std::move(r.X0);
  s.startTime = r.t0;
  s.transientPeriods = r.transientPeriods;
  s.periodsSimulated = r.periodsSimulated;
  if (!r.ok()) {
    s.failure = std::move(r.failure);
    s.error = s.failure ? s.failure->text(name()) : "model `" + name() + "`: " + r.error;
  }
  return s;
}

const OutputFigures &SteadyState::figuresOf(const std::string &output) const {
  for (std::size_t i = 1; i < rows.names.size() && i <= figures.size(); ++i)
    if (rows.names[i] == output)
      return figures[i - 1];
  std::vector<std::string> outputs(rows.names.begin() + (rows.names.empty() ? 0 : 1),
                                   rows.names.end());
  std::string best = closestName(output, outputs);
  throw std::out_of_range("no figures of output `" + output + "`" +
                          (best.empty() ? "" : "; did you mean `" + best + "`?") +
                          (figures.empty() ? " (the steady state failed)" : ""));
}

} // namespace hbg
