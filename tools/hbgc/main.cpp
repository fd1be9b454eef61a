//===- tools/hbgc/main.cpp - The hbgc command line ------------------------===//
//
//   hbgc check   FILE
//   hbgc explain FILE [--mode j1=on,j2=off]
//   hbgc run     FILE [--t-end T] [options]
//   hbgc linearize FILE [--at T] [--mode ...] [-p NAME=VALUE] [--format text|csv]
//
// Exit status: 0 success, 1 errors in the model, at run time or writing the
// results, 2 usage errors, 70 internal errors (a bug in hbg).
//
//===----------------------------------------------------------------------===//

#include "hbg/driver/Pipeline.h"
#include "hbg/hbg.h"
#include "hbg/driver/Build.h"
#include "hbg/driver/Internal.h"
#include "hbg/codegen/CodeGen.h"

#include "../common/Output.h"
#include "../common/RunOptions.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

using namespace hbg;

namespace {

using tools::Output;
using tools::optionValue;
using tools::parseNumber;
using tools::UsageError;

const char *kUsage = R"(usage: hbgc <command> FILE [options]

commands:
  check    FILE   check a model and report every error
  explain  FILE   print each bond's causality and the model's equations
  run      FILE   compile and simulate a model (see `hbgc run --help`)
  build    FILE   compile a model ahead of time into a standalone simulator
  linearize FILE  the state matrices and poles at an operating point

`hbgc <command> --help` describes a command.

Every command takes --lib-path DIR (repeatable): where `import name;`
looks for name.hbg, before the directories of HBG_PATH (separated by
`:`) and the standard library.
)";

const char *kLinearizeHelp = R"(usage: hbgc linearize FILE [--at T] [--mode J=on|off,...] [-p NAME=VALUE]...
                      [--format text|csv]

The linear model dx/dt = A x + B u, y = C x + D u of FILE about an
operating point, from the symbolic derivatives of its equations: the
inputs u are the sources' values (an effort source's effort, a flow
source's flow), the outputs y the model's outputs. Then the eigenvalues
of A (the poles), each with its time constant, or its natural frequency
and damping ratio.

  --at T               linearise about the state a run from t = 0 reaches at
                       T, in the mode it is in there (default: the initial
                       state at t = 0)
  --mode J=on|off,...  the mode of a model with switched junctions (default:
                       the initial mode, or with --at the mode at T)
  -p NAME=VALUE        override a parameter (repeatable)
  --format F           text (default) or csv: one row per matrix entry
                       (`A,row,column,value`) and per pole
)";

const char *kBuildHelp = R"(usage: hbgc build FILE -o EXE [options]

Compiles FILE ahead of time into the executable EXE: the model's modes as
machine code (LLVM's TargetMachine for this host, from the IR `hbgc run`
JIT-compiles), linked with hbg's runtime only. EXE needs neither LLVM nor
the compiler; it takes `hbgc run`'s simulation options (`EXE --help`) and
writes the same CSV, bit for bit (docs/build.md).

options:
  -o EXE               the executable to write (required)
  -p NAME=VALUE        a structural parameter's value (loops and indices
                       are built with it); other parameters are set when
                       EXE runs
  --max-modes N        switched models: compile in every mode the
                       junctions can reach when there are at most N
                       (default 256)
  --modes-from LOG     switched models: compile in only the modes of the
                       event log LOG (`hbgc run --events LOG`) and the
                       initial mode; entering another is an error naming it
  --fmu                write an FMI 3.0 FMU (Model Exchange and
                       Co-Simulation) to EXE instead (docs/fmi.md)
  --jit-fallback       switched models: EXE carries the compiler and compiles
                       a mode that is not compiled in when a run first
                       enters it (EXE then needs hbg's LLVM backend and
                       libLLVM at run time)
)";

const char *kCheckHelp = R"(usage: hbgc check FILE

Parses and checks FILE (names, bonds, state machines of switched junctions,
causality and equations in the initial mode) and prints every error as
file:line:col with the source line. Exit status 0 when the model is valid.
)";

const char *kExplainHelp = R"(usage: hbgc explain FILE [--mode J=on|off,...]

Prints the causality of every bond, the causality of every storage element,
the state equations, every bond's effort and flow, and the outputs.

A model with switched junctions is explained in one mode, printed in the
header (`mode: contact=off`): by default the initial mode, each junction in
its initial state.

