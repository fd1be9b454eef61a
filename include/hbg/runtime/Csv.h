//===- hbg/runtime/Csv.h - Trajectories and event logs as CSV -------------===//
//
// The formats `hbgc run` and a simulator built with `hbgc build` write,
// from one place so that both write the same bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Simulate.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace hbg::runtime {

/// A CSV field as RFC 4180 writes it: in double quotes, each quote
/// doubled, when it holds a comma, a quote or a line break (an output
/// named `max(a, b)`); as it is otherwise.
std::string csvField(const std::string &field);
/// A CSV field in double quotes whatever it holds, each quote doubled.
std::string csvQuoted(const std::string &field);

/// The CSV header: `names` (`time`, then the outputs), quoted as needed.
void writeCsvHeader(std::ostream &os, const std::vector<std::string> &names);
/// One CSV row of `n` values, each in full double precision (%.17g).
void writeCsvRow(std::ostream &os, const double *row, std::size_t n);

/// CSV with header `names` (`time`, then the outputs) and a row per
/// sample, every value in full double precision (%.17g).
void writeCsv(std::ostream &os, const std::vector<std::string> &names,
              const std::vector<std::vector<double>> &columns);

/// The event log: one row per event and phase (`before`, each `mythical`
/// mode, each `remap` iteration, `after`) with the energy stored in that
/// row's state, on the `after` row the energy the jump removed, then the
/// state (named `stateNames`), then on the `before` and `after` rows the
/// discrete values (named `discreteNames`) and the outputs (named
/// `outputNames`, but for those a state or a discrete value has named).
void writeEventsCsv(std::ostream &os, const std::vector<Event> &events,
                    const std::vector<std::string> &stateNames,
                    const std::vector<std::string> &outputNames,
                    const std::vector<std::string> &discreteNames = {});

/// The same as a table for people: columns 16 wide, 8 significant digits.
void writeTableHeader(std::ostream &os, const std::vector<std::string> &names);
void writeTableRow(std::ostream &os, const double *row, std::size_t n);

} // namespace hbg::runtime
