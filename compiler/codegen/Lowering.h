//===- codegen/Lowering.h - DAG expressions to LLVM IR --------------------===//
//
// Internal to hbg_codegen. Builds the (unoptimised) LLVM module holding one
// externally visible function per FunctionSpec, splitting large ones into
// internal helpers as described in hbg/codegen/CodeGen.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/CodeGen.h"

#include <cstddef>
#include <memory>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace hbg::codegen {

/// Lowers `fns` into a new module named `moduleName`. Throws
/// std::runtime_error on malformed input (invalid ids, duplicate names,
/// symbols of kind Variable) and when the result fails LLVM's verifier.
std::unique_ptr<llvm::Module> lowerFunctions(llvm::LLVMContext &llvmCtx,
                                             const sym::ExprContext &ctx,
                                             const std::vector<FunctionSpec> &fns,
                                             std::size_t maxNodesPerFunction);

} // namespace hbg::codegen
