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

#include "hbg/support/PassTimer.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace hbg::codegen {

namespace {

/// Configures `module` for the host and optimises it.
void optimizeForHost(llvm::Module &module, const CodeGenOptions &opts) {
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine();
  configureForTarget(module, *tm);
  if (opts.quick) {
    markQuick(module);
  } else if (opts.optLevel >= 1) {
    PassTimer timer(opts.timings, "llvm-optimise", PassTimer::Cpu::Thread);
    optimizeModule(module, *tm, opts.passes);
  }
}

/// Adds ObjectSpec's byte array and entry-point table to `module`.
void addObjectData(llvm::Module &module, const std::vector<FunctionSpec> &fns,
                   const ObjectSpec &spec) {
  llvm::LLVMContext &c = module.getContext();
  llvm::Type *size = llvm::Type::getInt64Ty(c);
  auto visible = [&](llvm::GlobalVariable *g) {
    g->setVisibility(spec.shared ? llvm::GlobalValue::DefaultVisibility
                                 : llvm::GlobalValue::HiddenVisibility);
  };
  auto sizeOf = [&](const std::string &name, std::uint64_t n) {
    visible(new llvm::GlobalVariable(module, size, true, llvm::GlobalValue::ExternalLinkage,
                                     llvm::ConstantInt::get(size, n), name + "_size"));
  };
  llvm::Constant *bytes = llvm::ConstantDataArray::getString(c, spec.data, false);
  visible(new llvm::GlobalVariable(module, bytes->getType(), true,
                                   llvm::GlobalValue::ExternalLinkage, bytes, spec.dataSymbol));
  sizeOf(spec.dataSymbol, spec.data.size());
  std::vector<llvm::Constant *> entries;
  for (const FunctionSpec &f : fns) {
    llvm::Function *fn = module.getFunction(f.name);
    if (!fn)
      throw std::runtime_error("codegen: function `" + f.name + "` is missing from the module");
    // The table reaches them; nothing else needs their names.
    fn->setVisibility(llvm::GlobalValue::HiddenVisibility);
    entries.push_back(fn);
  }
  auto *type = llvm::ArrayType::get(llvm::PointerType::get(c, 0), entries.size());
  visible(new llvm::GlobalVariable(module, type, true, llvm::GlobalValue::ExternalLinkage,
                                   llvm::ConstantArray::get(type, entries), spec.tableSymbol));
  sizeOf(spec.tableSymbol, entries.size());
}

/// Writes `module` as a position-independent object file for the host.
void writeObject(llvm::Module &module, const std::string &path) {
  llvm::orc::JITTargetMachineBuilder builder = hostMachineBuilder();
  builder.setRelocationModel(llvm::Reloc::PIC_);
  std::unique_ptr<llvm::TargetMachine> tm =
      unwrap(builder.createTargetMachine(), "cannot create target machine");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    throw std::runtime_error("cannot write `" + path + "`: " + ec.message());
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw std::runtime_error("codegen: the target cannot write object files");
  pm.run(module);
  os.flush();
  if (os.has_error())
    throw std::runtime_error("cannot write `" + path + "`: " + os.error().message());
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

  void emitObject(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                  const CodeGenOptions &opts, const ObjectSpec &spec,
                  const std::string &path) override {
    llvm::LLVMContext llvmCtx;
    std::unique_ptr<llvm::Module> module =
        lowerFunctions(llvmCtx, ctx, fns, opts.maxNodesPerFunction);
    optimizeForHost(*module, opts);
    addObjectData(*module, fns, spec);
    writeObject(*module, path);
  }

  std::shared_ptr<void> createSession() override {
    auto session = std::make_shared<Session>();
    session->jit = createJit();
    return session;
  }

  std::shared_ptr<void> lower(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                              const CodeGenOptions &opts) override {
    PassTimer timer(opts.timings, "llvm-lower", PassTimer::Cpu::Thread);
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
    if (opts.onModule) {
      std::string text;
      llvm::raw_string_ostream os(text);
      lowered->module->print(os, nullptr);
      opts.onModule(os.str());
    }
    PassTimer timer(opts.timings, "llvm-machine-code", PassTimer::Cpu::Thread);
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