options:
  --mode J=on|off,...  the mode to explain: each named switched junction ON
                       or OFF (e.g. `--mode contact=on,valve=off`), or in
                       one of its states (`--mode valve1=open`); junctions
                       not named stay in their initial state
)";

const std::string kRunHelp = std::string(R"(usage: hbgc run FILE [--t-end T] [options]

Compiles FILE to native code and simulates it; writes CSV with a header
`time,<outputs>` to standard output or to -o FILE. Models with switched
junctions compile each mode when the run first enters it; at an event the
output has a row before and a row after it (docs/hybrid.md).

The model's `experiment { ... }` block, if any, sets the defaults of
--t-start, --t-end, --dt-out, --dt, --max-step, --rtol, --atol and
--method (as t_start, t_end, dt_out, dt, max_step, rtol, atol, method);
the command line overrides them.

options:
)") + tools::kRunOptionsHelp + R"(  --format F           csv (default) or table
  --emit=STAGE         print an intermediate form instead of simulating:
                       ast, bondgraph, causality, equations, llvm
  --all-modes          compile every mode up front (at most 2^8 modes)
                       instead of each when the simulation first enters it
  --tier T             how modes reach LLVM: tiered (default: on tapes
                       until hot, then compiled in the background), jit
                       (compiled before first use) or tape (never)
  --stats              also prints modes analysed and compiled
  --time-passes        print the time each compiler pass takes to stderr
)";

struct RunArgs {
  std::string file;
  /// The options a built simulator takes too; `run.cli` holds those the
  /// model's `experiment` block may also give, which the command line
  /// overrides.
  tools::RunOptions run;
  std::string format = "csv";
  bool emit = false;
  driver::Stage stage = driver::Stage::Run;
  bool timePasses = false, allModes = false;
  Tiering tiering = Tiering::Tiered;
};

RunArgs parseRunArgs(const std::vector<std::string> &args) {
  RunArgs r;
  auto value = [&](std::size_t &i) -> const std::string & { return optionValue(args, i); };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (tools::parseRunOption(args, i, r.run)) {
      continue;
    } else if (a == "--format") {
      r.format = value(i);
      if (r.format != "csv" && r.format != "table")
        throw UsageError{"unknown format `" + r.format + "`; expected csv or table"};
    } else if (a.rfind("--emit=", 0) == 0) {
      if (!driver::parseStage(a.substr(7), r.stage))
        throw UsageError{"unknown stage `" + a.substr(7) +
                         "`; expected ast, bondgraph, causality, equations or llvm"};
      r.emit = true;
    } else if (a == "--all-modes") {
      r.allModes = true;
    } else if (a == "--tier") {
      const std::string &t = value(i);
      if (t == "tiered")
        r.tiering = Tiering::Tiered;
      else if (t == "jit")
        r.tiering = Tiering::Jit;
      else if (t == "tape")
        r.tiering = Tiering::Tape;
      else
        throw UsageError{"unknown tier `" + t + "`; expected tiered, jit or tape"};
    } else if (a == "--time-passes") {
      r.timePasses = true;
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError{"unknown option `" + a + "`"};
    } else if (r.file.empty()) {
      r.file = a;
    } else {
      throw UsageError{"unexpected argument `" + a + "`"};
    }
  }
  if (r.file.empty())
    throw UsageError{"no input file"};
  const auto &t0 = r.run.cli[runtime::Setting::TStart], &t1 = r.run.cli[runtime::Setting::TEnd];
  if (t1 && !(*t1 > t0.value_or(0.0)))
    throw UsageError{"`--t-end` must be after `--t-start`"};
  return r;
}

/// Exit status of a command that printed to standard output: `status`, or
/// 1 when it succeeded but its output could not be written.
int finishStdout(int status) {
  Output out;
  return !out.finish() && status == 0 ? 1 : status;
}

/// Loads FILE and runs the front end up to `stop`. Prints diagnostics.
struct Loaded {
  std::shared_ptr<SourceManager> sm = std::make_shared<SourceManager>();
  std::unique_ptr<DiagnosticEngine> diags;
  driver::FrontendResult fe;
};

/// `--lib-path` directories, taken out of the arguments of any command.
std::vector<std::string> gLibPath;

