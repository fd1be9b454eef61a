//===- python/module.cpp - The hbg Python module's compiled part ----------===//
//
// `_hbg`: the embedding API (hbg/hbg.h) as Python sees it, and nothing of
// its own: compiling, running, driving a run step by step and sweeping
// are hbg::Compiler's, hbg::Simulation's and hbg::Model's. python/hbg/
// __init__.py builds the module users import on it (names, NumPy columns,
// pandas, plots, notebook views, exceptions with their fields).
//
// Runs release the GIL: a sweep's threads, or a notebook's other work,
// go on while a model integrates. A Result's columns are NumPy arrays
// over the Result's own vectors (no copy), which keep it alive.
//
//===----------------------------------------------------------------------===//

#include "hbg/driver/Internal.h"
#include "hbg/driver/Pipeline.h"
#include "hbg/hbg.h"
#include "hbg/support/Source.h"
#include "hbg/tooling/Build.h"
#include "hbg/tooling/Dot.h"
#include "../tools/common/Plot.h"

#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <dlfcn.h>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

namespace py = pybind11;

namespace {
/// `rest` under the prefix the module is installed in (found from the
/// module's own file, so a moved prefix works), when it exists there.
std::string underPrefix(const char *rest) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&underPrefix), &info) == 0 || !info.dli_fname)
    return "";
  std::filesystem::path p =
      std::filesystem::path(info.dli_fname).parent_path() / HBG_PYTHON_TO_PREFIX / rest;
  std::error_code ec;
  return std::filesystem::exists(p, ec) ? p.lexically_normal().string() : "";
}
} // namespace

// Where an installed module's compiler finds the standard library and
// LLVM's backend (hbg/support/Installation.h): in its own prefix. In the
// build tree neither exists there, and the build tree's are found.
extern "C" const char *hbg_installed_stdlib() {
  static const std::string dir = underPrefix(HBG_PYTHON_STDLIB);
  return dir.empty() ? nullptr : dir.c_str();
}
extern "C" const char *hbg_installed_backend() {
  static const std::string file = underPrefix(HBG_PYTHON_BACKEND);
  return file.empty() ? nullptr : file.c_str();
}

