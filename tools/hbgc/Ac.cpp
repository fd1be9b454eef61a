//===- tools/hbgc/Ac.cpp - hbgc ac ----------------------------------------===//

#include "Command.h"

#include "../common/Bode.h"

#include "hbg/driver/Internal.h"
#include "hbg/runtime/Csv.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

namespace hbg::tools {

namespace {

struct AcArgs {
  std::string file, input, output = "-", plot;
  std::vector<std::string> outputs;
  std::map<std::string, double> params;
  std::optional<double> period, rtol;
  double f0 = 0, f1 = 0;
  std::vector<double> list;
  std::size_t points = 50;
};

/// `F0:F1` (a logarithmic grid of --points frequencies) or `a,b,c`.
void parseFrequencies(const std::string &text, AcArgs &a) {
  auto positive = [](const std::string &s) {
    double v = parseNumber("--freq", s);
    if (!(v > 0) || !std::isfinite(v))
      throw UsageError{"`--freq`: frequencies must be positive, not `" + s + "`"};
    return v;
  };
  std::size_t colon = text.find(':');
  if (colon != std::string::npos) {
    a.f0 = positive(text.substr(0, colon));
    a.f1 = positive(text.substr(colon + 1));
    if (!(a.f1 > a.f0))
      throw UsageError{"`--freq F0:F1` needs F1 above F0"};
    a.list.clear();
    return;
  }
  a.list.clear();
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = text.find(',', start);
    a.list.push_back(positive(text.substr(start, comma - start)));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
}

int ac(AcArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  if (a.input.empty())
    throw UsageError{"`hbgc ac` needs `--input NAME`: the parameter or input perturbed"};
  if (a.list.empty() && !(a.f1 > 0))
    throw UsageError{"`hbgc ac` needs `--freq F0:F1` or `--freq F1,F2,...`"};
  driver::Session session(sessionOptions(common, a.params), std::cerr);
  if (!session.load(a.file))
    return 1;
  std::optional<Model> compiled = session.compile(Compiler());
  if (!compiled)
    return 1;
  Model &model = *compiled;
  const std::vector<std::string> &parameters = model.parameterNames();
  auto slot = std::find(parameters.begin(), parameters.end(), a.input);
  if (slot == parameters.end()) {
    std::cerr << "hbgc: error: model `" << model.name() << "` has no parameter or input `"
              << a.input << "` to perturb\n";
    return 1;
  }
  std::vector<std::size_t> which;
  for (const std::string &name : a.outputs) {
    auto it = std::find(model.outputNames().begin(), model.outputNames().end(), name);
    if (it == model.outputNames().end()) {
      std::cerr << "hbgc: error: model `" << model.name() << "` has no output `" << name << "`\n";
      return 1;
    }
    which.push_back(std::size_t(it - model.outputNames().begin()));
  }
  if (which.empty())
    for (std::size_t i = 0; i < model.outputNames().size(); ++i)
      which.push_back(i);
  std::vector<double> frequencies = a.list;
  if (frequencies.empty()) {
    std::size_t n = std::max<std::size_t>(a.points, 2);
    for (std::size_t k = 0; k < n; ++k)
      frequencies.push_back(a.f0 * std::pow(a.f1 / a.f0, double(k) / double(n - 1)));
  }
  SteadyOptions so;
  so.period = a.period;
  so.rtol = a.rtol.value_or(1e-12);
  so.losses = false;
  FrequencyResponse fr;
  try {
    fr = model.frequencyResponse(a.input, frequencies, a.params, so);
  } catch (const std::invalid_argument &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  }
  if (!fr.ok()) {
    std::cerr << "hbgc: error: " << fr.error << "\n";
    return 1;
  }
  std::ofstream file;
  std::ostream *os = &std::cout;
  if (a.output != "-") {
    file.open(a.output);
    if (!file) {
      std::cerr << "hbgc: error: cannot write `" << a.output << "`\n";
      return 1;
    }
    os = &file;
  }
  std::vector<std::vector<double>> phases;
  std::vector<std::string> names;
  std::vector<std::vector<std::complex<double>>> chosen;
  for (std::size_t i : which) {
    names.push_back(model.outputNames()[i]);
    chosen.push_back(fr.response[i]);
    phases.push_back(unwrappedPhase(fr.response[i]));
  }
  *os << "frequency";
  for (const std::string &n : names)
    *os << "," << runtime::csvField(n + "_magnitude") << "," << runtime::csvField(n + "_db") << ","
        << runtime::csvField(n + "_phase");
  *os << "\n";
  for (std::size_t k = 0; k < frequencies.size(); ++k) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.17g", frequencies[k]);
    *os << buf;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      double mag = std::abs(chosen[i][k]);
      std::snprintf(buf, sizeof buf, ",%.17g,%.17g,%.17g", mag, 20 * std::log10(mag), phases[i][k]);
      *os << buf;
    }
    *os << "\n";
  }
  if (file.is_open()) {
    file.close();
    if (!file) {
      std::cerr << "hbgc: error: writing `" << a.output << "` failed\n";
      return 1;
    }
  }
  if (!a.plot.empty()) {
    std::ofstream svg(a.plot);
    svg << bodeSvg(model.name() + ": response to " + a.input, frequencies, names, chosen);
    svg.close();
    if (!svg) {
      std::cerr << "hbgc: error: cannot write `" << a.plot << "`\n";
      return 1;
    }
  }
  std::fprintf(stderr, "period: %.6g s; steady state residual %.3e; %zu frequencies\n", fr.period,
               fr.residual, frequencies.size());
  return finishStdout(0);
}

} // namespace

