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

/// Lowers `fns` into `llvmCtx` and optimises the result for the host.
std::unique_ptr<llvm::Module> buildModule(llvm::LLVMContext &llvmCtx, const sym::ExprContext &ctx,
                                          const std::vector<FunctionSpec> &fns,
                                          const CodeGenOptions &opts) {
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine();
  std::unique_ptr<llvm::Module> module =
      lowerFunctions(llvmCtx, ctx, fns, opts.maxNodesPerFunction);
  configureForTarget(*module, *tm);
  if (opts.optLevel >= 1)
    optimizeModule(*module, *tm);
  return module;
}

} // namespace

CodeGenerator::CodeGenerator(CodeGenOptions opts) : opts_(opts) {}

std::string CodeGenerator::emitIR(const sym::ExprContext &ctx,
                                  const std::vector<FunctionSpec> &fns) const {
  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> module = buildModule(llvmCtx, ctx, fns, opts_);
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  os.flush();
  return text;
}

CompiledModule CodeGenerator::compile(const sym::ExprContext &ctx,
                                      const std::vector<FunctionSpec> &fns) const {
  // The JIT takes ownership of the context together with the module, so
  // each compiled module has a context of its own.
  auto llvmCtx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module = buildModule(*llvmCtx, ctx, fns, opts_);
  std::vector<std::string> names;
  for (const FunctionSpec &spec : fns)
    names.push_back(spec.name);

  CompiledModule result;
  result.impl_ = CompiledModule::Impl::create(
      llvm::orc::ThreadSafeModule(std::move(module), std::move(llvmCtx)), names);
  return result;
}

} // namespace hbg::codegen
