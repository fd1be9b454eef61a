//===- tools/simulator/Simulator.cpp - main() of a built simulator --------===//
//
// `hbgc build FILE -o EXE` links this main() with an object file holding
// the model's modes compiled ahead of time and its image (Image.h): the
// simulator runs the model with the runtime `hbgc run` uses, without the
// parser, the compiler or LLVM, and takes `hbgc run`'s simulation options.
//
//===----------------------------------------------------------------------===//

#include "../common/Output.h"
#include "../common/Results.h"
#include "../common/RunOptions.h"

#include "hbg/runtime/Csv.h"
#include "hbg/runtime/Image.h"
#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

// Defined by the object file `hbgc build` writes (CodeGenerator::emitObject).
extern "C" {
extern const unsigned char hbg_image[];
extern const unsigned long hbg_image_size;
extern const hbg::runtime::CompiledFn hbg_function_table[];
extern const unsigned long hbg_function_table_size;
}

// Defined in simulators built with `--jit-fallback` (Fallback.cpp).
extern "C" hbg::runtime::ProgramSystem *
hbg_fallback_system(const hbg::runtime::ModelImage &image, std::vector<double> *params)
    __attribute__((weak));

using namespace hbg;

namespace {

/// Checks `-p` overrides against the model's parameters; the message of
/// the first that is wrong, or "".
std::string checkParameters(const runtime::ModelImage &image,
                            const std::map<std::string, double> &params) {
  const runtime::SetupProgram &s = image.setup;
  std::vector<double> defaults = s.parameters({});
  for (const auto &[name, value] : params) {
    auto it = std::find(s.names.begin(), s.names.end(), name);
    if (it == s.names.end()) {
      std::string best = closestName(name, s.names);
      return "model `" + image.name + "` has no parameter `" + name + "`" +
             (best.empty() ? "" : "; did you mean `" + best + "`?");
    }
    std::size_t k = static_cast<std::size_t>(it - s.names.begin());
    if (k < image.structural.size() && image.structural[k] && value != defaults[k])
      return "parameter `" + name + "` is structural (`for` loops or indices are computed from " +
             "it): the simulator was built with " + name + " = " + timeText(defaults[k]) +
             "; build it again with `hbgc build -p " + name + "=...`";
  }
  return "";
}

/// Sets the settings `v` gives in `o`.
void apply(const runtime::ExperimentValues &v, runtime::SimulateOptions &o) {
  using runtime::Setting;
  auto set = [&](Setting s, double &field) {
    if (v[s])
      field = *v[s];
  };
  set(Setting::TStart, o.tStart);
  set(Setting::TEnd, o.tEnd);
  set(Setting::DtOut, o.dtOut);
  set(Setting::Step, o.integrator.step);
  set(Setting::MaxStep, o.integrator.maxStep);
  set(Setting::Rtol, o.integrator.rtol);
  set(Setting::Atol, o.integrator.atol);
  if (v.method)
    o.integrator.method = *v.method;
}

int run(int argc, char **argv, const runtime::ModelImage &image) {
  CLI::App app("simulates the model `" + image.name + "`", tools::programName());
  tools::configure(app);
  app.footer("Simulates the model `" + image.name +
             "`, compiled ahead of time by `hbgc build`; writes CSV with a header "
             "`time,<outputs>` to standard output or to -o FILE, as `hbgc run` does. The "
             "model's `experiment { ... }` block sets the defaults of the options it gives; the "
             "command line overrides them.");
  tools::RunOptions ro;
  tools::addRunOptions(app, ro);
  if (std::optional<int> status = tools::parse(app, argc, argv))
    return *status;
  tools::checkRunOptions(ro);
  using runtime::Setting;
  const runtime::SetupProgram &setup = image.setup;
  if (!ro.cli[Setting::TEnd] && !(setup.given.size() > 1 && setup.given[1]))
    throw tools::UsageError{"needs `--t-end`: the model's `experiment` block gives no `t_end`"};
  std::string wrong = checkParameters(image, ro.params);
  if (!wrong.empty()) {
    std::cerr << tools::programName() << ": error: " << wrong << "\n";
    return 1;
  }
  tools::Output stdOut, csvFile, eventsFile;
  if (!ro.output.empty() && ro.output != "-" && !csvFile.open(ro.output))
    return 1;
  if (!ro.events.empty() && ro.events != "-" && !eventsFile.open(ro.events))
    return 1;
  tools::Output plotFile;
  if (!ro.plot.empty() && ro.plot != "-" && !plotFile.open(ro.plot))
    return 1;
  tools::Output &csv = ro.output.empty() || ro.output == "-" ? stdOut : csvFile;
  tools::Output &events = ro.events == "-" ? stdOut : eventsFile;

  auto start = std::chrono::steady_clock::now();
  std::vector<double> p = setup.parameters(ro.params);
  const std::vector<double> params = p; // stored with the results (--format mat)
  runtime::SimulateOptions o;
  try {
    apply(setup.experimentValues(p, image.name), o);
  } catch (const std::invalid_argument &e) {
    std::cerr << tools::programName() << ": error: " << e.what() << "\n";
    return 1;
  }
  apply(ro.cli, o);
  if (!(o.tEnd > o.tStart))
    throw tools::UsageError{"the end time " + timeText(o.tEnd) + " must be after the start time " +
                            timeText(o.tStart)};
  o.remap = ro.remap;
  o.remapFactor = ro.remapFactor;
  o.nominal = setup.nominalState(p);
  std::vector<double> x0 = setup.initialState(p);
  std::unique_ptr<runtime::ProgramSystem> system;
  if (!image.sources.empty() && hbg_fallback_system)
    system.reset(hbg_fallback_system(image, &p));
  else
    system = std::make_unique<runtime::ImageSystem>(image, p);
  // Rows are written as they are computed (as hbgc run writes them).
  std::vector<std::string> names{"time"};
  names.insert(names.end(), image.outputNames.begin(), image.outputNames.end());
  tools::ResultWriter writer(csv.stream(), ro.format, names, setup.names, params,
                             &csv == &csvFile);
  tools::RunMonitor monitor(!ro.quiet && tools::stderrIsTerminal());
  std::optional<tools::Plot> plot;
  if (!ro.plot.empty())
    plot.emplace(names, ro.plotStart(o.tStart), ro.plotEnd(o.tEnd));
  o.onRow = [&writer, &plot](const double *row) {
    writer.row(row);
    if (plot)
      plot->row(row);
  };
  o.onStep = [&monitor](const runtime::Progress &pr) { return monitor.step(pr); };
  if (plot)
    o.onEvent = [&plot](const runtime::Event &e) { tools::plotEvent(*plot, e); };
  if (ro.events.empty())
    o.keepEvents = 0; // counted, not kept
  runtime::RunRecord r;
  runtime::simulate(*system, x0, o, r);
  monitor.finish();
  auto end = std::chrono::steady_clock::now();
  for (const RunDiagnostic &w : r.warnings)
    std::cerr << tools::programName() << ": warning: " << w.text(image.name) << "\n";

  bool written = writer.finish();
  written &= csv.finish();
  if (!ro.events.empty()) {
    runtime::writeEventsCsv(events.stream(), r.events, image.stateNames, image.outputNames);
    written &= events.finish();
  }
  if (plot) {
    tools::Output &out = ro.plot == "-" ? stdOut : plotFile;
    out.stream() << plot->svg(
        {"model " + image.name, ro.plotTogether, !ro.plotNoEvents, !ro.plotNoModes});
    written &= out.finish();
  }
  if (ro.stats) {
    std::cerr << "steps: " << r.steps << " accepted, " << r.rejectedSteps << " rejected\n"
              << "rhs calls: " << r.rhsCalls << "\n"
              << "integration time: "
              << std::chrono::duration<double, std::milli>(end - start).count() << " ms\n";
    for (const runtime::MethodSpan &span : r.methods)
      std::cerr << "method: " << runtime::methodName(span.method)
                << " from t = " << timeText(span.from) << " to " << timeText(span.to) << ", "
                << span.steps << " steps\n";
    if (r.factorisations > 0)
      std::cerr << "stiff method: " << r.jacobianCalls << " Jacobians, " << r.factorisations
                << " LU factorisations\n";
    if (image.switched)
      std::cerr << "events: " << r.events.size() + r.eventsDropped << "\n"
                << "mode-iteration steps: " << r.modeIterations << "\n"
                << "modes compiled in: " << image.programs.size() << "\n"
                << "modes compiled during the run: " << system->modesCompiled << " ("
                << 1e3 * system->compileSeconds << " ms)\n";
  }
  if (r.stopped) {
    std::cerr << tools::programName() << ": interrupted: " << r.errorText(image.name) << "; the "
              << r.rows << " rows computed up to there are written\n";
    return 130;
  }
  if (!r.error.empty()) {
    std::cerr << tools::programName() << ": error: " << r.errorText(image.name) << "\n";
    return 1;
  }
  return written ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string self = argc > 0 ? argv[0] : "simulator";
  tools::programName() = self.substr(self.find_last_of('/') + 1);
  try {
    runtime::ModelImage image =
        runtime::readImage(hbg_image, hbg_image_size, hbg_function_table, hbg_function_table_size);
    return run(argc, argv, image);
  } catch (const tools::UsageError &e) {
    std::cerr << tools::programName() << ": error: " << e.message << "\n"
              << "run `" << tools::programName() << " --help` for usage\n";
    return 2;
  } catch (const runtime::ImageError &e) {
    std::cerr << tools::programName() << ": error: " << e.what() << "\n";
    return 70;
  } catch (const std::exception &e) {
    std::cerr << tools::programName() << ": internal error: " << e.what() << "\n";
    return 70;
  }
}