bool load(const std::string &path, driver::Stage stop, bool timePasses, Loaded &l,
          const std::string &mode = "", const std::map<std::string, double> &params = {}) {
  l.diags = std::make_unique<DiagnosticEngine>(*l.sm);
  std::string text, why;
  if (!driver::readSourceFile(path, text, why)) {
    l.diags->report(DiagKind::CannotOpenFile, {}, {path, why});
    std::cerr << l.diags->renderAll();
    return false;
  }
  std::uint32_t file = l.sm->addBuffer(path, text);
  driver::PipelineOptions opts;
  opts.stopAfter = stop;
  opts.timings = timePasses ? &std::cerr : nullptr;
  opts.mode = mode;
  opts.libPath = gLibPath;
  // Structural parameters (`for` loops, indices) take `-p` when built.
  opts.parameters = params;
  l.fe = driver::runFrontend(*l.sm, file, *l.diags, opts);
  std::cerr << l.diags->renderAll();
  return !l.diags->hasErrors();
}

std::string singleFile(const std::vector<std::string> &args) {
  std::string file;
  for (const std::string &a : args) {
    if (!a.empty() && a[0] == '-')
      throw UsageError{"unknown option `" + a + "`"};
    if (!file.empty())
      throw UsageError{"unexpected argument `" + a + "`"};
    file = a;
  }
  if (file.empty())
    throw UsageError{"no input file"};
  return file;
}

int runCheck(const std::vector<std::string> &args) {
  Loaded l;
  return load(singleFile(args), driver::Stage::Run, false, l) ? 0 : 1;
}

int runExplain(const std::vector<std::string> &argv) {
  std::vector<std::string> args;
  std::string mode;
  bool haveMode = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--mode" || argv[i].rfind("--mode=", 0) == 0) {
      if (haveMode)
        throw UsageError{"`--mode` given twice"};
      if (argv[i] == "--mode") {
        if (i + 1 >= argv.size())
          throw UsageError{"`--mode` needs a value"};
        mode = argv[++i];
      } else {
        mode = argv[i].substr(7);
      }
      if (mode.empty())
        throw UsageError{"`--mode` needs JUNCTION=on|off,..."};
      haveMode = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  Loaded l;
  if (!load(singleFile(args), driver::Stage::Run, false, l, mode))
    return 1;
  std::cout << driver::explain(*l.fe.graph, *l.fe.causality, *l.fe.equations);
  return finishStdout(0);
}

/// Compiles what load() produced (the graph and equations are moved out);
/// prints the error and returns nothing when a mode cannot be compiled.
std::optional<Model> compileLoaded(Loaded &l, const Compiler &compiler) {
  try {
    return bg::hasSwitched(*l.fe.graph)
               ? driver::compileSwitched(compiler, l.sm, std::move(*l.fe.graph),
                                         std::move(*l.fe.equations))
               : driver::compileEquations(compiler, std::move(*l.fe.equations));
  } catch (const CompileError &e) {
    std::cerr << e.what();
    return std::nullopt;
  }
}

