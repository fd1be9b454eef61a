//===- tools/hbgc/Plot.cpp - hbgc plot ------------------------------------===//

#include "Command.h"

#include "../common/Plot.h"

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

namespace hbg::tools {

namespace {

struct PlotArgs {
  std::string file, output, events, title;
  bool together = false, noEvents = false, noModes = false;
  /// The window drawn (NaN: the file's first or last time).
  double from = std::nan(""), to = std::nan("");
};

/// A CSV file's records, fields unquoted per RFC 4180. False, with the
/// reason, when it cannot be read or a quoted field is not closed.
bool readCsv(const std::string &path, std::vector<std::vector<std::string>> &records,
             std::string &why) {
  std::string text;
  if (!readInput(path, text, why))
    return false;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
        ++i;
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
    } else {
      field += c;
    }
  }
  if (quoted) {
    why = "a quoted field is not closed";
    return false;
  }
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return true;
}

int plot(const PlotArgs &a) {
  if (a.file.empty())
    throw UsageError{"no result file"};
  std::vector<std::vector<std::string>> records;
  std::string why;
  std::string shown = a.file == "-" ? "standard input" : a.file;
  if (!readCsv(a.file, records, why)) {
    std::cerr << "hbgc: error: cannot read `" << shown << "`: " << why << "\n";
    return 1;
  }
  if (records.empty() || records[0].size() < 2 || records[0][0] != "time") {
    std::cerr << "hbgc: error: `" << shown
              << "` is not a result file: its header must be `time,<outputs>` (hbgc run's CSV)\n";
    return 1;
  }
  std::size_t width = records[0].size();
  std::vector<std::vector<double>> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() == 1 && records[r][0].empty())
      continue; // a blank line
    if (records[r].size() != width) {
      std::cerr << "hbgc: error: `" << shown << "` line " << r + 1 << " has "
                << records[r].size() << " fields; the header has " << width << "\n";
      return 1;
    }
    std::vector<double> row(width);
    for (std::size_t i = 0; i < width; ++i) {
      char *end = nullptr;
      row[i] = std::strtod(records[r][i].c_str(), &end);
      if (records[r][i].empty() || *end != '\0' || !std::isfinite(row[i])) {
        std::cerr << "hbgc: error: `" << shown << "` line " << r + 1 << ", column `"
                  << records[0][i] << "`: `" << records[r][i] << "` is not a finite number\n";
        return 1;
      }
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    std::cerr << "hbgc: error: `" << shown << "` has no rows to plot\n";
    return 1;
  }
  double t0 = std::isnan(a.from) ? rows.front()[0] : a.from;
  double t1 = std::isnan(a.to) ? rows.back()[0] : a.to;
  if (!(t1 > t0))
    throw UsageError{"the window --t-start " + exactText(t0) + " --t-end " + exactText(t1) +
                     " is empty: the end must be after the start"};
  if (std::none_of(rows.begin(), rows.end(),
                   [&](const std::vector<double> &r) { return r[0] >= t0 && r[0] <= t1; })) {
    std::cerr << "hbgc: error: `" << shown << "` has no rows from t = " << exactText(t0)
              << " to " << exactText(t1) << " (it spans " << exactText(rows.front()[0])
              << " to " << exactText(rows.back()[0]) << ")\n";
    return 1;
  }
  Plot p(records[0], t0, t1);
  for (const std::vector<double> &row : rows)
    p.row(row.data());
  if (!a.events.empty()) {
    // The event log (`hbgc run --events`): each event's `before` row gives
    // the mode before it, its `after` row the time and the mode after.
    std::vector<std::vector<std::string>> log;
    if (!readCsv(a.events, log, why)) {
      std::cerr << "hbgc: error: cannot read `" << a.events << "`: " << why << "\n";
      return 1;
    }
    if (log.empty() || log[0].size() < 4 || log[0][1] != "time" || log[0][2] != "phase" ||
        log[0][3] != "mode") {
      std::cerr << "hbgc: error: `" << a.events
                << "` is not an event log (`hbgc run --events`): its header must begin "
                   "`event,time,phase,mode`\n";
      return 1;
    }
    std::string before;
    for (std::size_t r = 1; r < log.size(); ++r) {
      if (log[r].size() < 4)
        continue;
      if (log[r][2] == "before")
        before = log[r][3];
      else if (log[r][2] == "after")
        p.event(std::strtod(log[r][1].c_str(), nullptr), before, log[r][3]);
    }
  }
  std::string title = a.title.empty() ? shown : a.title;
  std::string svg = p.svg({title, a.together, !a.noEvents, !a.noModes});
  if (a.output.empty() || a.output == "-") {
    std::cout << svg;
    return finishStdout(0);
  }
  Output out;
  if (!out.open(a.output))
    return 1;
  out.stream() << svg;
  return out.finish() ? 0 : 1;
}

} // namespace

Runner declarePlot(CLI::App *cmd, Common &) {
  cmd->footer("Draws the CSV that `hbgc run` (or a built simulator) wrote: a panel per output "
              "sharing the time axis, or all in one with --together. With --events, the event "
              "log of the same run marks each event with a vertical line and shades the modes "
              "of a switched model (docs/cli.md).");
  auto a = std::make_shared<PlotArgs>();
  cmd->add_option("RESULT", a->file, "the result file (`-`: read it from standard input)");
  addValue(
      *cmd, "-o,--output", [a](const std::string &o) { a->output = o; },
      "write the SVG to FILE (`-`: standard output, the default)", "FILE");
  addValue(
      *cmd, "--events", [a](const std::string &e) { a->events = e; },
      "the run's event log (`hbgc run --events LOG`): events and modes", "LOG");
  cmd->add_flag("--together", a->together, "all outputs in one panel");
  cmd->add_option("--t-start", a->from, "draw from this time on (default: the file's first)");
  cmd->add_option("--t-end", a->to, "draw up to this time (default: the file's last)");
  cmd->add_flag("--no-events", a->noEvents, "no vertical line at each event");
  cmd->add_flag("--no-modes", a->noModes, "no shaded bands for the modes");
  addValue(
      *cmd, "--title", [a](const std::string &t) { a->title = t; },
      "the drawing's title (default: the file's name)", "TEXT");
  return [a] { return plot(*a); };
}

const Command kPlot = {"plot", "draw a result file's trajectories as SVG", declarePlot};

} // namespace hbg::tools
