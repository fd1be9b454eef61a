//===- compiler/driver/Model.cpp - A compiled model -----------------------===//

#include "ModelImpl.h"

#include "hbg/codegen/Tape.h"
#include "hbg/driver/Pipeline.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_set>


namespace hbg {

const std::string &Model::name() const { return impl_->initial->equations.modelName; }
const std::vector<std::string> &Model::parameterNames() const { return impl_->parameterNames; }
const std::vector<std::string> &Model::inputNames() const { return impl_->inputNames; }
const std::vector<std::string> &Model::stateNames() const { return impl_->stateNames; }
const std::vector<std::string> &Model::outputNames() const { return impl_->outputNames; }
namespace driver {
const eq::EquationSystem &equations(const Model &model) { return model.impl()->initial->equations; }
} // namespace driver
bool Model::switched() const { return impl_->switched; }
std::size_t Model::modesCompiled() const { return impl_->modesCompiled(); }
std::size_t Model::modesCompiledByLlvm() const { return impl_->tiers->compiledModes(); }

std::size_t Model::modesCompiledQuickly() const { return impl_->tiers->quickModes(); }

void Model::compileMode(const std::string &text) const {
  if (!impl_->switched) {
    if (!text.empty())
      throw CompileError("model `" + name() + "` has no switched junctions");
    return;
  }
  bg::ModeError err;
  bg::Mode mode;
  if (!bg::parseMode(*impl_->graph, text, bg::initialMode(*impl_->graph), mode, err)) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    driver::reportModeError(*impl_->graph, err, diags);
    throw driver::compileError(diags, sm);
  }
  impl_->modeCode(mode);
}

std::string structuralMessage(const std::string &name, double built) {
  char value[32];
  std::snprintf(value, sizeof value, "%.12g", built);
  return "parameter `" + name +
         "` is structural (`for` loops, `if` blocks or indices are computed from it): " +
         "the model was built with " + name + " = " + value +
         ", and a run cannot change it; set it when compiling (`hbgc run -p` does, and " +
         "CompilerOptions::parameters)";
}

bool Model::structural(const std::string &name, double *value) const {
  const eq::EquationSystem &sys = impl_->initial->equations;
  for (const eq::Parameter &p : sys.parameters)
    if (p.name == name && p.structural) {
      if (value) {
        std::lock_guard<std::mutex> lock(sys.ctx->mutex());
        *value = sys.ctx->evaluate(p.defaultValue, [](sym::SymbolId) { return 0.0; });
      }
      return true;
    }
  return false;
}

std::vector<double> Model::parameterValues(const std::map<std::string, double> &overrides) const {
  for (const auto &[name, value] : overrides) {
    double built = 0;
    if (structural(name, &built) && value != built)
      throw std::invalid_argument(structuralMessage(name, built));
  }
  return impl_->setup.parameters(overrides);
}

Experiment Model::experiment(const std::map<std::string, double> &overrides) const {
  return impl_->setup.experimentValues(parameterValues(overrides), name());
}

void Model::Impl::buildSetup() {
  const eq::EquationSystem &sys = initial->equations;
  sym::ExprContext &ctx = *sys.ctx;
  std::lock_guard<std::mutex> lock(ctx.mutex());
  auto tape = [&](const std::vector<sym::ExprId> &roots) {
    std::optional<runtime::Tape> t = codegen::buildTape(ctx, roots);
    if (!t)
      throw InternalError("a value computed before the run reads a loop's unknown");
    return std::move(*t);
  };
  for (const eq::Parameter &p : sys.parameters) {
    setup.names.push_back(p.name);
    setup.defaults.push_back(tape({p.defaultValue}));
    setup.inputs.push_back(p.input);
  }
  setup.order = sys.parameterOrder();
  auto orZero = [&](std::vector<sym::ExprId> v) {
    for (sym::ExprId &e : v)
      if (!e.valid())
        e = ctx.constant(0);
    return v;
  };
  setup.initial = tape(orZero(stateExprs(&eq::State::initial, initialValues)));
  setup.nominal = tape(orZero(stateExprs(&eq::State::nominal, nominalValues)));
  const bg::Experiment &x = sys.experiment;
  std::vector<sym::ExprId> settings = {
#define HBG_SETTING(Id, name, field, positive) x.field,
#include "hbg/runtime/ExperimentSettings.def"
  };
  for (sym::ExprId e : settings)
    setup.given.push_back(e.valid());
  setup.experiment = tape(orZero(settings));
  if (!x.method.empty()) {
    runtime::Method m;
    if (!runtime::parseMethod(x.method, m))
      throw InternalError("experiment method `" + x.method + "` accepted by sema is unknown");
    setup.method = m;
  }
}

