//===- tools/common/Results.h - Streaming results, progress and Ctrl-C ----===//
//
// What `hbgc run` and built simulators do while a run goes: each output row
// is written as it is computed (nothing is held for the whole run), a
// progress bar is drawn on a terminal, and Ctrl-C stops the run cleanly
// so that the rows so far are written.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Plot.h"
#include "RunOptions.h"

#include "hbg/runtime/Mat.h"

#include <chrono>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace hbg::tools {

/// Writes rows in a RunOptions::Format as they come.
class ResultWriter {
public:
  /// `names`: time, then the outputs. The MATLAB file also holds the
  /// parameters. Writes the header now.
  /// `file`: `os` is a file opened for the results (the MATLAB file is
  /// then written as the rows come), not standard output.
  ResultWriter(std::ostream &os, RunOptions::Format format, std::vector<std::string> names,
               std::vector<std::string> parameterNames, std::vector<double> parameterValues,
               bool file);
  void row(const double *values);
  /// After the last row (the MATLAB file's counts). False, with the
  /// error printed, when the format cannot hold what was written.
  bool finish();

private:
  std::ostream &os_;
  RunOptions::Format format_;
  std::size_t width_;
  std::unique_ptr<runtime::MatWriter> mat_;
};

/// The progress bar on stderr, and Ctrl-C.
class RunMonitor {
public:
  /// `show`: draw the bar (stderr is a terminal and --quiet was not given).
  /// From now until the monitor is destroyed, the first Ctrl-C (SIGINT)
  /// asks the run to stop; a second one ends the program at once.
  explicit RunMonitor(bool show);
  ~RunMonitor();
  RunMonitor(const RunMonitor &) = delete;
  RunMonitor &operator=(const RunMonitor &) = delete;
  /// Called after every step: redraws the bar (at most ten times a
  /// second); false once Ctrl-C was pressed.
  bool step(const runtime::Progress &p);
  /// Clears the bar.
  void finish();
  /// Ctrl-C was pressed.
  static bool interrupted();

  /// The line the bar shows for `p`, `elapsed` seconds into the run:
  /// simulated time, a bar, the fraction done, steps and their rate,
  /// events, and the time left at the rate so far.
  static std::string line(const runtime::Progress &p, double elapsed);

private:
  bool show_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

/// An event of a run into `plot`: its time and the modes before and after.
void plotEvent(Plot &plot, const runtime::Event &event);

/// Whether standard error is a terminal (the progress bar's default).
bool stderrIsTerminal();

} // namespace hbg::tools
