//===- tools/common/Monitor.h - A run's progress bar and Ctrl-C -----------===//
//
// What `hbgc run` and built simulators show while a run goes: a progress
// bar on a terminal; and Ctrl-C stops the run cleanly, so that the rows so
// far are written.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Plot.h"

#include "hbg/runtime/Simulate.h"

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

namespace hbg::tools {

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