std::vector<sym::ExprId> Model::Impl::stateExprs(sym::ExprId eq::State::*field,
                                                 const std::vector<sym::ExprId> &full) const {
  if (switched)
    return full;
  std::vector<sym::ExprId> out;
  for (const eq::State &s : initial->equations.states)
    out.push_back(s.*field);
  return out;
}

namespace {
void checkParameterCount(const Model &m, const std::vector<double> &params) {
  if (params.size() < m.parameterNames().size())
    throw std::invalid_argument("model `" + m.name() + "` has " +
                                std::to_string(m.parameterNames().size()) + " parameters, " +
                                std::to_string(params.size()) + " values given");
}
} // namespace

std::vector<double> Model::initialState(const std::vector<double> &params) const {
  checkParameterCount(*this, params);
  return impl_->setup.initialState(params);
}

std::vector<double> Model::nominalState(const std::vector<double> &params) const {
  checkParameterCount(*this, params);
  return impl_->setup.nominalState(params);
}

namespace {
/// Calls `f` with an Evaluator of the initial mode outside a Simulation
/// and that mode's states: a switched model's mode states are taken out
/// of its full state, held values are 0 (a Simulation holds them at
/// events), and kinks follow their arguments' signs. False when a loop
/// solve failed.
/// Buffers of the Model entry points, per thread, grown and never shrunk:
/// after the first call, rhs() and outputs() allocate nothing.
struct Scratch {
  std::vector<double> params, states, kinks, derivatives;
  /// An evaluator per mode, kept between calls: building one per call
  /// cost more than a small model's whole rhs, and a mode with loops
  /// solved at run time keeps its factorisation (made once while the
  /// loop's matrix stays the same). Dropped when its mode is freed. Each
  /// call starts Newton's method afresh, so values do not depend on
  /// earlier calls.
  struct Kept {
    const ModeCode *code = nullptr;
    std::weak_ptr<const ModeCode> mode;
    std::unique_ptr<Evaluator> evaluator;
  };
  std::unordered_map<const ModeCode *, Kept> evaluators;
  /// The entry used last (a model's calls come in runs).
  Kept *last = nullptr;
};
Scratch &scratch() {
  thread_local Scratch s;
  return s;
}

template <class F>
bool withInitial(const Model::Impl &impl, double t, const double *x, const double *p, F &&f) {
  const ModeCode &m = *impl.initial;
  Scratch &s = scratch();
  std::size_t np = m.equations.parameters.size(), firstBranch = np + m.equations.numHeld,
              nk = m.equations.kinks.size();
  // Held values (0 here) and kink branches follow the parameters; without
  // either, the caller's parameters serve as they are.
  double *params = nullptr;
  if (firstBranch + nk > np) {
    s.params.assign(p, p + np);
    s.params.resize(firstBranch + nk, 0.0);
    params = s.params.data();
  }
  const double *xs = x;
  if (impl.switched) {
    s.states.resize(m.stateSlots.size());
    for (std::size_t i = 0; i < m.stateSlots.size(); ++i)
      s.states[i] = x[m.stateSlots[i]];
    xs = s.states.data();
  }
  const double *parameters = params ? params : p;
  Scratch::Kept *kept = s.last;
  if (!kept || kept->code != &m || kept->mode.expired()) {
    Scratch::Kept &k = s.evaluators[&m];
    if (k.mode.expired() || !k.evaluator) {
      // A mode freed since, whose address the allocator gave this one.
      for (auto it = s.evaluators.begin(); it != s.evaluators.end();)
        it = it->second.mode.expired() ? s.evaluators.erase(it) : std::next(it);
      Scratch::Kept &fresh = s.evaluators[&m];
      fresh.code = &m;
      fresh.mode = impl.initial;
      fresh.evaluator = std::make_unique<Evaluator>(m, parameters);
      kept = &fresh;
    } else {
      kept = &k;
    }
    s.last = kept;
  }
  Evaluator *ep = kept->evaluator.get();
  ep->setParameters(parameters);
  ep->forgetStart();
  Evaluator &e = *ep;
  // Kinks take the branch of their argument's sign (or floor) at (t, x);
  // an argument may read other kinks' branches, so repeat until none
  // changes.
  std::vector<double> &c = s.kinks;
  c.resize(nk);
  for (std::size_t round = 0; round <= nk && nk > 0; ++round) {
    if (!e.call(m.kinks, t, xs, c.data()))
      return false;
    bool changed = false;
    for (std::size_t k = 0; k < nk; ++k) {
      double b = m.equations.kinks[k].floor ? std::floor(c[k])
                 : c[k] > 0                   ? 1.0
                                              : (c[k] < 0 ? -1.0 : 0.0);
      changed = changed || b != params[firstBranch + k];
      params[firstBranch + k] = b;
    }
    if (!changed)
      break;
  }
  return f(e, xs);
}

bool callInitial(const Model::Impl &impl, const ModeFn &f, double t, const double *x,
                 const double *p, double *out) {
  return withInitial(impl, t, x, p,
                     [&](Evaluator &e, const double *xs) { return e.call(f, t, xs, out); });
}
} // namespace

