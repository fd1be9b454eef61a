//===- tools/fmu/Fmu.cpp - The FMI 3.0 functions of an hbg FMU ------------===//
//
// Linked with the object `hbgc build --fmu` writes (the modes' code and
// the model's image) into binaries/x86_64-linux/<model>.so. Value
// references follow modelDescription.xml's variables (compiler/driver/
// FmuExport.cpp numbers them the same way, hbg/runtime/FmuLayout.h):
//
//   0                     time
//   1 .. np               the parameter array by slot: parameters
//                         (tunable), structural parameters (constant) and
//                         inputs (continuous inputs)
//   then ns               the continuous states: the full state
//   then ns               their derivatives
//   then ny               the outputs
//   then ni               the event indicators
//
// Model Exchange: the importer integrates the full state; the FMU gives
// derivatives (dependent storage's by the chain rule), event indicators
// from the guard comparisons and kinks, and fmi3UpdateDiscreteStates runs
// mode iteration and the exact remap (runtime::SteppedRun). Co-Simulation:
// fmi3DoStep advances with hbg's own integrator, events inside.
//
//===----------------------------------------------------------------------===//

#include "fmi3.h"

#include "hbg/runtime/FmuLayout.h"

#include "hbg/runtime/Image.h"
#include "hbg/runtime/Simulate.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

// Defined by the object `hbgc build --fmu` writes.
extern "C" {
extern const unsigned char hbg_image[];
extern const unsigned long hbg_image_size;
extern const hbg::runtime::CompiledFn hbg_function_table[];
extern const unsigned long hbg_function_table_size;
}

#define HBG_FMI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using namespace hbg;

/// The image, read once for every instance (on whichever thread first
/// instantiates; the others wait for it).
const runtime::ModelImage *image(std::string &error) {
  struct Loaded {
    std::unique_ptr<runtime::ModelImage> image;
    std::string why;
  };
  static const Loaded loaded = [] {
    Loaded l;
    try {
      l.image = std::make_unique<runtime::ModelImage>(runtime::readImage(
          hbg_image, hbg_image_size, hbg_function_table, hbg_function_table_size));
    } catch (const std::exception &e) {
      l.why = e.what();
    }
    return l;
  }();
  error = loaded.why;
  return loaded.image.get();
}

enum class State { Instantiated, Initialization, Event, Continuous, Step, Terminated, Failed };

struct Instance {
  std::string name;
  fmi3InstanceEnvironment env = nullptr;
  fmi3LogMessageCallback log = nullptr;
  bool logging = false, coSimulation = false;
  State state = State::Instantiated;
  const runtime::ModelImage *image = nullptr;
  fmi::Layout layout;
  /// Values set by name: parameters and inputs.
  std::map<std::string, double> overrides;
  double startTime = 0, stopTime = std::numeric_limits<double>::infinity();
  double tolerance = 0;
  bool toleranceDefined = false;
  // The run, from fmi3ExitInitializationMode on.
  std::vector<double> p;
  runtime::SimulateOptions options;
  runtime::RunRecord record;
  std::unique_ptr<runtime::ImageSystem> system;
  std::unique_ptr<runtime::SteppedRun> run;
  /// In initialization mode, the run is provisional (for the initial
  /// unknowns) and made again when a parameter or input changed since.
  bool stale = false;
  /// A value set in event mode switched junctions or moved the state:
  /// the next fmi3UpdateDiscreteStates says so.
  bool changedBySet = false;

  void message(fmi3Status status, const char *category, const std::string &text) const {
    if (log && (logging || status >= fmi3Warning))
      log(env, status, category, text.c_str());
  }
  fmi3Status error(const std::string &text) {
    message(fmi3Error, "logStatusError", "model `" + image->name + "`: " + text);
    return fmi3Error;
  }
  /// A failed run-time call: the runtime's message, and the instance is
  /// unusable from here on.
  fmi3Status failed() {
    state = State::Failed;
    message(fmi3Error, "logStatusError", record.errorText(image->name));
    return fmi3Error;
  }
  bool started() const { return run != nullptr; }
};

