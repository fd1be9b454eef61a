//===- tools/common/LossReport.h - Losses and efficiency on the report ----===//
//
// What `hbgc steady --losses` and `hbgc run --window` print of a
// runtime::PowerFigures: a table of each R element's and source's mean
// power, the loss at events, the balance, the efficiency asked for with
// `--efficiency OUT/IN`, and the same as CSV (`--losses-csv`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Losses.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace hbg::tools {

/// `--efficiency OUT/IN`: the output and input elements (comma-separated
/// paths each), as written and as indices into the model's elements.
struct Efficiency {
  std::string out, in;
  std::vector<std::size_t> outAt, inAt;
};

/// Splits `spec` at its `/`; throws UsageError when it has none or a side
/// is empty.
Efficiency parseEfficiency(const std::string &spec);

/// Finds the elements `e` names among `elements`; false, with `error`
/// naming the unknown one and the close names, when one is not there.
bool resolveEfficiency(Efficiency &e, const std::vector<runtime::PowerElement> &elements,
                       std::string &error);

/// What stops `option` from measuring: the model has no R element or
/// source, or `e` names an element it does not have (resolved here);
/// empty when nothing does.
std::string lossesProblem(const std::vector<runtime::PowerElement> &elements,
                          std::optional<Efficiency> &e, const char *option);

/// The table, the balance and the efficiency (when `e` is given) on `os`.
void printLosses(std::ostream &os, const runtime::PowerFigures &f, const Efficiency *e);

/// `element,kind,mean_power` for each element, then the events' row
/// (`events,switching,...`).
void writeLossesCsv(std::ostream &os, const runtime::PowerFigures &f);

} // namespace hbg::tools
