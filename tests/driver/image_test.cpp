// Model images (runtime/Image.h): what `hbgc build` embeds in a simulator,
// read back and run without the compiler, and read from altered bytes; the
// numbering of tape ops they store.

#include "hbg/tooling/Build.h"
#include "hbg/hbg.h"
#include "hbg/runtime/Image.h"
#include "hbg/runtime/Tape.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const std::string kExamples = std::string(HBG_SOURCE_DIR) + "/examples/";

/// Runs the image as a built simulator does (the model's experiment
/// settings), its functions on their tapes.
hbg::runtime::RunRecord runImage(const hbg::runtime::ModelImage &image,
                                 const hbg::SimulationOptions &o, std::size_t maxSteps) {
  std::vector<double> p = image.setup.parameters({});
  hbg::runtime::SimulateOptions s = o;
  s.maxSteps = maxSteps;
  s.nominal = image.setup.nominalState(p);
  std::vector<double> x0 = image.setup.initialState(p);
  hbg::runtime::ImageSystem system(image, std::move(p));
  hbg::runtime::RunRecord r;
  hbg::runtime::simulate(system, x0, s, r);
  return r;
}

const hbg::runtime::ModelImage read(const std::string &bytes) {
  return hbg::runtime::readImage(reinterpret_cast<const std::uint8_t *>(bytes.data()),
                                 bytes.size(), nullptr, 0);
}

} // namespace

TEST_CASE("an image runs as the model does, bit for bit") {
  for (const char *file : {"rlc.hbg", "bouncing_ball.hbg", "rectifier.hbg", "stick_slip.hbg",
                           "hydraulic_press.hbg", "mass_chain.hbg"}) {
    CAPTURE(file);
    hbg::Model model = hbg::Compiler().compileFile(kExamples + file);
    hbg::SimulationOptions o = model.experiment().apply();
    if (o.tEnd == 1)
      o.tEnd = 0.5;
    hbg::Result expected = hbg::Simulation(model, o).run();
    REQUIRE(expected.ok());
    hbg::runtime::ModelImage image = read(hbg::driver::imageOf(model));
    hbg::runtime::RunRecord r = runImage(image, o, 50'000'000);
    CHECK(r.error.empty());
    CHECK(r.columns == expected.columns);
    CHECK(r.events.size() == expected.events.size());
  }
}

TEST_CASE("tape ops keep the values images store them by") {
  // An image stores each instruction's op by its value, so the order of
  // hbg/support/ExprOps.def is part of the format: a new op goes at its end.
  std::string names;
  for (std::size_t i = 0; i < hbg::runtime::kNumTapeOps; ++i)
    names += std::string(opName(static_cast<hbg::runtime::TapeOp>(i))) + " ";
  CHECK(names == "const time x p neg sin cos tan exp log sqrt tanh abs sign floor add sub mul "
                 "div pow min max select ");
}

TEST_CASE("altered or truncated images are errors, never crashes") {
  for (std::string file : {"bouncing_ball.hbg", "rectifier.hbg", "falling_drag.hbg"}) {
  CAPTURE(file);
  hbg::Model model = hbg::Compiler().compileFile(kExamples + file);
  const std::string bytes = hbg::driver::imageOf(model);
  hbg::SimulationOptions o;
  o.tEnd = 0.05;
  std::size_t refused = 0, read = 0;
  for (std::size_t n = 0; n < bytes.size(); n += 13) {
    CAPTURE(n);
    CHECK_THROWS_AS(::read(bytes.substr(0, n)), hbg::runtime::ImageError);
  }
  // Every other byte altered three ways: refused, or an image that runs
  // (or fails) without crashing (the sanitizer build checks the memory
  // accesses).
  for (std::size_t k = 0; k < bytes.size(); k += 2) {
    for (unsigned char v : {0x00, 0x7f, 0xff}) {
      std::string altered = bytes;
      if (std::getenv("IMAGE_TEST_TRACE")) // which alteration crashed
        std::fprintf(stderr, "byte %zu = %d\n", k, int(v));
      altered[k] = static_cast<char>(v);
      try {
        hbg::runtime::ModelImage image = ::read(altered);
        ++read;
        runImage(image, o, 2000);
      } catch (const hbg::runtime::ImageError &) {
        ++refused;
      } catch (const std::exception &) {
        ++refused; // an altered image may ask for too much memory
      }
    }
  }
  MESSAGE(file << ": " << refused << " altered images refused, " << read << " read");
  CHECK(refused > 0);
  }
}
