//===- tools/hbgc/main.cpp - The hbgc command line ------------------------===//
//
// hbgc <command> FILE [options]: each command is declared in its own file
// (Command.h); CLI11 parses the command line and generates the help.
//
// Exit status: 0 success, 1 errors in the model, at run time or writing the
// results, 2 usage errors, 70 internal errors (a bug in hbg).
//
//===----------------------------------------------------------------------===//

#include "Command.h"

#include "hbg/codegen/CodeGen.h"

#include <algorithm>
#include <cstring>
#include <iostream>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifndef HBG_VERSION
#define HBG_VERSION "unknown"
#endif

using namespace hbg;

int main(int argc, char **argv) {
#ifdef __GLIBC__
  // Small blocks, when freed, are merged with their free neighbours at once
  // rather than kept in glibc's fast bins. Parsing a large model frees
  // millions of them (ANTLR's parse tree), and the fast bins deferred
  // merging them all to the next large allocation, in sema: 0.3 s of a
  // 2.3 s compile of a chain of 10,000 masses, which this saves outright.
  mallopt(M_MXFAST, 0);
#endif
  CLI::App hbgc("hbg's compiler for hybrid bond graphs", "hbgc");
  tools::configure(hbgc);
  hbgc.footer("hbgc compiles hybrid bond graphs (.hbg) to simulators.");
  hbgc.set_version_flag("--version", std::string("hbgc ") + HBG_VERSION + " (LLVM 19)",
                        "print hbgc's version and exit");
  tools::Common common;
  // Every command is a subcommand, but only those named on the command
  // line declare their options: declaring all of them was a quarter of
  // `hbgc --version`. CLI11 parses only a command that is named, and
  // `hbgc --help` shows each command's name and description alone.
  std::vector<std::pair<CLI::App *, tools::Runner>> commands;
  for (const tools::Command *c : {&tools::kCheck, &tools::kExplain, &tools::kRun, &tools::kBuild,
                                  &tools::kLinearize, &tools::kDot, &tools::kPlot,
                                  &tools::kSweep, &tools::kSteady, &tools::kAc}) {
    CLI::App *cmd = hbgc.add_subcommand(c->name, c->description);
    tools::Runner run;
    if (std::find_if(argv + 1, argv + argc, [c](const char *arg) {
          return std::strcmp(arg, c->name) == 0;
        }) != argv + argc)
      run = c->declare(cmd, common);
    commands.emplace_back(cmd, std::move(run));
  }
  try {
    if (argc <= 1) {
      std::cerr << hbgc.help();
      return 2;
    }
    if (std::optional<int> status = tools::parse(hbgc, argc, argv))
      return *status;
    for (auto &[cmd, run] : commands)
      if (cmd->parsed())
        return run();
    throw tools::UsageError{"no command given"};
  } catch (const tools::UsageError &e) {
    std::string command;
    for (auto &[cmd, run] : commands)
      if (cmd->parsed())
        command = " " + cmd->get_name();
    std::cerr << "hbgc: error: " << e.message << "\n"
              << "run `hbgc" << command << " --help` for usage\n";
    return 2;
  } catch (const codegen::BackendUnavailable &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n"
              << "(HBG_LLVM_BACKEND names the library; `--tier tape` simulates without it)\n";
    return 1;
  } catch (const InternalError &e) {
    std::cerr << "hbgc: internal error: " << e.what() << "\n";
    return 70;
  } catch (const std::exception &e) {
    std::cerr << "hbgc: internal error: " << e.what() << "\n";
    return 70;
  }
}
