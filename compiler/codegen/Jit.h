//===- codegen/Jit.h - The JIT behind a CompiledModule --------------------===//
//
// Internal to hbg_codegen: the LLVM halves of the pimpls of CompiledModule,
// LoweredModule and JitSession, kept out of the public header so that
// clients never see LLVM types.
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

/// A host LLJIT that resolves libm and the process's other symbols.
std::unique_ptr<llvm::orc::LLJIT> createJit();

struct JitSession::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// Numbers the modules, whose entry points are renamed `m<k>.<name>` so
  /// that every module's `rhs` is distinct in the one JITDylib.
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::size_t> live{0};
};

struct LoweredModule::Impl {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  /// The FunctionSpecs' names: the module's entry points.
  std::vector<std::string> names;
};

struct CompiledModule::Impl {
  /// JIT-compiles `module` (already optimised, configured for the host) in
  /// `session`, or in a JIT of its own when that is null, and resolves the
  /// entry points `names`. Throws std::runtime_error on failure.
  static std::unique_ptr<Impl> create(llvm::orc::ThreadSafeModule module,
                                      const std::vector<std::string> &names,
                                      std::shared_ptr<JitSession> session);
  ~Impl();

  /// Owns the code: every address in `entries` dies with it. Either a JIT
  /// of its own, or a tracker of the module's code in a shared session.
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::shared_ptr<JitSession> session;
  llvm::orc::ResourceTrackerSP tracker;
  std::unordered_map<std::string, CompiledFn> entries;
};

} // namespace hbg::codegen