Instance *instanceOf(fmi3Instance i) { return static_cast<Instance *>(i); }

/// The instantiation token: the image's hash.
std::string token() { return fmi::instantiationToken(fmi::imageHash(hbg_image, hbg_image_size)); }

fmi3Instance instantiate(fmi3String name, fmi3String instantiationToken, fmi3Boolean loggingOn,
                         fmi3InstanceEnvironment env, fmi3LogMessageCallback log, bool coSim) {
  std::string why;
  const runtime::ModelImage *img = image(why);
  auto report = [&](const std::string &text) {
    if (log)
      log(env, fmi3Error, "logStatusError", text.c_str());
  };
  if (!img) {
    report("cannot read the model image: " + why);
    return nullptr;
  }
  if (!instantiationToken || token() != instantiationToken) {
    report("instantiation token `" + std::string(instantiationToken ? instantiationToken : "") +
           "` is not this FMU's `" + token() + "` (modelDescription.xml from another build?)");
    return nullptr;
  }
  Instance *in = nullptr;
  try {
    in = new Instance;
  } catch (const std::exception &e) {
    report(std::string("cannot instantiate: ") + e.what());
    return nullptr;
  }
  in->name = name ? name : "";
  in->env = env;
  in->log = log;
  in->logging = loggingOn;
  in->coSimulation = coSim;
  in->image = img;
  in->layout = fmi::Layout(*img);
  return in;
}

/// The run: parameters from the overrides, the model's experiment
/// settings, the importer's start time and tolerance.
fmi3Status start(Instance &in) {
  const runtime::ModelImage &img = *in.image;
  in.run.reset();
  in.system.reset();
  in.options = {};
  // Co-simulation runs as long as the importer says: the record keeps the
  // events Zeno detection needs, and no bound on their number.
  in.options.keepEvents = 0;
  in.options.maxEvents = SIZE_MAX;
  in.stale = false;
  try {
    in.p = img.setup.parameters(in.overrides);
    // The importer decides the times: the block's other settings apply.
    runtime::SimulateOptions &o = in.options;
    o = img.setup.experimentValues(in.p, img.name).apply(o);
    if (in.toleranceDefined && in.tolerance > 0)
      o.rtol = in.tolerance;
    o.tStart = in.startTime;
    o.tEnd = std::isfinite(in.stopTime) && in.stopTime > in.startTime ? in.stopTime
                                                                       : in.startTime + 1;
    o.nominal = img.setup.nominalState(in.p);
  } catch (const std::exception &e) {
    return in.error(e.what());
  }
  try {
    std::vector<double> x0 = img.setup.initialState(in.p);
    in.system = std::make_unique<runtime::ImageSystem>(img, in.p);
    in.record = {};
    in.run = std::make_unique<runtime::SteppedRun>(*in.system, x0, in.options, in.record);
  } catch (const std::exception &e) {
    return in.error(e.what());
  }
  if (!in.run->start())
    return in.failed();
  return fmi3OK;
}

/// The run, made now in initialization mode (provisionally) when there is
/// none or parameters changed since.
fmi3Status ensureRun(Instance &in) {
  if (in.started() && !in.stale)
    return fmi3OK;
  if (in.state != State::Initialization && !in.started())
    return in.error("no value before initialization mode");
  return start(in);
}

/// Sets parameter-array slot k to `value`: before the run, by name; in a
/// run, an input at once, a parameter with every default that reads it.
fmi3Status setParameter(Instance &in, std::size_t k, double value) {
  const runtime::SetupProgram &s = in.image->setup;
  in.overrides[s.names[k]] = value;
  if (!in.started() || in.state == State::Initialization) {
    in.stale = in.started();
    return fmi3OK;
  }
  if (s.inputs[k]) {
    in.system->setParameter(k, value);
  } else {
    std::vector<double> p = s.parameters(in.overrides);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (!s.inputs[i])
        in.system->setParameter(i, p[i]);
    in.p = std::move(p);
  }
  // In event mode and between co-simulation steps the model follows at
  // once: dependent storage and kinks, and the events the new value
  // causes (fmi3UpdateDiscreteStates or the next step goes on from
  // there). In continuous-time mode an input only changes the
  // derivatives and indicators the importer reads next.
  if (in.state == State::Event || in.state == State::Step) {
    std::vector<double> before = in.run->state();
    std::string mode = in.run->mode();
    if (!in.run->refresh())
      return in.failed();
    in.changedBySet = in.changedBySet || before != in.run->state() || mode != in.run->mode();
  }
  return fmi3OK;
}

} // namespace