namespace {

using Overrides = std::map<std::string, double>;

/// The exception classes of hbg/__init__.py (register_errors), which the
/// translator below raises with their fields.
py::object compileErrorClass, simulationErrorClass;

py::dict diagnosticDict(const hbg::CompileDiagnostic &d) {
  py::dict out;
  out["file"] = d.file;
  out["line"] = d.line;
  out["column"] = d.column;
  out["kind"] = d.kind;
  out["severity"] = d.severity;
  out["message"] = d.message;
  out["rendered"] = d.rendered;
  py::list notes;
  for (const hbg::CompileDiagnostic &n : d.notes)
    notes.append(diagnosticDict(n));
  out["notes"] = notes;
  return out;
}

py::object failureDict(const std::optional<hbg::RunDiagnostic> &f) {
  if (!f)
    return py::none();
  py::dict out;
  out["kind"] = hbg::diagKindName(f->kind);
  out["time"] = f->time;
  out["mode"] = f->mode;
  out["element"] = f->element;
  out["loop"] = f->loop;
  out["message"] = f->message;
  return out;
}

/// A copy of `v` as a NumPy array.
py::array_t<double> array(const std::vector<double> &v) {
  return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}

/// `settings` (the experiment block's names: t_start, t_end, dt_out, dt,
/// max_step, rtol, atol, method) over the model's experiment block at
/// `parameters`, over the defaults: the settings of one run.
hbg::SimulationOptions runOptions(const hbg::Model &model, const Overrides &parameters,
                                  const py::dict &settings) {
  hbg::Experiment given;
  for (auto [key, value] : settings) {
    std::string name = py::str(key);
    if (value.is_none())
      continue;
    if (name == "method") {
      hbg::runtime::Method m;
      std::string text = py::str(value);
      if (!hbg::runtime::parseMethod(text, m))
        throw std::invalid_argument("unknown method `" + text + "`");
      given.method = m;
      continue;
    }
    bool known = false;
#define HBG_SETTING(Id, text, field, positive)                                                      \
  if (name == text) {                                                                               \
    given.field = value.cast<double>();                                                             \
    known = true;                                                                                   \
  }
#include "hbg/runtime/ExperimentSettings.def"
    if (!known)
      throw std::invalid_argument("unknown setting `" + name +
                                  "`; the settings are t_start, t_end, dt_out, dt, max_step, "
                                  "rtol, atol and method");
  }
  return given.apply(model.experiment(parameters).apply());
}

/// A Simulation of `model` with `parameters` (inputs among them set as
/// inputs).
hbg::Simulation simulationOf(const hbg::Model &model, const Overrides &parameters,
                             const hbg::SimulationOptions &opts) {
  hbg::Simulation sim(model, opts);
  const std::vector<std::string> &inputs = model.inputNames();
  for (const auto &[name, value] : parameters) {
    if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
      sim.setInput(name, value);
    else
      sim.setParameter(name, value);
  }
  return sim;
}

std::shared_ptr<hbg::Result> simulate(const hbg::Model &model, const Overrides &parameters,
                                      const py::dict &settings) {
  hbg::SimulationOptions opts = runOptions(model, parameters, settings);
  hbg::Simulation sim = simulationOf(model, parameters, opts);
  auto r = std::make_shared<hbg::Result>();
  py::gil_scoped_release released;
  *r = sim.run();
  return r;
}

/// One run per entry of `points`, on `threads` threads (0: the machine's),
/// the GIL released; results in the order of `points`, each as a serial
/// run gives it.
std::vector<std::shared_ptr<hbg::Result>> sweep(const hbg::Model &model,
                                                const std::vector<Overrides> &points,
                                                const py::dict &settings, unsigned threads) {
  std::vector<hbg::SimulationOptions> opts;
  for (const Overrides &p : points)
    opts.push_back(runOptions(model, p, settings));
  std::vector<std::shared_ptr<hbg::Result>> out(points.size());
  for (auto &r : out)
    r = std::make_shared<hbg::Result>();
  py::gil_scoped_release released;
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(1, points.size())));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  std::mutex failedMutex;
  auto work = [&] {
    for (std::size_t k; (k = next++) < points.size();) {
      try {
        *out[k] = simulationOf(model, points[k], opts[k]).run();
      } catch (...) {
        std::lock_guard<std::mutex> lock(failedMutex);
        if (!failed)
          failed = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  if (failed)
    std::rethrow_exception(failed);
  return out;
}

py::dict eventDict(const hbg::Event &ev) {
  py::dict d;
  d["time"] = ev.time;
  d["transitions"] = ev.transitions;
  d["modes"] = ev.modes;
  d["real"] = ev.real;
  py::list states;
  for (const auto &x : ev.states)
    states.append(array(x));
  d["states"] = states;
  d["before"] = array(ev.before);
  d["after"] = array(ev.after);
  d["outputs_before"] = array(ev.outputsBefore);
  d["outputs_after"] = array(ev.outputsAfter);
  d["discrete_before"] = array(ev.discreteBefore);
  d["discrete_after"] = array(ev.discreteAfter);
  d["energy_before"] = array(ev.energyBefore);
  d["energy_after"] = array(ev.energyAfter);
  d["stored_before"] = ev.storedBefore;
  d["stored_after"] = ev.storedAfter;
  d["removed"] = ev.removed;
  return d;
}

/// A rows x cols row-major matrix as a 2-D NumPy array.
py::array_t<double> matrix(const std::vector<double> &v, std::size_t rows, std::size_t cols) {
  py::array_t<double> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)});
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

py::dict linearModel(const hbg::LinearModel &m) {
  std::size_t n = m.states.size(), k = m.inputs.size(), p = m.outputs.size();
  py::dict d;
  d["states"] = m.states;
  d["inputs"] = m.inputs;
  d["outputs"] = m.outputs;
  d["A"] = matrix(m.a, n, n);
  d["B"] = matrix(m.b, n, k);
  d["C"] = matrix(m.c, p, n);
  d["D"] = matrix(m.d, p, k);
  py::array_t<std::complex<double>> poles(static_cast<py::ssize_t>(m.poles.size()));
  std::copy(m.poles.begin(), m.poles.end(), poles.mutable_data());
  d["poles"] = poles;
  d["time"] = m.time;
  d["mode"] = m.mode;
  return d;
}

hbg::SteadyOptions steadyOptions(py::object period, std::size_t rowsPerPeriod, bool losses) {
  hbg::SteadyOptions o;
  if (!period.is_none())
    o.period = period.cast<double>();
  o.rowsPerPeriod = rowsPerPeriod;
  o.losses = losses;
  return o;
}

