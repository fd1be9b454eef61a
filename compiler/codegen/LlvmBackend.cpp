//===- codegen/LlvmBackend.cpp - The backend module's entry point ---------===//
//
// Lowering builds the module, Optimizer vectorises it for the host, Jit turns it
// into callable code. Built as libhbg_llvm.so, loaded by BackendLoader.cpp.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
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
  if (opts.quick)
    markQuick(module);
  else if (opts.optLevel >= 1)
    optimizeModule(module, *tm, opts.passes);
}

/// A lowered module with the context it lives in (the JIT takes both).
struct Lowered {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

class LlvmBackend final : public Backend {
public:
  std::string emitIR(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                     const CodeGenOptions &opts) override {
    llvm::LLVMContext llvmCtx;
    std::unique_ptr<llvm::Module> module =
        lowerFunctions(llvmCtx, ctx, fns, opts.maxNodesPerFunction);
    optimizeForHost(*module, opts);
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, nullptr);
    os.flush();
    return text;
  }

  std::shared_ptr<void> createSession() override {
    auto session = std::make_shared<Session>();
    session->jit = createJit();
    return session;
  }

  std::shared_ptr<void> lower(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                              const CodeGenOptions &opts) override {
    auto lowered = std::make_shared<Lowered>();
    lowered->context = std::make_unique<llvm::LLVMContext>();
    lowered->module = lowerFunctions(*lowered->context, ctx, fns, opts.maxNodesPerFunction);
    return lowered;
  }

  std::shared_ptr<void> compile(std::shared_ptr<void> handle, const std::vector<std::string> &names,
                                const CodeGenOptions &opts, const std::shared_ptr<void> &session,
                                std::unordered_map<std::string, CompiledFn> &entries) override {
    auto lowered = std::static_pointer_cast<Lowered>(std::move(handle));
    optimizeForHost(*lowered->module, opts);
    return addModule(
        llvm::orc::ThreadSafeModule(std::move(lowered->module), std::move(lowered->context)),
        names, std::static_pointer_cast<Session>(session), entries);
  }
};

} // namespace

} // namespace hbg::codegen

extern "C" __attribute__((visibility("default"))) hbg::codegen::Backend *hbg_llvm_backend() {
  static hbg::codegen::LlvmBackend backend;
  return &backend;
}
