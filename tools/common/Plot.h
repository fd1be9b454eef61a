//===- tools/common/Plot.h - Trajectories drawn as SVG --------------------===//
//
// `hbgc run --plot out.svg` (and a built simulator's), and `hbgc plot
// result.csv`: a panel per output (or all in one), sharing the time axis,
// with labelled axes, the instants of events as vertical lines and the
// modes of a switched model as shaded bands.
//
// Rows are taken as they come and reduced to what a drawing can show: the
// span is cut into a fixed number of slices, and each slice keeps, per
// output, its first, smallest, largest and last value. Memory stays bounded
// however long the run, and every peak and jump is still drawn.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace hbg::tools {

class Plot {
public:
  /// `names`: time, then the outputs; the time axis spans [t0, t1], and
  /// rows and events outside it are left out (a window of a longer run).
  Plot(std::vector<std::string> names, double t0, double t1, std::size_t slices = 1000);
  /// One row: time, then each output.
  void row(const double *values);
  /// An event at `t`, after which the model is in mode `mode` ("" for a
  /// model without switched junctions). `before`: the mode before the
  /// first event.
  void event(double t, const std::string &before, const std::string &mode);

  struct Options {
    std::string title;
    /// All outputs in one panel instead of one panel each.
    bool together = false;
    /// The events as vertical lines, and the modes as shaded bands.
    bool events = true, modes = true;
  };
  /// The drawing, as a standalone SVG document.
  std::string svg(const Options &opts) const;

private:
  struct Point {
    double t, y;
  };
  struct Slice {
    bool used = false;
    Point first{}, low{}, high{}, last{};
  };
  std::vector<std::string> names_;
  double t0_, t1_;
  std::size_t slices_;
  /// Per output, per slice.
  std::vector<std::vector<Slice>> data_;
  /// Event times, and the mode from each on (`modes_[0]`: before the
  /// first event).
  std::vector<double> events_;
  std::vector<std::string> modes_;
  std::size_t eventsSeen_ = 0;
  static constexpr std::size_t kMaxEvents = 10000;
  std::vector<Point> points(std::size_t output) const;
};

/// Ticks at 1, 2 or 5 times a power of ten covering [lo, hi], about `n`.
std::vector<double> niceTicks(double lo, double hi, int n);

} // namespace hbg::tools
