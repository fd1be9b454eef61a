//===- tools/hbgc/Build.cpp - hbgc build ----------------------------------===//

#include "Command.h"

#include "hbg/tooling/Build.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <unistd.h>

namespace hbg::tools {

namespace {

struct BuildArgs {
  std::string file, log;
  driver::BuildOptions opts;
  std::map<std::string, double> params;
};

/// Copies file `path` to standard output (`-o -`).
bool copyToStdout(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::cout << in.rdbuf();
  return in.good() || in.eof();
}

int build(BuildArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  if (a.opts.output.empty())
    throw UsageError{"`build` needs `-o EXE`"};
  driver::Session session(sessionOptions(common, a.params), std::cerr);
  if (!session.load(a.file))
    return 1;
  CompilerOptions copts;
  copts.tiering = Tiering::Tape; // the build compiles; nothing runs here
  copts.maxCachedModes = std::numeric_limits<std::size_t>::max();
  std::optional<Model> model = session.compile(Compiler(copts));
  if (!model)
    return 1;
  // `-p` fixes structural parameters; the others are the simulator's.
  std::string shownOutput = a.opts.output == "-" ? "EXE" : a.opts.output;
  for (const auto &[name, value] : a.params) {
    const std::vector<std::string> &names = model->parameterNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string best = closestName(name, names);
      std::cerr << "hbgc: error: model `" << model->name() << "` has no parameter `" << name
                << "`" << (best.empty() ? "" : "; did you mean `" + best + "`?") << "\n";
      return 1;
    }
    if (!model->structural(name)) {
      std::cerr << "hbgc: error: parameter `" << name << "` is set when the simulator runs (`"
                << shownOutput << " -p " << name << "=...`); `hbgc build -p` sets structural "
                << "parameters (loop bounds, indices) only\n";
      return 1;
    }
  }
  // `-o -`: built into a temporary directory, then copied out.
  std::string tmpDir;
  if (a.opts.output == "-") {
    const char *base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/hbgc-out-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::cerr << "hbgc: error: cannot make a temporary directory\n";
      return 1;
    }
    tmpDir = pattern;
    a.opts.output = tmpDir + "/" + (a.opts.fmu ? "model.fmu" : "simulator");
  }
  int status = 0;
  try {
    if (!a.log.empty()) {
      a.opts.modes = driver::modesOfEventLog(a.log);
      a.opts.modesSource = "the modes of `" + a.log + "`";
    }
    driver::buildSimulator(*model, a.opts);
    if (!tmpDir.empty() && !copyToStdout(a.opts.output)) {
      std::cerr << "hbgc: error: cannot read back `" << a.opts.output << "`\n";
      status = 1;
    }
  } catch (const CompileError &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    status = 1;
  } catch (const std::runtime_error &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    status = 1;
  }
  if (!tmpDir.empty()) {
    std::remove(a.opts.output.c_str());
    ::rmdir(tmpDir.c_str());
    return finishStdout(status);
  }
  return status;
}

} // namespace

Runner declareBuild(CLI::App *cmd, Common &common) {
  cmd->footer("Compiles FILE ahead of time into the executable EXE: the model's modes as machine "
              "code (LLVM's TargetMachine for this host, from the IR `hbgc run` JIT-compiles), "
              "linked with hbg's runtime only. EXE needs neither LLVM nor the compiler; it takes "
              "`hbgc run`'s simulation options (`EXE --help`) and writes the same CSV, bit for "
              "bit (docs/build.md).");
  auto a = std::make_shared<BuildArgs>();
  addModelArguments(*cmd, a->file, common);
  addValue(
      *cmd, "-o,--output", [a](const std::string &o) { a->opts.output = o; },
      "the executable to write (required; `-`: standard output)", "EXE");
  addRepeated(
      *cmd, "-p,--parameter", [a](const std::string &kv) { parseParameter(kv, a->params); },
      "a structural parameter's value (loops, `if` blocks and indices are built with it); other "
      "parameters are set when EXE runs",
      "NAME=VALUE");
  addValue(
      *cmd, "--max-modes",
      [a](const std::string &text) {
        a->opts.maxModes = static_cast<std::size_t>(
            parseWhole("--max-modes", text, 1, 1e9, "a whole number of 1 or more"));
      },
      "switched models: compile in every mode the junctions can reach when there are at most N "
      "(default 256)",
      "N");
  addValue(
      *cmd, "--modes-from", [a](const std::string &log) { a->log = log; },
      "switched models: compile in only the modes of the event log LOG (`hbgc run --events "
      "LOG`) and the initial mode; entering another is an error naming it",
      "LOG");
  cmd->add_flag("--fmu", a->opts.fmu,
                "write an FMI 3.0 FMU (Model Exchange and Co-Simulation) to EXE instead "
                "(docs/fmi.md)");
  cmd->add_flag("--jit-fallback", a->opts.jitFallback,
                "switched models: EXE carries the compiler and compiles a mode that is not "
                "compiled in when a run first enters it (EXE then needs hbg's LLVM backend and "
                "libLLVM at run time)");
  return [a, &common] { return build(*a, common); };
}

const Command kBuild = {"build",
                        "compile a model ahead of time into a standalone simulator or an FMU",
                        declareBuild};

} // namespace hbg::tools
