//===- codegen/Jit.h - The JIT behind a CompiledModule --------------------===//
//
// Internal to hbg_codegen: the LLVM half of CompiledModule's pimpl, kept out
// of the public header so that clients never see LLVM types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/CodeGen.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hbg::codegen {

struct CompiledModule::Impl {
  /// JIT-compiles `module` (already optimised, configured for the host) in
  /// a JIT of its own and resolves the entry points `names`. Throws
  /// std::runtime_error on failure.
  static std::unique_ptr<Impl> create(llvm::orc::ThreadSafeModule module,
                                      const std::vector<std::string> &names);

  /// Owns the code: every address in `entries` dies with it. One JIT per
  /// module keeps modules independent (same names, any destruction order).
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unordered_map<std::string, CompiledFn> entries;
};

} // namespace hbg::codegen
