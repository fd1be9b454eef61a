//===- tools/hbgc/Dot.cpp - hbgc dot --------------------------------------===//

#include "Command.h"

#include "hbg/tooling/Dot.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace hbg::tools {

namespace {

struct DotArgs {
  std::string file, mode, output;
  bool svg = false;
};

/// Renders `dot` text to SVG with Graphviz's `dot` program, into `output`
/// (standard output when empty or `-`). False, with the error printed,
/// when it cannot be run or fails.
bool renderSvg(const std::string &text, const std::string &output) {
  int fds[2];
  if (::pipe(fds) != 0) {
    std::cerr << "hbgc: error: cannot run `dot`: " << std::strerror(errno) << "\n";
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<std::string> args{"dot", "-Tsvg"};
  if (!output.empty() && output != "-")
    args.insert(args.end(), {"-o", output});
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  pid_t pid;
  int err = posix_spawnp(&pid, "dot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[0]);
  if (err != 0) {
    ::close(fds[1]);
    std::cerr << "hbgc: error: cannot run `dot` (Graphviz) for --svg: " << std::strerror(err)
              << "; install Graphviz, or write DOT without --svg and render it elsewhere\n";
    return false;
  }
  // A `dot` that exits early must not kill hbgc with SIGPIPE.
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  std::size_t done = 0;
  bool wrote = true;
  while (done < text.size()) {
    ssize_t k = ::write(fds[1], text.data() + done, text.size() - done);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      wrote = false;
      break;
    }
    done += static_cast<std::size_t>(k);
  }
  ::close(fds[1]);
  sigaction(SIGPIPE, &old, nullptr);
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited != pid) {
    std::cerr << "hbgc: error: cannot learn whether Graphviz's `dot` rendered the drawing: "
              << std::strerror(errno) << "\n";
    return false;
  }
  if (!wrote || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "hbgc: error: Graphviz's `dot` could not render the drawing"
              << (WIFEXITED(status) ? " (exit status " + std::to_string(WEXITSTATUS(status)) + ")"
                                    : std::string(" (killed)"))
              << "\n";
    return false;
  }
  return true;
}

int dot(const DotArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  driver::Session session(sessionOptions(common), std::cerr);
  if (!session.load(a.file, driver::Stage::Causality, a.mode))
    return 1;
  driver::FrontendResult &fe = session.frontend();
  std::string text = driver::dot(*fe.graph, *fe.causality, fe.ast->instances);
  if (a.svg)
    return renderSvg(text, a.output) ? 0 : 1;
  Output file;
  if (!a.output.empty() && a.output != "-") {
    if (!file.open(a.output))
      return 1;
    file.stream() << text;
    return file.finish() ? 0 : 1;
  }
  std::cout << text;
  return finishStdout(0);
}

} // namespace

Runner declareDot(CLI::App *cmd, Common &common) {
  cmd->footer(
      "Writes the bond graph in Graphviz's DOT language, drawn as engineers draw bond graphs: "
      "each element by its kind and name (`C:cap`, `1:loop`), each bond a half-arrow in the "
      "direction of positive power, with its causal stroke at the end whose element receives "
      "the effort. Switched junctions are boxed with the state they are in (OFF ones dashed, "
      "with their bonds); storage in derivative causality is red; each algebraic loop has a "
      "colour of its own; the bonds of a pseudo bond graph (thermal) are brown; component "
      "instances are clusters. A legend names the mode, the derivative storage and each loop's "
      "path (docs/cli.md).");
  auto a = std::make_shared<DotArgs>();
  addModelArguments(*cmd, a->file, common);
  addModeOption(*cmd, a->mode,
                "the mode to draw, as `hbgc explain --mode` takes it (default: the initial mode)");
  cmd->add_flag("--svg", a->svg, "render the drawing to SVG with Graphviz's `dot` program");
  addValue(
      *cmd, "-o,--output", [a](const std::string &o) { a->output = o; },
      "write to FILE (`-`: standard output, the default)", "FILE");
  return [a, &common] { return dot(*a, common); };
}

const Command kDot = {"dot", "draw the bond graph (Graphviz DOT or SVG)", declareDot};

} // namespace hbg::tools
