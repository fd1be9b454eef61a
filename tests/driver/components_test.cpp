//===- tests/driver/components_test.cpp - Components and instances --------===//
//
// Models built from components, against closed forms: an RC circuit of
// two-terminal components, the same with the components nested in a
// stage, and a rectifier whose ideal diode is a component with its own
// switched junction, compared with the flat example model and with the
// rectifier's closed form while it conducts.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

/// Two-terminal electrical components: a 1-junction carries the current,
/// the ports are its two sides.
const std::string kParts = R"(
component Resistor {
    parameter R = 1;
    port a = j, b = j;
    1 j;
    R r(R);
    bond j -> r;
    output i = r.f;
}
component Capacitor {
    parameter C = 1;
    parameter q0 = 0;
    port a = j, b = j;
    1 j;
    C c(C) { q0 = q0; }
    bond j -> c;
    signal v = c.e;
}
)";

hbg::Result run(const std::string &text, double tEnd, double dtOut,
                const std::map<std::string, double> &params = {}) {
  hbg::Model model = hbg::Compiler().compileString(text, "components.hbg");
  hbg::SimulationOptions o;
  o.tEnd = tEnd;
  o.dtOut = dtOut;
  o.rtol = 1e-10;
  hbg::Simulation sim(model, o);
  for (const auto &[name, value] : params)
    sim.setParameter(name, value);
  hbg::Result r = sim.run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

std::string compileError(const std::string &text) {
  try {
    hbg::Compiler().compileString(text, "components.hbg");
  } catch (const hbg::CompileError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("components: an RC circuit, parameters set per instance and by path") {
  // q = C V (1 - exp(-t / (R C))), i = V / R exp(-t / (R C)).
  std::string text = kParts + R"(
model Circuit {
    parameter V = 2;
    Se src(V);
    Se ground(0);
    0 n1; 0 n2; 0 gnd;
    Resistor r1(R = 0.5);
    Capacitor c1(C = 2 * V);
    bond src -> n1; bond n1 -> r1.a; bond r1.b -> n2;
    bond n2 -> c1.a; bond c1.b -> gnd; bond gnd -> ground;
    output q = c1.c.q, v = c1.v;
}
)";
  hbg::Model model = hbg::Compiler().compileString(text, "rc.hbg");
  CHECK(model.parameterNames() == std::vector<std::string>{"V", "r1.R", "c1.C", "c1.q0"});
  // The model's own outputs, then each instance's under its path.
  CHECK(model.outputNames() == std::vector<std::string>{"q", "v", "r1.i"});
  hbg::Result r = run(text, 4, 1);
  double tau = 0.5 * 4;
  for (std::size_t k = 0; k < r.at("time").size(); ++k) {
    double t = r.at("time")[k];
    CHECK(r.at("q")[k] == doctest::Approx(8 * (1 - std::exp(-t / tau))).epsilon(1e-8));
    CHECK(r.at("v")[k] == doctest::Approx(2 * (1 - std::exp(-t / tau))).epsilon(1e-8));
    CHECK(r.at("r1.i")[k] == doctest::Approx(4 * std::exp(-t / tau)).epsilon(1e-8));
  }
  // By instance path, as `hbgc run -p r1.R=1` does: tau = 1 * 4.
  hbg::Result p = run(text, 4, 1, {{"r1.R", 1.0}, {"c1.q0", 2.0}});
  // q = 8 + (2 - 8) exp(-t / 4).
  CHECK(p.at("q").back() == doctest::Approx(8 - 6 * std::exp(-1.0)).epsilon(1e-8));
}

TEST_CASE("components: nested instances, ports forwarded to inner ports") {
  // The same circuit with the resistor and capacitor inside one stage,
  // whose ports are those of its parts; the stage's parameters flow in.
  std::string text = kParts + R"(
component Stage {
    parameter R = 1;
    parameter C = 1;
    port in = r.a, out = c.b;
    0 mid;
    Resistor r(R = R);
    Capacitor c(C = C);
    bond r.b -> mid; bond mid -> c.a;
}
model Circuit {
    Se src(2);
    Se ground(0);
    Stage s(R = 0.5, C = 4);
    bond src -> s.in; bond s.out -> ground;
    output q = s.c.c.q;
}
)";
  hbg::Model model = hbg::Compiler().compileString(text, "nested.hbg");
  CHECK(model.parameterNames() ==
        std::vector<std::string>{"s.R", "s.C", "s.r.R", "s.c.C", "s.c.q0"});
  hbg::Result r = run(text, 4, 1);
  for (std::size_t k = 0; k < r.at("time").size(); ++k)
    CHECK(r.at("q")[k] ==
          doctest::Approx(8 * (1 - std::exp(-r.at("time")[k] / 2))).epsilon(1e-8));
  CHECK(r.at("s.r.i").front() == doctest::Approx(4).epsilon(1e-12));
}

TEST_CASE("components: an ideal diode with its own switched junction") {
  // examples/rectifier.hbg (built from stdlib) with a diode written here,
  // a component whose guards read
  // only its own junctions: the same switching and trajectory, and the
  // closed form v = V sin(w t) - Vd while it conducts.
  std::string text = R"(
component IdealDiode {
    parameter Vf = 0.6;
    port a = na, b = nb;
    0 na; 0 nb;
    Se drop(Vf);
    1 j switched {
        off blocking initial;  on conducting;
        blocking -> conducting when (na.e - nb.e > Vf)+;
        conducting -> blocking when (j.f < 0)+;
    }
    bond na -> j; bond j -> drop; bond j -> nb;
    output i = j.f;
}
model Rectifier {
    parameter V = 10.0;
    parameter w = 2 * pi * 50;
    MSe source(V * sin(w * time));
    IdealDiode d(Vf = 0.6);
    0 out;
    C cap(1e-4) { q0 = 0; }
    R load(100);
    bond source -> d.a; bond d.b -> out; bond out -> cap; bond out -> load;
    output v = cap.e;
}
)";
  hbg::Result c = run(text, 0.04, 1e-3);
  hbg::Model flat = hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/rectifier.hbg");
  hbg::SimulationOptions o;
  o.tEnd = 0.04;
  o.dtOut = 1e-3;
  o.rtol = 1e-10;
  hbg::Result f = hbg::Simulation(flat, o).run();
  REQUIRE(f.ok());
  REQUIRE(c.events.size() == f.events.size());
  for (std::size_t k = 0; k < c.events.size(); ++k)
    CHECK(c.events[k].time == doctest::Approx(f.events[k].time).epsilon(1e-9));
  CHECK(c.events[0].modes.back() == "d.j=conducting");
  REQUIRE(c.at("time").size() == f.at("time").size());
  double w = 2 * 3.141592653589793 * 50;
  int conducting = 0;
  for (std::size_t k = 0; k < c.at("time").size(); ++k) {
    CHECK(c.at("v")[k] == doctest::Approx(f.at("v")[k]).epsilon(1e-7));
    CHECK(c.at("d.i")[k] == doctest::Approx(f.at("i")[k]).epsilon(1e-7));
    double t = c.at("time")[k];
    if (c.at("d.i")[k] > 1e-3) { // conducting: the source fixes v
      ++conducting;
      CHECK(c.at("v")[k] == doctest::Approx(10 * std::sin(w * t) - 0.6).epsilon(1e-8));
    }
  }
  CHECK(conducting > 5);
}

