//===- codegen/Jit.cpp - LLJITs and the code they own ---------------------===//

#include "Jit.h"

#include "Target.h"

#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/IR/Module.h"

namespace hbg::codegen {

namespace {

/// Compiles each module at the level its `hbg.quick` flag asks for
/// (markQuick): one JIT holds a mode's quick code and, later, its
/// optimised code. A target machine per module, as ORC's concurrent
/// compiler makes, so that threads may compile at once.
class LevelledCompiler : public llvm::orc::IRCompileLayer::IRCompiler {
public:
  explicit LevelledCompiler(llvm::orc::JITTargetMachineBuilder builder)
      : IRCompiler(llvm::orc::irManglingOptionsFromTargetOptions(builder.getOptions())),
        builder_(std::move(builder)) {}

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> operator()(llvm::Module &m) override {
    llvm::orc::JITTargetMachineBuilder builder = builder_;
    if (m.getModuleFlag(kQuickFlag))
      builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
    auto tm = builder.createTargetMachine();
    if (!tm)
      return tm.takeError();
    return llvm::orc::SimpleCompiler(**tm)(m);
  }

private:
  llvm::orc::JITTargetMachineBuilder builder_;
};

} // namespace

void markQuick(llvm::Module &module) {
  module.addModuleFlag(llvm::Module::Warning, kQuickFlag, 1);
}

std::unique_ptr<llvm::orc::LLJIT> createJit() {
  std::unique_ptr<llvm::orc::LLJIT> jit = unwrap(
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(hostMachineBuilder())
          .setCompileFunctionCreator([](llvm::orc::JITTargetMachineBuilder builder)
                                         -> llvm::Expected<std::unique_ptr<
                                             llvm::orc::IRCompileLayer::IRCompiler>> {
            return std::make_unique<LevelledCompiler>(std::move(builder));
          })
          .create(),
      "cannot create the JIT");
  // Generated code calls libm (tan, tanh, and whatever the backend lowers
  // intrinsics to); resolve those from the libraries loaded in this process.
  char prefix = jit->getDataLayout().getGlobalPrefix();
  jit->getMainJITDylib().addGenerator(
      unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix),
             "cannot search the process for symbols"));
  return jit;
}

std::shared_ptr<Code> addModule(llvm::orc::ThreadSafeModule module,
                                const std::vector<std::string> &names,
                                std::shared_ptr<Session> session,
                                std::unordered_map<std::string, CompiledFn> &entries) {
  auto code = std::make_shared<Code>();
  llvm::orc::LLJIT *jit = nullptr;
  std::string prefix;
  if (session) {
    jit = session->jit.get();
    prefix = "m" + std::to_string(session->next++) + ".";
    module.withModuleDo([&](llvm::Module &m) {
      for (const std::string &name : names)
        if (llvm::Function *f = m.getFunction(name))
          f->setName(prefix + name);
    });
    code->session = std::move(session);
    code->tracker = jit->getMainJITDylib().createResourceTracker();
    if (llvm::Error error = jit->addIRModule(code->tracker, std::move(module)))
      throwLLVMError(std::move(error), "cannot add the module to the JIT");
  } else {
    code->own = createJit();
    jit = code->own.get();
    if (llvm::Error error = jit->addIRModule(std::move(module)))
      throwLLVMError(std::move(error), "cannot add the module to the JIT");
  }
  // The first lookup compiles the whole module; the rest are table reads.
  for (const std::string &name : names) {
    llvm::orc::ExecutorAddr address =
        unwrap(jit->lookup(prefix + name), "cannot compile '" + name + "'");
    entries[name] = address.toPtr<CompiledFn>();
  }
  return code;
}

Code::~Code() {
  if (!tracker)
    return;
  // Frees the module's code in the shared JIT; nothing may run it after.
  if (llvm::Error error = tracker->remove())
    llvm::consumeError(std::move(error));
}

} // namespace hbg::codegen