py::dict steadyState(hbg::SteadyState &&state) {
  auto kept = std::make_shared<hbg::SteadyState>(std::move(state));
  hbg::SteadyState &s = *kept;
  py::dict d;
  d["ok"] = s.ok();
  d["error"] = s.error;
  d["failure"] = failureDict(s.failure);
  d["period"] = s.period;
  d["residual"] = s.residual;
  auto rows = std::make_shared<hbg::Result>(std::move(s.rows));
  d["rows"] = rows;
  py::dict figures;
  const std::vector<std::string> &names = rows->names;
  for (std::size_t i = 0; i < s.figures.size() && i + 1 < names.size(); ++i) {
    py::dict f;
    f["mean"] = s.figures[i].mean;
    f["rms"] = s.figures[i].rms;
    f["min"] = s.figures[i].min;
    f["max"] = s.figures[i].max;
    figures[py::str(names[i + 1])] = f;
  }
  d["figures"] = figures;
  d["modes"] = s.modes;
  d["mode_phases"] = s.modePhases;
  d["multipliers"] = s.multipliers;
  d["state"] = array(s.state);
  d["start_time"] = s.startTime;
  py::dict losses;
  for (std::size_t i = 0; i < s.losses.elements.size() && i < s.losses.mean.size(); ++i)
    losses[py::str(s.losses.elements[i].path)] = s.losses.mean[i];
  if (!s.losses.elements.empty())
    losses["events"] = s.losses.eventLoss;
  d["losses"] = losses;
  // SteadyState::efficiency, which names unknown elements and close ones.
  d["efficiency"] = py::cpp_function(
      [kept](const std::string &out, const std::string &in) { return kept->efficiency(out, in); });
  d["transient_periods"] = s.transientPeriods;
  d["periods_simulated"] = s.periodsSimulated;
  return d;
}

/// The bond graph of the model `text` in `mode`, in Graphviz's DOT
/// language, as `hbgc dot` draws it.
std::string dotText(const std::string &text, const std::string &name, const Overrides &parameters,
                    const std::vector<std::string> &libPath, const std::string &mode) {
  hbg::SourceManager sm;
  std::uint32_t file = sm.addBuffer(name, text);
  hbg::DiagnosticEngine diags(sm);
  hbg::driver::PipelineOptions o;
  o.stopAfter = hbg::driver::Stage::Causality;
  o.mode = mode;
  o.libPath = libPath;
  o.parameters = parameters;
  hbg::driver::FrontendResult fe = hbg::driver::runFrontend(sm, file, diags, o);
  if (diags.hasErrors() || !fe.graph || !fe.causality)
    throw hbg::driver::compileError(diags, sm);
  return hbg::driver::dot(*fe.graph, *fe.causality, fe.ast->instances);
}

/// A run's outputs against time, with its events and modes, as `hbgc run
/// --plot` draws them (SVG).
std::string plotSvg(const hbg::Result &r, const std::string &title, bool together) {
  if (r.columns.empty() || r.columns[0].empty())
    return "";
  const std::vector<double> &t = r.columns[0];
  hbg::tools::Plot plot(r.names, t.front(), t.back());
  std::vector<double> row(r.columns.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    for (std::size_t c = 0; c < row.size(); ++c)
      row[c] = r.columns[c][i];
    plot.row(row.data());
  }
  for (const hbg::Event &ev : r.events)
    plot.event(ev.time, ev.modes.front(), ev.modes.back());
  return plot.svg({title, together, true, true});
}

py::list eventList(const std::vector<hbg::Event> &events) {
  py::list out;
  for (const hbg::Event &ev : events)
    out.append(eventDict(ev));
  return out;
}

} // namespace

