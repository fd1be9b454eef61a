//===- codegen/Jit.h - LLJITs and the code they own -----------------------===//
//
// Internal to the LLVM backend module (libhbg_llvm.so).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/CodeGen.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hbg::codegen {

/// One LLJIT that many modules are compiled into.
struct Session {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// Numbers the modules, whose entry points are renamed `m<k>.<name>` so
  /// that every module's `rhs` is distinct in the one JITDylib.
  std::atomic<std::uint64_t> next{0};
};

/// A module's code: in a JIT of its own, or under a resource tracker in a
/// session, which dropping the Code frees.
struct Code {
  ~Code();
  std::unique_ptr<llvm::orc::LLJIT> own;
  std::shared_ptr<Session> session;
  llvm::orc::ResourceTrackerSP tracker;
};

/// The module flag that asks for CodeGenOptLevel::None (CodeGenOptions::quick).
inline constexpr const char *kQuickFlag = "hbg.quick";

/// Marks `module` for quick compilation.
void markQuick(llvm::Module &module);

/// A host LLJIT that resolves libm and the process's other symbols, and
/// compiles each module at its level (markQuick).
std::unique_ptr<llvm::orc::LLJIT> createJit();

/// JIT-compiles `module` (optimised, configured for the host) into
/// `session`, or a JIT of its own when that is null, and resolves the
/// entry points `names` into `entries`. Throws std::runtime_error.
std::shared_ptr<Code> addModule(llvm::orc::ThreadSafeModule module,
                                const std::vector<std::string> &names,
                                std::shared_ptr<Session> session,
                                std::unordered_map<std::string, CompiledFn> &entries);

} // namespace hbg::codegen