TEST_CASE("components: errors name the instance and point into the component") {
  std::string err = compileError(kParts + R"(
model M {
    Se s(1);
    Resistor r1(R = 2, Q = 3);
    Resistr r2;
    bond s -> r1.c;
}
)");
  CHECK(err.find("error: `r1`, an instance of `Resistor`, has no port `c`; its ports are `a` and `b`") !=
        std::string::npos);
  CHECK(err.find("error: component `Resistor` has no parameter or signal `Q`") != std::string::npos);
  CHECK(err.find("error: unknown component `Resistr`; did you mean `Resistor`?") != std::string::npos);
  // An unknown name inside a component: at the component's line, with a
  // note at each instance around it.
  err = compileError(R"(
component Inner {
    port a = j;
    1 j;
    R r(Rx);
    bond j -> r;
}
component Outer {
    port a = in.a;
    Inner in;
}
model M {
    Se s(1);
    Outer o;
    bond s -> o.a;
}
)");
  CHECK(err.find("components.hbg:5:9: error: unknown name `Rx`") != std::string::npos);
  CHECK(err.find("components.hbg:10:11: note: in `o.in`, an instance of `Inner` declared here") !=
        std::string::npos);
  CHECK(err.find("components.hbg:14:11: note: in `o`, an instance of `Outer` declared here") !=
        std::string::npos);
  // A component that contains itself.
  err = compileError(R"(
component A { B b; }
component B { A a; }
model M { A x; C c(1); Sf s(0); bond s -> c; }
)");
  CHECK(err.find("error: component `A` contains itself: `A` -> `B` -> `A`") != std::string::npos);
}

