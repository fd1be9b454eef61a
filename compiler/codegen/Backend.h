//===- codegen/Backend.h - The LLVM half of code generation ---------------===//
//
// Internal to hbg_codegen. Everything that needs LLVM (lowering, the
// optimiser, the JIT) lives in a module of its own, libhbg_llvm.so, which
// hbg_codegen loads with dlopen the first time code is compiled. A program
// that runs its models on tapes, or has not compiled anything yet, never
// loads LLVM: libLLVM and the libraries it pulls in take about 25 ms to
// load and initialise, more than compiling and simulating a small model.
//
// The objects crossing the boundary are opaque handles owned by shared
// pointers whose deleters live in the module (which is never unloaded).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/CodeGen.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace hbg::codegen {

class Backend {
public:
  virtual ~Backend() = default;
  /// The optimised (optLevel 0: unoptimised) module as LLVM IR text.
  virtual std::string emitIR(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                             const CodeGenOptions &opts) = 0;
  /// Writes the functions, optimised as compile() optimises them, to the
  /// object file `path` (position-independent, for the host), with the
  /// data of ObjectSpec.
  virtual void emitObject(const sym::ExprContext &ctx, const std::vector<FunctionSpec> &fns,
                          const CodeGenOptions &opts, const ObjectSpec &spec,
                          const std::string &path) = 0;
  /// An LLJIT that many modules are compiled into.
  virtual std::shared_ptr<void> createSession() = 0;
  /// A lowered module (LLVM context and IR), not yet optimised.
  virtual std::shared_ptr<void> lower(const sym::ExprContext &ctx,
                                      const std::vector<FunctionSpec> &fns,
                                      const CodeGenOptions &opts) = 0;
  /// Optimises and JIT-compiles `lowered` (consumed) into `session`, or a
  /// JIT of its own when that is null; `entries` receives the address of
  /// each of `names`. The result owns the code.
  virtual std::shared_ptr<void> compile(std::shared_ptr<void> lowered,
                                        const std::vector<std::string> &names,
                                        const CodeGenOptions &opts,
                                        const std::shared_ptr<void> &session,
                                        std::unordered_map<std::string, CompiledFn> &entries) = 0;
};

/// The backend, loaded on first use (thread-safe). Throws
/// BackendUnavailable naming the paths tried and the loader's messages
/// when it cannot be loaded.
Backend &backend();

} // namespace hbg::codegen

/// The module's one exported symbol.
extern "C" hbg::codegen::Backend *hbg_llvm_backend();
