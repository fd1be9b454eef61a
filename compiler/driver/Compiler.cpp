//===- compiler/driver/Compiler.cpp - Compiler and Model ------------------===//

#include "ModelImpl.h"

#include "hbg/driver/Pipeline.h"

#include <algorithm>
#include <cstdio>
#include <limits>


namespace hbg {

const std::string &Model::name() const { return impl_->equations.modelName; }
const std::vector<std::string> &Model::parameterNames() const { return impl_->parameterNames; }
const std::vector<std::string> &Model::stateNames() const { return impl_->stateNames; }
const std::vector<std::string> &Model::outputNames() const { return impl_->outputNames; }
const eq::EquationSystem &Model::equations() const { return impl_->equations; }

std::vector<double> Model::parameterValues(const std::map<std::string, double> &overrides) const {
  const eq::EquationSystem &sys = impl_->equations;
  std::vector<double> values(sys.parameters.size(), 0.0);
  std::unordered_map<std::uint32_t, double> bySymbol;
  for (std::uint32_t i : sys.parameterOrder()) {
    const eq::Parameter &p = sys.parameters[i];
    auto it = overrides.find(p.name);
    values[i] = it != overrides.end()
                    ? it->second
                    : sys.ctx->evaluate(p.defaultValue,
                                        [&](sym::SymbolId s) { return bySymbol.at(s.index); });
    bySymbol[p.symbol.index] = values[i];
  }
  return values;
}

std::vector<double> Model::initialState(const std::vector<double> &params) const {
  const eq::EquationSystem &sys = impl_->equations;
  std::vector<double> x;
  for (const eq::State &s : sys.states)
    x.push_back(sys.ctx->evaluate(s.initial, [&](sym::SymbolId id) {
      return params.at(sys.ctx->symbol(id).slot);
    }));
  return x;
}

void Model::rhs(double t, const double *x, const double *p, double *xdot) const {
  if (!impl_->residual) {
    impl_->rhs(t, x, p, xdot);
    return;
  }
  Evaluator e(*impl_, p);
  if (!e.rhs(t, x, xdot))
    std::fill(xdot, xdot + impl_->stateNames.size(), std::numeric_limits<double>::quiet_NaN());
}

void Model::outputs(double t, const double *x, const double *p, double *y) const {
  if (!impl_->residual) {
    impl_->outputs(t, x, p, y);
    return;
  }
  Evaluator e(*impl_, p);
  if (!e.outputs(t, x, y))
    std::fill(y, y + impl_->outputNames.size(), std::numeric_limits<double>::quiet_NaN());
}

Evaluator::Evaluator(const Model::Impl &m, const double *p)
    : m_(m), p_(p), n_(m.stateNames.size()), u_(m.equations.unknowns.size()),
      xz_(n_ + u_, 0.0), warm_(u_, 0.0) {}

bool Evaluator::solve(double t, const double *x) {
  std::copy(x, x + n_, xz_.begin());
  if (u_ == 0)
    return true;
  std::vector<double> start = warm_;
  auto residual = [&](const double *z, double *r) {
    std::copy(z, z + u_, xz_.begin() + n_);
    m_.residual(t, xz_.data(), p_, r);
  };
  auto jacobian = [&](const double *z, double *j) {
    std::copy(z, z + u_, xz_.begin() + n_);
    m_.jacobian(t, xz_.data(), p_, j);
  };
  runtime::NewtonResult r = runtime::newtonSolve(u_, residual, jacobian, start.data());
  if (!r.ok()) {
    char when[32];
    std::snprintf(when, sizeof when, "%.9g", t);
    failure_ = runtime::describe(r) + " in the algebraic loop " + m_.nonlinearLoops +
               " at t = " + when;
    return false;
  }
  warm_ = start;
  std::copy(start.begin(), start.end(), xz_.begin() + n_);
  return true;
}

bool Evaluator::rhs(double t, const double *x, double *xdot) {
  if (!solve(t, x))
    return false;
  m_.rhs(t, xz_.data(), p_, xdot);
  return true;
}

bool Evaluator::outputs(double t, const double *x, double *y) {
  if (!solve(t, x))
    return false;
  m_.outputs(t, xz_.data(), p_, y);
  return true;
}

Model Compiler::compileEquations(eq::EquationSystem equations) const {
  auto impl = std::make_shared<Model::Impl>();
  std::vector<codegen::FunctionSpec> fns(2);
  fns[0].name = "rhs";
  for (const eq::State &s : equations.states) {
    fns[0].outputs.push_back(s.derivative);
    impl->stateNames.push_back(s.name);
  }
  fns[1].name = "outputs";
  for (const eq::Output &o : equations.outputs) {
    fns[1].outputs.push_back(o.value);
    impl->outputNames.push_back(o.name);
  }
  for (const eq::Parameter &p : equations.parameters)
    impl->parameterNames.push_back(p.name);
  bool newton = !equations.unknowns.empty();
  if (newton) {
    fns.push_back({"residual", equations.residuals});
    fns.push_back({"jacobian", equations.jacobian});
    for (const eq::AlgebraicLoop &l : equations.loops)
      if (!l.linear)
        impl->nonlinearLoops += (impl->nonlinearLoops.empty() ? "`" : "; `") + l.path + "`";
  }
  codegen::CodeGenerator gen(opts_.codegen);
  impl->code = gen.compile(*equations.ctx, fns);
  impl->rhs = impl->code.lookup("rhs");
  impl->outputs = impl->code.lookup("outputs");
  if (newton) {
    impl->residual = impl->code.lookup("residual");
    impl->jacobian = impl->code.lookup("jacobian");
  }
  if (!impl->rhs || !impl->outputs || (newton && (!impl->residual || !impl->jacobian)))
    throw InternalError("generated functions missing from the JIT");
  impl->equations = std::move(equations);
  return Model(std::move(impl));
}

Model Compiler::compileString(const std::string &text, const std::string &name) const {
  SourceManager sm;
  std::uint32_t file = sm.addBuffer(name, text);
  DiagnosticEngine diags(sm);
  driver::FrontendResult r = driver::runFrontend(sm, file, diags);
  if (diags.hasErrors() || !r.equations)
    throw CompileError(diags.renderAll());
  return compileEquations(std::move(*r.equations));
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
