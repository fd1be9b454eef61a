//===- tools/hbgc/Check.cpp - hbgc check ----------------------------------===//

#include "Command.h"

#include <iostream>

namespace hbg::tools {

Runner declareCheck(CLI::App *cmd, Common &common) {
  cmd->footer("Parses and checks FILE (names, bonds, state machines of switched junctions, "
              "causality and equations in the initial mode) and prints every error as "
              "file:line:col with the source line. Exit status 0 when the model is valid.");
  auto file = std::make_shared<std::string>();
  addModelArguments(*cmd, *file, common);
  return [file, &common] {
    if (file->empty())
      throw UsageError{"no input file"};
    driver::Session session(sessionOptions(common), std::cerr);
    return session.load(*file) ? 0 : 1;
  };
}

const Command kCheck = {"check", "check a model and report every error", declareCheck};

} // namespace hbg::tools
