//===- compiler/tooling/Explain.cpp - hbgc explain's text -----------------===//

#include "hbg/tooling/Explain.h"
#include "hbg/driver/Pipeline.h"

#include <sstream>

namespace hbg::driver {

std::string explain(const bg::BondGraph &g, const causality::CausalAssignment &ca,
                    const eq::EquationSystem &sys) {
  std::ostringstream os;
  os << "model " << g.modelName << "\n";
  if (bg::hasSwitched(g))
    os << "mode: " << bg::modeText(g, ca.mode) << "\n";
  os << "\n" << ca.dump(g) << "\n" << sys.dump();
  if (!sys.guards.empty()) {
    // Each comparison's two sides as this mode computes them: what its
    // transitions are judged on here (+ marks in a mythical mode, both
    // marks in a real one).
    os << "guards\n";
    std::size_t k = 0; // comparisons are numbered in guardComparisons order
    for (const bg::Element &e : g.elements) {
      if (!e.fsm)
        continue;
      for (const bg::FsmTransition &t : e.fsm->transitions) {
        os << "  " << e.name << ": " << e.fsm->states[t.from].name << " -> "
           << e.fsm->states[t.to].name << "\n";
        for (const bg::Guard *c : eq::guardComparisons(t.guard)) {
          os << "    (" << sys.ctx->print(sys.guards[2 * k]) << " " << compareOpText(c->op) << " "
             << sys.ctx->print(sys.guards[2 * k + 1]) << ")" << c->mark << "\n";
          ++k;
        }
      }
    }
  }
  return os.str();
}

} // namespace hbg::driver
