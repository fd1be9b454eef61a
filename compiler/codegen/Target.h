//===- codegen/Target.h - The host machine the JIT generates code for ----===//
//
// Internal to hbg_codegen. Optimisation and JIT compilation must agree on
// the target (triple, data layout, CPU features), so both obtain it here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <stdexcept>
#include <string>

namespace hbg::codegen {

/// Turns an LLVM error into the std::runtime_error CodeGen.h promises.
[[noreturn]] inline void throwLLVMError(llvm::Error error, const std::string &what) {
  throw std::runtime_error("codegen: " + what + ": " + llvm::toString(std::move(error)));
}

/// The value of `expected`, or throws its error.
template <typename T> T unwrap(llvm::Expected<T> expected, const std::string &what) {
  if (!expected)
    throwLLVMError(expected.takeError(), what);
  return std::move(*expected);
}

/// Registers the native target with LLVM. Thread-safe; only the first call
/// does anything.
void initializeNativeTarget();

/// A builder for the host's target machine (CPU and features detected).
llvm::orc::JITTargetMachineBuilder hostMachineBuilder();

/// The host's target machine, for optimisation passes and data layout.
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine();

} // namespace hbg::codegen
