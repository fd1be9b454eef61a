//===- hbg/runtime/Image.h - A compiled model without the compiler --------===//
//
// Everything a run needs of a compiled model, as data: names, the setup
// tapes (Setup.h), the switched junctions, the storage laws of the energy
// audit, and the program of every mode compiled in (Program.h) with its
// Jacobian. `hbgc build` writes it next to the modes' machine code into a
// simulator; the simulator reads it back and runs it with the same runtime
// as `hbgc run`, without the parser, the compiler or LLVM.
//
// Functions are stored as indices into a table of entry points (the
// object file's, in the order the builder emitted them), and optionally
// with their tapes (then no machine code is needed: tests use that).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Program.h"
#include "hbg/runtime/Setup.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hbg::runtime {

/// A mode's program with its Jacobian, as read from an image.
struct ImageProgram final : ModeProgram {
  JacobianProgram jacobianCode;
  bool hasJacobian = false;
  const JacobianProgram &jacobianProgram() const override;
};

/// A mode of a switched model that the image knows: its FSM states, and
/// either its program or why it cannot be analysed (`why`, the
/// compiler's diagnostics, for the error a run entering it reports).
struct ImageMode {
  std::vector<std::uint32_t> states;
  std::int32_t program = -1;
  std::string why;
};

struct ModelImage {
  std::string name;
  std::vector<std::string> stateNames, outputNames;
  /// Parameters (inputs included), structural flags and their values.
  SetupProgram setup;
  std::vector<bool> structural;
  std::size_t numHeld = 0;
  /// Discrete values (sampled control) by name, with their held slots.
  std::vector<std::pair<std::string, std::uint32_t>> discretes;
  /// System::settleSlot: -1 without `edge(b)` clocks.
  std::int64_t settleSlot = -1;
  bool switched = false;
  Switching switching;
  std::vector<std::optional<StorageLaw>> storageLaws;
  std::vector<std::shared_ptr<ImageProgram>> programs;
  /// Switched models: the modes compiled in (or known to fail). A model
  /// without switched junctions has one program and no entries here.
  std::vector<ImageMode> modes;
  /// Switched models: why other modes are not compiled in (`more than
  /// 256 reachable modes; compiled in: the modes of events.csv`), for the
  /// error a run entering one reports.
  std::string missingModes;
  /// Simulators that compile missing modes themselves (`--jit-fallback`):
  /// the model's source files, the model's first, as (path relative to a
  /// directory the simulator writes them to, text). Empty otherwise.
  std::vector<std::pair<std::string, std::string>> sources;
};

/// The image cannot be read (corrupt, or written by another version).
class ImageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Writes `image`. `functionIndex` gives each function's entry in the
/// table of entry points (UINT32_MAX: none); `withTapes` stores each
/// function's tape too.
std::string writeImage(const ModelImage &image,
                       const std::function<std::uint32_t(const ModeFn &)> &functionIndex,
                       bool withTapes);

/// Reads an image written by writeImage. Functions take their entry
/// point from `table` (`size` entries; null: none, they run on their
/// tapes). Throws ImageError.
ModelImage readImage(const std::uint8_t *data, std::size_t size, const CompiledFn *table,
                     std::size_t tableSize);

/// A run's view of an image: its modes by FSM states.
class ImageSystem : public ProgramSystem {
public:
  ImageSystem(const ModelImage &image, std::vector<double> params);
  const std::string &modelName() const override { return image_.name; }
  const std::vector<std::string> &stateNames() const override { return image_.stateNames; }
  const std::vector<std::string> &outputNames() const override { return image_.outputNames; }
  const Switching &switching() const override { return image_.switching; }
  const std::vector<std::pair<std::string, std::uint32_t>> &discretes() const override {
    return image_.discretes;
  }
  std::int64_t settleSlot() const override { return image_.settleSlot; }

protected:
  std::shared_ptr<const ModeProgram> program(const std::vector<std::uint32_t> &q,
                                             std::string &why) override;
  /// A mode the image does not have: none, by default (`why` says it is
  /// not compiled in).
  virtual std::shared_ptr<const ModeProgram> missing(const std::vector<std::uint32_t> &q,
                                                     std::string &why);
  const ModelImage &image_;

private:
  std::map<std::vector<std::uint32_t>, const ImageMode *> modes_;
};

/// The ModeFns of a program in a fixed order (rhs, outputs, residual,
/// jacobian, guards, held, kinks, dependent, dependentJacobian, impulse,
/// guardImpulse): what writeImage stores per program, before the
/// Jacobian's.
std::vector<const ModeFn *> programFunctions(const ModeProgram &p);

} // namespace hbg::runtime
