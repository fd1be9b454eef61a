//===- compiler/driver/Simulation.cpp - Running a compiled model ----------===//

#include "CompiledSystem.h"
#include "ModelImpl.h"

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace hbg {

Simulation::Simulation(Model model) : model_(std::move(model)), opts_(model_.experiment().apply()) {}

Simulation::Simulation(Model model, SimulationOptions opts)
    : model_(std::move(model)), opts_(opts) {}

SimulationOptions Experiment::apply(SimulationOptions o) const {
  auto set = [](double &field, const std::optional<double> &v) {
    if (v)
      field = *v;
  };
  set(o.tStart, tStart);
  set(o.tEnd, tEnd);
  set(o.dtOut, dtOut);
  set(o.step, step);
  set(o.maxStep, maxStep);
  set(o.rtol, rtol);
  set(o.atol, atol);
  if (method)
    o.method = *method;
  return o;
}

void Simulation::setParameter(const std::string &name, double value) {
  const std::vector<std::string> &names = model_.parameterNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string best = closestName(name, names);
    throw std::invalid_argument("model `" + model_.name() + "` has no parameter `" + name + "`" +
                                (best.empty() ? "" : "; did you mean `" + best + "`?"));
  }
  double built = 0;
  if (model_.structural(name, &built) && value != built)
    throw std::invalid_argument(structuralMessage(name, built));
  overrides_[name] = value;
}

Result Simulation::run() const {
  auto start = std::chrono::steady_clock::now();
  Result r;
  r.names.push_back("time");
  for (const std::string &n : model_.outputNames())
    r.names.push_back(n);
  if (model_.switched())
    r.stateNames = model_.stateNames();

  std::vector<double> p = model_.parameterValues(overrides_);
  std::vector<double> x0 = model_.initialState(p);
  std::vector<double> nominal = model_.nominalState(p);
  CompiledSystem system(model_, std::move(p));
  runtime::SimulateOptions o;
  o.tStart = opts_.tStart;
  o.tEnd = opts_.tEnd;
  o.dtOut = opts_.dtOut;
  o.integrator.method = opts_.method;
  o.integrator.step = opts_.step;
  o.integrator.rtol = opts_.rtol;
  o.integrator.atol = opts_.atol;
  o.nominal = std::move(nominal);
  o.integrator.maxStep = opts_.maxStep;
  o.remap = opts_.remap == SimulationOptions::Remap::Iterative
                ? runtime::SimulateOptions::Remap::Iterative
                : runtime::SimulateOptions::Remap::Exact;
  o.remapFactor = opts_.remapFactor;
  o.remapTolerance = opts_.remapTolerance;
  o.maxEvents = opts_.maxEvents;
  o.zenoEvents = opts_.zenoEvents;
  o.zenoSpan = opts_.zenoSpan;

  runtime::RunRecord record;
  runtime::simulate(system, x0, o, record);
  r.columns = std::move(record.columns);
  r.events = std::move(record.events);
  r.warnings = std::move(record.warnings);
  r.finalState = std::move(record.finalState);
  r.finalMode = std::move(record.finalMode);
  if (!record.error.empty())
    r.error = "model `" + model_.name() + "`: " + record.error;
  r.steps = record.steps;
  r.rejectedSteps = record.rejectedSteps;
  r.rhsCalls = record.rhsCalls;
  r.jacobianCalls = record.jacobianCalls;
  r.factorisations = record.factorisations;
  r.methods = std::move(record.methods);
  r.modeIterations = record.modeIterations;
  r.remapSeconds = record.remapSeconds;
  r.eventSearchSeconds = record.eventSearchSeconds;
  r.modesCompiled = system.modesCompiled;
  r.compileSeconds = system.compileSeconds;
  r.runSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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

void Result::writeEventsCsv(std::ostream &os) const {
  os << "event,time,phase,mode,transitions,energy,removed";
  for (const std::string &n : stateNames)
    os << "," << n;
  os << "\n";
  char buf[32];
  // The energy of the rows whose state is the one before the jump
  // (mythical modes and the first remap iteration keep it) or after it;
  // empty on the other remap iterations and where the audit cannot say.
  auto number = [&](double v) {
    if (!std::isnan(v)) {
      std::snprintf(buf, sizeof buf, "%.17g", v);
      os << buf;
    }
  };
  auto row = [&](std::size_t k, const Event &ev, const char *phase, const std::string &mode,
                 const std::string &transitions, const std::vector<double> &x) {
    std::snprintf(buf, sizeof buf, "%.17g", ev.time);
    os << k << "," << buf << "," << phase << ",\"" << mode << "\",\"" << transitions << "\",";
    bool after = &x == &ev.after;
    if (after || x == ev.before)
      number(after ? ev.storedAfter : ev.storedBefore);
    os << ",";
    if (after)
      number(ev.removed);
    for (double v : x) {
      std::snprintf(buf, sizeof buf, "%.17g", v);
      os << "," << buf;
    }
    os << "\n";
  };
  for (std::size_t k = 0; k < events.size(); ++k) {
    const Event &ev = events[k];
    std::string transitions;
    for (const std::string &t : ev.transitions)
      transitions += (transitions.empty() ? "" : "; ") + t;
    row(k, ev, "before", ev.modes.front(), transitions, ev.before);
    for (std::size_t i = 1; i + 1 < ev.modes.size(); ++i)
      row(k, ev, ev.real[i] ? "real" : "mythical", ev.modes[i], "", ev.states[i]);
    for (std::size_t i = 0; i < ev.remapIterations.size(); ++i)
      row(k, ev, "remap", std::to_string(i), "", ev.remapIterations[i]);
    row(k, ev, "after", ev.modes.back(), "", ev.after);
  }
}

} // namespace hbg
