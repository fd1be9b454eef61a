//===- codegen/Optimizer.cpp - LLVM's optimisation pipeline ---------------===//
//
// Lowering never sets fast-math flags, so O2 may only apply rewrites that
// preserve IEEE results (no reassociation, no contraction into FMA): the
// simulator compares against closed forms at 1e-10 and expects the split
// and unsplit forms of a function to agree exactly.
//
//===----------------------------------------------------------------------===//

#include "Optimizer.h"

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

namespace hbg::codegen {

void configureForTarget(llvm::Module &module, const llvm::TargetMachine &tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm) {
  // The analysis managers must outlive the pass manager run and be
  // destroyed in reverse order of their dependencies (declaration order).
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;

  // The SLP vectoriser packs the independent lanes of straight-line code
  // (neighbouring masses of a chain, sections of a line) into vector
  // instructions; it does not reassociate, so results are unchanged.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  passes.run(module, mam);
}

} // namespace hbg::codegen
