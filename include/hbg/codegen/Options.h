//===- hbg/codegen/Options.h - Settings of code generation ----------------===//
//
// Part of the embedding API (CompilerOptions::codegen): kept apart from
// CodeGen.h, which is internal to the compiler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

namespace hbg::codegen {

/// Code generation settings.
struct CodeGenOptions {
  /// 0 skips the optimisation pipeline (O1 and the SLP vectoriser); 1 and
  /// above run it (the default).
  unsigned optLevel = 2;
  /// Upper bound on DAG nodes lowered into one LLVM function.
  std::size_t maxNodesPerFunction = 500;
  /// Code fast to compile rather than fast to run: no optimisation
  /// pipeline, and LLVM's fast instruction selector and register
  /// allocator (CodeGenOptLevel::None). On the chain of
  /// docs/performance.md, about a tenth of the compile time for 1.3 to
  /// 1.6 times the run time. The same IEEE operations in the same order,
  /// so the same results, bit for bit.
  bool quick = false;
  /// For measurements: an LLVM pass pipeline in `opt -passes=` syntax
  /// (`default<O2>`, `instcombine,slp-vectorizer`) run instead of hbg's.
  /// Empty: hbg's. A pipeline LLVM cannot parse is a std::runtime_error.
  std::string passes;
  /// For tests: called with the text of every module the JIT compiles,
  /// after the pass pipeline (what `hbgc run --emit=llvm` prints).
  std::function<void(const std::string &)> onModule;
  /// When set, each step of LLVM's work (lowering, the pass pipeline,
  /// machine code) prints its time there as `pass llvm-...: W ms (cpu C
  /// ms)`, as `hbgc run --time-passes` prints the front end's; CPU time of
  /// the compiling thread.
  std::ostream *timings = nullptr;
};

} // namespace hbg::codegen
