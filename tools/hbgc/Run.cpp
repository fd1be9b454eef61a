//===- tools/hbgc/Run.cpp - hbgc run --------------------------------------===//

#include "Command.h"

#include "../common/Results.h"
#include "../common/RunOptions.h"

#include <chrono>
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

void printStats(const Model &model, const Result &r, double compileMs, double runMs) {
  std::cerr << "steps: " << r.steps << " accepted, " << r.rejectedSteps << " rejected\n"
            << "rhs calls: " << r.rhsCalls << "\n"
            << "compile time: " << compileMs << " ms\n"
            << "integration time: " << runMs << " ms\n";
  for (const runtime::MethodSpan &span : r.methods)
    std::cerr << "method: " << runtime::methodName(span.method)
              << " from t = " << timeText(span.from) << " to " << timeText(span.to) << ", "
              << span.steps << " steps\n";
  if (r.factorisations > 0)
    std::cerr << "stiff method: " << r.jacobianCalls << " Jacobians, " << r.factorisations
              << " LU factorisations\n";
  if (!model.switched() && r.compileSeconds > 0)
    std::cerr << "Jacobian compile time during the run: " << 1e3 * r.compileSeconds << " ms\n";
  if (model.switched())
    std::cerr << "events: " << r.events.size() + r.eventsDropped << "\n"
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

  // Open the result files before compiling and simulating: an unwritable
  // path fails at once instead of after the run, where its error would
  // also hide the run's own. (After the model is read, so that `-o` naming
  // the model cannot empty it before it is read.) The trajectory and a log
  // on `-` share standard output.
  Output stdOut, csvFile, eventsFile;
  if (!ro.output.empty() && ro.output != "-" && !csvFile.open(ro.output))
    return 1;
  if (!ro.events.empty() && ro.events != "-" && !eventsFile.open(ro.events))
    return 1;
  Output plotFile;
  if (!ro.plot.empty() && ro.plot != "-" && !plotFile.open(ro.plot))
    return 1;
  Output &csv = ro.output.empty() || ro.output == "-" ? stdOut : csvFile;
  Output &events = ro.events == "-" ? stdOut : eventsFile;
  Experiment cli = Experiment::of(ro.cli);
  SimulationOptions base;
  base.remap = ro.remap == runtime::SimulateOptions::Remap::Iterative
                   ? SimulationOptions::Remap::Iterative
                   : SimulationOptions::Remap::Exact;
  base.remapFactor = ro.remapFactor;
  // The end time: the command line's or the model's.
  const bg::Experiment &defaults = session.frontend().graph->experiment;
  if (!cli.tEnd && !defaults.tEnd.valid())
    throw UsageError{"`run` needs `--t-end`, or `t_end` in the model's `experiment` block"};
  bool tStartGiven = defaults.tStart.valid();

  auto t0 = std::chrono::steady_clock::now();
  CompilerOptions copts;
  copts.compileAllModes = a.allModes;
  copts.tiering = a.tiering;
  std::optional<Model> compiled = session.compile(Compiler(copts));
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
    throw UsageError{"the end time " + timeText(options.tEnd) + " (" +
                     from(cli.tEnd.has_value(), "`--t-end`", "the model's `t_end`") +
                     ") must be after the start time " + timeText(options.tStart) + " (" +
                     from(cli.tStart.has_value(), "`--t-start`",
                          tStartGiven ? "the model's `t_start`" : "the default") +
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
  // Rows are written as they are computed; the event log (when asked
  // for) at the end.
  std::vector<std::string> names{"time"};
  names.insert(names.end(), model.outputNames().begin(), model.outputNames().end());
  ResultWriter writer(csv.stream(), ro.format, names, model.parameterNames(),
                      model.parameterValues(params), &csv == &csvFile);
  RunMonitor monitor(!ro.quiet && stderrIsTerminal());
  std::optional<Plot> plot;
  if (!ro.plot.empty())
    plot.emplace(names, ro.plotStart(options.tStart), ro.plotEnd(options.tEnd));
  sim.options().onRow = [&writer, &plot](const double *row) {
    writer.row(row);
    if (plot)
      plot->row(row);
  };
  sim.options().onStep = [&monitor](const runtime::Progress &p) { return monitor.step(p); };
  if (plot)
    sim.options().onEvent = [&plot](const runtime::Event &e) { plotEvent(*plot, e); };
  if (ro.events.empty())
    sim.options().keepEvents = 0; // counted, not kept
  Result r = sim.run();
  monitor.finish();
  auto t2 = std::chrono::steady_clock::now();
  for (const RunDiagnostic &w : r.warnings)
    std::cerr << "hbgc: warning: " << w.text(model.name()) << "\n";

  // A failed or interrupted run has written its trajectory up to where it
  // stopped; a failed write is reported and the run's own error after it.
  bool written = writer.finish();
  written &= csv.finish();
  if (!ro.events.empty()) {
    r.writeEventsCsv(events.stream());
    written &= events.finish();
  }
  if (plot) {
    Output &out = ro.plot == "-" ? stdOut : plotFile;
    out.stream() << plot->svg({"model " + model.name() + " (" + a.file + ")", ro.plotTogether,
                                !ro.plotNoEvents, !ro.plotNoModes});
    written &= out.finish();
  }
  if (ro.stats) {
    using ms = std::chrono::duration<double, std::milli>;
    printStats(model, r, ms(t1 - t0).count(), ms(t2 - t1).count());
  }
  if (r.stopped) {
    std::cerr << "hbgc: interrupted: " << r.error << "; the " << r.rows
              << " rows computed up to there are written\n";
    exitKeepingModel(130);
  }
  if (!r.ok()) {
    std::cerr << "hbgc: error: " << r.error << "\n";
    exitKeepingModel(1);
  }
  exitKeepingModel(written ? 0 : 1);
}

} // namespace

Runner declareRun(CLI::App &hbgc, Common &common) {
  CLI::App *cmd = hbgc.add_subcommand("run", "compile and simulate a model");
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
      "how modes reach LLVM: tiered (default: on tapes until hot, then compiled in the "
      "background), jit (compiled before first use) or tape (never)",
      "T");
  cmd->add_flag("--time-passes", a->timePasses,
                "print the time each compiler pass takes to stderr");
  return [a, &common] { return run(*a, common); };
}

} // namespace hbg::tools
