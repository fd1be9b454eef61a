//===- compiler/driver/CApi.cpp - hbg/hbg_c.h over hbg/hbg.h --------------===//
//
// Each C function calls the C++ API and turns its exceptions into
// HBG_ERROR with the message kept for hbg_sim_error() (hbg_steady_error()
// for a steady state): no exception crosses into C.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg_c.h"
#include "hbg/hbg.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <optional>

struct hbg_model {
  hbg::Model model;
};

struct hbg_sim {
  explicit hbg_sim(const hbg::Model &m) : sim(m) {}
  hbg::Simulation sim;
  std::string error, mode;
  /// The last error's diagnostic when a run failed.
  std::optional<hbg::RunDiagnostic> failure;
};

struct hbg_steady {
  hbg::SteadyState steady;
  /// Set instead of `steady.error` when the call itself was refused (an
  /// unknown name): the C++ API threw.
  std::string refused;
  const std::string &error() const { return refused.empty() ? steady.error : refused; }
};

struct hbg_ac {
  hbg::FrequencyResponse response;
  /// Set instead of `response.error` when the call itself was refused.
  std::string refused;
  const std::string &error() const { return refused.empty() ? response.error : refused; }
};

namespace {
char *copyString(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out)
    std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

template <class F> hbg_model *compile(char **error, F &&f) {
  if (error)
    *error = nullptr;
  try {
    return new hbg_model{f(hbg::Compiler())};
  } catch (const std::exception &e) {
    if (error)
      *error = copyString(e.what());
  }
  return nullptr;
}

/// A new result of an analysis (hbg_steady, hbg_ac) that `f(out,
/// parameters)` fills, with `count` parameters or inputs set by name:
/// what the C++ API throws is kept in `refused` (`fallback` when its
/// message is empty). NULL only when out of memory.
template <class R, class F>
R *analyse(size_t count, const char *const *names, const double *values, const char *fallback,
           F &&f) {
  try {
    auto *out = new R;
    try {
      std::map<std::string, double> parameters;
      for (size_t i = 0; i < count; ++i)
        parameters[names && names[i] ? names[i] : ""] = values ? values[i] : std::nan("");
      f(*out, parameters);
    } catch (const std::exception &e) {
      out->refused = e.what();
      if (out->refused.empty())
        out->refused = fallback;
    }
    return out;
  } catch (const std::exception &) {
    return nullptr;
  }
}

/// Runs `f` on `sim`, keeping the message of what it throws.
template <class F> int guarded(hbg_sim *sim, F &&f) {
  if (!sim)
    return HBG_ERROR;
  try {
    f(sim->sim);
    return HBG_OK;
  } catch (const hbg::SimulationError &e) {
    sim->error = e.what();
    sim->failure = e.diagnostic();
  } catch (const std::exception &e) {
    sim->error = e.what();
    sim->failure.reset();
  }
  return HBG_ERROR;
}

const char *at(const std::vector<std::string> &names, size_t i) {
  return i < names.size() ? names[i].c_str() : nullptr;
}

int copyOut(hbg_sim *sim, const std::vector<double> &values, double *out, size_t n,
            const char *what) {
  if (n < values.size() || (!out && !values.empty())) {
    sim->error = std::string("room for ") + std::to_string(n) + " " + what + ", the model has " +
                 std::to_string(values.size());
    return HBG_ERROR;
  }
  std::copy(values.begin(), values.end(), out);
  return HBG_OK;
}
} // namespace

