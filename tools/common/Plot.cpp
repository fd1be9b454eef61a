//===- tools/common/Plot.cpp - Trajectories drawn as SVG ------------------===//
//
// Written here rather than through gnuplot: the drawing is a few hundred
// lines of SVG, the same bytes on every machine, with no program to find
// and run, and built simulators can draw it too (docs/cli.md).
//
//===----------------------------------------------------------------------===//

#include "Plot.h"

#include "hbg/support/Xml.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace hbg::tools {

namespace {

constexpr double kWidth = 960, kLeft = 90, kRight = 24, kTop = 44, kPanel = 170, kGap = 26,
                 kBottom = 50;
const char *const kLineColours[] = {"#1f5fa8", "#c2410c", "#15803d", "#7e22ce",
                                    "#b91c1c", "#0e7490", "#a16207", "#be185d"};
const char *const kBandColours[] = {"#dbeafe", "#fde68a", "#dcfce7", "#fce7f3",
                                    "#e0e7ff", "#ffedd5", "#ccfbf1", "#f3e8ff"};

std::string num(double v, const char *format = "%.6g") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// A coordinate in the SVG: two decimals are a hundredth of a pixel.
std::string px(double v) { return num(v, "%.2f"); }

} // namespace

std::vector<double> niceTicks(double lo, double hi, int n) {
  if (!(hi > lo))
    return {lo};
  // Of 1, 2 and 5 times the power of ten below the raw step (and ten
  // times it), the step whose tick count is closest to n.
  double raw = (hi - lo) / std::max(1, n);
  double base = std::pow(10, std::floor(std::log10(raw)));
  double step = base;
  double best = std::numeric_limits<double>::infinity();
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    double s = m * base;
    double count = std::floor(hi / s + 1e-9) - std::ceil(lo / s - 1e-9) + 1;
    if (count >= 2 && std::abs(count - n) < best) {
      best = std::abs(count - n);
      step = s;
    }
  }
  std::vector<double> ticks;
  double first = std::ceil(lo / step - 1e-9);
  // Counted, and at most 100: far from 0 a step may be below the spacing
  // of doubles.
  for (int i = 0; i < 100; ++i) {
    double t = (first + i) * step;
    if (t > hi + 1e-9 * step || (!ticks.empty() && t <= ticks.back()))
      break;
    ticks.push_back(std::abs(t) < 1e-12 * step ? 0.0 : t);
  }
  return ticks;
}

Plot::Plot(std::vector<std::string> names, double t0, double t1, std::size_t slices)
    : names_(std::move(names)), t0_(t0), t1_(t1), slices_(std::max<std::size_t>(slices, 1)),
      data_(names_.size() > 1 ? names_.size() - 1 : 0, std::vector<Slice>(slices_)) {}

void Plot::row(const double *values) {
  double t = values[0];
  if (t < t0_ || t > t1_)
    return;
  double span = t1_ - t0_;
  std::size_t k = span > 0 ? static_cast<std::size_t>(
                                 std::clamp((t - t0_) / span * static_cast<double>(slices_), 0.0,
                                            static_cast<double>(slices_ - 1)))
                           : 0;
  for (std::size_t i = 0; i < data_.size(); ++i) {
    Slice &s = data_[i][k];
    Point p{t, values[i + 1]};
    if (!s.used) {
      s = {true, p, p, p, p};
      continue;
    }
    if (p.y < s.low.y)
      s.low = p;
    if (p.y > s.high.y)
      s.high = p;
    s.last = p;
  }
}

void Plot::event(double t, const std::string &before, const std::string &mode) {
  if (t > t1_)
    return;
  if (t < t0_) {
    // Before the window: only the mode it starts in.
    modes_.assign(1, mode);
    return;
  }
  ++eventsSeen_;
  if (modes_.empty())
    modes_.push_back(before);
  // Bounded: past 10,000 events the lines would fill the panel anyway;
  // the mode from the last one drawn on is the latest mode seen.
  if (events_.size() < kMaxEvents) {
    events_.push_back(t);
    modes_.push_back(mode);
  } else {
    modes_.back() = mode;
  }
}

std::vector<Plot::Point> Plot::points(std::size_t output) const {
  std::vector<Point> out;
  for (const Slice &s : data_[output]) {
    if (!s.used)
      continue;
    Point ps[4] = {s.first, s.low, s.high, s.last};
    // In the order they were computed (by time; ties keep this order).
    std::stable_sort(ps, ps + 4, [](const Point &a, const Point &b) { return a.t < b.t; });
    for (const Point &p : ps)
      if (out.empty() || out.back().t != p.t || out.back().y != p.y)
        out.push_back(p);
  }
  return out;
}

