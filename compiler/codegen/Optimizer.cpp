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
  llvm::PassBuilder builder(&tm);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  // The lowering emits straight-line code with every common subexpression
  // already shared (the expression DAG is hash-consed) and nothing to
  // inline, unroll or hoist, so of O2 only the SLP vectoriser pays: it
  // packs the independent lanes of the code (neighbouring masses of a
  // chain, sections of a line) into vector instructions, without
  // reassociating, so results are unchanged. Measured on the chain
  // (docs/performance.md, "Pass pipeline"), O2 with the SLP vectoriser
  // cost 30 to 50 % more compile time than the vectoriser alone and gave
  // no faster code.
  llvm::ModulePassManager pipeline;
  if (passes.empty()) {
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