HBG_FMI_EXPORT const char *fmi3GetVersion(void) { return "3.0"; }

HBG_FMI_EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn,
                                              size_t, const fmi3String[]) {
  instanceOf(instance)->logging = loggingOn;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Instance fmi3InstantiateModelExchange(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String, fmi3Boolean,
    fmi3Boolean loggingOn, fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
  return instantiate(instanceName, instantiationToken, loggingOn, env, log, false);
}

HBG_FMI_EXPORT fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String, fmi3Boolean,
    fmi3Boolean loggingOn, fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
    const fmi3ValueReference[], size_t, fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
    fmi3IntermediateUpdateCallback) {
  // Early return is allowed but never taken (the FMU declares it cannot).
  (void)earlyReturnAllowed;
  if (eventModeUsed) {
    if (log)
      log(env, fmi3Error, "logStatusError",
          "this FMU's co-simulation handles events inside fmi3DoStep: eventModeUsed is not "
          "supported");
    return nullptr;
  }
  return instantiate(instanceName, instantiationToken, loggingOn, env, log, true);
}

HBG_FMI_EXPORT fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String, fmi3String, fmi3String, fmi3Boolean, fmi3Boolean, fmi3InstanceEnvironment env,
    fmi3LogMessageCallback log, void *, void *, void *) {
  if (log)
    log(env, fmi3Error, "logStatusError", "this FMU does not support scheduled execution");
  return nullptr;
}

HBG_FMI_EXPORT void fmi3FreeInstance(fmi3Instance instance) { delete instanceOf(instance); }

