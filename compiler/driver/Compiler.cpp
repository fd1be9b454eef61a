//===- compiler/driver/Compiler.cpp - Compiling a model -------------------===//

#include "ModelImpl.h"

#include "hbg/driver/Pipeline.h"

namespace hbg {

namespace {
/// A model without switched junctions: one mode, compiled now.
std::shared_ptr<Model::Impl> plainModel(const Compiler &compiler, eq::EquationSystem equations) {
  const CompilerOptions &opts_ = compiler.options();
  auto impl = std::make_shared<Model::Impl>();
  for (const eq::State &s : equations.states)
    impl->stateNames.push_back(s.name);
  for (const eq::Output &o : equations.outputs)
    impl->outputNames.push_back(o.name);
  impl->nameParameters(equations);
  impl->namePowers(equations);
  impl->tiers = std::make_shared<CodeTiers>(opts_.codegen, opts_.tiering, opts_.hotCalls,
                                            opts_.quickTierMin, opts_.jitQuickMin);
  impl->initial = compileMode(std::move(equations), impl->tiers, false, false);
  impl->buildSetup();
  return impl;
}
} // namespace

Model driver::compileEquations(const Compiler &compiler, eq::EquationSystem equations) {
  return Model(plainModel(compiler, std::move(equations)));
}

Model driver::compileModel(const Compiler &compiler, std::shared_ptr<SourceManager> sources,
                          bg::BondGraph graph, eq::EquationSystem initial,
                          DiagnosticEngine::ContextFn context) {
  bool jumps = !initial.dependent.empty() && !initial.kinks.empty();
  if (bg::hasSwitched(graph) || jumps)
    return compileSwitched(compiler, std::move(sources), std::move(graph), std::move(initial),
                           std::move(context));
  std::shared_ptr<Model::Impl> impl = plainModel(compiler, std::move(initial));
  impl->graph = std::make_shared<bg::BondGraph>(std::move(graph));
  impl->sources = std::move(sources);
  impl->context = std::move(context);
  return Model(std::move(impl));
}

namespace driver {

namespace {
CompileDiagnostic placed(const DiagnosticEngine &diags, const SourceManager &sm,
                         const Diagnostic &d, bool withNotes) {
  static const char *const kSeverity[] = {"error", "warning", "note"};
  CompileDiagnostic out;
  if (d.range.valid()) {
    out.file = sm.name(d.range.begin.file);
    LineCol lc = sm.lineCol(d.range.begin);
    out.line = lc.line;
    out.column = lc.column;
  }
  out.kind = diagKindName(d.kind);
  out.severity = kSeverity[static_cast<int>(d.severity)];
  out.message = d.message;
  if (withNotes) {
    out.rendered = diags.render(d);
    for (const Diagnostic &n : diags.notesOf(d))
      out.notes.push_back(placed(diags, sm, n, false));
  }
  return out;
}
} // namespace

CompileError compileError(const DiagnosticEngine &diags, const SourceManager &sources) {
  std::vector<CompileDiagnostic> all;
  for (const Diagnostic &d : diags.diagnostics())
    all.push_back(placed(diags, sources, d, true));
  return CompileError(diags.renderAll(), std::move(all));
}

} // namespace driver

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
    throw driver::compileError(diags, *sm);
  return driver::compileModel(*this, sm, std::move(*r.graph), std::move(*r.equations),
                              diags.context());
}

Model Compiler::compileFile(const std::string &path) const {
  std::string text, why;
  if (!driver::readSourceFile(path, text, why)) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    diags.report(DiagKind::CannotOpenFile, {}, {path, why});
    throw driver::compileError(diags, sm);
  }
  return compileString(text, path);
}

} // namespace hbg
