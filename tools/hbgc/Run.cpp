//===- tools/hbgc/Run.cpp - hbgc run --------------------------------------===//

#include "Command.h"

#include "../common/LossReport.h"
#include "../common/RunModel.h"

#include "hbg/driver/Internal.h"
#include "hbg/runtime/Periodic.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace hbg::tools {

namespace {

struct RunArgs {
  std::string file;
  /// The options a built simulator takes too; `run.cli` holds those the
  /// model's `experiment` block may also give, which the command line
  /// overrides.
  RunOptions run;
  driver::Stage stage = driver::Stage::Run;
  bool timePasses = false, allModes = false;
  Tiering tiering = Tiering::Tiered;
  /// `--window t0:t1`, `--losses-csv`, `--efficiency`: the mean powers
  /// over part of the run.
  std::optional<std::pair<double, double>> window;
  std::string lossesCsv;
  std::optional<Efficiency> efficiency;
};

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

/// `--stats` lines on the modes: analysed and compiled by LLVM so far, and
/// the time the run spent on them.
void modeStats(std::ostream &os, const Model &model, const runtime::ProgramSystem &system,
               double runMs) {
  if (!model.switched()) {
    if (system.compileSeconds > 0)
      os << "Jacobian compile time during the run: " << 1e3 * system.compileSeconds << " ms\n";
    return;
  }
  os << "modes analysed: " << model.modesCompiled() << " (" << system.modesCompiled
     << " during the run)\n"
     << "modes compiled by LLVM so far: " << model.modesCompiledByLlvm() << "\n"
     << "modes compiled by LLVM's quick tier first: " << model.modesCompiledQuickly() << "\n"
     << "mode analysis time during the run: " << 1e3 * system.compileSeconds << " ms\n"
     << "integration and events: " << runMs - 1e3 * system.compileSeconds << " ms\n";
}

int run(RunArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  checkRunOptions(a.run);
  const RunOptions &ro = a.run;
  const std::map<std::string, double> &params = ro.params;
  driver::Session::Options so = sessionOptions(common, params);
  so.timings = a.timePasses ? &std::cerr : nullptr;
  driver::Session session(so, std::cerr);
  driver::Stage stop = a.stage == driver::Stage::LLVM ? driver::Stage::Run : a.stage;
  if (!session.load(a.file, stop))
    return 1;
  if (a.stage != driver::Stage::Run) {
    std::optional<std::string> text = session.emit(a.stage);
    if (!text)
      return 1;
    std::cout << *text;
    return finishStdout(0);
  }

  // Open the result files before compiling and simulating (after the
  // model is read, so that `-o` naming the model cannot empty it first).
  RunFiles files;
  if (!files.open(ro))
    return 1;
  requireEndTime(ro, session.frontend().graph->experiment.tEnd.valid(), "run");

  auto t0 = std::chrono::steady_clock::now();
  CompilerOptions copts;
  copts.compileAllModes = a.allModes;
  copts.tiering = a.tiering;
  std::optional<Model> compiled = session.compile(Compiler(copts));
  if (!compiled)
    return 1;
  Model &model = *compiled;
  auto t1 = std::chrono::steady_clock::now();
  // Each value given is checked as the API checks it (a name the model
  // has, not structural); an input keeps its value for the whole run.
  runtime::SimulateOptions settings;
  try {
    Simulation check(model, {});
    const std::vector<std::string> &inputs = model.inputNames();
    for (const auto &[name, value] : params) {
      if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
        check.setInput(name, value);
      else
        check.setParameter(name, value);
    }
    settings = runSettings(ro, model.experiment(params));
  } catch (const std::invalid_argument &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  }
  std::vector<double> p = model.parameterValues(params);
  std::vector<double> x0 = model.initialState(p);
  settings.nominal = model.nominalState(p);
  RunSubject subject{model.name(),
                     "model " + model.name() + " (" + a.file + ")",
                     model.outputNames(),
                     model.stateNames(),
                     model.parameterNames(),
                     p,
                     model.switched(),
                     std::chrono::duration<double, std::milli>(t1 - t0).count(),
                     [&model](std::ostream &os, const runtime::ProgramSystem &system, double runMs) {
                       modeStats(os, model, system, runMs);
                     },
                     {},
                     {}};
  std::unique_ptr<runtime::ProgramSystem> system = driver::systemOf(model, std::move(p));
  std::optional<runtime::PowerMeter> meter;
  runtime::RunTrace trace;
  Output lossesCsv;
  if (a.window) {
    auto [w0, w1] = *a.window;
    std::string error =
        w0 >= settings.tStart && w1 <= settings.tEnd
            ? lossesProblem(system->powerElements(), a.efficiency, "--window")
            : "the window [" + timeText(w0) + ", " + timeText(w1) + "] of `--window` is not " +
                  "inside the run [" + timeText(settings.tStart) + ", " +
                  timeText(settings.tEnd) + "]";
    if (!error.empty()) {
      std::cerr << "hbgc: error: model `" << model.name() << "`: " << error << "\n";
      return 1;
    }
    if (!a.lossesCsv.empty() && a.lossesCsv != "-" && !lossesCsv.open(a.lossesCsv))
      return 1;
    meter.emplace(*system, w0, w1);
    subject.instrument = [&](runtime::SimulateOptions &o) { meter->attach(o, trace); };
    subject.report = [&](const runtime::RunRecord &) {
      runtime::PowerFigures f = meter->figures();
      printLosses(std::cerr, f, a.efficiency ? &*a.efficiency : nullptr);
      if (a.lossesCsv.empty())
        return true;
      writeLossesCsv(lossesCsv.stream(), f);
      return lossesCsv.finish();
    };
  } else if (a.efficiency || !a.lossesCsv.empty()) {
    throw UsageError{"`--efficiency` and `--losses-csv` measure over `--window t0:t1`"};
  }
  exitKeepingModel(runModel(*system, x0, std::move(settings), ro, files, subject));
}

} // namespace