int runBuild(const std::vector<std::string> &args) {
  std::string file, log;
  driver::BuildOptions opts;
  std::map<std::string, double> params;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "-o") {
      opts.output = optionValue(args, i);
    } else if (a == "-p") {
      tools::parseParameter(optionValue(args, i), params);
    } else if (a == "--max-modes") {
      double n = parseNumber(a, optionValue(args, i));
      if (!(n >= 1 && n == std::floor(n) && n <= 1e9))
        throw UsageError{"`--max-modes` must be a whole number of 1 or more"};
      opts.maxModes = static_cast<std::size_t>(n);
    } else if (a == "--modes-from") {
      log = optionValue(args, i);
    } else if (a == "--jit-fallback") {
      opts.jitFallback = true;
    } else if (a == "--fmu") {
      opts.fmu = true;
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError{"unknown option `" + a + "`"};
    } else if (file.empty()) {
      file = a;
    } else {
      throw UsageError{"unexpected argument `" + a + "`"};
    }
  }
  if (file.empty())
    throw UsageError{"no input file"};
  if (opts.output.empty())
    throw UsageError{"`build` needs `-o EXE`"};
  Loaded l;
  if (!load(file, driver::Stage::Run, false, l, "", params))
    return 1;
  CompilerOptions copts;
  copts.tiering = Tiering::Tape; // the build compiles; nothing runs here
  copts.maxCachedModes = std::numeric_limits<std::size_t>::max();
  std::optional<Model> model = compileLoaded(l, Compiler(copts));
  if (!model)
    return 1;
  // `-p` fixes structural parameters; the others are the simulator's.
  for (const auto &[name, value] : params) {
    const std::vector<std::string> &names = model->parameterNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::string best = closestName(name, names);
      std::cerr << "hbgc: error: model `" << model->name() << "` has no parameter `" << name
                << "`" << (best.empty() ? "" : "; did you mean `" + best + "`?") << "\n";
      return 1;
    }
    if (!model->structural(name)) {
      std::cerr << "hbgc: error: parameter `" << name << "` is set when the simulator runs (`"
                << opts.output << " -p " << name << "=...`); `hbgc build -p` sets structural "
                << "parameters (loop bounds, indices) only\n";
      return 1;
    }
  }
  try {
    if (!log.empty()) {
      opts.modes = driver::modesOfEventLog(log);
      opts.modesSource = "the modes of `" + log + "`";
    }
    driver::buildSimulator(*model, opts);
  } catch (const CompileError &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  } catch (const std::runtime_error &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

/// `%.10g`.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

int runLinearize(const std::vector<std::string> &argv) {
  std::vector<std::string> files;
  std::string mode, format = "text";
  bool haveMode = false;
  double at = 0;
  std::map<std::string, double> overrides;
  auto value = [&](std::size_t &i) -> const std::string & { return optionValue(argv, i); };
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string &a = argv[i];
    if (a == "--at") {
      at = parseNumber(a, value(i));
      if (!(at >= 0) || !std::isfinite(at))
        throw UsageError{"`--at` must be a time of 0 or later"};
    } else if (a == "--mode") {
      mode = value(i);
      haveMode = true;
    } else if (a == "-p") {
      tools::parseParameter(value(i), overrides);
    } else if (a == "--format") {
      format = value(i);
      if (format != "text" && format != "csv")
        throw UsageError{"unknown format `" + format + "`; expected text or csv"};
    } else {
      files.push_back(a);
    }
  }
  std::string path = singleFile(files);
  // The model is compiled from its initial mode (that is where a run
  // starts); the mode to linearise in is read separately.
  Loaded l;
  if (!load(path, driver::Stage::Run, false, l, "", overrides))
    return 1;
  bg::BondGraph graph = *l.fe.graph;
  bg::Mode where = l.fe.mode;
  bool switched = bg::hasSwitched(graph);
  if (haveMode) {
    bg::ModeError err;
    bg::Mode given;
    if (!bg::parseMode(graph, mode, where, given, err)) {
      driver::reportModeError(graph, err, *l.diags);
      std::cerr << l.diags->renderAll();
      return 1;
    }
    where = std::move(given);
  }
  std::optional<Model> compiled = compileLoaded(l, Compiler());
  if (!compiled)
    return 1;
  Model &model = *compiled;
  SimulationOptions opts;
  opts.tEnd = at;
  Simulation sim(model, opts);
  for (const auto &[name, v] : overrides) {
    try {
      sim.setParameter(name, v);
    } catch (const std::invalid_argument &e) {
      std::cerr << "hbgc: error: " << e.what() << "\n";
      return 1;
    }
  }
  std::vector<double> params = model.parameterValues(overrides);
  std::vector<double> state = model.initialState(params);
  std::string modeText = bg::modeText(graph, where);
  if (at > 0) {
    Result r = sim.run();
    if (!r.ok()) {
      std::cerr << "hbgc: error: " << r.error << "\n";
      return 1;
    }
    state = r.finalState;
    if (switched && !haveMode && r.finalMode != modeText) {
      bg::ModeError err;
      if (!bg::parseMode(graph, r.finalMode, bg::initialMode(graph), where, err)) {
        std::cerr << "hbgc: internal error: cannot read mode `" << r.finalMode << "`\n";
        return 70;
      }
      modeText = r.finalMode;
    }
  }
  const std::vector<std::string> &names = model.stateNames();
  auto stateValue = [&](const std::string &name) {
    auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? 0.0 : state[static_cast<std::size_t>(it - names.begin())];
  };
  std::string why;
  std::optional<eq::StateSpace> ss =
      eq::linearize(graph, where, params, at, stateValue, *l.diags, why);
  std::cerr << l.diags->renderAll();
  if (!ss) {
    std::cerr << "hbgc: error: cannot linearise model `" << model.name() << "`"
              << (modeText.empty() ? "" : " in mode " + modeText) << ": " << why << "\n";
    return 1;
  }
  std::size_t n = ss->states.size(), m = ss->inputs.size(), p = ss->outputs.size();
  auto pole = [&](std::size_t k) {
    double re = ss->eigenRe[k], im = ss->eigenIm[k];
    if (im == 0)
      return re < 0 ? "time constant " + num(-1 / re) + " s"
                    : re == 0 ? std::string("integrator") : "unstable, growing as exp(" + num(re) + " t)";
    double wn = std::hypot(re, im);
    return "natural frequency " + num(wn) + " rad/s (" + num(wn / (2 * M_PI)) +
           " Hz), damping ratio " + num(-re / wn);
  };
  if (format == "csv") {
    std::cout << "matrix,row,column,value\n";
    auto dump = [&](const char *tag, const std::vector<double> &v, const std::vector<std::string> &rows,
                    const std::vector<std::string> &cols) {
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = 0; j < cols.size(); ++j)
          std::cout << tag << ",\"" << rows[i] << "\",\"" << cols[j] << "\","
                    << num(v[i * cols.size() + j]) << "\n";
    };
    dump("A", ss->a, ss->states, ss->states);
    dump("B", ss->b, ss->states, ss->inputs);
    dump("C", ss->c, ss->outputs, ss->states);
    dump("D", ss->d, ss->outputs, ss->inputs);
    for (std::size_t k = 0; k < n; ++k)
      std::cout << "pole," << k << ",\"" << pole(k) << "\"," << num(ss->eigenRe[k])
                << (ss->eigenIm[k] < 0 ? "" : "+") << num(ss->eigenIm[k]) << "i\n";
    return finishStdout(0);
  }
  std::cout << "model " << model.name() << "\n";
  if (!modeText.empty())
    std::cout << "mode: " << modeText << "\n";
  std::cout << "at t = " << num(at) << "\n";
  auto list = [&](const char *what, const std::vector<std::string> &v) {
    std::cout << what << ":";
    for (const std::string &s : v)
      std::cout << " " << s;
    std::cout << "\n";
  };
  list("states x", ss->states);
  list("inputs u", ss->inputs);
  list("outputs y", ss->outputs);
  auto matrix = [&](const char *name, const std::vector<double> &v, std::size_t rows,
                    std::size_t cols) {
    std::cout << "\n" << name << " (" << rows << " x " << cols << ")\n";
    for (std::size_t i = 0; i < rows; ++i) {
      std::cout << " ";
      for (std::size_t j = 0; j < cols; ++j)
        std::cout << " " << std::setw(16) << num(v[i * cols + j]);
      std::cout << "\n";
    }
  };
  matrix("A", ss->a, n, n);
  matrix("B", ss->b, n, m);
  matrix("C", ss->c, p, n);
  matrix("D", ss->d, p, m);
  std::cout << "\npoles\n";
  for (std::size_t k = 0; k < n; ++k) {
    std::cout << "  " << num(ss->eigenRe[k]);
    if (ss->eigenIm[k] != 0)
      std::cout << (ss->eigenIm[k] < 0 ? " - " : " + ") << num(std::abs(ss->eigenIm[k])) << "i";
    std::cout << ": " << pole(k) << "\n";
  }
  return finishStdout(0);
}

