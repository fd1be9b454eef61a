//===- tools/common/RunOptions.cpp - The options of a simulation run ------===//

#include "RunOptions.h"

#include <cstdlib>

namespace hbg::tools {

const char *const kRunOptionsHelp =
    R"(  --t-end T            end time (required unless the model's experiment
                       block gives t_end)
  --t-start T          start time (default 0)
  --method M           auto (default), dopri5, rosenbrock, rk4 or euler;
                       rosenbrock is linearly implicit, for stiff models,
                       and auto switches between dopri5 and rosenbrock
                       where the model is stiff (--stats shows where)
  --dt H               step of euler and rk4; first trial step of the
                       adaptive methods (default 1e-3)
  --rtol R             relative tolerance of the adaptive methods (default
                       1e-6); each state's absolute tolerance is R times its
                       nominal magnitude
  --atol A             absolute floor of every state's tolerance, in its own
                       unit (default: none)
  --max-step H         upper bound on every step (default none)
  --dt-out D           output interval (default (t-end - t-start) / 100)
  -p NAME=VALUE        override a parameter, or set an input (`input u;`)
                       for the whole run (repeatable)
  -o FILE              write the CSV to FILE
  --events FILE        write the event log (switched models) as CSV to FILE
                       (`-` for standard output after the trajectory)
  --remap M            state remapping at mode changes: exact (default, one
                       solve by conservation of state) or iterative
                       (HYBRSIM's redistribution)
  --remap-factor F     fraction moved per iterative remap step (default 0.4)
  --stats              print steps, right-hand-side calls, the methods and
                       the spans they ran over, events and times to stderr
)";

double parseNumber(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0')
    throw UsageError{"`" + flag + "` needs a number, got `" + text + "`"};
  return v;
}

const std::string &optionValue(const std::vector<std::string> &args, std::size_t &i) {
  if (i + 1 >= args.size())
    throw UsageError{"`" + args[i] + "` needs a value"};
  return args[++i];
}

void parseParameter(const std::string &kv, std::map<std::string, double> &params) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{"`-p` needs NAME=VALUE, got `" + kv + "`"};
  params[kv.substr(0, eq)] = parseNumber("-p " + kv.substr(0, eq), kv.substr(eq + 1));
}

bool parseRunOption(const std::vector<std::string> &args, std::size_t &i, RunOptions &r) {
  using runtime::Setting;
  const std::string &a = args[i];
  auto value = [&]() -> const std::string & { return optionValue(args, i); };
  // Settings that must be positive, and those that need only be numbers.
  static const std::map<std::string, Setting> positive = {
      {"--dt", Setting::Step},     {"--max-step", Setting::MaxStep}, {"--rtol", Setting::Rtol},
      {"--atol", Setting::Atol},   {"--dt-out", Setting::DtOut}};
  if (a == "--t-end") {
    r.cli[Setting::TEnd] = parseNumber(a, value());
  } else if (a == "--t-start") {
    r.cli[Setting::TStart] = parseNumber(a, value());
  } else if (auto it = positive.find(a); it != positive.end()) {
    double v = parseNumber(a, value());
    if (!(v > 0))
      throw UsageError{"`" + a + "` must be positive"};
    r.cli[it->second] = v;
  } else if (a == "--method") {
    const std::string &m = value();
    runtime::Method method;
    if (!runtime::parseMethod(m, method))
      throw UsageError{"unknown method `" + m + "`; expected auto, dopri5, rosenbrock, rk4 or euler"};
    r.cli.method = method;
  } else if (a == "-p") {
    parseParameter(value(), r.params);
  } else if (a == "-o") {
    r.output = value();
  } else if (a == "--events") {
    r.events = value();
  } else if (a == "--stats") {
    r.stats = true;
  } else if (a == "--remap") {
    const std::string &m = value();
    if (m == "exact")
      r.remap = runtime::SimulateOptions::Remap::Exact;
    else if (m == "iterative")
      r.remap = runtime::SimulateOptions::Remap::Iterative;
    else
      throw UsageError{"unknown remap `" + m + "`; expected exact or iterative"};
  } else if (a == "--remap-factor") {
    r.remapFactor = parseNumber(a, value());
    if (!(r.remapFactor > 0 && r.remapFactor <= 1))
      throw UsageError{"`--remap-factor` must be in (0, 1]"};
  } else {
    return false;
  }
  return true;
}

} // namespace hbg::tools