HBG_FMI_EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance instance,
                                                      fmi3Boolean toleranceDefined,
                                                      fmi3Float64 tolerance, fmi3Float64 startTime,
                                                      fmi3Boolean stopTimeDefined,
                                                      fmi3Float64 stopTime) {
  Instance &in = *instanceOf(instance);
  if (in.state != State::Instantiated)
    return in.error("fmi3EnterInitializationMode: not in the instantiated state");
  in.toleranceDefined = toleranceDefined;
  in.tolerance = tolerance;
  in.startTime = startTime;
  in.stopTime = stopTimeDefined ? stopTime : std::numeric_limits<double>::infinity();
  in.state = State::Initialization;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
  Instance &in = *instanceOf(instance);
  if (in.state != State::Initialization)
    return in.error("fmi3ExitInitializationMode: not in initialization mode");
  fmi3Status s = ensureRun(in);
  if (s != fmi3OK)
    return s;
  in.state = in.coSimulation ? State::Step : State::Event;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
  Instance &in = *instanceOf(instance);
  if (in.state != State::Continuous && in.state != State::Event)
    return in.error("fmi3EnterEventMode: not in continuous-time mode");
  in.state = State::Event;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3Terminate(fmi3Instance instance) {
  instanceOf(instance)->state = State::Terminated;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3Reset(fmi3Instance instance) {
  Instance &in = *instanceOf(instance);
  in.run.reset();
  in.system.reset();
  in.overrides.clear();
  in.state = State::Instantiated;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vrs[],
                                         size_t nvr, fmi3Float64 values[], size_t nValues) {
  Instance &in = *instanceOf(instance);
  if (nValues < nvr)
    return in.error("fmi3GetFloat64: fewer values than value references");
  if (in.state == State::Failed)
    return fmi3Error;
  const fmi::Layout &L = in.layout;
  std::vector<double> y, dx, z;
  for (size_t k = 0; k < nvr; ++k) {
    fmi::Variable v = L.of(vrs[k]);
    if (v.kind == fmi::Kind::None)
      return in.error("fmi3GetFloat64: no variable has value reference " +
                      std::to_string(vrs[k]));
    if (v.kind == fmi::Kind::Parameter) {
      values[k] = in.started() ? in.p[v.index] : in.image->setup.parameters(in.overrides)[v.index];
      if (in.started() && in.image->setup.inputs[v.index])
        values[k] = in.overrides.count(in.image->setup.names[v.index])
                        ? in.overrides.at(in.image->setup.names[v.index])
                        : values[k];
      continue;
    }
    if (in.state == State::Instantiated) {
      // Before initialization: what the start values give.
      std::vector<double> p = in.image->setup.parameters(in.overrides);
      if (v.kind == fmi::Kind::Time)
        values[k] = in.startTime;
      else if (v.kind == fmi::Kind::State)
        values[k] = in.image->setup.initialState(p)[v.index];
      else
        return in.error("fmi3GetFloat64: `" + L.name(vrs[k]) +
                        "` has no value before initialization mode");
      continue;
    }
    // In initialization mode, the initial unknowns of a provisional run.
    if (ensureRun(in) != fmi3OK)
      return fmi3Error;
    switch (v.kind) {
    case fmi::Kind::Time:
      values[k] = in.run->time();
      break;
    case fmi::Kind::State:
      values[k] = in.run->state()[v.index];
      break;
    case fmi::Kind::Derivative:
      if (dx.empty()) {
        dx.resize(L.states);
        if (!in.run->derivatives(dx.data()))
          return in.failed();
      }
      values[k] = dx[v.index];
      break;
    case fmi::Kind::Discrete:
      values[k] = in.system->held(in.image->discretes[v.index].second);
      break;
    case fmi::Kind::Output:
      if (y.empty()) {
        y.resize(L.outputs);
        if (!in.run->outputs(y.data()))
          return in.failed();
      }
      values[k] = y[v.index];
      break;
    case fmi::Kind::Indicator:
      if (z.empty()) {
        z.resize(L.indicators);
        if (!in.run->indicators(z.data(), z.size()))
          return in.failed();
      }
      values[k] = z[v.index];
      break;
    default:
      break;
    }
  }
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vrs[],
                                         size_t nvr, const fmi3Float64 values[], size_t nValues) {
  Instance &in = *instanceOf(instance);
  if (nValues < nvr)
    return in.error("fmi3SetFloat64: fewer values than value references");
  for (size_t k = 0; k < nvr; ++k) {
    fmi::Variable v = in.layout.of(vrs[k]);
    if (v.kind != fmi::Kind::Parameter)
      return in.error("fmi3SetFloat64: `" + in.layout.name(vrs[k]) +
                      "` cannot be set (parameters and inputs can)");
    const runtime::SetupProgram &s = in.image->setup;
    bool input = s.inputs[v.index];
    if (v.index < in.image->structural.size() && in.image->structural[v.index])
      return in.error("fmi3SetFloat64: parameter `" + s.names[v.index] +
                      "` is structural: the FMU was built with its value");
    if (!input && in.state != State::Instantiated && in.state != State::Initialization &&
        in.state != State::Event && in.state != State::Step)
      return in.error("fmi3SetFloat64: parameter `" + s.names[v.index] +
                      "` is tunable in event mode (or between co-simulation steps) only");
    if (setParameter(in, v.index, values[k]) != fmi3OK)
      return fmi3Error;
  }
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3UpdateDiscreteStates(
    fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate, fmi3Boolean *terminateSimulation,
    fmi3Boolean *nominalsOfContinuousStatesChanged, fmi3Boolean *valuesOfContinuousStatesChanged,
    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
  Instance &in = *instanceOf(instance);
  if (in.state != State::Event)
    return in.error("fmi3UpdateDiscreteStates: not in event mode");
  bool changed = false;
  if (!in.run->eventUpdate(changed))
    return in.failed();
  *discreteStatesNeedUpdate = false;
  *terminateSimulation = false;
  *nominalsOfContinuousStatesChanged = false;
  *valuesOfContinuousStatesChanged = changed || in.changedBySet;
  in.changedBySet = false;
  // The next time event, for the master to end a step on it: up to the
  // stop time, or a span of the current time ahead without one.
  double horizon = std::isfinite(in.stopTime)
                       ? in.stopTime
                       : in.run->time() + std::max(1.0, std::abs(in.run->time()));
  double next = std::numeric_limits<double>::quiet_NaN();
  if (!in.run->nextTimeEvent(horizon, next))
    return in.failed();
  *nextEventTimeDefined = next > in.run->time();
  *nextEventTime = *nextEventTimeDefined ? next : 0;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
  Instance &in = *instanceOf(instance);
  if (in.state != State::Event)
    return in.error("fmi3EnterContinuousTimeMode: not in event mode");
  in.state = State::Continuous;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance, fmi3Boolean,
                                                      fmi3Boolean *enterEventMode,
                                                      fmi3Boolean *terminateSimulation) {
  *enterEventMode = false;
  *terminateSimulation = false;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
  Instance &in = *instanceOf(instance);
  if (!in.started())
    return in.error("fmi3SetTime: before initialization ends");
  in.run->setTime(time);
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 x[],
                                                  size_t n) {
  Instance &in = *instanceOf(instance);
  if (!in.started() || n != in.layout.states)
    return in.error("fmi3SetContinuousStates: " + std::to_string(n) + " states, the model has " +
                    std::to_string(in.layout.states));
  return in.run->setState(x) ? fmi3OK : in.failed();
}

HBG_FMI_EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance,
                                                            fmi3Float64 dx[], size_t n) {
  Instance &in = *instanceOf(instance);
  if (in.state == State::Initialization && ensureRun(in) != fmi3OK)
    return fmi3Error;
  if (!in.started() || n != in.layout.states)
    return in.error("fmi3GetContinuousStateDerivatives: " + std::to_string(n) +
                    " states, the model has " + std::to_string(in.layout.states));
  return in.run->derivatives(dx) ? fmi3OK : in.failed();
}

HBG_FMI_EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 z[],
                                                 size_t n) {
  Instance &in = *instanceOf(instance);
  if (in.state == State::Initialization && ensureRun(in) != fmi3OK)
    return fmi3Error;
  if (!in.started() || n != in.layout.indicators)
    return in.error("fmi3GetEventIndicators: " + std::to_string(n) +
                    " indicators, the model has " + std::to_string(in.layout.indicators));
  return in.run->indicators(z, n) ? fmi3OK : in.failed();
}

HBG_FMI_EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[],
                                                  size_t n) {
  Instance &in = *instanceOf(instance);
  if (in.state == State::Initialization && ensureRun(in) != fmi3OK)
    return fmi3Error;
  if (!in.started() || n != in.layout.states)
    return in.error("fmi3GetContinuousStates: " + std::to_string(n) + " states, the model has " +
                    std::to_string(in.layout.states));
  const std::vector<double> &X = in.run->state();
  std::copy(X.begin(), X.end(), x);
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance,
                                                            fmi3Float64 nominals[], size_t n) {
  Instance &in = *instanceOf(instance);
  if (n != in.layout.states)
    return in.error("fmi3GetNominalsOfContinuousStates: wrong number of states");
  std::vector<double> nominal =
      in.image->setup.nominalState(in.started() ? in.p : in.image->setup.parameters(in.overrides));
  for (size_t i = 0; i < n; ++i)
    nominals[i] = nominal[i] > 0 ? nominal[i] : 1.0;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *n) {
  *n = instanceOf(instance)->layout.indicators;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *n) {
  *n = instanceOf(instance)->layout.states;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
  Instance &in = *instanceOf(instance);
  if (!in.coSimulation || !in.started())
    return in.error("fmi3EnterStepMode: not a co-simulation instance after initialization");
  in.state = State::Step;
  return fmi3OK;
}

