//===- tools/common/RunOptions.cpp - The options of a simulation run ------===//

#include "RunOptions.h"

#include "hbg/support/Diagnostics.h"


namespace hbg::tools {

void addSimulationSettings(CLI::App &app, RunOptions &r) {
  using runtime::Setting;
  auto number = [&r](Setting s, const char *flag, bool positive) {
    return [&r, s, flag, positive](const std::string &text) {
      double v = parseNumber(flag, text);
      if (positive && !(v > 0))
        throw UsageError{std::string("`") + flag + "` must be positive"};
      r.cli[s] = v;
    };
  };
  addValue(app, "--t-end", number(Setting::TEnd, "--t-end", false),
           "end time (required unless the model's experiment block gives t_end)", "T");
  addValue(app, "--t-start", number(Setting::TStart, "--t-start", false),
           "start time (default 0)", "T");
  addValue(
      app, "--method",
      [&r](const std::string &m) {
        runtime::Method method;
        if (!runtime::parseMethod(m, method))
          throw UsageError{"unknown method `" + m +
                           "`; expected auto, dopri5, rosenbrock, rk4 or euler"};
        r.cli.method = method;
      },
      "auto (default), dopri5, rosenbrock, rk4 or euler; rosenbrock is linearly implicit, for "
      "stiff models, and auto switches between dopri5 and rosenbrock where the model is stiff "
      "(--stats shows where)",
      "M");
  addValue(app, "--dt", number(Setting::Step, "--dt", true),
           "step of euler and rk4; first trial step of the adaptive methods (default 1e-3)", "H");
  addValue(app, "--rtol", number(Setting::Rtol, "--rtol", true),
           "relative tolerance of the adaptive methods (default 1e-6); each state's absolute "
           "tolerance is R times its nominal magnitude",
           "R");
  addValue(app, "--atol", number(Setting::Atol, "--atol", true),
           "absolute floor of every state's tolerance, in its own unit (default: none)", "A");
  addValue(app, "--max-step", number(Setting::MaxStep, "--max-step", true),
           "upper bound on every step (default none)", "H");
  addValue(app, "--dt-out", number(Setting::DtOut, "--dt-out", true),
           "output interval (default (t-end - t-start) / 100)", "D");
  addValue(
      app, "--remap",
      [&r](const std::string &m) {
        if (m == "exact")
          r.settings.remap = runtime::SimulateOptions::Remap::Exact;
        else if (m == "iterative")
          r.settings.remap = runtime::SimulateOptions::Remap::Iterative;
        else
          throw UsageError{"unknown remap `" + m + "`; expected exact or iterative"};
      },
      "state remapping at mode changes: exact (default, one solve by conservation of state) or "
      "iterative (HYBRSIM's redistribution)",
      "M");
  addValue(
      app, "--remap-factor",
      [&r](const std::string &text) {
        r.settings.remapFactor = parseNumber("--remap-factor", text);
        if (!(r.settings.remapFactor > 0 && r.settings.remapFactor <= 1))
          throw UsageError{"`--remap-factor` must be in (0, 1]"};
      },
      "fraction moved per iterative remap step (default 0.4)", "F");
}

void addRunOptions(CLI::App &app, RunOptions &r) {
  addSimulationSettings(app, r);
  addRepeated(
      app, "-p,--parameter", [&r](const std::string &kv) { parseParameter(kv, r.params); },
      "override a parameter, or set an input (`input u;`) for the whole run (repeatable)",
      "NAME=VALUE");
  addValue(
      app, "-o,--output", [&r](const std::string &v) { r.output = v; },
      "write the results to FILE (`-`: standard output, the default)", "FILE");
  addValue(
      app, "--events", [&r](const std::string &v) { r.events = v; },
      "write the event log (switched models) as CSV to FILE (`-`: standard output, after the "
      "trajectory)",
      "FILE");
  addValue(
      app, "--format",
      [&r](const std::string &f) {
        if (f == "csv")
          r.format = runtime::ResultFormat::Csv;
        else if (f == "table")
          r.format = runtime::ResultFormat::Table;
        else if (f == "mat")
          r.format = runtime::ResultFormat::Mat;
        else
          throw UsageError{"unknown format `" + f + "`; expected csv, table or mat"};
      },
      "csv (default; RFC 4180), table (aligned columns for reading), or mat: the MATLAB v4 "
      "result file of Modelica tools (Dymola, OpenModelica), with the parameters' values "
      "(docs/results.md)",
      "F");
  addValue(
      app, "--plot", [&r](const std::string &f) { r.plot = f; },
      "also draw the outputs as SVG in FILE: a panel per output, events as vertical lines, the "
      "modes of a switched model as shaded bands",
      "FILE");
  app.add_flag("--plot-together", r.plotTogether, "with --plot: all outputs in one panel");
  app.add_flag("--plot-no-events", r.plotNoEvents, "with --plot: no vertical line at each event");
  app.add_flag("--plot-no-modes", r.plotNoModes, "with --plot: no shaded bands for the modes");
  app.add_option("--plot-t-start", r.plotFrom, "with --plot: draw from this time on");
  app.add_option("--plot-t-end", r.plotTo, "with --plot: draw up to this time");
  app.add_flag("--quiet,-q", r.quiet,
               "no progress bar (drawn on standard error when it is a terminal)");
  app.add_flag("--stats", r.stats,
               "print steps, right-hand-side calls, the methods and the spans they ran over, "
               "events and times to stderr");
}

void checkRunOptions(const RunOptions &r) {
  // Standard output holds the trajectory (unless -o names a file), and
  // may also hold the CSV event log after it; a drawing, or text after a
  // MATLAB file, would make either unreadable.
  bool trajectory = r.output.empty() || r.output == "-";
  if (r.plot == "-" && (trajectory || r.events == "-"))
    throw UsageError{"`--plot -` writes the drawing to standard output, which the results "
                     "already use; give `-o FILE` (and `--events FILE`), or `--plot FILE`"};
  if (!std::isnan(r.plotFrom) && !std::isnan(r.plotTo) && !(r.plotTo > r.plotFrom))
    throw UsageError{"the window --plot-t-start " + exactText(r.plotFrom) + " --plot-t-end " +
                     exactText(r.plotTo) + " is empty: the end must be after the start"};
  if (trajectory && r.format == runtime::ResultFormat::Mat && r.events == "-")
    throw UsageError{"`--events -` would follow the MATLAB file on standard output; give "
                     "`--events FILE`"};
  const auto &t0 = r.cli[runtime::Setting::TStart], &t1 = r.cli[runtime::Setting::TEnd];
  if (t1 && !(*t1 > t0.value_or(0.0)))
    throw UsageError{"`--t-end` must be after `--t-start`"};
}

} // namespace hbg::tools
