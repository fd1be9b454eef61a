//===- tests/driver/conditionals_test.cpp - if blocks and connected() -----===//
//
// Declarations that exist only when a condition holds: a heating
// resistor whose heat port may be left unconnected (then an ambient
// temperature source holds it) or bonded to a heat capacitor, whose
// stored heat then rises by exactly the energy the resistor dissipates;
// a parameter in a condition is structural, set when compiling; ports
// forwarded through an enclosing component count as connected only when
// the outer port is.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include "RunDefaults.h"

#include <doctest/doctest.h>

#include <string>

namespace {

/// A resistor with a heat port (Modelica's useHeatPort): its dissipated
/// power flows into the port, or, unconnected, into a source at the
/// ambient temperature T.
const std::string kParts = R"(
component HeatingResistor {
    parameter R = 1;
    parameter T = 293.15;          // the temperature used when `heat` is not connected
    port p = j in, n = j out, heat = th;
    1 j;  R r(R);  bond j -> r;
    0 th;  MSf loss(r.e * r.f);  bond loss -> th;   // dissipated power into the heat port
    if not connected(heat) {
        Se ambient(T);  bond th -> ambient;
    }
    signal Tdev = th.e;
}
component HeatCapacitor {
    parameter Cth = 1;
    parameter T0 = 293.15;
    port a = node;
    0 node;
    C c(Cth) { q0 = Cth * T0; }
    bond node -> c;
    signal T = c.e;
}
)";

std::string compileError(const std::string &text) {
  try {
    hbg::Compiler().compileString(text, "conditionals.hbg");
  } catch (const hbg::CompileError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("conditionals: a heat port left unconnected sits at the ambient temperature") {
  hbg::Model model = hbg::Compiler().compileString(kParts + R"(
model Unconnected {
    parameter V = 2;
    Se src(V);  Se gnd(0);
    HeatingResistor h(R = 4, T = 300);
    bond src -> h.p;  bond h.n -> gnd;
    output T = h.Tdev, P = h.loss.f;
}
)",
                                                   "unconnected.hbg");
  // No state: the heat goes to the ambient source.
  CHECK(model.stateNames().empty());
  hbg::Result r = runAtDefaults(model, 1, 0.25);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    CHECK(r.at("T")[k] == 300);
    CHECK(r.at("P")[k] == doctest::Approx(1)); // V^2 / R
  }
}

TEST_CASE("conditionals: a connected heat port warms a heat capacitor by the energy dissipated") {
  // C dT/dt = V^2 / R: T(t) = T0 + V^2 t / (R C), and the capacitor's
  // heat q = C T rises by V^2 t / R, the resistor's dissipated energy.
  const double V = 3, R = 2, C = 10, T0 = 280;
  hbg::Model model = hbg::Compiler().compileString(kParts + R"(
model Heated {
    parameter V = 3;
    Se src(V);  Se gnd(0);
    HeatingResistor h(R = 2);
    HeatCapacitor cap(Cth = 10, T0 = 280);
    bond src -> h.p;  bond h.n -> gnd;
    bond h.heat -> cap.a;
    signal dissipated = integral(h.r.e * h.r.f);
    output T = cap.T, Tdev = h.Tdev, q = cap.c.q, E = dissipated;
}
)",
                                                   "heated.hbg");
  hbg::Result r = runAtDefaults(model, 5, 0.5);
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("T")[k] == doctest::Approx(T0 + V * V * t / (R * C)).epsilon(1e-9));
    CHECK(r.at("Tdev")[k] == doctest::Approx(r.at("T")[k]).epsilon(1e-12));
    CHECK(r.at("q")[k] - C * T0 == doctest::Approx(r.at("E")[k]).epsilon(1e-9));
    CHECK(r.at("E")[k] == doctest::Approx(V * V * t / R).epsilon(1e-9));
  }
}

