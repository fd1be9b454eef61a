//===- tools/hbgc/Command.h - What hbgc's commands share ------------------===//
//
// Each command declares its options on its own CLI11 subcommand and
// returns what runs it once the command line is parsed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../common/Cli.h"
#include "../common/Output.h"

#include "hbg/driver/Session.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hbg::tools {

/// What every command takes.
struct Common {
  /// `--lib-path DIR`: where `import name;` looks first.
  std::vector<std::string> libPath;
};

/// Runs a command once its options are parsed; returns the exit status.
using Runner = std::function<int()>;

/// One of hbgc's commands.
struct Command {
  /// As typed, and its line in `hbgc --help`.
  const char *name, *description;
  /// Declares the command's options on its subcommand `cmd` and returns
  /// what runs it.
  Runner (*declare)(CLI::App *cmd, Common &common);
};

extern const Command kCheck, kExplain, kRun, kBuild, kLinearize, kDot, kPlot, kSweep, kSteady, kAc;

/// Declares the model argument FILE (`-`: standard input) and the options
/// every command takes.
void addModelArguments(CLI::App &command, std::string &file, Common &common);

/// Declares `--mode J=on|off,...`: the mode of a switched model to work in.
/// `--period T` and `-p NAME=VALUE`, as `hbgc steady` and `hbgc ac` take
/// them.
void addPeriodOptions(CLI::App &command, std::optional<double> &period,
                      std::map<std::string, double> &params);

void addModeOption(CLI::App &command, std::string &mode, const std::string &help);

/// The session of a command: `common`'s library path, `params` fixing
/// structural parameters.
driver::Session::Options sessionOptions(const Common &common,
                                        const std::map<std::string, double> &params = {});

/// Exit status of a command that printed to standard output: `status`, or
/// 1 when it succeeded but its output could not be written.
int finishStdout(int status);

/// `%.10g`.
std::string num(double v);

} // namespace hbg::tools
