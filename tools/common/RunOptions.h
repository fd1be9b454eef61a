//===- tools/common/RunOptions.h - The options of a simulation run --------===//
//
// What `hbgc run` and a simulator built with `hbgc build` both take on
// their command lines (times, method, tolerances, parameters, outputs),
// declared in one place so that both accept and mean the same.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Cli.h"

#include "hbg/runtime/ResultWriter.h"
#include "hbg/runtime/Setup.h"
#include "hbg/runtime/Simulate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace hbg::tools {

struct RunOptions {
  /// The settings the command line gives (the model's experiment block
  /// gives the others): --t-start, --t-end, --dt-out, --dt, --max-step,
  /// --rtol, --atol, --method.
  runtime::ExperimentValues cli;
  /// The settings only the command line gives (--remap, --remap-factor),
  /// under the model's and `cli`'s (runSettings()).
  runtime::SimulateOptions settings;
  std::map<std::string, double> params;
  /// `-o`, `--events` ("" when not given; `-` is standard output).
  std::string output, events;
  bool stats = false;
  /// `--quiet`: no progress bar.
  bool quiet = false;
  /// `--plot FILE`: the trajectories drawn as SVG; `--plot-together`: in
  /// one panel.
  std::string plot;
  bool plotTogether = false;
  /// `--plot-no-events`, `--plot-no-modes`: without the events' lines or
  /// the modes' bands.
  bool plotNoEvents = false, plotNoModes = false;
  /// `--plot-t-start`, `--plot-t-end`: the window drawn (NaN: the run's).
  double plotFrom = std::numeric_limits<double>::quiet_NaN(),
         plotTo = std::numeric_limits<double>::quiet_NaN();
  /// The window drawn of a run over [t0, t1].
  double plotStart(double t0) const { return std::isnan(plotFrom) ? t0 : std::max(t0, plotFrom); }
  double plotEnd(double t1) const { return std::isnan(plotTo) ? t1 : std::min(t1, plotTo); }
  /// `--format`: how the trajectory is written.
  runtime::ResultFormat format = runtime::ResultFormat::Csv;
};

/// Declares RunOptions' options on `app`, parsed into `out`: the
/// simulation settings, then what a single run writes.
void addRunOptions(CLI::App &app, RunOptions &out);
/// The simulation settings alone (times, method, tolerances, remapping):
/// what every run of a sweep shares.
void addSimulationSettings(CLI::App &app, RunOptions &out);

/// Checks what no single option can: --t-end after --t-start.
void checkRunOptions(const RunOptions &r);

} // namespace hbg::tools