Runner declareRun(CLI::App *cmd, Common &common) {
  cmd->footer(
      "Compiles FILE to native code and simulates it; writes CSV with a header "
      "`time,<outputs>` to standard output or to -o FILE. Models with switched junctions "
      "compile each mode when the run first enters it; at an event the output has a row before "
      "and a row after it (docs/hybrid.md).\n\n"
      "The model's `experiment { ... }` block, if any, sets the defaults of --t-start, --t-end, "
      "--dt-out, --dt, --max-step, --rtol, --atol and --method (as t_start, t_end, dt_out, dt, "
      "max_step, rtol, atol, method); the command line overrides them.");
  auto a = std::make_shared<RunArgs>();
  addModelArguments(*cmd, a->file, common);
  addRunOptions(*cmd, a->run);
  addValue(
      *cmd, "--emit",
      [a](const std::string &s) {
        if (!driver::parseStage(s, a->stage) || a->stage == driver::Stage::Run)
          throw UsageError{"unknown stage `" + s +
                           "`; expected ast, bondgraph, causality, equations or llvm"};
      },
      "print an intermediate form instead of simulating: ast, bondgraph, causality, equations, "
      "or llvm (the module the JIT compiles for the initial mode)",
      "STAGE");
  cmd->add_flag("--all-modes", a->allModes,
                "compile every mode up front (at most 2^8 modes) instead of each when the "
                "simulation first enters it");
  addValue(
      *cmd, "--tier",
      [a](const std::string &t) {
        if (t == "tiered")
          a->tiering = Tiering::Tiered;
        else if (t == "jit")
          a->tiering = Tiering::Jit;
        else if (t == "tape")
          a->tiering = Tiering::Tape;
        else
          throw UsageError{"unknown tier `" + t + "`; expected tiered, jit or tape"};
      },
      "how modes are run: tiered (default: tapes translated to machine code at once, and "
      "compiled by LLVM in the background when the run is long enough to pay for it), jit "
      "(LLVM before first use) or tape (the tapes' interpreter)",
      "T");
  addValue(
      *cmd, "--window",
      [a](const std::string &s) {
        std::size_t colon = s.find(':');
        if (colon == std::string::npos)
          throw UsageError{"`--window` needs t0:t1, got `" + s + "`"};
        double w0 = parseNumber("--window", s.substr(0, colon));
        double w1 = parseNumber("--window", s.substr(colon + 1));
        if (!(w1 > w0) || !std::isfinite(w0) || !std::isfinite(w1))
          throw UsageError{"`--window` needs t0 < t1, got `" + s + "`"};
        a->window = {w0, w1};
      },
      "report each R element's mean power dissipated, each source's delivered and the loss "
      "at events over [t0, t1] of the run",
      "t0:t1");
  cmd->add_option("--losses-csv", a->lossesCsv,
                  "write the --window losses as CSV (element,kind,mean_power) here")
      ->type_name("FILE");
  addValue(
      *cmd, "--efficiency", [a](const std::string &s) { a->efficiency = parseEfficiency(s); },
      "with --window: the mean power of the elements OUT over that of IN (element paths, "
      "comma-separated: load.r/supply.s)",
      "OUT/IN");
  cmd->add_flag("--time-passes", a->timePasses,
                "print the time each compiler pass takes to stderr");
  return [a, &common] { return run(*a, common); };
}

const Command kRun = {"run", "compile and simulate a model", declareRun};

} // namespace hbg::tools
