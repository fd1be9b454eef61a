// The README's embedding example: a controller closing the loop around a
// model through the step API, from a project that uses an installed hbg.
// A proportional controller holds the capacitor of an RC circuit at 2 V:
// with gain k and tau = R C, v settles at k r / (1 + k).
#include "hbg/hbg.h"

#include <cmath>
#include <cstdio>

int main() {
  // README: begin
  hbg::Model model = hbg::Compiler().compileString(R"(
model DrivenRC {
    input u;                          // set by the controller between steps
    MSe drive(u);  R r(1);  C c(0.5);  1 loop;
    bond drive -> loop;  bond loop -> r;  bond loop -> c;
    output v = c.e;
})");
  hbg::Simulation sim(model);
  sim.start();
  const double k = 4, target = 2;
  for (int n = 1; n <= 500; ++n) {
    sim.setInput("u", k * (target - sim.output("v")));  // held over the step
    sim.advance(0.01 * n);                             // events handled inside
  }
  std::printf("v(5) = %.6f\n", sim.output("v"));      // k target / (1 + k) = 1.6
  // README: end
  return std::fabs(sim.output("v") - k * target / (1 + k)) < 1e-3 ? 0 : 1;
}