void Model::rhs(double t, const double *x, const double *p, double *xdot) const {
  const ModeCode &m = *impl_->initial;
  if (!impl_->switched) {
    if (!callInitial(*impl_, m.rhs, t, x, p, xdot))
      std::fill(xdot, xdot + m.equations.states.size(), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  std::vector<double> &d = scratch().derivatives;
  d.resize(m.equations.states.size());
  if (!callInitial(*impl_, m.rhs, t, x, p, d.data()))
    std::fill(d.begin(), d.end(), std::numeric_limits<double>::quiet_NaN());
  std::fill(xdot, xdot + impl_->stateNames.size(), 0.0);
  for (std::size_t i = 0; i < d.size(); ++i)
    xdot[m.stateSlots[i]] = d[i];
}

void Model::jacobian(double t, const double *x, const double *p, double *dfdx,
                     double *dfdt) const {
  const ModeCode &m = *impl_->initial;
  std::size_t full = impl_->stateNames.size(), n = m.equations.states.size();
  const JacobianCode &jc = m.jacobianCode();
  std::vector<double> values(jc.pattern.nonZeros()), dt(n);
  bool ok = withInitial(*impl_, t, x, p, [&](Evaluator &e, const double *xs) {
    return e.jacobian(t, xs, values.data(), dt.data());
  });
  double fill = ok ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  std::fill(dfdx, dfdx + full * full, fill);
  std::fill(dfdt, dfdt + full, fill);
  if (!ok)
    return;
  auto slot = [&](std::size_t i) { return impl_->switched ? m.stateSlots[i] : i; };
  for (std::size_t j = 0; j < n; ++j)
    for (std::uint32_t k = jc.pattern.colStart[j]; k < jc.pattern.colStart[j + 1]; ++k)
      dfdx[slot(jc.pattern.rows[k]) * full + slot(j)] = values[k];
  for (std::size_t i = 0; i < n; ++i)
    dfdt[slot(i)] = dt[i];
}

void Model::outputs(double t, const double *x, const double *p, double *y) const {
  if (!callInitial(*impl_, impl_->initial->outputs, t, x, p, y))
    std::fill(y, y + impl_->outputNames.size(), std::numeric_limits<double>::quiet_NaN());
}

} // namespace hbg