TEST_CASE("components: laws and outputs read the state of the component's own state machine") {
  // A triangle wave: a current source charges C = 1 with +I in state
  // `up` and -I in `down`, turning at +-1. Both states are ON, so only
  // the state, not the ON/OFF mode, tells the two modes apart. From
  // v = 0: v = t up to t = 1, then 1 - (t - 1) down to -1 at t = 3, up
  // again to 1 at t = 5, and down.
  std::string text = R"(
component Wave {
    parameter I = 1;
    port out = node;
    MSf source(I * (activeState(sw.up) - activeState(sw.down)));
    1 sw switched {
        on up initial;  on down;
        up -> down when (node.e > 1)+;
        down -> up when (node.e < -1)+;
    }
    0 node;
    bond source -> sw; bond sw -> node;
    output state = stateIndex(sw), rising = activeState(sw.up);
}
model Triangle {
    Wave w;
    C c(1) { q0 = 0; }
    bond w.out -> c;
    output v = c.e;
}
)";
  hbg::Result r = run(text, 5.5, 0.25);
  REQUIRE(r.events.size() == 3);
  CHECK(r.events[0].time == doctest::Approx(1).epsilon(1e-9));
  CHECK(r.events[0].modes.front() == "w.sw=up");
  CHECK(r.events[0].modes.back() == "w.sw=down");
  CHECK(r.events[1].time == doctest::Approx(3).epsilon(1e-9));
  CHECK(r.events[2].time == doctest::Approx(5).epsilon(1e-9));
  CHECK(r.finalMode == "w.sw=down");
  const std::vector<double> &t = r.at("time"), &v = r.at("v");
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k + 1] == t[k])
      continue; // before an event
    bool up = t[k] < r.events[0].time || (t[k] >= r.events[1].time && t[k] < r.events[2].time);
    double exact = t[k] < 1 ? t[k] : t[k] < 3 ? 2 - t[k] : t[k] < 5 ? t[k] - 4 : 6 - t[k];
    CHECK(v[k] == doctest::Approx(exact).epsilon(1e-8).scale(1));
    CHECK(r.at("w.state")[k] == (up ? 1 : 2));
    CHECK(r.at("w.rising")[k] == (up ? 1 : 0));
  }

  // Compiling every mode up front counts both states as modes.
  hbg::CompilerOptions all;
  all.compileAllModes = true;
  hbg::Model model = hbg::Compiler(all).compileString(text, "components.hbg");
  CHECK(model.modesCompiled() == 2);
}

TEST_CASE("components: state reads are checked") {
  std::string parts = R"(
component Valve {
    port a = j;
    1 j switched {
        on open initial;  off shut;
        open -> shut when (time > 1)+;
    }
    Sf s(1);
    bond s -> j;
    output o = )";
  auto model = [&](const std::string &output) {
    return parts + output + ";\n}\nmodel M { Valve v; Se e(0); bond v.a -> e; }\n";
  };
  CHECK(compileError(model("activeState(j.shut)")).empty());
  CHECK(compileError(model("activeState(j.closed)")).find("switched junction `v.j` has no state `closed`") !=
        std::string::npos);
  CHECK(compileError(model("activeState(j)")).find("`activeState` takes a state of a switched junction") !=
        std::string::npos);
  CHECK(compileError(model("stateIndex(j.open)")).find("`stateIndex` takes the name of a switched junction") !=
        std::string::npos);
  CHECK(compileError(model("stateIndex(s)")).find("`v.s` is not a switched junction") != std::string::npos);
  CHECK(compileError(model("stateIndex(j, j)")).find("takes one argument, 2 given") != std::string::npos);
}
