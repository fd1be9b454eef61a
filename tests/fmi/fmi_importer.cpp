// A small FMI 3.0 importer, as an FMI master drives an FMU: it loads the
// binary of an unpacked FMU with dlopen, reads what it needs of
// modelDescription.xml, and simulates it
//
//   Model Exchange: its own integrator (classic RK4 with a fixed step),
//   event indicators watched after every step, a sign change located by
//   bisection on the step, then event mode and fmi3UpdateDiscreteStates
//   until the FMU needs no more, the states read back when they changed;
//
//   Model Exchange as the FMI 3.0 standard's example master loop does it
//   (--spec-loop), as the Modelica Association's reference masters do:
//   forward Euler with a fixed step, the event indicators read at the end
//   of each step and a sign change taken as an event there (no location:
//   the state is past the crossing by up to a step), fmi3Completed-
//   IntegratorStep's request honoured, and steps cut at the time events
//   the FMU announces through nextEventTime;
//
//   Co-Simulation (--cs): fmi3DoStep from one output time to the next.
//
// It writes CSV (`time`, then the outputs in model order) at every
// output time, as `hbgc run` samples them; with --discrete, then every
// variable of variability `discrete` (sampled control's discrete states).
//
//   fmi_importer DIR --t-end T --dt-out D [--step H] [--cs | --spec-loop] [--tolerance R]
//                [-p NAME=V]... [--token T] [--discrete]

#include "../../tools/fmu/fmi3.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace {

/// The value of attribute `name` in the XML element text `element`.
std::string attribute(const std::string &element, const std::string &name) {
  std::string key = " " + name + "=\"";
  std::size_t at = element.find(key);
  if (at == std::string::npos)
    return "";
  at += key.size();
  return element.substr(at, element.find('"', at) - at);
}

/// Every element `<tag ...>` of the document, as its text.
std::vector<std::string> elements(const std::string &xml, const std::string &tag) {
  std::vector<std::string> out;
  std::string open = "<" + tag + " ";
  for (std::size_t at = xml.find(open); at != std::string::npos; at = xml.find(open, at + 1))
    out.push_back(xml.substr(at, xml.find('>', at) - at));
  return out;
}

struct Description {
  std::string identifier, token;
  std::vector<std::pair<std::string, fmi3ValueReference>> outputs, discretes;
  std::map<std::string, fmi3ValueReference> byName;
  std::size_t states = 0, indicators = 0;
};

Description describe(const std::string &dir) {
  std::ifstream in(dir + "/modelDescription.xml");
  if (!in)
    throw std::runtime_error("no modelDescription.xml in " + dir);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string xml = ss.str();
  Description d;
  std::vector<std::string> me = elements(xml, "ModelExchange");
  if (me.empty())
    throw std::runtime_error("no ModelExchange element");
  d.identifier = attribute(me[0], "modelIdentifier");
  d.token = attribute(elements(xml, "fmiModelDescription")[0], "instantiationToken");
  std::map<fmi3ValueReference, std::string> names;
  for (const std::string &v : elements(xml, "Float64")) {
    auto vr = static_cast<fmi3ValueReference>(std::stoul(attribute(v, "valueReference")));
    names[vr] = attribute(v, "name");
    d.byName[attribute(v, "name")] = vr;
    if (attribute(v, "variability") == "discrete")
      d.discretes.emplace_back(names[vr], vr);
  }
  for (const std::string &o : elements(xml, "Output")) {
    auto vr = static_cast<fmi3ValueReference>(std::stoul(attribute(o, "valueReference")));
    d.outputs.emplace_back(names[vr], vr);
  }
  d.states = elements(xml, "ContinuousStateDerivative").size();
  d.indicators = elements(xml, "EventIndicator").size();
  return d;
}

void logger(fmi3InstanceEnvironment, fmi3Status status, fmi3String category, fmi3String message) {
  std::fprintf(stderr, "fmu [%s, status %d]: %s\n", category, static_cast<int>(status), message);
}

