//===- tools/common/RunOptions.h - The options of a simulation run --------===//
//
// What `hbgc run` and a simulator built with `hbgc build` both take on
// their command lines (times, method, tolerances, parameters, outputs),
// parsed in one place so that both accept and mean the same.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Setup.h"
#include "hbg/runtime/Simulate.h"

#include <map>
#include <string>
#include <vector>

namespace hbg::tools {

/// A usage error: the message for stderr, and exit status 2.
struct UsageError {
  std::string message;
};

/// `text` as a number; `flag` names the option in the error.
double parseNumber(const std::string &flag, const std::string &text);

/// The value of option args[i], advancing i past it.
const std::string &optionValue(const std::vector<std::string> &args, std::size_t &i);

/// `-p NAME=VALUE`'s value into `params`.
void parseParameter(const std::string &kv, std::map<std::string, double> &params);

struct RunOptions {
  /// The settings the command line gives (the model's experiment block
  /// gives the others): --t-start, --t-end, --dt-out, --dt, --max-step,
  /// --rtol, --atol, --method.
  runtime::ExperimentValues cli;
  std::map<std::string, double> params;
  runtime::SimulateOptions::Remap remap = runtime::SimulateOptions::Remap::Exact;
  double remapFactor = 0.4;
  std::string output, events;
  bool stats = false;
};

/// Parses args[i] (and its value, advancing i) when it is one of
/// RunOptions' options; false when it is not. Throws UsageError.
bool parseRunOption(const std::vector<std::string> &args, std::size_t &i, RunOptions &out);

/// The help text of RunOptions' options, one per line as `hbgc run --help`
/// shows them.
extern const char *const kRunOptionsHelp;

} // namespace hbg::tools
