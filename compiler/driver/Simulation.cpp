//===- compiler/driver/Simulation.cpp - Running a compiled model ----------===//

#include "Hybrid.h"

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <ostream>

namespace hbg {

Simulation::Simulation(Model model, SimulationOptions opts)
    : model_(std::move(model)), opts_(opts) {}

void Simulation::setParameter(const std::string &name, double value) {
  const std::vector<std::string> &names = model_.parameterNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string best = closestName(name, names);
    throw std::invalid_argument("model `" + model_.name() + "` has no parameter `" + name + "`" +
                                (best.empty() ? "" : "; did you mean `" + best + "`?"));
  }
  overrides_[name] = value;
}

Result Simulation::run() const {
  Result r;
  if (model_.switched()) {
    HybridRun(model_, opts_, overrides_, r).run();
    return r;
  }
  r.names.push_back("time");
  for (const std::string &n : model_.outputNames())
    r.names.push_back(n);
  r.columns.resize(r.names.size());

  std::vector<double> p = model_.parameterValues(overrides_);
  std::vector<double> x0 = model_.initialState(p);
  const ModeCode &code = *model_.impl()->initial;
  for (std::size_t i = 0; i < x0.size(); ++i)
    if (!std::isfinite(x0[i])) {
      r.error = "initial value of state `" + model_.stateNames()[i] + "` is not finite";
      return r;
    }
  double span = opts_.tEnd - opts_.tStart;
  if (!(span >= 0)) {
    r.error = "end time is before start time";
    return r;
  }
  double dtOut = opts_.dtOut > 0 ? opts_.dtOut : (span > 0 ? span / 100 : 1);

  runtime::IntegratorOptions io;
  io.method = opts_.method;
  io.step = opts_.step;
  io.rtol = opts_.rtol;
  io.atol = opts_.atol;

  // Held values (`pre`) keep their initial values: there are no events.
  std::size_t np = p.size();
  p.resize(np + code.equations.numHeld, 0.0);
  Evaluator eval(code, p.data());
  if (code.equations.numHeld && !eval.call(code.held, opts_.tStart, x0.data(), p.data() + np)) {
    r.error = "model `" + model_.name() + "`: " + eval.failure();
    return r;
  }
  std::string sampleFailure;
  EvaluatorOde ode(eval);
  std::vector<double> y(model_.outputNames().size());
  runtime::IntegrationStatus st = runtime::integrate(
      ode, opts_.tStart, x0, opts_.tEnd, dtOut, io, [&](double t, const double *x) {
        // After a failed loop solve the run is over: later samples are not
        // recorded (with no states the integrator itself would not notice).
        if (!sampleFailure.empty())
          return;
        if (!eval.outputs(t, x, y.data())) {
          sampleFailure = eval.failure();
          return;
        }
        r.columns[0].push_back(t);
        for (std::size_t i = 0; i < y.size(); ++i)
          r.columns[i + 1].push_back(y[i]);
      });
  r.steps = st.acceptedSteps;
  r.rejectedSteps = st.rejectedSteps;
  r.rhsCalls = st.rhsCalls;
  if (st.ok() && !sampleFailure.empty()) {
    r.error = "model `" + model_.name() + "`: " + sampleFailure;
  } else if (!st.ok()) {
    std::string what = st.message;
    if (st.status == runtime::StepStatus::NonFinite &&
        st.nonFinite.index < model_.stateNames().size()) {
      char t[32];
      std::snprintf(t, sizeof t, "%.9g", st.nonFinite.t);
      what = std::string(st.nonFinite.derivative ? "the derivative of " : "") + "state `" +
             model_.stateNames()[st.nonFinite.index] + "` is not finite at t = " + t;
    }
    if (!ode.failure().empty())
      what = ode.failure();
    r.error = "model `" + model_.name() + "`: " + what;
  }
  return r;
}

const std::vector<double> &Result::at(const std::string &name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return columns[i];
  std::string best = closestName(name, names);
  throw std::out_of_range("no output `" + name + "`" +
                          (best.empty() ? "" : "; did you mean `" + best + "`?"));
}

void Result::writeCsv(std::ostream &os) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    os << (i ? "," : "") << names[i];
  os << "\n";
  std::size_t rows = columns.empty() ? 0 : columns[0].size();
  char buf[32];
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%.17g", columns[i][r]);
      os << (i ? "," : "") << buf;
    }
    os << "\n";
  }
}

} // namespace hbg