HBG_FMI_EXPORT fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 current, fmi3Float64 step,
                                     fmi3Boolean, fmi3Boolean *eventHandlingNeeded,
                                     fmi3Boolean *terminateSimulation, fmi3Boolean *earlyReturn,
                                     fmi3Float64 *lastSuccessfulTime) {
  Instance &in = *instanceOf(instance);
  *eventHandlingNeeded = false;
  *terminateSimulation = false;
  *earlyReturn = false;
  if (in.state != State::Step)
    return in.error("fmi3DoStep: not in step mode");
  if (!(step >= 0) || !std::isfinite(step))
    return in.error("fmi3DoStep: the communication step " + timeText(step) +
                    " is not a finite time of 0 or more");
  if (std::abs(current - in.run->time()) > 1e-12 * std::max(1.0, std::abs(current)))
    return in.error("fmi3DoStep: the communication point " + timeText(current) +
                    " is not the FMU's time " + timeText(in.run->time()));
  bool ok = in.run->advance(current + step);
  *lastSuccessfulTime = in.run->time();
  return ok ? fmi3OK : in.failed();
}

// The rest of the standard's functions: this FMU has no variables of
// other types, no FMU state to save, no directional derivatives and no
// clocks, as its modelDescription.xml says (capability flags false).
#define HBG_FMI_UNSUPPORTED(name, ...)                                                             \
  HBG_FMI_EXPORT fmi3Status name(fmi3Instance instance, __VA_ARGS__) {                             \
    return instanceOf(instance)->error(#name " is not supported by this FMU");                     \
  }
#define HBG_FMI_NO_VARIABLES(name, type)                                                           \
  HBG_FMI_EXPORT fmi3Status name(fmi3Instance instance, const fmi3ValueReference[], size_t nvr,    \
                                 type, size_t) {                                                   \
    return nvr == 0 ? fmi3OK : instanceOf(instance)->error(#name ": this FMU has no such variables"); \
  }
HBG_FMI_NO_VARIABLES(fmi3GetFloat32, fmi3Float32[])
HBG_FMI_NO_VARIABLES(fmi3GetInt8, fmi3Int8[])
HBG_FMI_NO_VARIABLES(fmi3GetUInt8, fmi3UInt8[])
HBG_FMI_NO_VARIABLES(fmi3GetInt16, fmi3Int16[])
HBG_FMI_NO_VARIABLES(fmi3GetUInt16, fmi3UInt16[])
HBG_FMI_NO_VARIABLES(fmi3GetInt32, fmi3Int32[])
HBG_FMI_NO_VARIABLES(fmi3GetUInt32, fmi3UInt32[])
HBG_FMI_NO_VARIABLES(fmi3GetInt64, fmi3Int64[])
HBG_FMI_NO_VARIABLES(fmi3GetUInt64, fmi3UInt64[])
HBG_FMI_NO_VARIABLES(fmi3GetBoolean, fmi3Boolean[])
HBG_FMI_NO_VARIABLES(fmi3GetString, fmi3String[])
HBG_FMI_NO_VARIABLES(fmi3SetFloat32, const fmi3Float32[])
HBG_FMI_NO_VARIABLES(fmi3SetInt8, const fmi3Int8[])
HBG_FMI_NO_VARIABLES(fmi3SetUInt8, const fmi3UInt8[])
HBG_FMI_NO_VARIABLES(fmi3SetInt16, const fmi3Int16[])
HBG_FMI_NO_VARIABLES(fmi3SetUInt16, const fmi3UInt16[])
HBG_FMI_NO_VARIABLES(fmi3SetInt32, const fmi3Int32[])
HBG_FMI_NO_VARIABLES(fmi3SetUInt32, const fmi3UInt32[])
HBG_FMI_NO_VARIABLES(fmi3SetInt64, const fmi3Int64[])
HBG_FMI_NO_VARIABLES(fmi3SetUInt64, const fmi3UInt64[])
HBG_FMI_NO_VARIABLES(fmi3SetBoolean, const fmi3Boolean[])
HBG_FMI_NO_VARIABLES(fmi3SetString, const fmi3String[])
HBG_FMI_UNSUPPORTED(fmi3GetBinary, const fmi3ValueReference[], size_t, size_t[], fmi3Binary[],
                    size_t)
HBG_FMI_UNSUPPORTED(fmi3SetBinary, const fmi3ValueReference[], size_t, const size_t[],
                    const fmi3Binary[], size_t)
HBG_FMI_UNSUPPORTED(fmi3GetClock, const fmi3ValueReference[], size_t, fmi3Clock[])
HBG_FMI_UNSUPPORTED(fmi3SetClock, const fmi3ValueReference[], size_t, const fmi3Clock[])
HBG_FMI_UNSUPPORTED(fmi3GetNumberOfVariableDependencies, fmi3ValueReference, size_t *)
HBG_FMI_UNSUPPORTED(fmi3GetVariableDependencies, fmi3ValueReference, size_t[],
                    fmi3ValueReference[], size_t[], fmi3DependencyKind[], size_t)
HBG_FMI_UNSUPPORTED(fmi3GetFMUState, fmi3FMUState *)
HBG_FMI_UNSUPPORTED(fmi3SetFMUState, fmi3FMUState)
HBG_FMI_UNSUPPORTED(fmi3FreeFMUState, fmi3FMUState *)
HBG_FMI_UNSUPPORTED(fmi3SerializedFMUStateSize, fmi3FMUState, size_t *)
HBG_FMI_UNSUPPORTED(fmi3SerializeFMUState, fmi3FMUState, fmi3Byte[], size_t)
HBG_FMI_UNSUPPORTED(fmi3DeserializeFMUState, const fmi3Byte[], size_t, fmi3FMUState *)
HBG_FMI_UNSUPPORTED(fmi3GetDirectionalDerivative, const fmi3ValueReference[], size_t,
                    const fmi3ValueReference[], size_t, const fmi3Float64[], size_t, fmi3Float64[],
                    size_t)
HBG_FMI_UNSUPPORTED(fmi3GetAdjointDerivative, const fmi3ValueReference[], size_t,
                    const fmi3ValueReference[], size_t, const fmi3Float64[], size_t, fmi3Float64[],
                    size_t)
HBG_FMI_UNSUPPORTED(fmi3GetOutputDerivatives, const fmi3ValueReference[], size_t,
                    const fmi3Int32[], fmi3Float64[], size_t)
HBG_FMI_UNSUPPORTED(fmi3GetIntervalDecimal, const fmi3ValueReference[], size_t, fmi3Float64[],
                    int[])
HBG_FMI_UNSUPPORTED(fmi3GetIntervalFraction, const fmi3ValueReference[], size_t, fmi3UInt64[],
                    fmi3UInt64[], int[])
HBG_FMI_UNSUPPORTED(fmi3GetShiftDecimal, const fmi3ValueReference[], size_t, fmi3Float64[])
HBG_FMI_UNSUPPORTED(fmi3GetShiftFraction, const fmi3ValueReference[], size_t, fmi3UInt64[],
                    fmi3UInt64[])
HBG_FMI_UNSUPPORTED(fmi3SetIntervalDecimal, const fmi3ValueReference[], size_t,
                    const fmi3Float64[])
HBG_FMI_UNSUPPORTED(fmi3SetIntervalFraction, const fmi3ValueReference[], size_t,
                    const fmi3UInt64[], const fmi3UInt64[])
HBG_FMI_UNSUPPORTED(fmi3SetShiftDecimal, const fmi3ValueReference[], size_t, const fmi3Float64[])
HBG_FMI_UNSUPPORTED(fmi3SetShiftFraction, const fmi3ValueReference[], size_t, const fmi3UInt64[],
                    const fmi3UInt64[])
HBG_FMI_UNSUPPORTED(fmi3ActivateModelPartition, fmi3ValueReference, fmi3Float64)

HBG_FMI_EXPORT fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
  return instanceOf(instance)->error("fmi3EnterConfigurationMode: this FMU has no structural "
                                     "parameters to configure");
}
HBG_FMI_EXPORT fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
  return instanceOf(instance)->error("fmi3ExitConfigurationMode: not in configuration mode");
}
HBG_FMI_EXPORT fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
  return instanceOf(instance)->error("fmi3EvaluateDiscreteStates is not supported by this FMU");
}
