//===- codegen/CodeGen.cpp - Lower, optimise, JIT-compile -----------------===//
//
// The pipeline behind CodeGenerator: Lowering builds the module, Optimizer
// runs O2 for the host, Jit turns it into callable code.
//
//===----------------------------------------------------------------------===//

#include "hbg/codegen/CodeGen.h"

#include "Jit.h"
#include "Lowering.h"
#include "Optimizer.h"
#include "Target.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace hbg::codegen {

namespace {

/// Configures `module` for the host and optimises it.
void optimizeForHost(llvm::Module &module, const CodeGenOptions &opts) {
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine();
  configureForTarget(module, *tm);
  if (opts.optLevel >= 1)
    optimizeModule(module, *tm);
}

} // namespace

CodeGenerator::CodeGenerator(CodeGenOptions opts) : opts_(opts) {}

std::string CodeGenerator::emitIR(const sym::ExprContext &ctx,
                                  const std::vector<FunctionSpec> &fns) const {
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> module =
      lowerFunctions(llvmCtx, ctx, fns, opts_.maxNodesPerFunction);
  optimizeForHost(*module, opts_);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  os.flush();
  return text;
}

LoweredModule CodeGenerator::lower(const sym::ExprContext &ctx,
                                   const std::vector<FunctionSpec> &fns) const {
  // The JIT takes ownership of the context together with the module, so
  // each lowered module has a context of its own.
  LoweredModule result;
  result.impl_ = std::make_unique<LoweredModule::Impl>();
  result.impl_->context = std::make_unique<llvm::LLVMContext>();
  result.impl_->module =
      lowerFunctions(*result.impl_->context, ctx, fns, opts_.maxNodesPerFunction);
  for (const FunctionSpec &spec : fns)
    result.impl_->names.push_back(spec.name);
  return result;
}

CompiledModule CodeGenerator::compile(LoweredModule lowered,
                                      const std::shared_ptr<JitSession> &session) const {
  LoweredModule::Impl &l = *lowered.impl_;
  optimizeForHost(*l.module, opts_);
  CompiledModule result;
  result.impl_ = CompiledModule::Impl::create(
      llvm::orc::ThreadSafeModule(std::move(l.module), std::move(l.context)), l.names, session);
  return result;
}

CompiledModule CodeGenerator::compile(const sym::ExprContext &ctx,
                                      const std::vector<FunctionSpec> &fns,
                                      const std::shared_ptr<JitSession> &session) const {
  return compile(lower(ctx, fns), session);
}

} // namespace hbg::codegen
