//===- runtime/Csv.cpp - Trajectories and event logs as CSV ---------------===//

#include "hbg/runtime/Csv.h"
#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <ostream>

namespace hbg::runtime {

std::string csvQuoted(const std::string &field) {
  std::string out = "\"";
  for (char c : field)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csvField(const std::string &field) {
  return field.find_first_of(",\"\r\n") == std::string::npos ? field : csvQuoted(field);
}

void writeCsvHeader(std::ostream &os, const std::vector<std::string> &names) {
  for (std::size_t i = 0; i < names.size(); ++i)
    os << (i ? "," : "") << csvField(names[i]);
  os << "\n";
}

void writeCsvRow(std::ostream &os, const double *row, std::size_t n) {
  // exactText without a string per value: rows are the bulk of a run's
  // output.
  char buf[32];
  for (std::size_t i = 0; i < n; ++i) {
    if (i)
      os.put(',');
    // A zero is `0`, never `-0` (a node at the ground's 0 V reached
    // through a negated sum).
    char *end = std::to_chars(buf, buf + sizeof buf, row[i] == 0 ? 0.0 : row[i]).ptr;
    os.write(buf, end - buf);
  }
  os.put('\n');
}

void writeCsv(std::ostream &os, const std::vector<std::string> &names,
              const std::vector<std::vector<double>> &columns) {
  writeCsvHeader(os, names);
  std::size_t rows = columns.empty() ? 0 : columns[0].size();
  std::vector<double> row(columns.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      row[i] = columns[i][r];
    writeCsvRow(os, row.data(), row.size());
  }
}

void writeEventsCsv(std::ostream &os, const std::vector<Event> &events,
                    const std::vector<std::string> &stateNames,
                    const std::vector<std::string> &outputNames,
                    const std::vector<std::string> &discreteNames) {
  os << "event,time,phase,mode,transitions,energy,removed";
  for (const std::string &n : stateNames)
    os << "," << csvField(n);
  for (const std::string &n : discreteNames)
    os << "," << csvField(n);
  // The outputs that are not a state already (`output c.q;`), nor named
  // like a column before them.
  std::vector<std::size_t> outputs;
  const std::vector<std::string> fixed = {"event",       "time",   "phase",  "mode",
                                          "transitions", "energy", "removed"};
  for (std::size_t i = 0; i < outputNames.size(); ++i)
    if (std::find(stateNames.begin(), stateNames.end(), outputNames[i]) == stateNames.end() &&
        std::find(discreteNames.begin(), discreteNames.end(), outputNames[i]) ==
            discreteNames.end() &&
        std::find(fixed.begin(), fixed.end(), outputNames[i]) == fixed.end()) {
      outputs.push_back(i);
      os << "," << csvField(outputNames[i]);
    }
  os << "\n";
  // Times and values as timeText() and exactText() write them: the
  // shortest decimal that reads back as the same double, as in every
  // message and the trajectory.
  // The energy of the rows whose state is the one before the jump
  // (mythical modes and the first remap iteration keep it) or after it;
  // empty on the other remap iterations and where the audit cannot say.
  auto number = [&](double v) {
    if (!std::isnan(v))
      os << exactText(v);
  };
  auto row = [&](std::size_t k, const Event &ev, const char *phase, const std::string &mode,
                 const std::string &transitions, const std::vector<double> &x) {
    os << k << "," << timeText(ev.time) << "," << phase << "," << csvQuoted(mode) << ","
       << csvQuoted(transitions) << ",";
    bool after = &x == &ev.after;
    if (after || x == ev.before)
      number(after ? ev.storedAfter : ev.storedBefore);
    os << ",";
    if (after)
      number(ev.removed);
    for (double v : x)
      os << "," << exactText(v);
    const std::vector<double> *d = after                   ? &ev.discreteAfter
                                   : &x == &ev.before ? &ev.discreteBefore
                                                           : nullptr;
    for (std::size_t i = 0; i < discreteNames.size(); ++i) {
      os << ",";
      if (d && i < d->size())
        os << exactText((*d)[i]);
    }
    // The outputs where the run was in a real mode with this state:
    // before and after (empty in between).
    const std::vector<double> *y = after                   ? &ev.outputsAfter
                                   : &x == &ev.before ? &ev.outputsBefore
                                                           : nullptr;
    for (std::size_t i : outputs) {
      os << ",";
      if (y && i < y->size())
        os << exactText((*y)[i]);
    }
    os << "\n";
  };
  for (std::size_t k = 0; k < events.size(); ++k) {
    const Event &ev = events[k];
    std::string transitions;
    for (const std::string &t : ev.transitions)
      transitions += (transitions.empty() ? "" : "; ") + t;
    row(k, ev, "before", ev.modes.front(), transitions, ev.before);
    for (std::size_t i = 1; i + 1 < ev.modes.size(); ++i)
      row(k, ev, ev.real[i] ? "real" : "mythical", ev.modes[i], "", ev.states[i]);
    for (std::size_t i = 0; i < ev.remapIterations.size(); ++i)
      row(k, ev, "remap", std::to_string(i), "", ev.remapIterations[i]);
    row(k, ev, "after", ev.modes.back(), "", ev.after);
  }
}

void writeTableHeader(std::ostream &os, const std::vector<std::string> &names) {
  for (const std::string &n : names)
    os << std::setw(16) << n;
  os << "\n";
}

void writeTableRow(std::ostream &os, const double *row, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    os << std::setw(16) << std::setprecision(8) << row[i];
  os << "\n";
}

} // namespace hbg::runtime
