//===- hbg/tooling/Build.h - Simulators compiled ahead of time -------------===//
//
// `hbgc build`: a model's modes compiled to an object file through LLVM's
// TargetMachine, with the model's image (runtime/Image.h), linked with
// hbg's runtime and a main() that takes `hbgc run`'s options into an
// executable that needs neither LLVM nor the compiler (docs/build.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/hbg.h"

#include <cstddef>
#include <string>
#include <vector>

namespace hbg::driver {

struct BuildOptions {
  /// The executable to write.
  std::string output;
  /// Switched models: compile every mode their junctions' state machines
  /// can reach when there are at most this many; above it, `modes` must
  /// say which.
  std::size_t maxModes = 256;
  /// Switched models, when `modesSource` is set: compile these modes
  /// (mode texts, `j1=on, j2=off`, as the event log writes them) and the
  /// initial mode instead of every reachable one. Entering another is a
  /// run-time error naming it and `modesSource` (`the modes of
  /// events.csv`).
  std::vector<std::string> modes;
  std::string modesSource;
  /// Switched models: the simulator carries the compiler (and loads
  /// LLVM's backend when it needs it) and compiles a mode that is not
  /// compiled in when a run first enters it, as `hbgc run` does.
  bool jitFallback = false;
  /// Write an FMI 3.0 FMU (Model Exchange and Co-Simulation) to `output`
  /// instead of an executable (docs/fmi.md).
  bool fmu = false;
};

/// What a build compiled.
struct BuildReport {
  /// Modes compiled in (distinct programs), and known to be
  /// unanalysable; functions in the object file.
  std::size_t programs = 0, unanalysable = 0, functions = 0;
};

/// Builds the simulator of `model` (compiled with Tiering::Tape: nothing
/// needs the JIT). Throws CompileError for a model whose reachable modes
/// exceed the bound or a mode text that names no mode, and
/// std::runtime_error when compiling or linking fails.
BuildReport buildSimulator(const Model &model, const BuildOptions &opts);

/// The image buildSimulator() would write for `model` (the modes `opts`
/// selects), with every function's tape instead of machine code: a run
/// of it (runtime::ImageSystem) gives what a simulator gives, without
/// LLVM (tests).
std::string imageOf(const Model &model, const BuildOptions &opts = {});

/// The mode texts of an event log (`hbgc run --events`): every mode its
/// rows name. Throws std::runtime_error when `path` cannot be read or is
/// not an event log.
std::vector<std::string> modesOfEventLog(const std::string &path);

} // namespace hbg::driver
