//===- codegen/Optimizer.cpp - LLVM's optimisation pipeline ---------------===//
//
// Lowering never sets fast-math flags, so the optimiser may only apply
// rewrites that preserve IEEE results (no reassociation, no contraction
// into FMA): the simulator compares against closed forms at 1e-10, and the
// tapes (runtime/Tape) must give the same bits as the compiled code.
//
//===----------------------------------------------------------------------===//

#include "Optimizer.h"

#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Vectorize/SLPVectorizer.h"

#include <stdexcept>

namespace hbg::codegen {

void configureForTarget(llvm::Module &module, const llvm::TargetMachine &tm) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm, const std::string &passes) {
  // The analysis managers must outlive the pass manager run and be
  // destroyed in reverse order of their dependencies (declaration order).
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  // An explicit pipeline (`default<O2>`) gets the vectoriser as clang's
  // O2 does; hbg's adds it after O1 itself.
  tuning.SLPVectorization = !passes.empty();
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  // O1, then the SLP vectoriser, which packs the independent lanes of the
  // code (neighbouring masses of a chain, sections of a line) into vector
  // instructions without reassociating, so results are unchanged. Chosen
  // by measurement (docs/performance.md, "Pass pipeline"): on the chain
  // as fast as O2 with the vectoriser, in as little or less compile time;
  // the vectoriser alone compiled the chain faster still, but left the
  // code of a switched model's modes (breakers) so shaped that LLVM's
  // instruction scheduler took 20 times longer than after O1.
  llvm::ModulePassManager pipeline;
  if (passes.empty()) {
    pipeline = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1);
    llvm::FunctionPassManager functionPasses;
    functionPasses.addPass(llvm::SLPVectorizerPass());
    pipeline.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(functionPasses)));
  } else if (llvm::Error error = builder.parsePassPipeline(pipeline, passes)) {
    throw std::runtime_error("codegen: bad pass pipeline `" + passes +
                             "`: " + llvm::toString(std::move(error)));
  }
  pipeline.run(module, mam);
}

} // namespace hbg::codegen