PYBIND11_MODULE(_hbg, m) {
  m.doc() = "hbg's embedding API (hbg/hbg.h); import hbg, not this";

  m.def("register_errors", [](py::object compileError, py::object simulationError) {
    compileErrorClass = std::move(compileError);
    simulationErrorClass = std::move(simulationError);
  });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const hbg::CompileError &e) {
      py::list diagnostics;
      for (const hbg::CompileDiagnostic &d : e.diagnostics())
        diagnostics.append(diagnosticDict(d));
      py::object error = compileErrorClass(e.what(), diagnostics);
      PyErr_SetObject(compileErrorClass.ptr(), error.ptr());
    } catch (const hbg::SimulationError &e) {
      py::object error =
          simulationErrorClass(e.what(), failureDict(e.diagnostic()), py::none(), e.details());
      PyErr_SetObject(simulationErrorClass.ptr(), error.ptr());
    }
  });

  py::class_<hbg::Model>(m, "Model")
      .def_property_readonly("name", &hbg::Model::name)
      .def_property_readonly("parameter_names", &hbg::Model::parameterNames)
      .def_property_readonly("input_names", &hbg::Model::inputNames)
      .def_property_readonly("state_names", &hbg::Model::stateNames)
      .def_property_readonly("output_names", &hbg::Model::outputNames)
      .def_property_readonly("switched", &hbg::Model::switched)
      .def("parameter_values", &hbg::Model::parameterValues, py::arg("overrides") = Overrides{})
      .def("structural",
           [](const hbg::Model &model, const std::string &name) -> py::object {
             double value = 0;
             if (!model.structural(name, &value))
               return py::none();
             return py::float_(value);
           })
      .def("initial_state", &hbg::Model::initialState)
      .def("experiment",
           [](const hbg::Model &model, const Overrides &parameters) {
             hbg::Experiment e = model.experiment(parameters);
             py::dict out;
#define HBG_SETTING(Id, text, field, positive)                                                      \
  if (e.field)                                                                                      \
    out[text] = *e.field;
#include "hbg/runtime/ExperimentSettings.def"
             if (e.method)
               out["method"] = hbg::runtime::methodName(*e.method);
             return out;
           })
      .def("linearize",
           [](const hbg::Model &model, double at, const std::string &mode,
              const Overrides &parameters) {
             hbg::LinearModel m;
             {
               py::gil_scoped_release released;
               m = model.linearize(at, mode, parameters);
             }
             return linearModel(m);
           })
      .def("steady",
           [](const hbg::Model &model, const Overrides &parameters, py::object period,
              std::size_t rowsPerPeriod, bool losses) {
             hbg::SteadyOptions o = steadyOptions(period, rowsPerPeriod, losses);
             hbg::SteadyState s;
             {
               py::gil_scoped_release released;
               s = model.steady(parameters, o);
             }
             return steadyState(std::move(s));
           })
      .def("ac",
           [](const hbg::Model &model, const std::string &input,
              const std::vector<double> &frequencies, const Overrides &parameters,
              py::object period) {
             hbg::SteadyOptions o = steadyOptions(period, 1000, false);
             hbg::FrequencyResponse f;
             {
               py::gil_scoped_release released;
               f = model.frequencyResponse(input, frequencies, parameters, o);
             }
             py::dict d;
             d["ok"] = f.ok();
             d["error"] = f.error;
             d["failure"] = failureDict(f.failure);
             d["input"] = f.input;
             d["frequencies"] = array(f.frequencies);
             py::dict response;
             for (std::size_t i = 0; i < f.outputs.size() && i < f.response.size(); ++i)
               response[py::str(f.outputs[i])] = f.response[i];
             d["response"] = response;
             d["period"] = f.period;
             d["residual"] = f.residual;
             return d;
           })
      .def("simulate", &simulate)
      .def("sweep", &sweep)
      .def("simulation",
           [](const hbg::Model &model, const Overrides &parameters, const py::dict &settings) {
             return std::make_unique<hbg::Simulation>(
                 simulationOf(model, parameters, runOptions(model, parameters, settings)));
           })
      .def("build",
           [](const hbg::Model &model, const std::string &path, bool fmu) {
             hbg::driver::BuildOptions opts;
             opts.output = path;
             opts.fmu = fmu;
             py::gil_scoped_release released;
             hbg::driver::buildSimulator(model, opts);
           });

  py::class_<hbg::Result, std::shared_ptr<hbg::Result>>(m, "Result")
      .def_readonly("names", &hbg::Result::names)
      .def_readonly("state_names", &hbg::Result::stateNames)
      .def_readonly("discrete_names", &hbg::Result::discreteNames)
      .def_property_readonly("ok", &hbg::Result::ok)
      .def_readonly("error", &hbg::Result::error)
      .def_property_readonly("failure", [](const hbg::Result &r) { return failureDict(r.failure); })
      .def("column",
           [](py::object self, std::size_t i) {
             const hbg::Result &r = self.cast<const hbg::Result &>();
             if (i >= r.columns.size())
               throw py::index_error("no column " + std::to_string(i));
             const std::vector<double> &c = r.columns[i];
             // A view of the Result's own vector, which `self` keeps alive;
             // read-only, as the Result is.
             py::array_t<double> a(static_cast<py::ssize_t>(c.size()), c.data(), self);
             py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
             return a;
           })
      .def_property_readonly("events", [](const hbg::Result &r) { return eventList(r.events); })
      .def_property_readonly("warnings",
                             [](const hbg::Result &r) {
                               std::vector<std::string> out;
                               for (const hbg::RunDiagnostic &w : r.warnings)
                                 out.push_back(w.message);
                               return out;
                             })
      .def_property_readonly("final_state", [](const hbg::Result &r) { return array(r.finalState); })
      .def_readonly("final_mode", &hbg::Result::finalMode)
      .def_property_readonly("stats",
                             [](const hbg::Result &r) {
                               py::dict s;
                               s["rows"] = r.rows;
                               s["steps"] = r.steps;
                               s["rejected_steps"] = r.rejectedSteps;
                               s["rhs_calls"] = r.rhsCalls;
                               s["jacobian_calls"] = r.jacobianCalls;
                               s["factorisations"] = r.factorisations;
                               s["events"] = r.events.size() + r.eventsDropped;
                               s["mode_iterations"] = r.modeIterations;
                               s["modes_compiled"] = r.modesCompiled;
                               s["compile_seconds"] = r.compileSeconds;
                               s["run_seconds"] = r.runSeconds;
                               py::list methods;
                               for (const auto &span : r.methods)
                                 methods.append(py::make_tuple(
                                     hbg::runtime::methodName(span.method), span.from, span.to));
                               s["methods"] = methods;
                               return s;
                             })
      .def("csv",
           [](const hbg::Result &r) {
             std::ostringstream os;
             r.writeCsv(os);
             return os.str();
           })
      .def("events_csv", [](const hbg::Result &r) {
        std::ostringstream os;
        r.writeEventsCsv(os);
        return os.str();
      });

  py::class_<hbg::Simulation>(m, "Simulation")
      .def("set_input", &hbg::Simulation::setInput)
      .def("input", &hbg::Simulation::input)
      .def("set_parameter", &hbg::Simulation::setParameter)
      .def("start",
           [](hbg::Simulation &s) {
             py::gil_scoped_release released;
             s.start();
           })
      .def("advance",
           [](hbg::Simulation &s, double t) {
             py::gil_scoped_release released;
             s.advance(t);
           })
      .def_property_readonly("started", &hbg::Simulation::started)
      .def_property_readonly("time", &hbg::Simulation::time)
      .def_property_readonly("state", [](const hbg::Simulation &s) { return array(s.state()); })
      .def("state_of", py::overload_cast<const std::string &>(&hbg::Simulation::state, py::const_))
      .def_property_readonly("outputs", [](const hbg::Simulation &s) { return array(s.outputs()); })
      .def("output", &hbg::Simulation::output)
      .def_property_readonly("mode", &hbg::Simulation::mode)
      .def_property_readonly("events",
                             [](const hbg::Simulation &s) { return eventList(s.events()); })
      .def_property_readonly("steps", &hbg::Simulation::steps);

  m.def("dot_text", &dotText);
  m.def("plot_svg", &plotSvg);
  m.def(
      "compile_file",
      [](const std::string &path, const Overrides &parameters,
         const std::vector<std::string> &libPath) {
        hbg::CompilerOptions opts;
        opts.parameters = parameters;
        opts.libPath = libPath;
        py::gil_scoped_release released;
        return hbg::Compiler(opts).compileFile(path);
      },
      py::arg("path"), py::arg("parameters") = Overrides{},
      py::arg("lib_path") = std::vector<std::string>{});
  m.def(
      "compile_string",
      [](const std::string &text, const std::string &name, const Overrides &parameters,
         const std::vector<std::string> &libPath) {
        hbg::CompilerOptions opts;
        opts.parameters = parameters;
        opts.libPath = libPath;
        py::gil_scoped_release released;
        return hbg::Compiler(opts).compileString(text, name);
      },
      py::arg("text"), py::arg("name") = "<string>", py::arg("parameters") = Overrides{},
      py::arg("lib_path") = std::vector<std::string>{});
}
