//===- compiler/driver/SteadyState.cpp - Model::steady, frequencyResponse -===//
//
// The embedding API's periodic steady state: the runtime's shooting
// (runtime/Periodic.h) on a compiled system of the model, with the period
// from the model's periodic sources unless given, and its result in the
// API's terms (a Result of one period, figures by output, the error as a
// user reads it, the power balance); and the small-signal frequency
// response around it (runtime/SmallSignal.h), the input perturbed through
// the parameter values so that parameters depending on it follow.
//
//===----------------------------------------------------------------------===//

#include "CompiledSystem.h"
#include "ModelImpl.h"

#include "hbg/runtime/SmallSignal.h"
#include "hbg/support/Diagnostics.h"

#include <cmath>

namespace hbg {

namespace {

/// What the steady state and the frequency response around it share: the
/// parameter values, the integration's settings and the period (or why
/// there is none).
struct Shooting {
  std::vector<double> p;
  SimulationOptions base;
  runtime::SteadyOptions so;
  std::optional<RunDiagnostic> noPeriod;
};

Shooting prepare(const Model &model, const std::map<std::string, double> &parameters,
                 const SteadyOptions &options) {
  // Names first: a misspelt one is the caller's mistake, not the model's.
  for (const auto &entry : parameters)
    indexOf(model.parameterNames(), entry.first, "parameter or input", model.name());
  Shooting sh;
  sh.p = model.parameterValues(parameters);
  sh.base = options.simulation ? *options.simulation : model.experiment(parameters).apply();
  sh.base.rtol = options.rtol;
  if (sh.base.nominal.empty())
    sh.base.nominal = model.nominalState(sh.p);
  if (options.period) {
    sh.so.period = *options.period;
  } else {
    Model::SourcePeriod sp = model.sourcePeriod(sh.p);
    if (sp.period > 0)
      sh.so.period = sp.period;
    else
      sh.noPeriod = runDiagnostic(DiagKind::SteadyNoPeriod, runtime::kNoTime, "", {sp.why});
  }
  sh.so.warmupPeriods = options.transientPeriods;
  sh.so.tolerance = options.tolerance;
  sh.so.rowsPerPeriod = options.rowsPerPeriod;
  return sh;
}

/// A failure as a user reads it.
std::string failureText(const Model &model, const std::optional<RunDiagnostic> &failure,
                        const std::string &error) {
  return failure ? failure->text(model.name()) : "model `" + model.name() + "`: " + error;
}

} // namespace

SteadyState Model::steady(const std::map<std::string, double> &parameters,
                          const SteadyOptions &options) const {
  Shooting sh = prepare(*this, parameters, options);
  SteadyState s;
  s.rows.names.push_back("time");
  s.rows.names.insert(s.rows.names.end(), outputNames().begin(), outputNames().end());
  s.rows.stateNames = stateNames();
  if (sh.noPeriod) {
    s.failure = std::move(sh.noPeriod);
    s.error = s.failure->text(name());
    return s;
  }
  s.period = sh.so.period;

  std::vector<double> x0 = initialState(sh.p);
  CompiledSystem system(*this, std::move(sh.p));
  sh.so.losses = options.losses && !system.powerElements().empty();
  runtime::SteadyResult r;
  runtime::findSteadyState(system, x0, sh.base, sh.so, r);

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
  if (r.losses && r.ok())
    s.losses = std::move(*r.losses);
  if (!r.ok()) {
    s.failure = std::move(r.failure);
    s.error = failureText(*this, s.failure, r.error);
  }
  return s;
}

FrequencyResponse Model::frequencyResponse(const std::string &input,
                                           const std::vector<double> &frequencies,
                                           const std::map<std::string, double> &parameters,
                                           SteadyOptions options) const {
  std::size_t slot = indexOf(parameterNames(), input, "parameter or input", name());
  for (double f : frequencies)
    if (!(f > 0) || !std::isfinite(f))
      throw std::invalid_argument("frequencies must be positive and finite, not " +
                                  std::to_string(f));
  Shooting sh = prepare(*this, parameters, options);
  FrequencyResponse out;
  out.input = input;
  out.frequencies = frequencies;
  out.outputs = outputNames();
  if (sh.noPeriod) {
    out.failure = std::move(sh.noPeriod);
    out.error = out.failure->text(name());
    return out;
  }
  out.period = sh.so.period;

  std::vector<double> x0 = initialState(sh.p);
  CompiledSystem system(*this, sh.p);
  runtime::SteadyResult steady;
  runtime::findSteadyState(system, x0, sh.base, sh.so, steady);
  out.residual = steady.residual;
  if (!steady.ok()) {
    out.failure = std::move(steady.failure);
    out.error = failureText(*this, out.failure, steady.error);
    return out;
  }
  // The input perturbed: every parameter whose default depends on it
  // follows.
  double u0 = sh.p[slot];
  runtime::SmallSignalInput in;
  in.name = input;
  in.scale = u0 != 0 ? std::abs(u0) : 1;
  in.perturb = [&](double delta) {
    std::map<std::string, double> moved = parameters;
    moved[input] = u0 + delta;
    std::vector<double> q = delta == 0 ? sh.p : parameterValues(moved);
    for (std::size_t i = 0; i < q.size(); ++i)
      system.setParameter(i, q[i]);
  };
  runtime::FrequencyResponse fr;
  runtime::frequencyResponse(system, steady, sh.base, sh.so.period, in, frequencies, fr);
  if (!fr.ok()) {
    out.failure = std::move(fr.failure);
    out.error = failureText(*this, out.failure, fr.error);
    return out;
  }
  out.response = std::move(fr.response);
  return out;
}

const std::vector<std::complex<double>> &FrequencyResponse::at(const std::string &output) const {
  for (std::size_t i = 0; i < outputs.size() && i < response.size(); ++i)
    if (outputs[i] == output)
      return response[i];
  std::string best = closestName(output, outputs);
  throw std::out_of_range("no response of output `" + output + "`" +
                          (best.empty() ? "" : "; did you mean `" + best + "`?") +
                          (response.empty() ? " (the frequency response failed)" : ""));
}

double SteadyState::efficiency(const std::string &out, const std::string &in) const {
  std::string error;
  double e = losses.efficiency(out, in, error);
  if (!error.empty())
    throw std::invalid_argument(error);
  return e;
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
