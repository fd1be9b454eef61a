//===- tools/common/Bode.cpp - Frequency responses drawn as SVG -----------===//

#include "Bode.h"

#include "Plot.h"

#include "hbg/support/Xml.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace hbg::tools {

std::vector<double> unwrappedPhase(const std::vector<std::complex<double>> &h) {
  std::vector<double> out;
  for (const std::complex<double> &v : h) {
    double deg = std::arg(v) * 180 / M_PI;
    if (!out.empty()) {
      while (deg - out.back() > 180)
        deg -= 360;
      while (deg - out.back() < -180)
        deg += 360;
    }
    out.push_back(deg);
  }
  return out;
}

namespace {

const char *const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

} // namespace

std::string bodeSvg(const std::string &title, const std::vector<double> &f,
                    const std::vector<std::string> &names,
                    const std::vector<std::vector<std::complex<double>>> &responses) {
  const double width = 800, panel = 260, left = 70, right = 20, top = 40, gap = 50;
  double plotW = width - left - right, height = top + 2 * panel + gap + 50;
  double lf0 = std::log10(f.front()), lf1 = std::log10(f.back());
  if (!(lf1 > lf0))
    lf1 = lf0 + 1;
  auto x = [&](double freq) { return left + (std::log10(freq) - lf0) / (lf1 - lf0) * plotW; };
  std::vector<std::vector<double>> db(responses.size()), deg(responses.size());
  double dbLo = 1e300, dbHi = -1e300, phLo = 1e300, phHi = -1e300;
  for (std::size_t i = 0; i < responses.size(); ++i) {
    for (const std::complex<double> &v : responses[i])
      db[i].push_back(20 * std::log10(std::max(std::abs(v), 1e-300)));
    deg[i] = unwrappedPhase(responses[i]);
    for (double v : db[i])
      dbLo = std::min(dbLo, v), dbHi = std::max(dbHi, v);
    for (double v : deg[i])
      phLo = std::min(phLo, v), phHi = std::max(phHi, v);
  }
  if (!(dbHi > dbLo))
    dbLo -= 1, dbHi += 1;
  if (!(phHi > phLo))
    phLo -= 1, phHi += 1;
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << width / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">"
     << xmlEscaped(title) << "</text>\n";
  auto drawPanel = [&](double y0, double lo, double hi, const std::string &label,
                       const std::vector<std::vector<double>> &values) {
    std::vector<double> ticks = niceTicks(lo, hi, 6);
    lo = std::min(lo, ticks.front());
    hi = std::max(hi, ticks.back());
    auto y = [&](double v) { return y0 + panel - (v - lo) / (hi - lo) * panel; };
    os << "<rect x=\"" << left << "\" y=\"" << y0 << "\" width=\"" << plotW << "\" height=\""
       << panel << "\" fill=\"none\" stroke=\"black\"/>\n";
    for (double t : ticks)
      os << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << y(t)
         << "\" y2=\"" << y(t) << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\""
         << y(t) + 4 << "\" text-anchor=\"end\">" << number(t) << "</text>\n";
    for (double d = std::ceil(lf0); d <= lf1 + 1e-9; ++d)
      os << "<line x1=\"" << x(std::pow(10, d)) << "\" x2=\"" << x(std::pow(10, d)) << "\" y1=\""
         << y0 << "\" y2=\"" << y0 + panel << "\" stroke=\"#ddd\"/>\n";
    os << "<text x=\"18\" y=\"" << y0 + panel / 2 << "\" transform=\"rotate(-90 18 "
       << y0 + panel / 2 << ")\" text-anchor=\"middle\">" << label << "</text>\n";
    for (std::size_t i = 0; i < values.size(); ++i) {
      os << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << kColours[i % 6]
         << "\" points=\"";
      for (std::size_t k = 0; k < f.size(); ++k)
        os << x(f[k]) << "," << y(values[i][k]) << " ";
      os << "\"/>\n";
    }
  };
  drawPanel(top, dbLo, dbHi, "magnitude (dB)", db);
  drawPanel(top + panel + gap, phLo, phHi, "phase (degrees)", deg);
  double axisY = top + 2 * panel + gap;
  for (double d = std::ceil(lf0); d <= lf1 + 1e-9; ++d)
    os << "<text x=\"" << x(std::pow(10, d)) << "\" y=\"" << axisY + 16
       << "\" text-anchor=\"middle\">" << number(std::pow(10, d)) << "</text>\n";
  os << "<text x=\"" << left + plotW / 2 << "\" y=\"" << axisY + 36
     << "\" text-anchor=\"middle\">frequency (Hz)</text>\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    os << "<text x=\"" << left + 10 << "\" y=\"" << top + 16 + 16 * double(i) << "\" fill=\""
       << kColours[i % 6] << "\">" << xmlEscaped(names[i]) << "</text>\n";
  os << "</svg>\n";
  return os.str();
}

} // namespace hbg::tools
