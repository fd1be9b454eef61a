// Compiles a model that imports the installed standard library, simulates
// it and checks it against its closed form: an RC circuit charging,
// v = V (1 - exp(-t / (R C))); once on tapes, once LLVM-compiled (the
// installed backend).
#include "hbg/hbg.h"

#include <cmath>
#include <cstdio>

int run(hbg::Tiering tiering) {
  try {
    hbg::CompilerOptions copts;
    copts.tiering = tiering;
    hbg::Model model = hbg::Compiler(copts).compileString(R"(
import electrical;
model RC {
    VoltageSource src(V = 5);
    Resistor r(R = 2);
    Capacitor c(C = 0.25);
    Ground gnd;
    0 a; 0 b; 0 z;
    bond src.p -> a; bond a -> r.p; bond r.n -> b; bond b -> c.p; bond c.n -> z;
    bond z -> src.n; bond z -> gnd.p;
    output v = c.v;
}
)",
                                                     "rc.hbg");
    hbg::SimulationOptions o;
    o.tEnd = 1;
    o.rtol = 1e-10;
    hbg::Result r = hbg::Simulation(model, o).run();
    if (!r.ok()) {
      std::fprintf(stderr, "consumer: %s\n", r.error.c_str());
      return 1;
    }
    double v = r.at("v").back(), exact = 5 * (1 - std::exp(-1 / 0.5));
    std::printf("consumer (%s): v(1) = %.12f, closed form %.12f\n",
                tiering == hbg::Tiering::Jit ? "jit" : "tape", v, exact);
    return std::fabs(v - exact) < 1e-8 ? 0 : 1;
  } catch (const std::exception &e) { // a compile error, or no LLVM backend
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}

int main() { return run(hbg::Tiering::Tape) || run(hbg::Tiering::Jit); }