TEST_CASE("conditionals: a port forwarded by an enclosing component") {
  // Stage forwards its own port `heat` to its resistor's; the resistor's
  // is connected exactly when Stage's is.
  std::string stage = kParts + R"(
component Stage {
    port p = h.p, n = h.n, heat = h.heat;
    HeatingResistor h(R = 2, T = 310);
    signal Tdev = h.Tdev;
}
)";
  hbg::Model open = hbg::Compiler().compileString(stage + R"(
model Open {
    Se src(2);  Se gnd(0);
    Stage s;
    bond src -> s.p;  bond s.n -> gnd;
    output T = s.Tdev;
}
)",
                                                  "open.hbg");
  CHECK(open.stateNames().empty());
  CHECK(runAtDefaults(open, 1, 0.5).at("T").back() == 310);

  // Bonded from the model, through Stage's port or straight to the
  // nested one.
  for (const char *bond : {"bond s.heat -> cap.a;", "bond s.h.heat -> cap.a;"}) {
    INFO(bond);
    hbg::Model closed = hbg::Compiler().compileString(stage + R"(
model Closed {
    Se src(2);  Se gnd(0);
    Stage s;
    HeatCapacitor cap(Cth = 4, T0 = 300);
    bond src -> s.p;  bond s.n -> gnd;
    output T = s.Tdev;
)" + bond + "\n}\n",
                                                      "closed.hbg");
    CHECK(closed.stateNames().size() == 1);
    // 2 W into 4 J/K for 1 s.
    CHECK(runAtDefaults(closed, 1, 0.5).at("T").back() == doctest::Approx(300.5).epsilon(1e-9));
  }
}

TEST_CASE("conditionals: a parameter in a condition is structural") {
  const std::string text = R"(
model Load {
    parameter heavy = 0;
    Se src(1);
    0 n;
    bond src -> n;
    if heavy > 0.5 {
        R load(0.5);
    } else if heavy < -0.5 {
        R load(4);
    } else {
        R load(2);
    }
    bond n -> load;
    output i = load.f;
}
)";
  hbg::Model light = hbg::Compiler().compileString(text, "load.hbg");
  double built = -1;
  CHECK(light.structural("heavy", &built));
  CHECK(built == 0);
  CHECK(runAtDefaults(light, 1, 0.5).at("i").back() == doctest::Approx(0.5));

  hbg::CompilerOptions opts;
  opts.parameters["heavy"] = 1;
  hbg::Model heavy = hbg::Compiler(opts).compileString(text, "load.hbg");
  CHECK(runAtDefaults(heavy, 1, 0.5).at("i").back() == doctest::Approx(2));
  opts.parameters["heavy"] = -1;
  CHECK(runAtDefaults(hbg::Compiler(opts).compileString(text, "load.hbg"), 1, 0.5).at("i").back() ==
        doctest::Approx(0.25));

  // A run cannot change it.
  hbg::Simulation sim(light, {});
  CHECK_THROWS_AS(sim.setParameter("heavy", 1), std::invalid_argument);
}

TEST_CASE("conditionals: inside loops, and errors") {
  // Every other branch gets a resistor: 1 + 3 + 5 in parallel on 1 V.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Comb {
    parameter N = 6;
    Se src(1);
    0 n;
    bond src -> n;
    for i in 1:N {
        if mod(i, 2) > 0.5 {
            R r[i](1 / i);
            bond n -> r[i];
        }
    }
    output i = src.f;
}
)",
                                                   "comb.hbg");
  CHECK(runAtDefaults(model, 1, 0.5).at("i").back() == doctest::Approx(9));

  CHECK(compileError("model M { Se s(1); if connected(p) { R r(1); bond s -> r; } }")
            .find("a model has no ports") != std::string::npos);
  CHECK(compileError("model M { if time > 1 { Se s(1); R r(1); bond s -> r; } }")
            .find("`time` is the simulation time") != std::string::npos);
}