void printTable(const Result &r, std::ostream &os) {
  for (const std::string &n : r.names)
    os << std::setw(16) << n;
  os << "\n";
  for (std::size_t row = 0; row < r.columns[0].size(); ++row) {
    for (const auto &c : r.columns)
      os << std::setw(16) << std::setprecision(8) << c[row];
    os << "\n";
  }
}

/// Ends hbgc once the run's results are written (and flushed), without
/// destroying the model: a compilation still under way on the background
/// thread (Tiering) is no longer needed, and waiting for it, loading LLVM
/// included, would take longer than a short run itself.
[[noreturn]] void exitKeepingModel(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

int runRun(const std::vector<std::string> &argv) {
  RunArgs a = parseRunArgs(argv);
  Loaded l;
  driver::Stage stop = a.stage == driver::Stage::LLVM ? driver::Stage::Run : a.stage;
  const std::map<std::string, double> &params = a.run.params;
  if (!load(a.file, stop, a.timePasses, l, "", params))
    return 1;
  switch (a.stage) {
  case driver::Stage::Ast:
    std::cout << ast::dump(*l.fe.ast);
    return finishStdout(0);
  case driver::Stage::BondGraph:
    std::cout << l.fe.graph->dump();
    return finishStdout(0);
  case driver::Stage::Causality:
    std::cout << l.fe.causality->dump(*l.fe.graph);
    return finishStdout(0);
  case driver::Stage::Equations:
    std::cout << l.fe.equations->dump();
    return finishStdout(0);
  case driver::Stage::LLVM: {
    std::vector<codegen::FunctionSpec> fns(2);
    fns[0].name = "rhs";
    for (const eq::State &s : l.fe.equations->states)
      fns[0].outputs.push_back(s.derivative);
    fns[1].name = "outputs";
    for (const eq::Output &o : l.fe.equations->outputs)
      fns[1].outputs.push_back(o.value);
    std::cout << codegen::CodeGenerator().emitIR(*l.fe.equations->ctx, fns);
    return finishStdout(0);
  }
  case driver::Stage::Run:
    break;
  }

  // Open the result files before compiling and simulating: an unwritable
  // path fails at once instead of after the run, where its error would
  // also hide the run's own. (After the model is read, so that `-o` naming
  // the model cannot empty it before it is read.) The trajectory and a log
  // on `-` share standard output.
  Output stdOut, csvFile, eventsFile;
  const tools::RunOptions &ro = a.run;
  if (!ro.output.empty() && !csvFile.open(ro.output))
    return 1;
  if (!ro.events.empty() && ro.events != "-" && !eventsFile.open(ro.events))
    return 1;
  Output &csv = ro.output.empty() ? stdOut : csvFile;
  Output &events = ro.events == "-" ? stdOut : eventsFile;
  Experiment cli = Experiment::of(ro.cli);
  SimulationOptions base;
  base.remap = ro.remap == runtime::SimulateOptions::Remap::Iterative
                   ? SimulationOptions::Remap::Iterative
                   : SimulationOptions::Remap::Exact;
  base.remapFactor = ro.remapFactor;
  // The end time: the command line's or the model's.
  const bg::Experiment &defaults = l.fe.graph->experiment;
  if (!cli.tEnd && !defaults.tEnd.valid())
    throw UsageError{"`run` needs `--t-end`, or `t_end` in the model's `experiment` block"};

  auto t0 = std::chrono::steady_clock::now();
  CompilerOptions copts;
  copts.compileAllModes = a.allModes;
  copts.tiering = a.tiering;
  Compiler compiler(copts);
  std::optional<Model> compiled = compileLoaded(l, compiler);
  if (!compiled)
    return 1;
  Model &model = *compiled;
  auto t1 = std::chrono::steady_clock::now();
  // The model's experiment settings (for the parameters given), then the
  // command line's over them.
  SimulationOptions options;
  try {
    options = cli.apply(model.experiment(params).apply(base));
  } catch (const std::invalid_argument &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  }
  if (!(options.tEnd > options.tStart)) {
    auto from = [](bool cli, const char *flag, const char *setting) {
      return std::string(cli ? flag : setting);
    };
    throw UsageError{"the end time " + runtime::timeText(options.tEnd) + " (" +
                     from(cli.tEnd.has_value(), "`--t-end`", "the model's `t_end`") +
                     ") must be after the start time " + runtime::timeText(options.tStart) + " (" +
                     from(cli.tStart.has_value(), "`--t-start`",
                          defaults.tStart.valid() ? "the model's `t_start`" : "the default") +
                     ")"};
  }
  Simulation sim(model, options);
  const std::vector<std::string> &inputs = model.inputNames();
  for (const auto &[name, value] : params) {
    try {
      // An input keeps the value given for the whole run.
      if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
        sim.setInput(name, value);
      else
        sim.setParameter(name, value);
    } catch (const std::invalid_argument &e) {
      std::cerr << "hbgc: error: " << e.what() << "\n";
      return 1;
    }
  }
  Result r = sim.run();
  auto t2 = std::chrono::steady_clock::now();
  for (const std::string &w : r.warnings)
    std::cerr << "hbgc: warning: model `" << model.name() << "`: " << w << "\n";

  // A failed run still writes its trajectory up to the failure; a failed
  // write is reported and the run's own error after it.
  if (a.format == "table")
    printTable(r, csv.stream());
  else
    r.writeCsv(csv.stream());
  bool written = csv.finish();
  if (!ro.events.empty()) {
    r.writeEventsCsv(events.stream());
    written &= events.finish();
  }
  if (ro.stats) {
    using ms = std::chrono::duration<double, std::milli>;
    std::cerr << "steps: " << r.steps << " accepted, " << r.rejectedSteps << " rejected\n"
              << "rhs calls: " << r.rhsCalls << "\n"
              << "compile time: " << ms(t1 - t0).count() << " ms\n"
              << "integration time: " << ms(t2 - t1).count() << " ms\n";
    for (const hbg::runtime::MethodSpan &span : r.methods)
      std::cerr << "method: " << hbg::runtime::methodName(span.method) << " from t = "
                << span.from << " to " << span.to << ", " << span.steps << " steps\n";
    if (r.factorisations > 0)
      std::cerr << "stiff method: " << r.jacobianCalls << " Jacobians, " << r.factorisations
                << " LU factorisations\n";
    if (!model.switched() && r.compileSeconds > 0)
      std::cerr << "Jacobian compile time during the run: " << 1e3 * r.compileSeconds << " ms\n";
    if (model.switched())
      std::cerr << "events: " << r.events.size() << "\n"
                << "mode-iteration steps: " << r.modeIterations << "\n"
                << "modes analysed: " << model.modesCompiled() << " (" << r.modesCompiled
                << " during the run)\n"
                << "modes compiled by LLVM so far: " << model.modesCompiledByLlvm() << "\n"
                << "modes compiled by LLVM's quick tier first: " << model.modesCompiledQuickly()
                << "\n"
                << "mode analysis time during the run: " << 1e3 * r.compileSeconds << " ms\n"
                << "integration and events: " << 1e3 * (r.runSeconds - r.compileSeconds)
                << " ms\n";
  }
  if (!r.ok()) {
    std::cerr << "hbgc: error: " << r.error << "\n";
    exitKeepingModel(1);
  }
  exitKeepingModel(written ? 0 : 1);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return finishStdout(args.empty() ? 2 : 0);
  }
  std::string command = args[0];
  args.erase(args.begin());
  bool help = std::find(args.begin(), args.end(), "--help") != args.end();
  try {
    for (std::size_t i = 0; i < args.size();) {
      if (args[i] == "--lib-path" || args[i].rfind("--lib-path=", 0) == 0) {
        bool joined = args[i] != "--lib-path";
        if (!joined && i + 1 >= args.size())
          throw UsageError{"`--lib-path` needs a directory"};
        gLibPath.push_back(joined ? args[i].substr(11) : args[i + 1]);
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                   args.begin() + static_cast<std::ptrdiff_t>(i + (joined ? 1 : 2)));
        continue;
      }
      ++i;
    }
    if (command == "check")
      return help ? (std::cout << kCheckHelp, finishStdout(0)) : runCheck(args);
    if (command == "explain")
      return help ? (std::cout << kExplainHelp, finishStdout(0)) : runExplain(args);
    if (command == "run")
      return help ? (std::cout << kRunHelp, finishStdout(0)) : runRun(args);
    if (command == "build")
      return help ? (std::cout << kBuildHelp, finishStdout(0)) : runBuild(args);
    if (command == "linearize")
      return help ? (std::cout << kLinearizeHelp, finishStdout(0)) : runLinearize(args);
    throw UsageError{"unknown command `" + command + "`"};
  } catch (const UsageError &e) {
    std::cerr << "hbgc: error: " << e.message << "\n" << "run `hbgc --help` for usage\n";
    return 2;
  } catch (const codegen::BackendUnavailable &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n"
              << "(HBG_LLVM_BACKEND names the library; `--tier tape` simulates without it)\n";
    return 1;
  } catch (const InternalError &e) {
    std::cerr << "hbgc: internal error: " << e.what() << "\n";
    return 70;
  } catch (const std::exception &e) {
    std::cerr << "hbgc: internal error: " << e.what() << "\n";
    return 70;
  }
}
