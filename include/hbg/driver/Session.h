//===- hbg/driver/Session.h - One command's work on one model -------------===//
//
// What hbgc's commands share: reading a model (from a file or standard
// input), running the front end to a stage, printing its diagnostics,
// compiling what it built, and printing an intermediate form. Not
// installed (hbg.h is the embedding API).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/driver/Pipeline.h"
#include "hbg/hbg.h"

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hbg::driver {

class Session {
public:
  struct Options {
    /// Where `import name;` looks first (`--lib-path`).
    std::vector<std::string> libPath;
    /// Structural parameters' values (`-p`); others are ignored here.
    std::map<std::string, double> parameters;
    /// Per-pass wall times go here when set (`--time-passes`).
    std::ostream *timings = nullptr;
  };

  /// Diagnostics are printed to `err` as they are produced.
  Session(Options opts, std::ostream &err);

  /// Reads `path` (`-`: standard input, named `<stdin>`) and runs the front
  /// end up to `stop` in `mode` ("" is the initial mode). False, with the
  /// diagnostics printed, when the model has errors.
  bool load(const std::string &path, Stage stop = Stage::Run, const std::string &mode = "");

  FrontendResult &frontend() { return fe_; }
  DiagnosticEngine &diagnostics() { return *diags_; }
  const std::shared_ptr<SourceManager> &sources() const { return sm_; }
  /// Prints the diagnostics reported since the last print.
  void printDiagnostics();

  /// Compiles what load() built (its graph and equations are moved out).
  /// Prints the error and returns nothing when a mode cannot be compiled.
  std::optional<Model> compile(const Compiler &compiler);

  /// The form of the model at `stage` (`--emit=`), from what load() built
  /// up to it: the AST, the bond graph, causality, equations, or the LLVM
  /// module the JIT compiles for the initial mode (which compiles it;
  /// nothing, with the error printed, when that fails).
  std::optional<std::string> emit(Stage stage);

private:
  Options opts_;
  std::ostream &err_;
  std::shared_ptr<SourceManager> sm_;
  std::unique_ptr<DiagnosticEngine> diags_;
  FrontendResult fe_;
  std::size_t printed_ = 0;
};

/// The LLVM IR of `model`'s initial mode: every function of it (right-hand
/// side, outputs, loops, guards, ...) as the JIT compiles them, after the
/// same pass pipeline.
std::string moduleIR(const Model &model);

} // namespace hbg::driver
