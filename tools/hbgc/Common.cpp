//===- tools/hbgc/Common.cpp - What hbgc's commands share -----------------===//

#include "Command.h"

#include <cmath>

#include <cstdio>

namespace hbg::tools {

void addModelArguments(CLI::App &command, std::string &file, Common &common) {
  command.add_option("FILE", file, "the model (`-`: read it from standard input)");
  addRepeated(
      command, "--lib-path", [&common](const std::string &dir) { common.libPath.push_back(dir); },
      "where `import name;` looks for name.hbg, before the directories of HBG_PATH (separated by "
      "`:`) and the standard library (repeatable)",
      "DIR");
}

void addPeriodOptions(CLI::App &command, std::optional<double> &period,
                      std::map<std::string, double> &params) {
  addValue(
      command, "--period",
      [&period](const std::string &s) {
        double v = parseNumber("--period", s);
        if (!(v > 0) || !std::isfinite(v))
          throw UsageError{"`--period` must be positive"};
        period = v;
      },
      "the period T (default: the common period of the model's periodic sources)", "T");
  addRepeated(
      command, "-p,--parameter", [&params](const std::string &kv) { parseParameter(kv, params); },
      "override a parameter, or set an input (repeatable)", "NAME=VALUE");
}

void addModeOption(CLI::App &command, std::string &mode, const std::string &help) {
  addValue(
      command, "--mode",
      [&mode](const std::string &m) {
        if (m.empty())
          throw UsageError{"`--mode` needs JUNCTION=on|off,..."};
        mode = m;
      },
      help, "J=on|off,...");
}

driver::Session::Options sessionOptions(const Common &common,
                                        const std::map<std::string, double> &params) {
  driver::Session::Options o;
  o.libPath = common.libPath;
  o.parameters = params;
  return o;
}

int finishStdout(int status) {
  Output out;
  return !out.finish() && status == 0 ? 1 : status;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

} // namespace hbg::tools