std::string Plot::svg(const Options &opts) const {
  std::size_t outputs = data_.size();
  std::vector<std::vector<std::size_t>> panels;
  if (opts.together && outputs > 0) {
    panels.emplace_back();
    for (std::size_t i = 0; i < outputs; ++i)
      panels.back().push_back(i);
  } else {
    for (std::size_t i = 0; i < outputs; ++i)
      panels.push_back({i});
  }
  std::map<std::string, std::size_t> modeColour;
  for (const std::string &m : modes_)
    if (!m.empty() && !modeColour.count(m)) {
      std::size_t k = modeColour.size();
      modeColour[m] = k;
    }
  bool bands = opts.modes && !modeColour.empty();
  // The modes' colours, in order of first appearance, in rows that fit
  // the drawing's width.
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto &[m, k] : modeColour)
    order.emplace_back(k, m);
  std::sort(order.begin(), order.end());
  std::vector<double> keyX(order.size()), keyY(order.size());
  double legend = 0;
  if (bands) {
    double x = kLeft, y = kTop - 2;
    for (std::size_t i = 0; i < order.size(); ++i) {
      double w = 34 + 7.0 * static_cast<double>(order[i].second.size() + 5); // "mode " and name
      if (x > kLeft && x + w > kWidth - kRight) {
        x = kLeft;
        y += 18;
      }
      keyX[i] = x;
      keyY[i] = y;
      x += w;
    }
    legend = y - (kTop - 2) + 22;
  }
  double height = kTop + legend + static_cast<double>(panels.size()) * (kPanel + kGap) -
                  kGap + kBottom;
  double plotW = kWidth - kLeft - kRight;
  double span = t1_ > t0_ ? t1_ - t0_ : 1;
  auto xOf = [&](double t) { return kLeft + (t - t0_) / span * plotW; };

  std::ostringstream os;
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(kWidth) << "\" height=\""
     << px(height) << "\" viewBox=\"0 0 " << px(kWidth) << " " << px(height)
     << "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text class=\"title\" x=\"" << px(kLeft) << "\" y=\"24\" font-size=\"15\">"
     << xmlEscaped(opts.title) << "</text>\n";
  if (eventsSeen_ > 0 && opts.events)
    os << "<text class=\"event-count\" x=\"" << px(kWidth - kRight)
       << "\" y=\"24\" text-anchor=\"end\" fill=\"#b91c1c\">" << eventsSeen_
       << (eventsSeen_ == 1 ? " event" : " events") << "</text>\n";
  if (bands) {
    os << "<g class=\"mode-legend\">\n";
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto &[k, m] = order[i];
      os << "<rect x=\"" << px(keyX[i]) << "\" y=\"" << px(keyY[i]) << "\" width=\"14\" height=\"12\" "
         << "fill=\"" << kBandColours[k % std::size(kBandColours)] << "\" stroke=\"#999\"/>"
         << "<text x=\"" << px(keyX[i] + 18) << "\" y=\"" << px(keyY[i] + 10) << "\">mode "
         << xmlEscaped(m) << "</text>\n";
    }
    os << "</g>\n";
  }
  // Mode intervals: [event k, event k+1) in modes_[k + 1].
  struct Band {
    double from, to;
    std::string mode;
  };
  std::vector<Band> intervals;
  if (bands) {
    double from = t0_;
    std::string mode = modes_[0];
    for (std::size_t k = 0; k < events_.size(); ++k) {
      if (modes_[k + 1] == mode)
        continue;
      intervals.push_back({from, events_[k], mode});
      from = events_[k];
      mode = modes_[k + 1];
    }
    intervals.push_back({from, t1_, mode});
  }

  std::vector<double> xTicks = niceTicks(t0_, t1_, 8);
  for (std::size_t p = 0; p < panels.size(); ++p) {
    double top = kTop + legend + static_cast<double>(p) * (kPanel + kGap), bottom = top + kPanel;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::size_t i : panels[p])
      for (const Slice &s : data_[i])
        if (s.used) {
          lo = std::min(lo, s.low.y);
          hi = std::max(hi, s.high.y);
        }
    if (!(lo <= hi))
      lo = 0, hi = 1;
    if (hi - lo <= 1e-12 * std::max(std::abs(lo), std::abs(hi))) {
      double pad = std::max(std::abs(lo) * 0.1, 1e-12);
      lo -= pad;
      hi += pad;
    }
    double margin = 0.05 * (hi - lo);
    lo -= margin;
    hi += margin;
    auto yOf = [&](double y) { return bottom - (y - lo) / (hi - lo) * kPanel; };
    std::string label;
    for (std::size_t i : panels[p])
      label += (label.empty() ? "" : ", ") + names_[i + 1];
    os << "<g class=\"panel\" data-output=\"" << xmlEscaped(label) << "\" data-t0=\"" << num(t0_, "%.17g")
       << "\" data-t1=\"" << num(t1_, "%.17g") << "\" data-y0=\"" << num(lo, "%.17g")
       << "\" data-y1=\"" << num(hi, "%.17g") << "\" data-x=\"" << px(kLeft) << "\" data-y=\""
       << px(top) << "\" data-width=\"" << px(plotW) << "\" data-height=\"" << px(kPanel)
       << "\">\n";
    for (const Band &b : intervals)
      os << "<rect class=\"mode\" data-mode=\"" << xmlEscaped(b.mode) << "\" x=\"" << px(xOf(b.from))
         << "\" y=\"" << px(top) << "\" width=\"" << px(xOf(b.to) - xOf(b.from)) << "\" height=\""
         << px(kPanel) << "\" fill=\"" << kBandColours[modeColour[b.mode] % std::size(kBandColours)]
         << "\"/>\n";
    for (double t : xTicks)
      os << "<line class=\"grid\" x1=\"" << px(xOf(t)) << "\" x2=\"" << px(xOf(t)) << "\" y1=\""
         << px(top) << "\" y2=\"" << px(bottom) << "\" stroke=\"#e5e5e5\"/>\n";
    for (double y : niceTicks(lo, hi, 4)) {
      os << "<line class=\"grid\" x1=\"" << px(kLeft) << "\" x2=\"" << px(kLeft + plotW)
         << "\" y1=\"" << px(yOf(y)) << "\" y2=\"" << px(yOf(y)) << "\" stroke=\"#e5e5e5\"/>\n"
         << "<text class=\"ytick\" x=\"" << px(kLeft - 6) << "\" y=\"" << px(yOf(y) + 4)
         << "\" text-anchor=\"end\">" << num(y) << "</text>\n";
    }
    for (double t : opts.events ? events_ : std::vector<double>{})
      os << "<line class=\"event\" x1=\"" << px(xOf(t)) << "\" x2=\"" << px(xOf(t)) << "\" y1=\""
         << px(top) << "\" y2=\"" << px(bottom)
         << "\" stroke=\"#b91c1c\" stroke-width=\"0.8\" stroke-dasharray=\"3,2\"/>\n";
    std::size_t colour = 0;
    for (std::size_t i : panels[p]) {
      os << "<polyline class=\"series\" data-output=\"" << xmlEscaped(names_[i + 1])
         << "\" fill=\"none\" stroke=\"" << kLineColours[colour++ % std::size(kLineColours)]
         << "\" stroke-width=\"1.4\" points=\"";
      bool first = true;
      for (const Point &pt : points(i)) {
        os << (first ? "" : " ") << px(xOf(pt.t)) << "," << px(yOf(pt.y));
        first = false;
      }
      os << "\"/>\n";
    }
    os << "<rect class=\"frame\" x=\"" << px(kLeft) << "\" y=\"" << px(top) << "\" width=\""
       << px(plotW) << "\" height=\"" << px(kPanel) << "\" fill=\"none\" stroke=\"#444\"/>\n";
    for (double t : xTicks)
      os << "<text class=\"xtick\" x=\"" << px(xOf(t)) << "\" y=\"" << px(bottom + 15)
         << "\" text-anchor=\"middle\">" << num(t) << "</text>\n";
    // The y label: the outputs, along the axis.
    os << "<text class=\"ylabel\" transform=\"translate(" << px(18) << "," << px(top + kPanel / 2)
       << ") rotate(-90)\" text-anchor=\"middle\">" << xmlEscaped(label) << "</text>\n";
    if (panels[p].size() > 1) {
      double x = kLeft + 8;
      colour = 0;
      for (std::size_t i : panels[p]) {
        os << "<text class=\"key\" x=\"" << px(x) << "\" y=\"" << px(top + 14) << "\" fill=\""
           << kLineColours[colour++ % std::size(kLineColours)] << "\">" << xmlEscaped(names_[i + 1])
           << "</text>\n";
        x += 14 + 7.0 * static_cast<double>(names_[i + 1].size());
      }
    }
    os << "</g>\n";
  }
  os << "<text class=\"xlabel\" x=\"" << px(kLeft + plotW / 2) << "\" y=\"" << px(height - 12)
     << "\" text-anchor=\"middle\">" << xmlEscaped(names_.empty() ? "time" : names_[0])
     << " [s]</text>\n</svg>\n";
  return os.str();
}

} // namespace hbg::tools
