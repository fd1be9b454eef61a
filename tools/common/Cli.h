//===- tools/common/Cli.h - Command lines on CLI11 ------------------------===//
//
// hbgc and the simulators it builds declare their options once, with
// CLI11: the parser and the help text both come from those declarations.
// This adds what CLI11 leaves to its users: hbg's help layout (usage, the
// command's text, its arguments and options with wrapped descriptions),
// "did you mean" for unknown options and commands, and usage errors that
// end with exit status 2.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace hbg::tools {

/// A usage error: the message for stderr, and exit status 2.
struct UsageError {
  std::string message;
};

/// `text` as a number; `flag` names the option in the error.
double parseNumber(const std::string &flag, const std::string &text);

/// `text` as a whole number from `lo` to `hi`; the error names `flag` and
/// says what it must be (`must` completes "`--jobs` must be ...").
double parseWhole(const std::string &flag, const std::string &text, double lo, double hi,
                  const std::string &must);

/// `NAME=VALUE` (of `-p`) into `params`.
void parseParameter(const std::string &kv, std::map<std::string, double> &params);

/// Gives `app` (and each subcommand added to it later) hbg's help layout
/// and leaves unknown arguments to parse(), which names them.
void configure(CLI::App &app);

/// Declares option `names` with one value per occurrence, repeatable,
/// handed to `each` in order. `each` may throw UsageError.
CLI::Option *addRepeated(CLI::App &app, const std::string &names,
                         std::function<void(const std::string &)> each,
                         const std::string &help, const std::string &valueName);

/// Declares option `names` with one value, handed to `set` (which may
/// throw UsageError). Given twice, it is a usage error.
CLI::Option *addValue(CLI::App &app, const std::string &names,
                      std::function<void(const std::string &)> set, const std::string &help,
                      const std::string &valueName);

/// Parses the command line into the options `app` declares. Returns the
/// exit status when the program should stop here (0 after --help or
/// --version, which are printed); throws UsageError for anything it does
/// not accept, with the closest option or command when one is close.
std::optional<int> parse(CLI::App &app, int argc, const char *const *argv);

/// Reads a whole file, or standard input for `-`. False with the reason.
bool readInput(const std::string &path, std::string &text, std::string &why);

} // namespace hbg::tools