/// The FMU's functions, looked up by name.
struct Fmu {
  void *handle = nullptr;
  template <class F> F get(const char *name) {
    void *f = dlsym(handle, name);
    if (!f)
      throw std::runtime_error(std::string("the FMU does not export ") + name);
    return reinterpret_cast<F>(f);
  }
#define FMI(name) decltype(&::name) name = nullptr
  FMI(fmi3InstantiateModelExchange);
  FMI(fmi3InstantiateCoSimulation);
  FMI(fmi3FreeInstance);
  FMI(fmi3EnterInitializationMode);
  FMI(fmi3ExitInitializationMode);
  FMI(fmi3EnterEventMode);
  FMI(fmi3UpdateDiscreteStates);
  FMI(fmi3EnterContinuousTimeMode);
  FMI(fmi3CompletedIntegratorStep);
  FMI(fmi3SetTime);
  FMI(fmi3SetContinuousStates);
  FMI(fmi3GetContinuousStates);
  FMI(fmi3GetContinuousStateDerivatives);
  FMI(fmi3GetEventIndicators);
  FMI(fmi3GetNumberOfContinuousStates);
  FMI(fmi3GetNumberOfEventIndicators);
  FMI(fmi3GetFloat64);
  FMI(fmi3SetFloat64);
  FMI(fmi3DoStep);
  FMI(fmi3Terminate);
#undef FMI
  explicit Fmu(const std::string &path) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      throw std::runtime_error(std::string("dlopen: ") + dlerror());
#define LOOKUP(name) name = get<decltype(name)>(#name)
    LOOKUP(fmi3InstantiateModelExchange);
    LOOKUP(fmi3InstantiateCoSimulation);
    LOOKUP(fmi3FreeInstance);
    LOOKUP(fmi3EnterInitializationMode);
    LOOKUP(fmi3ExitInitializationMode);
    LOOKUP(fmi3EnterEventMode);
    LOOKUP(fmi3UpdateDiscreteStates);
    LOOKUP(fmi3EnterContinuousTimeMode);
    LOOKUP(fmi3CompletedIntegratorStep);
    LOOKUP(fmi3SetTime);
    LOOKUP(fmi3SetContinuousStates);
    LOOKUP(fmi3GetContinuousStates);
    LOOKUP(fmi3GetContinuousStateDerivatives);
    LOOKUP(fmi3GetEventIndicators);
    LOOKUP(fmi3GetNumberOfContinuousStates);
    LOOKUP(fmi3GetNumberOfEventIndicators);
    LOOKUP(fmi3GetFloat64);
    LOOKUP(fmi3SetFloat64);
    LOOKUP(fmi3DoStep);
    LOOKUP(fmi3Terminate);
#undef LOOKUP
  }
};

void check(fmi3Status s, const char *what) {
  if (s != fmi3OK)
    throw std::runtime_error(std::string(what) + " returned status " + std::to_string(s));
}

struct Options {
  std::string dir;
  double tEnd = 1, dtOut = 0.01, step = 1e-4, tolerance = 0;
  bool coSimulation = false, specLoop = false, discrete = false;
  std::string token; ///< instead of the description's (to test a wrong one)
  /// `--at T:NAME=V`: set a variable (an input) at output time T, in event
  /// mode (Model Exchange) or between steps (Co-Simulation).
  std::vector<std::tuple<double, std::string, double>> at;
  std::vector<std::pair<std::string, double>> params;
};

class Master {
public:
  Master(Fmu &fmu, const Description &d, fmi3Instance inst)
      : f_(fmu), d_(d), in_(inst), x_(d.states), dx_(d.states), z_(d.indicators) {}

  /// Sets the variables `--at` names for output time t.
  void setAt(const Options &o, double t, bool eventMode) {
    for (const auto &[when, name, value] : o.at) {
      if (std::abs(when - t) > 1e-12 * std::max(1.0, t))
        continue;
      auto it = d_.byName.find(name);
      if (it == d_.byName.end())
        throw std::runtime_error("no variable " + name);
      if (eventMode)
        check(f_.fmi3EnterEventMode(in_), "fmi3EnterEventMode");
      check(f_.fmi3SetFloat64(in_, &it->second, 1, &value, 1), "fmi3SetFloat64");
      if (eventMode) {
        eventIteration();
        check(f_.fmi3EnterContinuousTimeMode(in_), "fmi3EnterContinuousTimeMode");
        z_ = indicators(t, x_);
      }
    }
  }

