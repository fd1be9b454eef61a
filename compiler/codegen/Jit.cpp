//===- codegen/Jit.cpp - The JIT behind a CompiledModule ------------------===//

#include "Jit.h"

#include "Target.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"

namespace hbg::codegen {

std::unique_ptr<CompiledModule::Impl>
CompiledModule::Impl::create(llvm::orc::ThreadSafeModule module,
                             const std::vector<std::string> &names) {
  auto impl = std::make_unique<Impl>();
  impl->jit =
      unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(hostMachineBuilder()).create(),
             "cannot create the JIT");

  // Generated code calls libm (tan, tanh, and whatever the backend lowers
  // intrinsics to); resolve those from the libraries loaded in this process.
  char prefix = impl->jit->getDataLayout().getGlobalPrefix();
  impl->jit->getMainJITDylib().addGenerator(
      unwrap(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix),
             "cannot search the process for symbols"));

  if (llvm::Error error = impl->jit->addIRModule(std::move(module)))
    throwLLVMError(std::move(error), "cannot add the module to the JIT");
  // The first lookup compiles the whole module; the rest are table reads.
  for (const std::string &name : names) {
    llvm::orc::ExecutorAddr address =
        unwrap(impl->jit->lookup(name), "cannot compile '" + name + "'");
    impl->entries[name] = address.toPtr<CompiledFn>();
  }
  return impl;
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

} // namespace hbg::codegen