Runner declareAc(CLI::App *cmd, Common &common) {
  cmd->footer(
      "The small-signal frequency response of the model around its periodic steady state "
      "(`hbgc steady`): the response of each output at the frequency of a small sinusoid on "
      "--input (a parameter or an input; a perturbed duty moves the PWM edges), from the "
      "linearised period map (docs/numerics.md, \"Small-signal frequency response\"). Writes "
      "CSV (`frequency`, then each output's magnitude, magnitude in dB and phase in degrees) "
      "to standard output or -o FILE, and a Bode diagram with --plot FILE.");
  auto a = std::make_shared<AcArgs>();
  addModelArguments(*cmd, a->file, common);
  cmd->add_option("--input", a->input, "the parameter or input perturbed")->type_name("NAME");
  addRepeated(
      *cmd, "--output", [a](const std::string &s) { a->outputs.push_back(s); },
      "an output whose response is written (repeatable; default: all)", "NAME");
  addValue(
      *cmd, "--freq", [a](const std::string &s) { parseFrequencies(s, *a); },
      "frequencies in Hz: F0:F1 (a logarithmic grid of --points) or F1,F2,...", "F0:F1");
  addValue(
      *cmd, "--points",
      [a](const std::string &s) {
        double v = parseNumber("--points", s);
        if (!(v >= 2) || v != std::floor(v) || v > 1e6)
          throw UsageError{"`--points` must be a whole number from 2"};
        a->points = std::size_t(v);
      },
      "frequencies of the grid F0:F1 (default 50)", "N");
  addPeriodOptions(*cmd, a->period, a->params);
  cmd->add_option("-o", a->output, "write the CSV here (`-`: standard output)")->type_name("FILE");
  cmd->add_option("--plot", a->plot, "draw the Bode diagram as SVG here")->type_name("FILE");
  addValue(
      *cmd, "--rtol",
      [a](const std::string &s) {
        double v = parseNumber("--rtol", s);
        if (!(v > 0))
          throw UsageError{"`--rtol` must be positive"};
        a->rtol = v;
      },
      "relative tolerance of the steady state's integration (default 1e-12)", "TOL");
  return [a, &common] { return ac(*a, common); };
}

const Command kAc = {"ac", "small-signal frequency response around the periodic steady state",
                     declareAc};

} // namespace hbg::tools
