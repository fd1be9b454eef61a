//===- hbg/driver/Pipeline.h - The compiler's stages in order -------------===//
#pragma once

#include "hbg/causality/Causality.h"
#include "hbg/equations/Equations.h"
#include "hbg/bondgraph/BondGraph.h"
#include "hbg/support/Diagnostics.h"
#include "hbg/support/PassTimer.h"
#include "hbg/syntax/AST.h"

#include <chrono>
#include <ctime>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>

namespace hbg::driver {

/// The `--emit=` ladder: where the pipeline stops and what it prints.
enum class Stage { Ast, BondGraph, Causality, Equations, LLVM, Run };

/// Parses "ast", "bondgraph", "causality", "equations", "llvm".
bool parseStage(const std::string &name, Stage &out);

/// What the front end produced, up to where it stopped.
struct FrontendResult {
  std::unique_ptr<ast::File> ast;
  std::optional<bg::BondGraph> graph;
  /// The mode causality and equations were built in.
  bg::Mode mode;
  std::optional<causality::CausalAssignment> causality;
  std::optional<eq::EquationSystem> equations;
};

/// Pipeline settings.
struct PipelineOptions {
  /// Stop after this stage (Equations and later run the whole front end).
  Stage stopAfter = Stage::Run;
  /// Print per-pass wall and CPU time to this stream when set.
  std::ostream *timings = nullptr;
  /// The mode to analyse, `j1=on,j2=off` (junctions not named keep their
  /// initial state); "" is the initial mode.
  std::string mode;
  /// How the equations stage solves loops.
  eq::EquationOptions equations;
  /// Where `import name;` looks for name.hbg, before the directories of
  /// the HBG_PATH environment variable (separated by `:`) and the standard
  /// library (libraryDirs()).
  std::vector<std::string> libPath;
  /// Values of the parameters that `for` loops and indices are computed
  /// from, by flat name (flatten::Options::parameters).
  std::map<std::string, double> parameters;
};

/// Notes naming the instances around a diagnostic inside a component
/// (`in `d1`, an instance of `IdealDiode` declared here`), found from the
/// component the line is in and the instance paths the message quotes.
DiagnosticEngine::ContextFn instanceContext(const std::vector<ast::InstanceInfo> &instances);

/// Reports why `bg::parseMode` refused a mode's text.
void reportModeError(const bg::BondGraph &g, const bg::ModeError &err, DiagnosticEngine &diags);

/// The directories `import name;` searches, in order: `libPath`, those of
/// HBG_PATH, the standard library's.
std::vector<std::string> libraryDirs(const std::vector<std::string> &libPath);

/// Reads a source file. On failure returns false with the reason in `why`
/// (for a CannotOpenFile diagnostic); directories are refused.
inline bool readSourceFile(const std::string &path, std::string &text, std::string &why) {
  return readFile(path, text, why);
}

/// Runs parse -> sema -> causality -> equations on buffer `file`. Errors go
/// to `diags`; the result holds every stage that completed.
FrontendResult runFrontend(SourceManager &sm, std::uint32_t file, DiagnosticEngine &diags,
                           const PipelineOptions &opts = {});

} // namespace hbg::driver