  void row(double t) {
    std::vector<fmi3ValueReference> vrs;
    for (const auto &o : d_.outputs)
      vrs.push_back(o.second);
    for (const auto &v : d_.discretes)
      vrs.push_back(v.second);
    std::vector<double> y(vrs.size());
    check(f_.fmi3GetFloat64(in_, vrs.data(), vrs.size(), y.data(), y.size()), "fmi3GetFloat64");
    std::printf("%.17g", t);
    for (double v : y)
      std::printf(",%.17g", v);
    std::printf("\n");
  }

  /// Event mode until the FMU needs no more discrete updates; the next
  /// time event it announces, NaN if none.
  double eventIteration() {
    fmi3Boolean again = true, terminate = false, nominals = false, values = false,
                timeDefined = false;
    double next = 0;
    while (again) {
      check(f_.fmi3UpdateDiscreteStates(in_, &again, &terminate, &nominals, &values, &timeDefined,
                                        &next),
            "fmi3UpdateDiscreteStates");
      if (terminate)
        throw std::runtime_error("the FMU asked to terminate");
      if (values)
        check(f_.fmi3GetContinuousStates(in_, x_.data(), x_.size()), "fmi3GetContinuousStates");
    }
    return timeDefined ? next : std::nan("");
  }

  /// The standard's example loop for Model Exchange (FMI 3.0, 3.3): no
  /// event location.
  void specLoop(const Options &o) {
    double t = 0, nextTime = eventIteration();
    check(f_.fmi3EnterContinuousTimeMode(in_), "fmi3EnterContinuousTimeMode");
    check(f_.fmi3GetContinuousStates(in_, x_.data(), x_.size()), "fmi3GetContinuousStates");
    z_ = indicators(t, x_);
    row(t);
    std::size_t k = 1;
    while (t < o.tEnd) {
      double grid = std::min(o.tEnd, k * o.dtOut);
      double h = std::min(o.step, grid - t);
      bool timeEvent = nextTime > t && nextTime <= t + h;
      if (timeEvent)
        h = nextTime - t;
      derivatives(t, x_, dx_);
      for (std::size_t i = 0; i < x_.size(); ++i)
        x_[i] += h * dx_[i];
      t = timeEvent ? nextTime : t + h;
      std::vector<double> z = indicators(t, x_);
      fmi3Boolean enter = false, terminate = false;
      check(f_.fmi3CompletedIntegratorStep(in_, true, &enter, &terminate),
            "fmi3CompletedIntegratorStep");
      if (terminate)
        throw std::runtime_error("the FMU asked to terminate");
      bool stateEvent = false;
      for (std::size_t i = 0; i < z.size(); ++i)
        stateEvent = stateEvent || (z[i] > 0) != (z_[i] > 0);
      z_ = z;
      timeEvents += timeEvent;
      if (enter || stateEvent || timeEvent) {
        check(f_.fmi3EnterEventMode(in_), "fmi3EnterEventMode");
        nextTime = eventIteration();
        check(f_.fmi3EnterContinuousTimeMode(in_), "fmi3EnterContinuousTimeMode");
        ++events;
        z_ = indicators(t, x_);
        for (std::size_t i = 0; i < z_.size(); ++i)
          if (z_[i] == 0)
            throw std::runtime_error("event indicator " + std::to_string(i) +
                                     " is zero after event mode at t = " + std::to_string(t));
      }
      if (t >= grid * (1 - 1e-12)) {
        t = grid;
        check(f_.fmi3SetTime(in_, t), "fmi3SetTime");
        check(f_.fmi3SetContinuousStates(in_, x_.data(), x_.size()), "fmi3SetContinuousStates");
        row(t);
        ++k;
      }
    }
  }

  void derivatives(double t, const std::vector<double> &x, std::vector<double> &dx) {
    check(f_.fmi3SetTime(in_, t), "fmi3SetTime");
    check(f_.fmi3SetContinuousStates(in_, x.data(), x.size()), "fmi3SetContinuousStates");
    check(f_.fmi3GetContinuousStateDerivatives(in_, dx.data(), dx.size()),
          "fmi3GetContinuousStateDerivatives");
  }

