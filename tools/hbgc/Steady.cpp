//===- tools/hbgc/Steady.cpp - hbgc steady --------------------------------===//

#include "Command.h"

#include "../common/LossReport.h"

#include "hbg/driver/Internal.h"
#include "hbg/runtime/Csv.h"
#include "hbg/runtime/Periodic.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

namespace hbg::tools {

namespace {

struct SteadyArgs {
  std::string file, output, stats;
  std::map<std::string, double> params;
  std::optional<double> period, rtol;
  runtime::Method method = runtime::Method::Auto;
  runtime::SteadyOptions steady;
  bool quiet = false;
  /// `--losses`, `--losses-csv`, `--efficiency`.
  bool losses = false;
  std::string lossesCsv;
  std::optional<Efficiency> efficiency;
};

/// An open output file, or standard output for "" and "-".
struct OutFile {
  std::ofstream file;
  std::ostream *os = &std::cout;
  std::string name;
  bool open(const std::string &path) {
    name = path;
    if (path.empty() || path == "-")
      return true;
    file.open(path);
    if (!file) {
      std::cerr << "hbgc: error: cannot write `" << path << "`\n";
      return false;
    }
    os = &file;
    return true;
  }
  bool close() {
    if (os == &file) {
      file.close();
      if (!file) {
        std::cerr << "hbgc: error: writing `" << name << "` failed\n";
        return false;
      }
    }
    return true;
  }
};

std::string seconds(double t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g s", t);
  return buf;
}

int steady(SteadyArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  driver::Session session(sessionOptions(common, a.params), std::cerr);
  if (!session.load(a.file))
    return 1;
  OutFile out, stats, lossesCsv;
  if (!out.open(a.output) || (!a.stats.empty() && !stats.open(a.stats)) ||
      (!a.lossesCsv.empty() && !lossesCsv.open(a.lossesCsv)))
    return 1;
  if (out.os == &std::cout && stats.os == &std::cout && !a.stats.empty())
    throw UsageError{"`-o` and `--stats` cannot both write to standard output"};
  std::optional<Model> compiled = session.compile(Compiler());
  if (!compiled)
    return 1;
  Model &model = *compiled;
  runtime::SimulateOptions settings;
  try {
    Simulation check(model, {});
    const std::vector<std::string> &inputs = model.inputNames();
    for (const auto &[name, value] : a.params) {
      if (std::find(inputs.begin(), inputs.end(), name) != inputs.end())
        check.setInput(name, value);
      else
        check.setParameter(name, value);
    }
    settings = model.experiment(a.params).apply();
  } catch (const std::invalid_argument &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  }
  // The period map's fixed point is only as exact as the period's
  // integration: far tighter than a transient's default.
  settings.rtol = a.rtol.value_or(1e-12);
  settings.method = a.method;
  std::vector<double> p = model.parameterValues(a.params);
  std::vector<double> x0 = model.initialState(p);
  settings.nominal = model.nominalState(p);
  std::ostream &report = std::cerr;
  runtime::SteadyOptions so = a.steady;
  std::string periodFrom = "--period";
  if (a.period) {
    so.period = *a.period;
  } else {
    Model::SourcePeriod sp = model.sourcePeriod(p);
    if (!(sp.period > 0)) {
      RunDiagnostic d = runDiagnostic(DiagKind::SteadyNoPeriod, runtime::kNoTime, "", {sp.why});
      std::cerr << "hbgc: error: " << d.text(model.name()) << "\n";
      return 1;
    }
    so.period = sp.period;
    periodFrom = "the common period of ";
    for (std::size_t i = 0; i < sp.sources.size() && i < 3; ++i)
      periodFrom += (i ? ", `" : "`") + sp.sources[i].first + "`";
    if (sp.sources.size() > 3)
      periodFrom += " and " + std::to_string(sp.sources.size() - 3) + " more";
  }
  std::unique_ptr<runtime::ProgramSystem> system = driver::systemOf(model, std::move(p));
  so.losses = a.losses || !a.lossesCsv.empty() || a.efficiency;
  if (so.losses) {
    std::string error = lossesProblem(system->powerElements(), a.efficiency, "--losses");
    if (!error.empty()) {
      std::cerr << "hbgc: error: model `" << model.name() << "`: " << error << "\n";
      return 1;
    }
  }
  runtime::SteadyResult r;
  runtime::findSteadyState(*system, x0, settings, so, r);

  if (!a.quiet) {
    report << "period: " << seconds(so.period) << " (" << periodFrom << ")\n";
    report << "transient: " << so.warmupPeriods << " periods from the initial state\n";
    for (std::size_t i = 0; i < r.iterations.size(); ++i) {
      const runtime::SteadyIteration &it = r.iterations[i];
      char line[160];
      std::snprintf(line, sizeof line, "iteration %zu: residual %.3e (%s, step %g, %zu events)\n",
                    i, it.residual, it.kind.c_str(), it.step, it.events);
      report << line;
    }
  }
  bool haveRows = !r.period.columns.empty() && !r.period.columns[0].empty();
  if (haveRows) {
    std::vector<std::string> names{"time"};
    for (const std::string &n : model.outputNames())
      names.push_back(n);
    runtime::writeCsv(*out.os, names, r.period.columns);
  }
  if (!r.figures.empty() && !a.stats.empty()) {
    *stats.os << "output,mean,rms,min,max,peak_to_peak\n";
    for (std::size_t i = 0; i < r.figures.size(); ++i) {
      const runtime::OutputFigures &f = r.figures[i];
      char line[200];
      std::snprintf(line, sizeof line, ",%.17g,%.17g,%.17g,%.17g,%.17g\n", f.mean, f.rms, f.min,
                    f.max, f.peakToPeak());
      *stats.os << runtime::csvField(model.outputNames()[i]) << line;
    }
  }
  if (!a.quiet && !r.figures.empty()) {
    char line[200];
    std::snprintf(line, sizeof line, "residual %.3e after %zu periods simulated (%zu of transient)\n",
                  r.residual, r.periodsSimulated, r.transientPeriods);
    report << line;
    if (!r.modes.empty() && !r.modes.front().empty()) {
      report << "modes in the period (from phase):\n";
      for (std::size_t i = 0; i < r.modes.size(); ++i) {
        std::snprintf(line, sizeof line, "  %-14.6g %s\n", r.modeTimes[i], r.modes[i].c_str());
        report << line;
      }
    }
    for (const auto &[name, drift] : r.drifting) {
      std::snprintf(line, sizeof line,
                    "state `%s` drifts by %.6g per period (an integral nothing but outputs read)\n",
                    name.c_str(), drift);
      report << line;
    }
    if (!r.multipliers.empty()) {
      double mu = std::hypot(r.multipliers[0].first, r.multipliers[0].second);
      std::snprintf(line, sizeof line, "largest Floquet multiplier: |mu| = %.6g\n", mu);
      report << line;
    }
    std::snprintf(line, sizeof line, "%-16s %14s %14s %14s %14s %14s\n", "output", "mean", "rms",
                  "min", "max", "peak-to-peak");
    report << line;
    for (std::size_t i = 0; i < r.figures.size(); ++i) {
      const runtime::OutputFigures &f = r.figures[i];
      std::snprintf(line, sizeof line, "%-16s %14.8g %14.8g %14.8g %14.8g %14.8g\n",
                    model.outputNames()[i].c_str(), f.mean, f.rms, f.min, f.max, f.peakToPeak());
      report << line;
    }
  }
  if (r.losses) {
    if (!a.quiet)
      printLosses(report, *r.losses, a.efficiency ? &*a.efficiency : nullptr);
    if (!a.lossesCsv.empty())
      writeLossesCsv(*lossesCsv.os, *r.losses);
  }
  bool written = out.close() && stats.close() && lossesCsv.close();
  if (!r.ok()) {
    std::string text = r.failure ? r.failure->text(model.name()) : "model `" + model.name() + "`: " + r.error;
    std::cerr << "hbgc: error: " << text << "\n";
    return 1;
  }
  return written ? finishStdout(0) : 1;
}

} // namespace

Runner declareSteady(CLI::App *cmd, Common &common) {
  cmd->footer(
      "Finds the periodic steady state of a model driven with period T by shooting: Newton's "
      "method on x(T) - x(0), with the period map's derivative from each mode's sensitivities "
      "and each event's saltation matrix (docs/numerics.md, \"Periodic steady state\"). Writes "
      "one period as CSV (`time,<outputs>`, time from 0 to T) to standard output or -o FILE, "
      "each output's mean, RMS, minimum, maximum and peak-to-peak to --stats FILE, and a "
      "report (each iteration's residual, the modes in the period, the figures) to standard "
      "error. With --losses, the report adds each R element's and source's mean power over "
      "the period and the loss at events (docs/cli.md).");
  auto a = std::make_shared<SteadyArgs>();
  addModelArguments(*cmd, a->file, common);
  addPeriodOptions(*cmd, a->period, a->params);
  cmd->add_option("-o,--output", a->output, "write the period's CSV here (`-`: standard output)")
      ->type_name("FILE");
  cmd->add_option("--stats", a->stats,
                  "write each output's mean, rms, min, max and peak_to_peak here as CSV")
      ->type_name("FILE");
  addValue(
      *cmd, "--rtol",
      [a](const std::string &s) {
        double v = parseNumber("--rtol", s);
        if (!(v > 0))
          throw UsageError{"`--rtol` must be positive"};
        a->rtol = v;
      },
      "relative tolerance of the period's integration (default 1e-12)", "TOL");
  addValue(
      *cmd, "--method",
      [a](const std::string &m) {
        if (!runtime::parseMethod(m, a->method))
          throw UsageError{"unknown method `" + m + "`"};
      },
      "integration method (default auto)", "NAME");
  addValue(
      *cmd, "--rows",
      [a](const std::string &s) {
        double v = parseNumber("--rows", s);
        if (!(v >= 1) || v != std::floor(v) || v > 1e8)
          throw UsageError{"`--rows` must be a whole number from 1"};
        a->steady.rowsPerPeriod = std::size_t(v);
      },
      "output rows per period (default 1000; events add their own)", "N");
  addValue(
      *cmd, "--transient",
      [a](const std::string &s) {
        double v = parseNumber("--transient", s);
        if (!(v >= 1) || v != std::floor(v) || v > 1e9)
          throw UsageError{"`--transient` must be a whole number from 1"};
        a->steady.warmupPeriods = std::size_t(v);
      },
      "periods of transient from the initial state before shooting (default 5)", "N");
  cmd->add_flag("--losses", a->losses,
                "report each R element's mean power dissipated, each source's delivered and "
                "the loss at events over the period");
  cmd->add_option("--losses-csv", a->lossesCsv,
                  "write the losses as CSV (element,kind,mean_power) here (implies --losses)")
      ->type_name("FILE");
  addValue(
      *cmd, "--efficiency", [a](const std::string &s) { a->efficiency = parseEfficiency(s); },
      "report the mean power of the elements OUT over that of IN (element paths, "
      "comma-separated: load.r/supply.s; implies --losses)",
      "OUT/IN");
  cmd->add_flag("-q,--quiet", a->quiet, "no report on standard error");
  return [a, &common] { return steady(*a, common); };
}

const Command kSteady = {"steady", "find a model's periodic steady state", declareSteady};

} // namespace hbg::tools
