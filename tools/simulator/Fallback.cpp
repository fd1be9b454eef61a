//===- tools/simulator/Fallback.cpp - Modes compiled when first entered ---===//
//
// Linked into simulators built with `hbgc build --jit-fallback`: a mode
// that is not compiled in is compiled when a run first enters it, from
// the model's sources the image carries, by the same compiler `hbgc run`
// uses (so with the same values, bit for bit). The sources are written to
// a temporary directory and the model is compiled from there once, on
// the first such mode.
//
//===----------------------------------------------------------------------===//

#include "../../compiler/driver/ModelImpl.h"

#include "hbg/runtime/Image.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace hbg;

class FallbackSystem final : public runtime::ImageSystem {
public:
  using ImageSystem::ImageSystem;
  ~FallbackSystem() override { releaseModes(); }

protected:
  std::shared_ptr<const runtime::ModeProgram> missing(const std::vector<std::uint32_t> &q,
                                                      std::string &why) override {
    auto start = std::chrono::steady_clock::now();
    try {
      const Model &model = compiled();
      std::shared_ptr<ModeCode> code = model.impl()->modeCode(model.impl()->modeOf(q));
      ++modesCompiled;
      compileSeconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return code;
    } catch (const CompileError &e) {
      why = std::string("cannot be analysed:\n") + e.what();
    } catch (const std::exception &e) {
      why = std::string("is not compiled in, and compiling it failed: ") + e.what();
    }
    return nullptr;
  }

private:
  /// The model, compiled from the image's sources on first use.
  const Model &compiled() {
    if (model_)
      return *model_;
    std::string pattern = (fs::temp_directory_path() / "hbg-fallback-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
      throw std::runtime_error("cannot create a temporary directory `" + pattern + "`");
    fs::path dir(buf.data());
    for (const auto &[path, text] : image_.sources) {
      fs::path file = dir / path;
      fs::create_directories(file.parent_path());
      std::ofstream(file, std::ios::binary) << text;
    }
    CompilerOptions opts;
    opts.libPath = {(dir / "lib").string()};
    // Structural parameters keep the values the simulator was built with.
    std::vector<double> defaults = image_.setup.parameters({});
    for (std::size_t k = 0; k < image_.structural.size(); ++k)
      if (image_.structural[k])
        opts.parameters[image_.setup.names[k]] = defaults[k];
    try {
      model_ = Compiler(opts).compileFile((dir / image_.sources.front().first).string());
    } catch (...) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      throw;
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (model_->stateNames() != image_.stateNames || model_->parameterNames() != image_.setup.names)
      throw std::runtime_error("the model's sources compile to another model than the one built");
    return *model_;
  }

  std::optional<Model> model_;
};

} // namespace

/// Found by the simulator's main() (a weak reference there): present only
/// in simulators built with `--jit-fallback`.
extern "C" hbg::runtime::ProgramSystem *hbg_fallback_system(const hbg::runtime::ModelImage &image,
                                                            std::vector<double> *params) {
  return new FallbackSystem(image, std::move(*params));
}