  /// Classic RK4 from (t, x) over h.
  std::vector<double> rk4(double t, const std::vector<double> &x, double h) {
    std::size_t n = x.size();
    std::vector<double> k1(n), k2(n), k3(n), k4(n), y(n), out(n);
    derivatives(t, x, k1);
    for (std::size_t i = 0; i < n; ++i)
      y[i] = x[i] + h / 2 * k1[i];
    derivatives(t + h / 2, y, k2);
    for (std::size_t i = 0; i < n; ++i)
      y[i] = x[i] + h / 2 * k2[i];
    derivatives(t + h / 2, y, k3);
    for (std::size_t i = 0; i < n; ++i)
      y[i] = x[i] + h * k3[i];
    derivatives(t + h, y, k4);
    for (std::size_t i = 0; i < n; ++i)
      out[i] = x[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    return out;
  }

  /// The indicators at (t, x).
  std::vector<double> indicators(double t, const std::vector<double> &x) {
    std::vector<double> z(d_.indicators);
    check(f_.fmi3SetTime(in_, t), "fmi3SetTime");
    check(f_.fmi3SetContinuousStates(in_, x.data(), x.size()), "fmi3SetContinuousStates");
    if (!z.empty())
      check(f_.fmi3GetEventIndicators(in_, z.data(), z.size()), "fmi3GetEventIndicators");
    return z;
  }

  static bool crossed(const std::vector<double> &a, const std::vector<double> &b) {
    for (std::size_t k = 0; k < a.size(); ++k)
      if ((a[k] > 0) != (b[k] > 0))
        return true;
    return false;
  }

  void modelExchange(const Options &o) {
    eventIteration();
    check(f_.fmi3EnterContinuousTimeMode(in_), "fmi3EnterContinuousTimeMode");
    check(f_.fmi3GetContinuousStates(in_, x_.data(), x_.size()), "fmi3GetContinuousStates");
    double t = 0;
    z_ = indicators(t, x_);
    row(t);
    std::size_t k = 1;
    while (t < o.tEnd) {
      double grid = std::min(o.tEnd, k * o.dtOut);
      double h = std::min(o.step, grid - t);
      std::vector<double> x = rk4(t, x_, h);
      std::vector<double> z = indicators(t + h, x);
      if (crossed(z_, z)) {
        // Bisection on the step for the first crossing, to 1e-13 in time;
        // the state just after it.
        double lo = 0, hi = h;
        while (hi - lo > 1e-13 * std::max(1.0, t)) {
          double mid = (lo + hi) / 2;
          std::vector<double> xm = rk4(t, x_, mid);
          if (crossed(z_, indicators(t + mid, xm)))
            hi = mid;
          else
            lo = mid;
        }
        x = rk4(t, x_, hi);
        t += hi;
        x_ = x;
        check(f_.fmi3SetTime(in_, t), "fmi3SetTime");
        check(f_.fmi3SetContinuousStates(in_, x_.data(), x_.size()), "fmi3SetContinuousStates");
        check(f_.fmi3EnterEventMode(in_), "fmi3EnterEventMode");
        eventIteration();
        check(f_.fmi3EnterContinuousTimeMode(in_), "fmi3EnterContinuousTimeMode");
        ++events;
        z_ = indicators(t, x_);
        if (std::getenv("FMI_IMPORTER_TRACE")) {
          std::fprintf(stderr, "event at t = %.12g:", t);
          for (double v : z_)
            std::fprintf(stderr, " %.3g", v);
          std::fprintf(stderr, "\n");
        }
      } else {
        t += h;
        x_ = x;
        z_ = z;
        fmi3Boolean enter = false, terminate = false;
        check(f_.fmi3CompletedIntegratorStep(in_, true, &enter, &terminate),
              "fmi3CompletedIntegratorStep");
      }
      if (t >= grid) {
        t = grid; // the step ended on it
        check(f_.fmi3SetTime(in_, t), "fmi3SetTime");
        check(f_.fmi3SetContinuousStates(in_, x_.data(), x_.size()), "fmi3SetContinuousStates");
        setAt(o, t, true);
        row(t);
        ++k;
      }
    }
  }

  void coSimulation(const Options &o) {
    double t = 0;
    row(t);
    for (std::size_t k = 1; t < o.tEnd; ++k) {
      double next = std::min(o.tEnd, k * o.dtOut);
      fmi3Boolean eventNeeded, terminate, early;
      double last;
      check(f_.fmi3DoStep(in_, t, next - t, true, &eventNeeded, &terminate, &early, &last),
            "fmi3DoStep");
      t = next;
      setAt(o, t, false);
      row(t);
    }
  }

  std::size_t events = 0, timeEvents = 0;

private:
  Fmu &f_;
  const Description &d_;
  fmi3Instance in_;
  std::vector<double> x_, dx_, z_;
};

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--t-end")
        o.tEnd = std::stod(value());
      else if (a == "--dt-out")
        o.dtOut = std::stod(value());
      else if (a == "--step")
        o.step = std::stod(value());
      else if (a == "--cs")
        o.coSimulation = true;
      else if (a == "--discrete")
        o.discrete = true;
      else if (a == "--spec-loop")
        o.specLoop = true;
      else if (a == "--tolerance")
        o.tolerance = std::stod(value());
      else if (a == "--token")
        o.token = value();
      else if (a == "--at") {
        std::string s = value();
        std::size_t colon = s.find(':'), eq = s.find('=');
        o.at.emplace_back(std::stod(s.substr(0, colon)), s.substr(colon + 1, eq - colon - 1),
                          std::stod(s.substr(eq + 1)));
      }
      else if (a == "-p") {
        std::string kv = value();
        o.params.emplace_back(kv.substr(0, kv.find('=')), std::stod(kv.substr(kv.find('=') + 1)));
      } else
        o.dir = a;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "fmi_importer: %s\n", e.what());
      return 2;
    }
  }
  try {
    Description d = describe(o.dir);
    if (!o.token.empty())
      d.token = o.token;
    Fmu fmu(o.dir + "/binaries/x86_64-linux/" + d.identifier + ".so");
    fmi3Instance in =
        o.coSimulation
            ? fmu.fmi3InstantiateCoSimulation("importer", d.token.c_str(), "", false, false, false,
                                              false, nullptr, 0, nullptr, logger, nullptr)
            : fmu.fmi3InstantiateModelExchange("importer", d.token.c_str(), "", false, false,
                                               nullptr, logger);
    if (!in)
      throw std::runtime_error("instantiation failed");
    size_t n = 0, ni = 0;
    if (!o.coSimulation) {
      check(fmu.fmi3GetNumberOfContinuousStates(in, &n), "fmi3GetNumberOfContinuousStates");
      check(fmu.fmi3GetNumberOfEventIndicators(in, &ni), "fmi3GetNumberOfEventIndicators");
      if (n != d.states || ni != d.indicators)
        throw std::runtime_error("the FMU's numbers of states and indicators differ from its "
                                 "modelDescription.xml's");
    }
    check(fmu.fmi3EnterInitializationMode(in, o.tolerance > 0, o.tolerance, 0, true, o.tEnd),
          "fmi3EnterInitializationMode");
    for (const auto &[name, v] : o.params) {
      auto it = d.byName.find(name);
      if (it == d.byName.end())
        throw std::runtime_error("no variable " + name);
      check(fmu.fmi3SetFloat64(in, &it->second, 1, &v, 1), "fmi3SetFloat64");
    }
    check(fmu.fmi3ExitInitializationMode(in), "fmi3ExitInitializationMode");
    if (!o.discrete)
      d.discretes.clear();
    std::printf("time");
    for (const auto &out : d.outputs)
      std::printf(",%s", out.first.c_str());
    for (const auto &v : d.discretes)
      std::printf(",%s", v.first.c_str());
    std::printf("\n");
    Master m(fmu, d, in);
    if (o.coSimulation)
      m.coSimulation(o);
    else if (o.specLoop)
      m.specLoop(o);
    else
      m.modelExchange(o);
    check(fmu.fmi3Terminate(in), "fmi3Terminate");
    fmu.fmi3FreeInstance(in);
    std::fprintf(stderr, "fmi_importer: %zu states, %zu indicators, %zu events, %zu time events\n",
                 d.states, d.indicators, m.events, m.timeEvents);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "fmi_importer: %s\n", e.what());
    return 1;
  }
  return 0;
}
