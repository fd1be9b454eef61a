//===- compiler/driver/Session.cpp - One command's work on one model ------===//

#include "hbg/driver/Session.h"

#include "ModelImpl.h"

#include "hbg/codegen/CodeGen.h"
#include "hbg/driver/Internal.h"

#include <iostream>
#include <iterator>

namespace hbg::driver {

Session::Session(Options opts, std::ostream &err)
    : opts_(std::move(opts)), err_(err), sm_(std::make_shared<SourceManager>()),
      diags_(std::make_unique<DiagnosticEngine>(*sm_)) {}

void Session::printDiagnostics() {
  err_ << diags_->renderFrom(printed_) << std::flush;
  printed_ = diags_->diagnostics().size();
}

bool Session::load(const std::string &path, Stage stop, const std::string &mode) {
  std::string text, why;
  bool read;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    read = !std::cin.bad();
    why = "cannot read standard input";
  } else {
    read = readSourceFile(path, text, why);
  }
  if (!read) {
    diags_->report(DiagKind::CannotOpenFile, {}, {path == "-" ? "<stdin>" : path, why});
    printDiagnostics();
    return false;
  }
  std::uint32_t file = sm_->addBuffer(path == "-" ? "<stdin>" : path, text);
  PipelineOptions opts;
  opts.stopAfter = stop;
  opts.timings = opts_.timings;
  opts.mode = mode;
  opts.libPath = opts_.libPath;
  opts.parameters = opts_.parameters;
  fe_ = runFrontend(*sm_, file, *diags_, opts);
  printDiagnostics();
  return !diags_->hasErrors();
}

std::optional<Model> Session::compile(const Compiler &compiler) {
  // Tapes, the setup program and, as the tiers decide, LLVM.
  PassTimer t(opts_.timings, "code");
  // LLVM's steps print their times too (CodeGenOptions::timings).
  CompilerOptions timed = compiler.options();
  if (!timed.codegen.timings)
    timed.codegen.timings = opts_.timings;
  try {
    return compileModel(Compiler(timed), sm_, std::move(*fe_.graph), std::move(*fe_.equations),
                        diags_->context());
  } catch (const CompileError &e) {
    err_ << e.what();
    return std::nullopt;
  }
}

std::optional<std::string> Session::emit(Stage stage) {
  switch (stage) {
  case Stage::Ast:
    return ast::dump(*fe_.ast);
  case Stage::BondGraph:
    return fe_.graph->dump();
  case Stage::Causality:
    return fe_.causality->dump(*fe_.graph);
  case Stage::Equations:
    return fe_.equations->dump();
  case Stage::LLVM: {
    // Compiled as a run would, but only to tapes: the IR is printed here,
    // not handed to the JIT.
    CompilerOptions opts;
    opts.tiering = Tiering::Tape;
    std::optional<Model> model = compile(Compiler(opts));
    if (!model)
      return std::nullopt;
    return moduleIR(*model);
  }
  case Stage::Run:
    break;
  }
  return std::string();
}

std::string moduleIR(const Model &model) {
  const Model::Impl &impl = *model.impl();
  const TieredCode &code = impl.initial->code;
  std::lock_guard<std::mutex> lock(code.ctx->mutex());
  return codegen::CodeGenerator(impl.tiers->options()).emitIR(*code.ctx, code.specs);
}

} // namespace hbg::driver
