//===- tests/driver/tolerance_test.cpp - Tolerances in physical units -----===//
//
// With default options, rtol alone sets the accuracy whatever the units:
// each state's absolute tolerance scales with its nominal magnitude. Checked
// against closed forms and matrix exponentials, never against hbg itself.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

hbg::Result run(const std::string &text, double tEnd, double dtOut) {
  hbg::Model model = hbg::Compiler().compileString(text, "test.hbg");
  hbg::SimulationOptions opts; // defaults but for the span and the grid
  opts.tEnd = tEnd;
  opts.dtOut = dtOut;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

/// A series RLC driven by a 1 V step, as text, and the worst error of its
/// capacitor voltage against the closed form, relative to the 1 V step.
double rlcError(double L, double C, double R) {
  std::ostringstream os;
  os.precision(17);
  os << "model RLC {\n  parameter L = " << L << "; parameter C = " << C
     << "; parameter R = " << R << ";\n"
     << "  Se v(1); R r(R); I coil(L) { p0 = 0; } C cap(C) { q0 = 0; } 1 loop;\n"
     << "  bond v -> loop; bond loop -> r; bond loop -> coil; bond loop -> cap;\n"
     << "  output vc = cap.e;\n}\n";
  double w0 = 1 / std::sqrt(L * C), zeta = R / 2 * std::sqrt(C / L);
  double wd = w0 * std::sqrt(1 - zeta * zeta), tEnd = 20 / w0;
  hbg::Result r = run(os.str(), tEnd, tEnd / 200);
  const std::vector<double> &t = r.at("time"), &v = r.at("vc");
  double worst = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    double s = t[k];
    double exact = 1 - std::exp(-zeta * w0 * s) *
                           (std::cos(wd * s) + zeta * w0 / wd * std::sin(wd * s));
    worst = std::max(worst, std::abs(v[k] - exact));
  }
  return worst;
}

} // namespace

TEST_CASE("an RLC at pF and uH has the relative error it has at F and H") {
  // zeta = 0.5 at both scales: R = sqrt(L / C).
  double big = rlcError(1, 1, 1), small = rlcError(1e-6, 1e-12, 1e3);
  CAPTURE(big);
  CAPTURE(small);
  CHECK(big < 1e-5);
  CHECK(small < 1e-5);
  CHECK(small < 2 * big);
  CHECK(big < 2 * small);
}
