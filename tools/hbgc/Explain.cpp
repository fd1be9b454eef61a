//===- tools/hbgc/Explain.cpp - hbgc explain ------------------------------===//

#include "Command.h"

#include "hbg/tooling/Explain.h"

#include <iostream>

namespace hbg::tools {

Runner declareExplain(CLI::App *cmd, Common &common) {
  cmd->footer("Prints the causality of every bond, the causality of every storage element, the "
              "state equations, every bond's effort and flow, and the outputs.\n\n"
              "A model with switched junctions is explained in one mode, printed in the header "
              "(`mode: contact=off`): by default the initial mode, each junction in its initial "
              "state.");
  struct Args {
    std::string file, mode;
  };
  auto a = std::make_shared<Args>();
  addModelArguments(*cmd, a->file, common);
  addModeOption(*cmd, a->mode,
                "the mode to explain: each named switched junction ON or OFF (e.g. `--mode "
                "contact=on,valve=off`), or in one of its states (`--mode valve1=open`); "
                "junctions not named stay in their initial state");
  return [a, &common] {
    if (a->file.empty())
      throw UsageError{"no input file"};
    driver::Session session(sessionOptions(common), std::cerr);
    if (!session.load(a->file, driver::Stage::Run, a->mode))
      return 1;
    driver::FrontendResult &fe = session.frontend();
    std::cout << driver::explain(*fe.graph, *fe.causality, *fe.equations);
    return finishStdout(0);
  };
}

const Command kExplain = {"explain",
                          "print each bond's causality and the model's equations", declareExplain};

} // namespace hbg::tools