extern "C" {

hbg_model *hbg_compile_file(const char *path, char **error) {
  return compile(error, [&](const hbg::Compiler &c) { return c.compileFile(path ? path : ""); });
}

hbg_model *hbg_compile_string(const char *text, const char *name, char **error) {
  return compile(error, [&](const hbg::Compiler &c) {
    return c.compileString(text ? text : "", name ? name : "<string>");
  });
}

void hbg_model_free(hbg_model *model) { delete model; }
void hbg_free_string(char *text) { std::free(text); }

const char *hbg_model_name(const hbg_model *m) { return m ? m->model.name().c_str() : nullptr; }
size_t hbg_model_parameter_count(const hbg_model *m) {
  return m ? m->model.parameterNames().size() : 0;
}
const char *hbg_model_parameter_name(const hbg_model *m, size_t i) {
  return m ? at(m->model.parameterNames(), i) : nullptr;
}
size_t hbg_model_input_count(const hbg_model *m) { return m ? m->model.inputNames().size() : 0; }
const char *hbg_model_input_name(const hbg_model *m, size_t i) {
  return m ? at(m->model.inputNames(), i) : nullptr;
}
size_t hbg_model_output_count(const hbg_model *m) { return m ? m->model.outputNames().size() : 0; }
const char *hbg_model_output_name(const hbg_model *m, size_t i) {
  return m ? at(m->model.outputNames(), i) : nullptr;
}
size_t hbg_model_state_count(const hbg_model *m) { return m ? m->model.stateNames().size() : 0; }
const char *hbg_model_state_name(const hbg_model *m, size_t i) {
  return m ? at(m->model.stateNames(), i) : nullptr;
}

hbg_sim *hbg_sim_new(const hbg_model *model) {
  if (!model)
    return nullptr;
  try {
    return new hbg_sim(model->model);
  } catch (const std::exception &) {
    return nullptr;
  }
}

void hbg_sim_free(hbg_sim *sim) { delete sim; }

int hbg_sim_set_parameter(hbg_sim *sim, const char *name, double value) {
  return guarded(sim, [&](hbg::Simulation &s) { s.setParameter(name ? name : "", value); });
}

int hbg_sim_set_start_time(hbg_sim *sim, double t) {
  return guarded(sim, [&](hbg::Simulation &s) {
    if (!std::isfinite(t))
      throw std::invalid_argument("the start time must be finite");
    s.options().tStart = t;
    if (s.options().tEnd < t)
      s.options().tEnd = t;
  });
}

int hbg_sim_set_method(hbg_sim *sim, const char *method) {
  return guarded(sim, [&](hbg::Simulation &s) {
    hbg::runtime::Method m;
    std::string name = method ? method : "";
    if (!hbg::runtime::parseMethod(name, m))
      throw std::invalid_argument("unknown method `" + name +
                                  "` (euler, rk4, dopri5, rosenbrock, auto)");
    s.options().method = m;
  });
}

int hbg_sim_set_tolerances(hbg_sim *sim, double rtol, double atol) {
  return guarded(sim, [&](hbg::Simulation &s) {
    if (!(rtol > 0) || !(atol >= 0) || !std::isfinite(rtol) || !std::isfinite(atol))
      throw std::invalid_argument("tolerances must be finite, rtol > 0 and atol >= 0");
    s.options().rtol = rtol;
    s.options().atol = atol;
  });
}

int hbg_sim_set_step(hbg_sim *sim, double step) {
  return guarded(sim, [&](hbg::Simulation &s) {
    if (!(step > 0) || !std::isfinite(step))
      throw std::invalid_argument("the step must be positive and finite");
    s.options().step = step;
  });
}

int hbg_sim_set_input(hbg_sim *sim, const char *name, double value) {
  return guarded(sim, [&](hbg::Simulation &s) { s.setInput(name ? name : "", value); });
}

int hbg_sim_start(hbg_sim *sim) {
  return guarded(sim, [&](hbg::Simulation &s) { s.start(); });
}

int hbg_sim_advance(hbg_sim *sim, double t) {
  return guarded(sim, [&](hbg::Simulation &s) { s.advance(t); });
}

double hbg_sim_time(const hbg_sim *sim) {
  return sim && sim->sim.started() ? sim->sim.time() : std::nan("");
}

int hbg_sim_outputs(hbg_sim *sim, double *out, size_t n) {
  std::vector<double> y;
  if (guarded(sim, [&](hbg::Simulation &s) { y = s.outputs(); }) != HBG_OK)
    return HBG_ERROR;
  return copyOut(sim, y, out, n, "outputs");
}

int hbg_sim_output(hbg_sim *sim, const char *name, double *value) {
  return guarded(sim, [&](hbg::Simulation &s) {
    double v = s.output(name ? name : "");
    if (value)
      *value = v;
  });
}

int hbg_sim_states(hbg_sim *sim, double *out, size_t n) {
  std::vector<double> x;
  if (guarded(sim, [&](hbg::Simulation &s) { x = s.state(); }) != HBG_OK)
    return HBG_ERROR;
  return copyOut(sim, x, out, n, "states");
}

const char *hbg_sim_mode(hbg_sim *sim) {
  if (guarded(sim, [&](hbg::Simulation &s) { sim->mode = s.mode(); }) != HBG_OK)
    return nullptr;
  return sim->mode.c_str();
}

size_t hbg_sim_event_count(const hbg_sim *sim) {
  return sim && sim->sim.started() ? sim->sim.events().size() : 0;
}

double hbg_sim_event_time(const hbg_sim *sim, size_t i) {
  if (i >= hbg_sim_event_count(sim))
    return std::nan("");
  return sim->sim.events()[i].time;
}

const char *hbg_sim_error(const hbg_sim *sim) { return sim ? sim->error.c_str() : ""; }

const char *hbg_sim_error_kind(const hbg_sim *sim) {
  return sim && sim->failure ? hbg::diagKindName(sim->failure->kind) : "";
}

double hbg_sim_error_time(const hbg_sim *sim) {
  return sim && sim->failure ? sim->failure->time : std::numeric_limits<double>::quiet_NaN();
}

const char *hbg_sim_error_element(const hbg_sim *sim) {
  return sim && sim->failure ? sim->failure->element.c_str() : "";
}

hbg_steady *hbg_model_steady(const hbg_model *model, size_t count, const char *const *names,
                             const double *values, double period, double rtol) {
  if (!model)
    return nullptr;
  return analyse<hbg_steady>(count, names, values, "the steady state could not be found",
                             [&](hbg_steady &out, const std::map<std::string, double> &parameters) {
                               hbg::SteadyOptions options;
                               if (period != 0)
                                 options.period = period;
                               if (rtol != 0)
                                 options.rtol = rtol;
                               out.steady = model->model.steady(parameters, options);
                             });
}

void hbg_steady_free(hbg_steady *steady) { delete steady; }

int hbg_steady_status(const hbg_steady *s) { return s && s->error().empty() ? HBG_OK : HBG_ERROR; }

const char *hbg_steady_error(const hbg_steady *s) { return s ? s->error().c_str() : ""; }

const char *hbg_steady_error_kind(const hbg_steady *s) {
  return s && s->refused.empty() && s->steady.failure
             ? hbg::diagKindName(s->steady.failure->kind)
             : "";
}

double hbg_steady_period(const hbg_steady *s) {
  return s ? s->steady.period : std::numeric_limits<double>::quiet_NaN();
}

double hbg_steady_residual(const hbg_steady *s) {
  return s && !s->steady.iterations.empty() ? s->steady.residual
                                            : std::numeric_limits<double>::quiet_NaN();
}

size_t hbg_steady_iteration_count(const hbg_steady *s) {
  return s ? s->steady.iterations.size() : 0;
}

int hbg_steady_figures(const hbg_steady *s, const char *output, double *mean, double *rms,
                       double *min, double *max) {
  if (hbg_steady_status(s) != HBG_OK)
    return HBG_ERROR;
  const std::vector<std::string> &names = s->steady.rows.names;
  for (size_t i = 1; i < names.size() && i <= s->steady.figures.size(); ++i)
    if (output && names[i] == output) {
      const hbg::OutputFigures &f = s->steady.figures[i - 1];
      if (mean)
        *mean = f.mean;
      if (rms)
        *rms = f.rms;
      if (min)
        *min = f.min;
      if (max)
        *max = f.max;
      return HBG_OK;
    }
  return HBG_ERROR;
}

size_t hbg_steady_row_count(const hbg_steady *s) {
  return s && !s->steady.rows.columns.empty() ? s->steady.rows.columns[0].size() : 0;
}

size_t hbg_steady_column_count(const hbg_steady *s) {
  return s ? s->steady.rows.columns.size() : 0;
}

const char *hbg_steady_column_name(const hbg_steady *s, size_t j) {
  return s && j < hbg_steady_column_count(s) ? at(s->steady.rows.names, j) : nullptr;
}

const double *hbg_steady_column(const hbg_steady *s, size_t j) {
  return s && j < hbg_steady_column_count(s) ? s->steady.rows.columns[j].data() : nullptr;
}

size_t hbg_steady_mode_count(const hbg_steady *s) { return s ? s->steady.modes.size() : 0; }

const char *hbg_steady_mode(const hbg_steady *s, size_t i) {
  return s ? at(s->steady.modes, i) : nullptr;
}

double hbg_steady_mode_phase(const hbg_steady *s, size_t i) {
  return s && i < s->steady.modePhases.size() ? s->steady.modePhases[i]
                                              : std::numeric_limits<double>::quiet_NaN();
}

size_t hbg_steady_loss_count(const hbg_steady *s) {
  return s ? s->steady.losses.elements.size() : 0;
}

int hbg_steady_loss(const hbg_steady *s, size_t i, const char **name, const char **kind,
                    double *power) {
  if (!s || i >= s->steady.losses.elements.size() || i >= s->steady.losses.mean.size())
    return HBG_ERROR;
  if (name)
    *name = s->steady.losses.elements[i].path.c_str();
  if (kind)
    *kind = s->steady.losses.elements[i].kind.c_str();
  if (power)
    *power = s->steady.losses.mean[i];
  return HBG_OK;
}

double hbg_steady_switching_loss(const hbg_steady *s) {
  return hbg_steady_status(s) == HBG_OK ? s->steady.losses.eventLoss
                                        : std::numeric_limits<double>::quiet_NaN();
}

hbg_ac *hbg_model_ac(const hbg_model *model, const char *input, size_t nfreq, const double *freqs,
                     size_t count, const char *const *names, const double *values, double period) {
  if (!model)
    return nullptr;
  return analyse<hbg_ac>(count, names, values, "the frequency response could not be found",
                         [&](hbg_ac &out, const std::map<std::string, double> &parameters) {
                           std::vector<double> frequencies;
                           for (size_t k = 0; k < nfreq; ++k)
                             frequencies.push_back(freqs ? freqs[k] : std::nan(""));
                           hbg::SteadyOptions options;
                           if (period != 0)
                             options.period = period;
                           out.response = model->model.frequencyResponse(
                               input ? input : "", frequencies, parameters, options);
                         });
}

void hbg_ac_free(hbg_ac *ac) { delete ac; }

int hbg_ac_status(const hbg_ac *a) { return a && a->error().empty() ? HBG_OK : HBG_ERROR; }

const char *hbg_ac_error(const hbg_ac *a) { return a ? a->error().c_str() : ""; }

const char *hbg_ac_error_kind(const hbg_ac *a) {
  return a && a->refused.empty() && a->response.failure
             ? hbg::diagKindName(a->response.failure->kind)
             : "";
}

int hbg_ac_response(const hbg_ac *a, const char *output, size_t k, double *re, double *im) {
  if (hbg_ac_status(a) != HBG_OK || !output)
    return HBG_ERROR;
  const hbg::FrequencyResponse &r = a->response;
  for (size_t i = 0; i < r.outputs.size() && i < r.response.size(); ++i)
    if (r.outputs[i] == output) {
      if (k >= r.response[i].size())
        return HBG_ERROR;
      if (re)
        *re = r.response[i][k].real();
      if (im)
        *im = r.response[i][k].imag();
      return HBG_OK;
    }
  return HBG_ERROR;
}

} // extern "C"
