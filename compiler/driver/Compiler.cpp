//===- compiler/driver/Compiler.cpp - Compiler and Model ------------------===//

#include "ModelImpl.h"

#include "hbg/driver/Pipeline.h"


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
  impl_->rhs(t, x, p, xdot);
}

void Model::outputs(double t, const double *x, const double *p, double *y) const {
  impl_->outputs(t, x, p, y);
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
  codegen::CodeGenerator gen(opts_.codegen);
  impl->code = gen.compile(*equations.ctx, fns);
  impl->rhs = impl->code.lookup("rhs");
  impl->outputs = impl->code.lookup("outputs");
  if (!impl->rhs || !impl->outputs)
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
