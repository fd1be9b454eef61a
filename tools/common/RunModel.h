//===- tools/common/RunModel.h - One run, from settings to files ----------===//
//
// `hbgc run` and a simulator built with `hbgc build` run a model the same
// way and differ only in how they get its system: hbgc compiles it, a
// simulator reads the image it was built with. Both open the files the
// command line names before anything else can fail, merge the model's
// experiment block with the command line, and hand the runtime's loop a
// system, settings and outputs (runModel()).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Output.h"
#include "RunOptions.h"

#include "hbg/runtime/Program.h"
#include "hbg/runtime/Setup.h"
#include "hbg/runtime/Simulate.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace hbg::tools {

/// The files a run writes, opened before the model is compiled or run:
/// an unwritable path fails at once instead of after the run, where its
/// error would also hide the run's own. The trajectory and a log on `-`
/// share standard output.
class RunFiles {
public:
  /// Opens what `ro` names; false, with the error printed, when a file
  /// cannot be opened.
  bool open(const RunOptions &ro);
  Output &trajectory() { return *trajectory_; }
  Output &events() { return *events_; }
  Output &plot() { return *plot_; }
  /// The trajectory goes to a file (not standard output).
  bool trajectoryInFile() const { return trajectory_ == &trajectoryFile_; }

private:
  Output stdOut_, trajectoryFile_, eventsFile_, plotFile_;
  Output *trajectory_ = &stdOut_, *events_ = &eventsFile_, *plot_ = &plotFile_;
};

/// Throws UsageError when neither the command line nor the model's
/// experiment block (`modelGivesEnd`) gives the end time; `command` is
/// what needs it (`run`, `sweep`, a simulator's name).
void requireEndTime(const RunOptions &ro, bool modelGivesEnd, const std::string &command);

/// A run's settings: RunOptions::settings, then the model's experiment
/// block's `model` over them, then the command line's over those. Throws
/// UsageError when the end is not after the start, saying where each
/// came from.
runtime::SimulateOptions runSettings(const RunOptions &ro, const runtime::ExperimentValues &model);

/// What a run needs to know of the model it runs beyond its system.
struct RunSubject {
  std::string model;
  /// The drawing's title (`--plot`).
  std::string title;
  std::vector<std::string> outputNames, stateNames, parameterNames;
  /// The parameter values of the run (the MATLAB file stores them).
  std::vector<double> parameters;
  bool switched = false;
  /// `--stats`: the time compiling took before the run (negative: not
  /// measured), and lines on the compiled modes after the events' lines.
  double compileMs = -1;
  std::function<void(std::ostream &, const runtime::ProgramSystem &, double runMs)> compileStats;
  /// Called with the settings just before the run (a meter setting its
  /// hooks), and with the record after a run that succeeded (a report of
  /// what the hooks measured; false when writing it failed).
  std::function<void(runtime::SimulateOptions &)> instrument;
  std::function<bool(const runtime::RunRecord &)> report;
};

/// Runs `system` from the full state `x0` with `settings` and writes
/// what `ro` asks for into `files`: the rows as they are computed, the
/// event log, the drawing and `--stats`, then the warnings and the run's
/// error on standard error. The exit status: 0, 1 for a failed run or
/// write, 130 for a run stopped by Ctrl-C (the rows up to there are
/// written).
int runModel(runtime::ProgramSystem &system, const std::vector<double> &x0,
             runtime::SimulateOptions settings, const RunOptions &ro, RunFiles &files,
             const RunSubject &subject);

} // namespace hbg::tools
