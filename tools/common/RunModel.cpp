//===- tools/common/RunModel.cpp - One run, from settings to files --------===//

#include "RunModel.h"

#include "Monitor.h"
#include "Plot.h"

#include "hbg/runtime/Csv.h"
#include "hbg/runtime/ResultWriter.h"
#include "hbg/support/Diagnostics.h"

#include <chrono>
#include <iostream>
#include <optional>
#include <sstream>

namespace hbg::tools {

bool RunFiles::open(const RunOptions &ro) {
  auto named = [](const std::string &path) { return !path.empty() && path != "-"; };
  if (named(ro.output)) {
    if (!trajectoryFile_.open(ro.output))
      return false;
    trajectory_ = &trajectoryFile_;
  }
  if (named(ro.events) && !eventsFile_.open(ro.events))
    return false;
  if (ro.events == "-")
    events_ = &stdOut_;
  if (named(ro.plot) && !plotFile_.open(ro.plot))
    return false;
  if (ro.plot == "-")
    plot_ = &stdOut_;
  return true;
}

void requireEndTime(const RunOptions &ro, bool modelGivesEnd, const std::string &command) {
  if (!ro.cli.tEnd && !modelGivesEnd)
    throw UsageError{"`" + command +
                     "` needs `--t-end`, or `t_end` in the model's `experiment` block"};
}

runtime::SimulateOptions runSettings(const RunOptions &ro, const runtime::ExperimentValues &model) {
  runtime::SimulateOptions o = ro.cli.apply(model.apply(ro.settings));
  if (!(o.tEnd > o.tStart)) {
    auto from = [](bool cli, bool block, const char *flag, const char *setting) {
      return std::string(cli ? flag : block ? setting : "the default");
    };
    throw UsageError{"the end time " + timeText(o.tEnd) + " (" +
                     from(ro.cli.tEnd.has_value(), model.tEnd.has_value(), "`--t-end`",
                          "the model's `t_end`") +
                     ") must be after the start time " + timeText(o.tStart) + " (" +
                     from(ro.cli.tStart.has_value(), model.tStart.has_value(), "`--t-start`",
                          "the model's `t_start`") +
                     ")"};
  }
  return o;
}

namespace {

void printStats(std::ostream &os, const RunSubject &s, const runtime::RunRecord &r,
                const runtime::ProgramSystem &system, double runMs) {
  os << "steps: " << r.steps << " accepted, " << r.rejectedSteps << " rejected\n"
     << "rhs calls: " << r.rhsCalls << "\n";
  if (s.compileMs >= 0)
    os << "compile time: " << s.compileMs << " ms\n";
  os << "integration time: " << runMs << " ms\n";
  for (const runtime::MethodSpan &span : r.methods)
    os << "method: " << runtime::methodName(span.method) << " from t = " << timeText(span.from)
       << " to " << timeText(span.to) << ", " << span.steps << " steps\n";
  if (r.factorisations > 0) {
    // Per step of the stiff method: it keeps a constant Jacobian, and
    // its LU while the step size stays (docs/numerics.md).
    std::size_t stiffSteps = 0;
    for (const runtime::MethodSpan &span : r.methods)
      if (span.method == runtime::Method::Rosenbrock)
        stiffSteps += span.steps;
    os << "stiff method: " << r.jacobianCalls << " Jacobians, " << r.factorisations
       << " LU factorisations";
    if (stiffSteps > 0) {
      std::ostringstream per;
      per.precision(2);
      per << std::fixed << double(r.jacobianCalls) / double(stiffSteps) << " and "
          << double(r.factorisations) / double(stiffSteps);
      os << " over " << stiffSteps << " steps (" << per.str() << " per step)";
    }
    os << "\n";
  }
  if (s.switched)
    os << "events: " << r.events.size() + r.eventsDropped << "\n"
       << "mode-iteration steps: " << r.modeIterations << "\n";
  if (s.compileStats)
    s.compileStats(os, system, runMs);
}

} // namespace

int runModel(runtime::ProgramSystem &system, const std::vector<double> &x0,
             runtime::SimulateOptions o, const RunOptions &ro, RunFiles &files,
             const RunSubject &subject) {
  std::vector<std::string> names{"time"};
  names.insert(names.end(), subject.outputNames.begin(), subject.outputNames.end());
  runtime::ResultWriter writer(files.trajectory().stream(), ro.format, names,
                               subject.parameterNames, subject.parameters,
                               files.trajectoryInFile());
  RunMonitor monitor(!ro.quiet && stderrIsTerminal());
  std::optional<Plot> plot;
  if (!ro.plot.empty())
    plot.emplace(names, ro.plotStart(o.tStart), ro.plotEnd(o.tEnd));
  o.onRow = [&writer, &plot](const double *row) {
    writer.row(row);
    if (plot)
      plot->row(row);
  };
  o.onStep = [&monitor](const runtime::Progress &p) { return monitor.step(p); };
  if (plot)
    o.onEvent = [&plot](const runtime::Event &e) { plotEvent(*plot, e); };
  if (ro.events.empty())
    o.keepEvents = 0; // counted, not kept
  if (subject.instrument)
    subject.instrument(o);

  auto start = std::chrono::steady_clock::now();
  runtime::RunRecord r;
  runtime::simulate(system, x0, o, r);
  monitor.finish();
  double runMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const RunDiagnostic &w : r.warnings)
    std::cerr << programName() << ": warning: " << w.text(subject.model) << "\n";

  // A failed or interrupted run has written its trajectory up to where it
  // stopped; a failed write is reported and the run's own error after it.
  std::string full = writer.finish();
  if (!full.empty())
    std::cerr << programName() << ": error: " << full << "\n";
  bool written = full.empty();
  written &= files.trajectory().finish();
  if (!ro.events.empty()) {
    std::vector<std::string> discretes;
    for (const auto &[name, slot] : system.discretes())
      discretes.push_back(name);
    runtime::writeEventsCsv(files.events().stream(), r.events, subject.stateNames,
                            subject.outputNames, discretes);
    written &= files.events().finish();
  }
  if (plot) {
    files.plot().stream() << plot->svg(
        {subject.title, ro.plotTogether, !ro.plotNoEvents, !ro.plotNoModes});
    written &= files.plot().finish();
  }
  if (ro.stats)
    printStats(std::cerr, subject, r, system, runMs);
  if (r.stopped) {
    std::cerr << programName() << ": interrupted: " << r.errorText(subject.model) << "; the "
              << r.rows << " rows computed up to there are written\n";
    return 130;
  }
  if (!r.error.empty()) {
    std::cerr << programName() << ": error: " << r.errorText(subject.model) << "\n";
    return 1;
  }
  if (subject.report)
    written &= subject.report(r);
  return written ? 0 : 1;
}

} // namespace hbg::tools
