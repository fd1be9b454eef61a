//===- codegen/Optimizer.h - LLVM's optimisation pipeline -----------------===//
//
// Internal to hbg_codegen.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace hbg::codegen {

/// Gives `module` the triple and data layout of `tm`, which the optimiser
/// needs (and the JIT checks).
void configureForTarget(llvm::Module &module, const llvm::TargetMachine &tm);

/// Runs hbg's pass pipeline (O1 and the SLP vectoriser, Optimizer.cpp says why),
/// tuned for `tm` (vector widths, instruction costs).
/// `passes`, when not empty, is a pipeline in `opt -passes=` syntax run
/// instead (CodeGenOptions::passes).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm, const std::string &passes);

} // namespace hbg::codegen
