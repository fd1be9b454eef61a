//===- compiler/driver/Compiler.cpp - Compiler and Model ------------------===//

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
    throw CompileError(diags.renderAll());
  }
  impl_->modeCode(mode);
}

std::string structuralMessage(const std::string &name, double built) {
  char value[32];
  std::snprintf(value, sizeof value, "%.12g", built);
  return "parameter `" + name + "` is structural (`for` loops or indices are computed from it): " +
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
  return Experiment::of(impl_->setup.experimentValues(parameterValues(overrides), name()));
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
  std::vector<sym::ExprId> settings = {x.tStart, x.tEnd, x.dtOut, x.step, x.maxStep, x.rtol, x.atol};
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

std::vector<sym::ExprId> gather(ScatteredFn &f, const std::vector<sym::ExprId> &entries) {
  std::vector<std::uint32_t> &of = f.of;
  std::unordered_map<std::uint32_t, std::uint32_t> slot;
  std::vector<sym::ExprId> values;
  of.clear();
  for (sym::ExprId e : entries) {
    auto [it, added] = slot.emplace(e.index, static_cast<std::uint32_t>(values.size()));
    if (added)
      values.push_back(e);
    of.push_back(it->second);
  }
  if (values.size() == entries.size())
    of.clear();
  f.distinct = values.size();
  return values;
}

const JacobianCode &ModeCode::jacobianCode() const {
  std::call_once(jacobianOnce, [&] {
    std::lock_guard<std::mutex> lock(equations.ctx->mutex());
    auto jc = std::make_unique<JacobianCode>();
    eq::StateJacobian sj = eq::stateJacobian(equations);
    std::size_t n = equations.states.size();
    // The pattern: fx's entries, and every row fz reads an unknown in
    // times every column rx reads (dz/dx couples them through the loop).
    std::vector<std::uint32_t> rowsZ, columns;
    for (const auto &e : sj.fz)
      rowsZ.push_back(e.row);
    for (const auto &e : sj.rx)
      columns.push_back(e.col);
    for (auto *v : {&rowsZ, &columns}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    std::vector<std::vector<std::uint32_t>> byColumn(n);
    for (const auto &e : sj.fx)
      byColumn[e.col].push_back(e.row);
    for (std::uint32_t j : columns)
      byColumn[j].insert(byColumn[j].end(), rowsZ.begin(), rowsZ.end());
    runtime::SparsePattern &p = jc->pattern;
    for (std::vector<std::uint32_t> &rows : byColumn) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      p.colStart.push_back(static_cast<std::uint32_t>(p.rows.size()));
      p.rows.insert(p.rows.end(), rows.begin(), rows.end());
    }
    p.colStart.push_back(static_cast<std::uint32_t>(p.rows.size()));
    auto at = [&](std::uint32_t row, std::uint32_t col) {
      auto begin = p.rows.begin() + p.colStart[col], end = p.rows.begin() + p.colStart[col + 1];
      return static_cast<std::uint32_t>(std::lower_bound(begin, end, row) - p.rows.begin());
    };
    codegen::FunctionSpec fn{"stateJacobian", {}};
    for (const auto &e : sj.fx) {
      jc->fxAt.push_back(at(e.row, e.col));
      fn.outputs.push_back(e.value);
    }
    fn.outputs.insert(fn.outputs.end(), sj.dfdt.begin(), sj.dfdt.end());
    for (const auto &e : sj.fz) {
      jc->fz.emplace_back(e.row, e.col);
      fn.outputs.push_back(e.value);
      for (std::uint32_t j : columns)
        jc->fzAt.push_back(at(e.row, j));
    }
    for (const auto &e : sj.rx) {
      jc->rx.emplace_back(e.row, e.col);
      fn.outputs.push_back(e.value);
    }
    fn.outputs.insert(fn.outputs.end(), sj.drdt.begin(), sj.drdt.end());
    jc->columns = std::move(columns);
    jc->numOutputs = fn.outputs.size();
    jc->code.ctx = equations.ctx;
    jc->code.mode = false;
    jc->code.add(jc->fn, fn.name, std::move(fn.outputs));
    // Tiered as the mode's functions are, counting its own evaluations:
    // only stiff methods ask for it, and rarely.
    std::shared_ptr<const void> self = shared_from_this();
    if (std::shared_ptr<CodeTiers> t = code.tiers.lock())
      t->start(jc->code, self, true);
    jacobianCompiled = std::move(jc);
  });
  return *jacobianCompiled;
}

std::shared_ptr<ModeCode> compileMode(eq::EquationSystem equations,
                                      const std::shared_ptr<CodeTiers> &tiers, bool switched,
                                      bool ctxLocked) {
  auto m = std::make_shared<ModeCode>();
  TieredCode &code = m->code;
  code.ctx = equations.ctx;
  std::vector<sym::ExprId> derivatives, outputs;
  for (const eq::State &s : equations.states)
    derivatives.push_back(s.derivative);
  for (const eq::Output &o : equations.outputs)
    outputs.push_back(o.value);
  code.add(m->rhs, "rhs", std::move(derivatives));
  code.add(m->outputs, "outputs", std::move(outputs));
  bool newton = !equations.unknowns.empty();
  if (newton) {
    // Linear loops (a resistor or spring network) need only r(0): the
    // evaluator assembles J z + r(0), and a network's residuals, as large
    // as the network, are never compiled.
    m->linearLoops = equations.loopsLinear();
    std::vector<sym::ExprId> residuals = equations.residuals;
    if (m->linearLoops) {
      std::unordered_map<std::uint32_t, sym::ExprId> zero;
      for (const eq::Unknown &u : equations.unknowns)
        zero[u.symbol.index] = equations.ctx->constant(0);
      std::vector<sym::ExprId *> roots;
      for (sym::ExprId &r : residuals)
        roots.push_back(&r);
      equations.ctx->substitute(roots, zero);
    }
    // Both vectors have an entry per residual or structural non-zero, and
    // in a network most are the same few values (0; 1, -1, 1/R): each is
    // computed once and scattered (thousands of stores of a handful of
    // values would otherwise dominate the module's compile time).
    code.add(m->residual.fn, "residual", gather(m->residual, residuals));
    code.add(m->jacobian.fn, "jacobian", gather(m->jacobian, equations.jacobian));
    for (const eq::AlgebraicLoop &l : equations.loops)
      if (!l.unknowns.empty())
        m->nonlinearLoops += (m->nonlinearLoops.empty() ? "`" : "; `") + l.path + "`";
  }
  if (switched || !equations.heldValues.empty())
    code.add(m->held, "held", equations.heldValues);
  bool events = switched || !equations.kinks.empty();
  if (events) {
    // The guards' sides, then each kink's comparison `lhs <= rhs` (see
    // runtime::Mode::numKinks): b c <= -0 for b = +-1, -|c| <= -denorm
    // (c != 0) for b = 0, min(c - b + denorm, b + 1 - c) <= 0 for a floor; and the
    // same as a tape for enclosures.
    sym::ExprContext &ctx = *equations.ctx;
    auto ofTime = [&](sym::ExprId e) {
      for (sym::SymbolId s : ctx.symbolsOf(e)) {
        sym::SymbolKind kind = ctx.symbol(s).kind;
        if (kind != sym::SymbolKind::Time && kind != sym::SymbolKind::Parameter)
          return false;
      }
      return true;
    };
    // Both sides of a comparison that reads the state are raised by the
    // rounding magnitude of the two (runtime::comparisonTolerance is
    // relative to the sides), so that a difference which is zero in exact
    // arithmetic counts as zero however large the terms that form it: a
    // gap between two bodies far from the origin, a node's voltage against
    // a source's. Raising rounds the difference to the ulps of that
    // magnitude, which is its accuracy anyway. Comparisons of time and
    // parameters alone are exact time events and keep their sides, and so
    // do sides without a sum or difference of varying terms (nothing in
    // them can cancel, so their magnitude is their value's). The
    // difference the tape encloses for event location is the unraised one.
    auto cancels = [&](sym::ExprId e) {
      bool found = false;
      std::vector<sym::ExprId> todo{e};
      std::unordered_set<std::uint32_t> seen;
      while (!todo.empty() && !found) {
        sym::ExprId id = todo.back();
        todo.pop_back();
        if (!seen.insert(id.index).second)
          continue;
        const sym::Node &n = ctx.node(id);
        if ((n.op == sym::Op::Add || n.op == sym::Op::Sub) &&
            !(ctx.isParametric(n.lhs) && ctx.isParametric(n.rhs)))
          found = true;
        sym::forEachOperand(n, [&](sym::ExprId o) { todo.push_back(o); });
      }
      return found;
    };
    codegen::FunctionSpec guards{"guards", {}}, kinks{"kinks", {}};
    std::vector<sym::ExprId> differences;
    for (std::size_t k = 0; k + 1 < equations.guards.size(); k += 2) {
      sym::ExprId lhs = equations.guards[k], rhs = equations.guards[k + 1];
      differences.push_back(ctx.sub(lhs, rhs));
      if ((!ofTime(lhs) || !ofTime(rhs)) && (cancels(lhs) || cancels(rhs))) {
        sym::ExprId scale = ctx.add(ctx.roundingMagnitude(lhs), ctx.roundingMagnitude(rhs));
        lhs = ctx.add(lhs, scale);
        rhs = ctx.add(rhs, scale);
      }
      guards.outputs.push_back(lhs);
      guards.outputs.push_back(rhs);
    }
    for (const eq::Kink &k : equations.kinks) {
      sym::ExprId b = ctx.ref(k.branch), c = k.argument;
      if (k.floor) {
        // c = b itself (just after the jump up to b) does not count: the
        // lower margin is raised by the smallest double.
        sym::ExprId lower = ctx.add(ctx.sub(c, b),
                                    ctx.constant(std::numeric_limits<double>::denorm_min()));
        guards.outputs.push_back(ctx.min(lower, ctx.sub(ctx.add(b, ctx.constant(1)), c)));
        guards.outputs.push_back(ctx.constant(0));
        differences.push_back(guards.outputs[guards.outputs.size() - 2]);
        kinks.outputs.push_back(c);
        continue;
      }
      sym::ExprId off = ctx.sub(ctx.constant(1), ctx.mul(b, b)); // 1 where b = 0
      guards.outputs.push_back(
          ctx.sub(ctx.mul(b, c), ctx.mul(off, ctx.unary(sym::Op::Abs, c))));
      guards.outputs.push_back(
          ctx.mul(off, ctx.constant(-std::numeric_limits<double>::denorm_min())));
      differences.push_back(ctx.sub(guards.outputs[guards.outputs.size() - 2],
                                    guards.outputs.back()));
      kinks.outputs.push_back(c);
    }
    std::vector<sym::ExprId> enclosed;
    for (std::size_t k = 0; k + 1 < guards.outputs.size(); k += 2) {
      enclosed.push_back(guards.outputs[k]);
      enclosed.push_back(guards.outputs[k + 1]);
      enclosed.push_back(differences[k / 2]);
    }
    m->guardTape = codegen::buildTape(ctx, enclosed);
    if (m->guardTape)
      m->guardStates = m->guardTape->xRead();
    for (std::size_t k = 0; k + 1 < guards.outputs.size(); k += 2)
      if (ofTime(guards.outputs[k]) && ofTime(guards.outputs[k + 1]))
        m->timeComparisons.push_back(static_cast<std::uint32_t>(k / 2));
    code.add(m->guards, "guards", std::move(guards.outputs));
    code.add(m->kinks, "kinks", std::move(kinks.outputs));
  }
  if (switched) {
    sym::ExprContext &ctx = *equations.ctx;
    codegen::FunctionSpec dep{"dependent", {}}, depJac{"dependentJacobian", {}},
        imp{"impulse", {}};
    for (const eq::DependentState &d : equations.dependent) {
      dep.outputs.push_back(d.value);
      for (const eq::State &s : equations.states)
        depJac.outputs.push_back(ctx.derivative(d.value, s.symbol));
    }
    for (std::size_t i = 0; i < equations.states.size(); ++i)
      for (const eq::DependentState &d : equations.dependent)
        imp.outputs.push_back(i < d.impulse.size() ? d.impulse[i] : ctx.constant(0));
    code.add(m->dependent, "dependent", std::move(dep.outputs));
    code.add(m->dependentJacobian, "dependentJacobian", std::move(depJac.outputs));
    code.add(m->impulse, "impulse", std::move(imp.outputs));
    if (!equations.guardImpulse.empty())
      code.add(m->guardImpulse, "guardImpulse", equations.guardImpulse);
  }
  for (const eq::State &st : equations.states)
    m->stateNames.push_back(st.name);
  m->numUnknowns = equations.unknowns.size();
  m->loopPattern = equations.jacobianPattern;
  for (const eq::Kink &k : equations.kinks)
    m->kinkInfo.push_back({k.floor, k.text});
  m->equations = std::move(equations);
  tiers->start(code, m, ctxLocked);
  return m;
}

Model driver::compileEquations(const Compiler &compiler, eq::EquationSystem equations) {
  const CompilerOptions &opts_ = compiler.options();
  auto impl = std::make_shared<Model::Impl>();
  for (const eq::State &s : equations.states)
    impl->stateNames.push_back(s.name);
  for (const eq::Output &o : equations.outputs)
    impl->outputNames.push_back(o.name);
  impl->nameParameters(equations);
  // One mode, real for the whole run: tiered, it is queued for LLVM at
  // once and runs on its tapes until the code is in.
  impl->tiers = std::make_shared<CodeTiers>(opts_.codegen, opts_.tiering, opts_.hotCalls,
                                            opts_.quickTierMin, /*eager=*/true);
  impl->initial = compileMode(std::move(equations), impl->tiers, false, false);
  impl->buildSetup();
  return Model(std::move(impl));
}

Model Compiler::compileString(const std::string &text, const std::string &name) const {
  auto sm = std::make_shared<SourceManager>();
  std::uint32_t file = sm->addBuffer(name, text);
  DiagnosticEngine diags(*sm);
  driver::PipelineOptions pipeline;
  pipeline.equations = opts_.equations;
  pipeline.libPath = opts_.libPath;
  pipeline.parameters = opts_.parameters;
  driver::FrontendResult r = driver::runFrontend(*sm, file, diags, pipeline);
  if (diags.hasErrors() || !r.equations)
    throw CompileError(diags.renderAll());
  if (bg::hasSwitched(*r.graph))
    return driver::compileSwitched(*this, sm, std::move(*r.graph), std::move(*r.equations));
  return driver::compileEquations(*this, std::move(*r.equations));
}

Model Compiler::compileFile(const std::string &path) const {
  std::string text, why;
  if (!driver::readSourceFile(path, text, why)) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    diags.report(DiagKind::CannotOpenFile, {}, {path, why});
    throw CompileError(diags.renderAll());
  }
  return compileString(text, path);
}

} // namespace hbg
