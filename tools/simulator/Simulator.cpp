//===- tools/simulator/Simulator.cpp - main() of a built simulator --------===//
//
// `hbgc build FILE -o EXE` links this main() with an object file holding
// the model's modes compiled ahead of time and its image (Image.h): the
// simulator runs the model with the runtime `hbgc run` uses, without the
// parser, the compiler or LLVM, and takes `hbgc run`'s simulation options.
//
//===----------------------------------------------------------------------===//

#include "../common/RunModel.h"

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
      return "parameter `" + name +
             "` is structural (`for` loops, `if` blocks or indices are computed " +
             "from it): the simulator was built with " + name + " = " + timeText(defaults[k]) +
             "; build it again with `hbgc build -p " + name + "=...`";
  }
  return "";
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
  const runtime::SetupProgram &setup = image.setup;
  tools::requireEndTime(ro, setup.given.size() > 1 && setup.given[1], tools::programName());
  std::string wrong = checkParameters(image, ro.params);
  if (!wrong.empty()) {
    std::cerr << tools::programName() << ": error: " << wrong << "\n";
    return 1;
  }
  tools::RunFiles files;
  if (!files.open(ro))
    return 1;

  std::vector<double> p = setup.parameters(ro.params);
  runtime::SimulateOptions settings;
  try {
    settings = tools::runSettings(ro, setup.experimentValues(p, image.name));
  } catch (const std::invalid_argument &e) {
    std::cerr << tools::programName() << ": error: " << e.what() << "\n";
    return 1;
  }
  settings.nominal = setup.nominalState(p);
  std::vector<double> x0 = setup.initialState(p);
  tools::RunSubject subject{image.name,
                            "model " + image.name,
                            image.outputNames,
                            image.stateNames,
                            setup.names,
                            p,
                            image.switched,
                            -1,
                            [&image](std::ostream &os, const runtime::ProgramSystem &system, double) {
                              if (image.switched)
                                os << "modes compiled in: " << image.programs.size() << "\n"
                                   << "modes compiled during the run: " << system.modesCompiled
                                   << " (" << 1e3 * system.compileSeconds << " ms)\n";
                            },
                            {},
                            {}};
  std::unique_ptr<runtime::ProgramSystem> system;
  if (!image.sources.empty() && hbg_fallback_system)
    system.reset(hbg_fallback_system(image, &p));
  else
    system = std::make_unique<runtime::ImageSystem>(image, p);
  return tools::runModel(*system, x0, std::move(settings), ro, files, subject);
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
