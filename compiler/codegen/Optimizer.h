//===- codegen/Optimizer.h - LLVM's optimisation pipeline -----------------===//
//
// Internal to hbg_codegen.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace hbg::codegen {

/// Gives `module` the triple and data layout of `tm`, which the optimiser
/// needs (and the JIT checks).
void configureForTarget(llvm::Module &module, const llvm::TargetMachine &tm);

/// Runs the new pass manager's per-module O2 pipeline, tuned for `tm`
/// (vector widths, instruction costs).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm);

} // namespace hbg::codegen
