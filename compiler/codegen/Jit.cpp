//===- codegen/Jit.cpp - The JIT behind a CompiledModule ------------------===//

#include "Jit.h"

#include "Target.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/Module.h"

namespace hbg::codegen {

std::unique_ptr<llvm::orc::LLJIT> createJit() {
  std::unique_ptr<llvm::orc::LLJIT> jit =
      unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(hostMachineBuilder()).create(),
             "cannot create the JIT");
  // Generated code calls libm (tan, tanh, and whatever the backend lowers
  // intrinsics to); resolve those from the libraries loaded in this process.
  char prefix = jit->getDataLayout().getGlobalPrefix();
  jit->getMainJITDylib().addGenerator(
      unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix),
             "cannot search the process for symbols"));
  return jit;
}

JitSession::JitSession() : impl_(std::make_unique<Impl>()) { impl_->jit = createJit(); }
JitSession::~JitSession() = default;

std::shared_ptr<JitSession> JitSession::create() {
  return std::shared_ptr<JitSession>(new JitSession());
}

std::size_t JitSession::liveModules() const { return impl_->live.load(); }

std::unique_ptr<CompiledModule::Impl>
CompiledModule::Impl::create(llvm::orc::ThreadSafeModule module,
                             const std::vector<std::string> &names,
                             std::shared_ptr<JitSession> session) {
  auto impl = std::make_unique<Impl>();
  llvm::orc::LLJIT *jit = nullptr;
  std::string prefix;
  if (session) {
    jit = session->impl_->jit.get();
    prefix = "m" + std::to_string(session->impl_->next++) + ".";
    module.withModuleDo([&](llvm::Module &m) {
      for (const std::string &name : names)
        if (llvm::Function *f = m.getFunction(name))
          f->setName(prefix + name);
    });
    impl->session = std::move(session);
    ++impl->session->impl_->live;
    impl->tracker = jit->getMainJITDylib().createResourceTracker();
    if (llvm::Error error = jit->addIRModule(impl->tracker, std::move(module)))
      throwLLVMError(std::move(error), "cannot add the module to the JIT");
  } else {
    impl->jit = createJit();
    jit = impl->jit.get();
    if (llvm::Error error = jit->addIRModule(std::move(module)))
      throwLLVMError(std::move(error), "cannot add the module to the JIT");
  }
  // The first lookup compiles the whole module; the rest are table reads.
  for (const std::string &name : names) {
    llvm::orc::ExecutorAddr address =
        unwrap(jit->lookup(prefix + name), "cannot compile '" + name + "'");
    impl->entries[name] = address.toPtr<CompiledFn>();
  }
  return impl;
}

CompiledModule::Impl::~Impl() {
  if (!tracker)
    return;
  // Frees the module's code in the shared JIT; nothing may run it after.
  if (llvm::Error error = tracker->remove())
    llvm::consumeError(std::move(error));
  --session->impl_->live;
}

CompiledModule::CompiledModule() = default;
CompiledModule::CompiledModule(CompiledModule &&) noexcept = default;
CompiledModule &CompiledModule::operator=(CompiledModule &&) noexcept = default;
CompiledModule::~CompiledModule() = default;

CompiledFn CompiledModule::lookup(const std::string &name) const {
  if (!impl_)
    return nullptr;
  auto it = impl_->entries.find(name);
  return it == impl_->entries.end() ? nullptr : it->second;
}

LoweredModule::LoweredModule() = default;
LoweredModule::LoweredModule(LoweredModule &&) noexcept = default;
LoweredModule &LoweredModule::operator=(LoweredModule &&) noexcept = default;
LoweredModule::~LoweredModule() = default;

} // namespace hbg::codegen
