//===- codegen/Target.cpp - The host machine the JIT generates code for --===//

#include "Target.h"

#include "llvm/Support/TargetSelect.h"

#include <mutex>

namespace hbg::codegen {

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Registration mutates LLVM's global target registry, which is not
    // safe to do concurrently, hence call_once.
    if (llvm::InitializeNativeTarget() || llvm::InitializeNativeTargetAsmPrinter() ||
        llvm::InitializeNativeTargetAsmParser())
      throw std::runtime_error("codegen: LLVM has no native target for this host");
  });
}

llvm::orc::JITTargetMachineBuilder hostMachineBuilder() {
  initializeNativeTarget();
  return unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(), "cannot detect host");
}

std::unique_ptr<llvm::TargetMachine> createHostTargetMachine() {
  return unwrap(hostMachineBuilder().createTargetMachine(), "cannot create target machine");
}

} // namespace hbg::codegen
