//===- compiler/driver/Simulation.cpp - Running a compiled model ----------===//

#include "CompiledSystem.h"
#include "ModelImpl.h"

#include "hbg/driver/Internal.h"
#include "hbg/runtime/Csv.h"
#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace hbg {

namespace {
/// `opts` with each state's nominal magnitude: the model's for `p`
/// unless the caller gave them.
SimulationOptions withNominal(SimulationOptions opts, const Model &model,
                              const std::vector<double> &p) {
  if (opts.nominal.empty())
    opts.nominal = model.nominalState(p);
  return opts;
}
} // namespace

std::size_t indexOf(const std::vector<std::string> &names, const std::string &name,
                    const std::string &what, const std::string &model) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end())
    return static_cast<std::size_t>(it - names.begin());
  std::string best = closestName(name, names);
  throw std::invalid_argument("model `" + model + "` has no " + what + " `" + name + "`" +
                              (best.empty() ? "" : "; did you mean `" + best + "`?"));
}

/// A run driven step by step: the model's compiled system and the
/// runtime's loop over it, kept between calls.
struct Simulation::Stepping {
  Stepping(const Model &m, std::vector<double> p, const std::vector<double> &x0,
           runtime::SimulateOptions opts)
      : model(m), o(std::move(opts)), system(model, std::move(p)), run(system, x0, o, record) {}
  Model model;
  runtime::SimulateOptions o;
  CompiledSystem system;
  runtime::RunRecord record;
  runtime::SteppedRun run;
  /// The error a failed call threw, prefixed with the model's name.
  std::string error() const { return record.errorText(model.name()); }
};

Simulation::Simulation(Model model) : model_(std::move(model)), opts_(model_.experiment().apply()) {}

Simulation::Simulation(Model model, SimulationOptions opts)
    : model_(std::move(model)), opts_(opts) {}

Simulation::Simulation(Simulation &&) noexcept = default;
Simulation &Simulation::operator=(Simulation &&) noexcept = default;
Simulation::~Simulation() = default;

void Simulation::setParameter(const std::string &name, double value) {
  indexOf(model_.parameterNames(), name, "parameter", model_.name());
  const std::vector<std::string> &inputs = model_.inputNames();
  if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
    throw std::invalid_argument("`" + name + "` is an input of model `" + model_.name() +
                                "`: setInput sets it");
  double built = 0;
  if (model_.structural(name, &built) && value != built)
    throw std::invalid_argument(structuralMessage(name, built));
  overrides_[name] = value;
}

void Simulation::setInput(const std::string &name, double value) {
  std::size_t k = indexOf(model_.inputNames(), name, "input", model_.name());
  overrides_[name] = value;
  if (!stepping_)
    return;
  Stepping &s = *stepping_;
  s.system.setParameter(model_.impl()->inputSlots[k], value);
  if (!s.run.refresh())
    throw SimulationError(s.error(), s.record.failure);
}

double Simulation::input(const std::string &name) const {
  std::size_t k = indexOf(model_.inputNames(), name, "input", model_.name());
  auto it = overrides_.find(name);
  return it != overrides_.end() ? it->second
                                : model_.parameterValues()[model_.impl()->inputSlots[k]];
}

void Simulation::start() {
  stepping_.reset();
  std::vector<double> p = model_.parameterValues(overrides_);
  std::vector<double> x0 = model_.initialState(p);
  SimulationOptions o = withNominal(opts_, model_, p);
  stepping_ = std::make_unique<Stepping>(model_, std::move(p), x0, std::move(o));
  if (!stepping_->run.start())
    throw SimulationError(stepping_->error(), stepping_->record.failure);
}

Simulation::Stepping &Simulation::stepping() const {
  if (!stepping_)
    throw std::logic_error("simulation of model `" + model_.name() + "` not started (start())");
  return *stepping_;
}

void Simulation::advance(double t) {
  Stepping &s = stepping();
  // A time before the run's is the caller's mistake: refused, and the run
  // goes on.
  if (!(t >= s.run.time()) || !std::isfinite(t))
    throw std::invalid_argument(
        runDiagnostic(DiagKind::RunAdvanceBackwards, s.run.time(), s.run.mode(), {DiagArg::time(t)})
            .text(model_.name()));
  if (!s.run.advance(t))
    throw SimulationError(s.error(), s.record.failure);
}

bool Simulation::started() const { return stepping_ != nullptr; }
double Simulation::time() const { return stepping().run.time(); }
const std::vector<double> &Simulation::state() const { return stepping().run.state(); }

double Simulation::state(const std::string &name) const {
  return state()[indexOf(model_.stateNames(), name, "state", model_.name())];
}

std::vector<double> Simulation::outputs() const {
  Stepping &s = stepping();
  std::vector<double> y(model_.outputNames().size());
  if (!s.run.outputs(y.data()))
    throw SimulationError(s.error(), s.record.failure);
  return y;
}

double Simulation::output(const std::string &name) const {
  std::size_t k = indexOf(model_.outputNames(), name, "output", model_.name());
  return outputs()[k];
}

std::string Simulation::mode() const { return stepping().run.mode(); }
const std::vector<Event> &Simulation::events() const { return stepping().record.events; }
std::size_t Simulation::steps() const { return stepping().record.steps; }

Result Simulation::run() const {
  auto start = std::chrono::steady_clock::now();
  Result r;
  r.names.push_back("time");
  for (const std::string &n : model_.outputNames())
    r.names.push_back(n);
  // The event log's columns: a model without switched junctions has
  // events too, where a kink switches branch or slides.
  r.stateNames = model_.stateNames();

  std::vector<double> p = model_.parameterValues(overrides_);
  std::vector<double> x0 = model_.initialState(p);
  SimulationOptions o = withNominal(opts_, model_, p);
  CompiledSystem system(model_, std::move(p));
  for (const auto &[name, slot] : system.discretes())
    r.discreteNames.push_back(name);
  runtime::simulate(system, x0, o, r);
  if (!r.error.empty())
    r.error = r.errorText(model_.name());
  r.modesCompiled = system.modesCompiled;
  r.compileSeconds = system.compileSeconds;
  r.runSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::unique_ptr<runtime::ProgramSystem> driver::systemOf(const Model &model,
                                                        std::vector<double> params) {
  return std::make_unique<CompiledSystem>(model, std::move(params));
}

const std::vector<double> &Result::at(const std::string &name) const {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return columns[i];
  std::string best = closestName(name, names);
  throw std::out_of_range("no output `" + name + "`" +
                          (best.empty() ? "" : "; did you mean `" + best + "`?"));
}

void Result::writeCsv(std::ostream &os) const { runtime::writeCsv(os, names, columns); }

void Result::writeEventsCsv(std::ostream &os) const {
  runtime::writeEventsCsv(os, events, stateNames,
                          std::vector<std::string>(names.begin() + (names.empty() ? 0 : 1),
                                                   names.end()),
                          discreteNames);
}

} // namespace hbg
