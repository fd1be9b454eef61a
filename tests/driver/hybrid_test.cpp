// Switched models through the API: lazy mode compilation, event location,
// mode iteration errors (cycles, Zeno behaviour, modes that cannot be
// analysed), remapping options and the event log.

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace {

hbg::Result run(const std::string &text, double tEnd,
                hbg::SimulationOptions opts = hbg::SimulationOptions{}) {
  hbg::Model model = hbg::Compiler().compileString(text, "test.hbg");
  opts.tEnd = tEnd;
  return hbg::Simulation(model, opts).run();
}

/// The equal-mass nonelastic collision at t = 0.2.
const char *const kCollision = R"(model C {
    I bullet(1) { p0 = 1; } I wood(1) { p0 = 0; }
    1 v1; 1 v2;
    0 contact switched { off initial; on; off -> on when (x2 - x1 <= 0)+; }
    bond v1 -> bullet; bond v2 -> wood; bond v1 -> contact; bond contact -> v2;
    signal x1 = -0.2 + integral(v1.f);
    signal x2 = integral(v2.f);
    output bullet.f, wood.f;
  })";

/// `n` independent cells: a unit source charging a unit RC through a
/// switch that closes at time 0.1 (k + 1).
std::string switchBank(int n) {
  std::ostringstream os;
  os << "model Bank {\n";
  for (int k = 0; k < n; ++k) {
    os << "  Se s" << k << "(1); R r" << k << "(1); C c" << k << "(1) { q0 = 0; }\n"
       << "  1 sw" << k << " switched { off open initial; on closed;\n"
       << "    open -> closed when (time >= " << 0.1 * (k + 1) << ")+; }\n"
       << "  bond s" << k << " -> sw" << k << "; bond sw" << k << " -> r" << k << "; bond sw" << k
       << " -> c" << k << ";\n";
  }
  os << "  output ";
  for (int k = 0; k < n; ++k)
    os << (k ? ", " : "") << "c" << k << ".q";
  os << ";\n}\n";
  return os.str();
}

} // namespace

TEST_CASE("40 switched junctions: only the visited modes are compiled") {
  hbg::Model model = hbg::Compiler().compileString(switchBank(40), "bank.hbg");
  CHECK(model.switched());
  CHECK(model.modesCompiled() == 1);
  hbg::SimulationOptions opts;
  opts.tEnd = 5;
  opts.rtol = 1e-10;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.events.size() == 40);
  CHECK(model.modesCompiled() == 41);
  CHECK(r.modesCompiled == 40);
  CHECK(r.compileSeconds > 0);
  for (int k = 0; k < 40; ++k) {
    double tk = 0.1 * (k + 1);
    CHECK(r.events[k].time == doctest::Approx(tk).epsilon(1e-12));
    double q = r.at("c" + std::to_string(k) + ".q").back();
    CHECK(q == doctest::Approx(1 - std::exp(-(5 - tk))).epsilon(1e-8));
  }
  // A second run reuses the compiled modes.
  hbg::Result again = hbg::Simulation(model, opts).run();
  CHECK(again.modesCompiled == 0);
}

TEST_CASE("compileAllModes compiles every mode up front; compileMode one") {
  hbg::CompilerOptions copts;
  copts.compileAllModes = true;
  hbg::Model all = hbg::Compiler(copts).compileString(switchBank(3), "bank.hbg");
  CHECK(all.modesCompiled() == 8);
  hbg::Model lazy = hbg::Compiler().compileString(switchBank(3), "bank.hbg");
  lazy.compileMode("sw1=on");
  CHECK(lazy.modesCompiled() == 2);
  CHECK_THROWS_WITH_AS(lazy.compileMode("sw9=on"), doctest::Contains("sw9"), hbg::CompileError);
}

TEST_CASE("a cycle of modes stops the run naming the junction, the modes and the time") {
  hbg::Result r = run(R"(model Flip {
    Se s(1); R r(1); C c(1) { q0 = 0; }
    1 j switched { off initial; on;
      off -> on when (time >= 0.5)+;
      on -> off when (time >= 0.5)+; }
    bond s -> j; bond j -> r; bond j -> c;
    output c.q;
  })", 1);
  CHECK_FALSE(r.ok());
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunModesDoNotSettle);
  CHECK(r.failure->time == 0.5);
  CHECK(r.failure->mode == "j=off");
  CHECK(r.error == "model `Flip` at t = 0.5 in mode `j=off`: the modes do not settle: junction `j` "
                   "switches in a cycle through `j=off` -> `j=on` -> `j=off`");
  // The trajectory up to the event is kept.
  REQUIRE(!r.at("time").empty());
  CHECK(r.at("time").back() == doctest::Approx(0.5));
}

TEST_CASE("Zeno behaviour is reported, never a hang") {
  // A bouncing ball with no resting mode.
  hbg::SimulationOptions opts;
  opts.rtol = 1e-10;
  hbg::Result r = run(R"(model Zeno {
    parameter e = 0.5;
    Se gravity(-9.81); I ball(1) { p0 = 0; }
    MSf rebound(-e * pre(ball.f));
    1 body;
    0 floor switched { off flying initial; on impact;
      flying -> impact when (h <= 0)+ and (ball.f < 0)-;
      impact -> flying when (ball.f > 0)-; }
    bond gravity -> body; bond body -> ball; bond floor -> body; bond rebound -> floor;
    signal h = 1 + integral(ball.f);
    output h;
  })", 10, opts);
  CHECK_FALSE(r.ok());
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunZeno);
  CHECK(r.failure->time == r.events.back().time);
  CHECK(r.error.find("events of `floor` accumulate") != std::string::npos);
  // Rest would be at t1 (1 + e) / (1 - e) = 3 t1.
  double t1 = std::sqrt(2 / 9.81);
  CHECK(r.events.back().time == doctest::Approx(3 * t1).epsilon(1e-6));
}

TEST_CASE("diode-OR: a short circuit between two sources is passed through on its impulse") {
  // Two ideal diodes, each reading only its own voltage and current, feed
  // a load from a 1 V source and from a ramp 2t. When the ramp passes 1 V
  // at t = 0.5, its diode's guard fires; the mode with both conducting
  // puts the sources in parallel, and the short circuit's impulse, from
  // the ramp into the 1 V source, reverses the first diode, which blocks.
  // Closed form: v = max(1, 2t), carried by one diode at a time. The
  // strict guard fires once the ramp is above by more than the comparison
  // tolerance (1e-11 of the terms that form it), hence 1e-9.
  hbg::SimulationOptions opts;
  opts.dtOut = 0.01;
  hbg::Result r = run(R"(model Or {
    parameter R = 2;
    Se a(1);
    MSe b(2 * time);
    0 node; R load(R);
    1 da switched { off blocking; on conducting initial;
        blocking -> conducting when (ina.e - node.e > 0)+;
        conducting -> blocking when (da.f < 0)+; }
    1 db switched { off blocking initial; on conducting;
        blocking -> conducting when (inb.e - node.e > 0)+;
        conducting -> blocking when (db.f < 0)+; }
    bond ina: a -> da; bond da -> node;
    bond inb: b -> db; bond db -> node;
    bond node -> load;
    output v = node.e, ia = da.f, ib = db.f;
  })", 1, opts);
  REQUIRE(r.ok());
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  CHECK(ev.time == doctest::Approx(0.5).epsilon(1e-9));
  REQUIRE(ev.modes.size() == 3);
  CHECK(ev.modes[1] == "da=conducting, db=conducting");
  CHECK_FALSE(ev.real[1]);
  CHECK(ev.modes[2] == "da=blocking, db=conducting");
  const std::vector<double> &t = r.at("time");
  for (std::size_t k = 0; k < t.size(); ++k) {
    // At the event, two rows: before it, then after.
    bool before = k + 1 < t.size() && t[k + 1] == t[k];
    bool after = !before && t[k] > 0.5;
    CHECK(r.at("v")[k] == doctest::Approx(std::max(1.0, 2 * t[k])).epsilon(1e-9));
    CHECK(r.at("ia")[k] == doctest::Approx(after ? 0.0 : 0.5).epsilon(1e-9));
    CHECK(r.at("ib")[k] == doctest::Approx(after ? t[k] : 0.0).epsilon(1e-9));
  }
}

TEST_CASE("a contact scene translated in space gives identical velocities after impact") {
  // Three balls of radius r touching at rest, hit by a fourth; each
  // contact is a switched 0-junction with a restitution source. The gaps
  // between the touching balls are zero in exact arithmetic and round to
  // +-3e-17 depending on where the scene sits; comparisons are judged
  // against the size of the terms that form each gap, so every position
  // gives the same impact.
  auto scene = [](double x0) {
    std::ostringstream os;
    os.precision(17);
    os << "model Cradle {\n  parameter r = 0.05;\n  parameter e = 1.0;\n"
       << "  I b1(1) { p0 = 0; } I b2(1) { p0 = 0; } I b3(1) { p0 = 0; } I b4(1) { p0 = -1; }\n"
       << "  1 v1; 1 v2; 1 v3; 1 v4;\n"
       << "  bond v1 -> b1; bond v2 -> b2; bond v3 -> b3; bond v4 -> b4;\n";
    for (int j = 1; j < 4; ++j) {
      int k = j + 1;
      os << "  MSf rest" << j << "(e * pre(v" << j << ".f - v" << k << ".f));\n"
         << "  0 c" << j << " switched { off initial; on;\n"
         << "    off -> on when (x" << k << " - x" << j << " - 2 * r <= 0)+ and (v" << j
         << ".f - v" << k << ".f > 0)+;\n"
         << "    on -> off when (v" << k << ".f - v" << j << ".f > 0)-; }\n"
         << "  bond v" << j << " -> c" << j << "; bond c" << j << " -> v" << k << "; bond rest"
         << j << " -> c" << j << ";\n";
    }
    const double at[] = {0, 0.1, 0.2, 0.5};
    for (int i = 0; i < 4; ++i)
      os << "  signal x" << i + 1 << " = " << x0 << " + " << at[i] << " + integral(v" << i + 1
         << ".f);\n";
    os << "  output u1 = b1.f, u2 = b2.f, u3 = b3.f, u4 = b4.f;\n}\n";
    return os.str();
  };
  std::vector<double> reference;
  for (double x0 : {0.0, 0.2, 1.0}) {
    CAPTURE(x0);
    hbg::Result r = run(scene(x0), 0.5);
    REQUIRE(r.ok());
    std::vector<double> after;
    double momentum = 0;
    for (const char *u : {"u1", "u2", "u3", "u4"}) {
      after.push_back(r.at(u).back());
      momentum += r.at(u).back();
    }
    CHECK(momentum == doctest::Approx(-1).epsilon(1e-14));
    if (reference.empty())
      reference = after;
    CHECK(after == reference);
    // Restitution 1 per contact, but the touching balls meet at zero
    // relative velocity, so the simultaneous impact is plastic among them:
    // 0.5 J -> 3 (1/3)^2 / 2 = 1/6 J. The energy audit says so.
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].kind == hbg::DiagKind::RunEnergyVanished);
    CHECK(r.warnings[0].message.find("removed 0.333 J of the 0.5 J stored (b4 0.5 J -> 0 J)") !=
          std::string::npos);
  }
}

TEST_CASE("sources short-circuited in a mode no guard leaves: an error naming it and the time") {
  hbg::Result r = run(R"(model Short {
    Se a(1); Se b(2); 0 node; R load(1);
    1 j switched { off initial; on; off -> on when (time >= 0.5)+; }
    bond a -> node; bond node -> load; bond b -> j; bond j -> node;
    output load.f;
  })", 1);
  CHECK_FALSE(r.ok());
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunModeShortCircuit);
  CHECK(r.failure->time == 0.5);
  CHECK(r.failure->mode == "j=off");
  CHECK(r.error.find("at t = 0.5 in mode `j=off`: entering mode `j=on`, in which") !=
        std::string::npos);
  CHECK(r.error.find("test.hbg:") != std::string::npos);
  CHECK(r.at("time").back() == doctest::Approx(0.5));
}

TEST_CASE("an iterative remap that cannot converge is an error") {
  hbg::SimulationOptions opts;
  opts.remap = hbg::SimulationOptions::Remap::Iterative;
  opts.remapFactor = 1; // oscillates between 0 and 1 for equal masses
  hbg::Result r = run(kCollision, 1, opts);
  CHECK_FALSE(r.ok());
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunRemapIterative);
  CHECK(r.error.find("did not converge in 1000000 iterations") != std::string::npos);
  opts.remapFactor = 0.5; // lands exactly in one step
  hbg::Result exact = run(kCollision, 1, opts);
  REQUIRE_MESSAGE(exact.ok(), exact.error);
  CHECK(exact.at("bullet.f").back() == 0.5);
}

TEST_CASE("the event log as CSV") {
  hbg::Result r = run(R"(model Flip {
    Se s(1); R r(1); C c(1) { q0 = 0; }
    1 j switched { off initial; on; off -> on when (time >= 0.25)+; }
    bond s -> j; bond j -> r; bond j -> c;
    output c.q, i = r.f;
  })", 1);
  REQUIRE_MESSAGE(r.ok(), r.error);
  std::ostringstream os;
  r.writeEventsCsv(os);
  std::string csv = os.str();
  // The states, then the outputs that are not states, before and after.
  CHECK(csv.rfind("event,time,phase,mode,transitions,energy,removed,c.q,i\n", 0) == 0);
  CHECK(csv.find("0,0.25,before,\"j=off\",\"j: off -> on when (time >= 0.25)+\",0,,0,0\n") !=
        std::string::npos);
  CHECK(csv.find("0,0.25,after,\"j=on\",\"\",0,0,0,1\n") != std::string::npos);
  // The rows at the event: before and after.
  const std::vector<double> &t = r.at("time");
  CHECK(std::count(t.begin(), t.end(), 0.25) == 2);
}

TEST_CASE("pre() in a model without switched junctions holds the initial value") {
  hbg::Result r = run(R"(model Hold {
    parameter k = 2;
    I m(1) { p0 = 3; }
    MSe push(k * pre(m.f));
    1 v;
    bond push -> v; bond v -> m;
    output m.p;
  })", 1);
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(r.at("m.p").back() == doctest::Approx(3 + 6.0).epsilon(1e-9));
}

TEST_CASE("fixed-step methods locate events on their Hermite dense output") {
  for (hbg::runtime::Method m : {hbg::runtime::Method::Euler, hbg::runtime::Method::RK4}) {
    hbg::SimulationOptions opts;
    opts.method = m;
    opts.step = 0.003; // the impact falls inside a step
    hbg::Result r = run(kCollision, 1, opts);
    REQUIRE_MESSAGE(r.ok(), r.error);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].time == doctest::Approx(0.2).epsilon(1e-12));
    CHECK(r.at("bullet.f").back() == doctest::Approx(0.5).epsilon(1e-14));
    CHECK(r.at("wood.f").back() == doctest::Approx(0.5).epsilon(1e-14));
  }
}

TEST_CASE("guards: equality, not and or") {
  // `=` fires where its two sides cross; `not`/`or` combine comparisons.
  hbg::Result r = run(R"(model G {
    Se s(1); R r(1); C c(1) { q0 = 0; }
    1 j switched { off initial; on; on second;
      off -> on when (time = 0.3)+;
      on -> second when not (time < 0.6)+ or (c.q > 10)+; }
    bond s -> j; bond j -> r; bond j -> c;
    output c.q;
  })", 1);
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time == doctest::Approx(0.3).epsilon(1e-12));
  CHECK(r.events[0].modes.back() == "j=on");
  // `not (time < 0.6)` holds from 0.6 less the comparison's tolerance.
  CHECK(r.events[1].time == doctest::Approx(0.6).epsilon(1e-10));
  CHECK(r.events[1].modes.back() == "j=second");
  // Both ON states have the same equations: one mode compiled for them.
  CHECK(r.modesCompiled == 1);
  CHECK(r.at("c.q").back() == doctest::Approx(1 - std::exp(-0.7)).epsilon(1e-6));
}

TEST_CASE("switched examples with random parameters end cleanly") {
  // Every run either succeeds with events in time order and finite
  // outputs, or fails with a message; none crashes or hangs.
  struct Case {
    const char *file;
    std::vector<std::pair<const char *, std::pair<double, double>>> ranges;
    double tEnd;
  } cases[] = {
      {"collision_inelastic.hbg", {{"m1", {0.1, 10}}, {"m2", {0.1, 10}}}, 1},
      {"collision_elastic.hbg", {{"m1", {0.1, 10}}, {"m2", {0.1, 10}}, {"e", {0, 1}}}, 1},
      {"bouncing_ball.hbg", {{"e", {0.1, 0.95}}, {"h0", {0.01, 5}}}, 3},
      {"tank_valves.hbg", {{"P1", {0.5, 3}}, {"P2", {0.1, 3}}, {"R2", {0.1, 10}}}, 10},
      {"rectifier.hbg", {{"R", {10, 1000}}, {"C", {1e-5, 1e-3}}}, 0.05},
      {"buck.hbg", {{"D", {0.05, 0.95}}, {"R", {1, 100}}}, 0.002},
  };
  std::uint64_t seed = 12345;
  auto uniform = [&](double lo, double hi) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<double>(seed >> 11) / 9007199254740992.0;
  };
  for (const Case &c : cases) {
    hbg::Model model =
        hbg::Compiler().compileFile(std::string(HBG_SOURCE_DIR) + "/examples/" + c.file);
    for (int k = 0; k < 8; ++k) {
      hbg::SimulationOptions opts;
      opts.tEnd = c.tEnd;
      hbg::Simulation sim(model, opts);
      std::string params;
      for (const auto &[name, range] : c.ranges) {
        double v = uniform(range.first, range.second);
        sim.setParameter(name, v);
        params += std::string(name) + "=" + std::to_string(v) + " ";
      }
      hbg::Result r = sim.run();
      INFO(std::string(c.file) << " " << params << r.error);
      if (!r.ok()) {
        CHECK(r.error.find("model `") == 0);
        continue;
      }
      for (std::size_t i = 1; i < r.events.size(); ++i)
        CHECK(r.events[i].time >= r.events[i - 1].time);
      for (const auto &column : r.columns)
        for (double v : column)
          CHECK(std::isfinite(v));
    }
  }
}

TEST_CASE("an event at the start time has its row before the event") {
  hbg::Result r = run(R"(model S {
    Se s(1); R r(1); C c(1) { q0 = 0.5; }
    1 j switched { off initial; on; off -> on when (time >= 0)+; }
    bond s -> j; bond j -> r; bond j -> c;
    output c.e, j.f;
  })", 1);
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].time == 0);
  const std::vector<double> &t = r.at("time"), &f = r.at("j.f");
  REQUIRE(t.size() >= 3);
  // Before: the junction is open, no current; after: 1 - 0.5 through 1 ohm.
  CHECK(t[0] == 0);
  CHECK(t[1] == 0);
  CHECK(f[0] == 0);
  CHECK(f[1] == doctest::Approx(0.5).epsilon(1e-12));
}

TEST_CASE("maxStep bounds every step") {
  hbg::SimulationOptions opts;
  opts.maxStep = 0.01;
  hbg::Result r = run(kCollision, 1, opts);
  REQUIRE_MESSAGE(r.ok(), r.error);
  // Two modes, each integrated in steps of at most 0.01.
  CHECK(r.steps >= 100);
  opts.maxStep = 0;
  r = run(kCollision, 1, opts);
  CHECK(r.error == "model `C`: step sizes must be positive");
}

namespace {
/// An inductive load switched by an ideal switch with no freewheeling path,
/// `dissipative` or not.
std::string interruptedInductor(bool dissipative) {
  return std::string(R"(model Interrupted {
    Se supply(10); R load(2); I coil(1e-3) { p0 = 0; }
    1 switch switched )") +
         (dissipative ? "dissipative " : "") + R"({
      on closed initial; off open;
      closed -> open when (sin(2 * 3.141592653589793 * 1000 * time) < 0)+;
      open -> closed when (sin(2 * 3.141592653589793 * 1000 * time) >= 0)+;
    }
    bond supply -> switch; bond switch -> load; bond switch -> coil;
    output i = coil.f;
  })";
}
} // namespace

TEST_CASE("the energy audit warns when an event makes stored energy vanish") {
  hbg::Result r = run(interruptedInductor(false), 0.0032);
  REQUIRE_MESSAGE(r.ok(), r.error);
  // Openings at 0.5, 1.5 and 2.5 ms, each removing the coil's p^2 / 2L.
  REQUIRE(r.events.size() == 6);
  std::size_t p = std::find(r.stateNames.begin(), r.stateNames.end(), "coil.p") -
                  r.stateNames.begin();
  for (std::size_t k = 0; k < 6; k += 2) {
    const hbg::Event &ev = r.events[k];
    double energy = ev.before[p] * ev.before[p] / (2 * 1e-3);
    CHECK(energy > 0.004);
    CHECK(ev.storedBefore == doctest::Approx(energy).epsilon(1e-14));
    CHECK(ev.storedAfter == 0);
    CHECK(ev.removed == doctest::Approx(energy).epsilon(1e-14));
    // Closing again removes nothing.
    CHECK(r.events[k + 1].removed == 0);
  }
  // One warning for the three openings, naming the coil, the mode, the
  // junction and the first time.
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].kind == hbg::DiagKind::RunEnergyVanishedAgain);
  CHECK(r.warnings[0].element == "coil");
  CHECK(r.warnings[0].time == doctest::Approx(0.0005).epsilon(1e-9));
  CHECK(r.warnings[0].mode == "switch=closed");
  const std::string w = r.warnings[0].text("InterruptedInductor");
  CHECK(w.find("model `InterruptedInductor` at t = " + hbg::timeText(r.warnings[0].time) +
               " in mode `switch=closed`: the event into mode `switch=open`") == 0);
  CHECK(w.find("(coil 0.00499 J -> 0 J)") != std::string::npos);
  CHECK(w.find("switching (switch)") != std::string::npos);
  CHECK(w.find("(2 more events alike, the last at t = 0.0025") != std::string::npos);

  // Declared dissipative: the same audit, no warning.
  hbg::Result quiet = run(interruptedInductor(true), 0.0032);
  REQUIRE_MESSAGE(quiet.ok(), quiet.error);
  CHECK(quiet.warnings.empty());
  REQUIRE(quiet.events.size() == 6);
  CHECK(quiet.events[0].removed == r.events[0].removed);
}

TEST_CASE("the energy audit integrates a nonlinear law, and a short circuit's loss is named") {
  // A hardening capacitor, e = k q^3 (E = k q^4 / 4), shorted at t = 0.1.
  hbg::Result r = run(R"(model Short {
    parameter k = 0.5;
    C spring(e = k * q^3) { q0 = 2; }
    R r(1e6); Se ground(0); 0 node;
    1 clamp switched { off initial; on; off -> on when (time >= 0.1)+; }
    bond node -> spring; bond node -> r; bond node -> clamp; bond ground -> clamp;
    output q = spring.q;
  })", 0.2);
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  double q = ev.before[0];
  CHECK(q == doctest::Approx(2).epsilon(1e-5));
  CHECK(ev.energyBefore[0] == doctest::Approx(0.5 * std::pow(q, 4) / 4).epsilon(1e-13));
  CHECK(ev.after[0] == 0);
  CHECK(ev.removed == doctest::Approx(0.5 * std::pow(q, 4) / 4).epsilon(1e-13));
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].message.find("(spring 2 J -> 0 J)") != std::string::npos);
}

TEST_CASE("a storage law the audit cannot integrate stays out of the sums; the rest is audited") {
  // The spring's law reads a signal, so it has no tape of its own; the
  // capacitor's energy (q^2 / 2c = 1 J) is still audited.
  hbg::Result r = run(R"(model NanLaw {
    signal k = 2;
    C spring(e = k * q) { q0 = 1; }
    C cap(0.5) { q0 = 1; }
    R r(1e6); R r2(1e6); Se ground(0); Se ground2(0); 0 node; 0 node2;
    1 clamp switched { off initial; on; off -> on when (time >= 0.1)+; }
    1 clamp2 switched { off initial; on; off -> on when (time >= 0.1)+; }
    bond node -> spring; bond node -> r; bond node -> clamp; bond ground -> clamp;
    bond node2 -> cap; bond node2 -> r2; bond node2 -> clamp2; bond clamp2 -> ground2;
    output q = spring.q;
  })", 0.2);
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(r.events.size() == 1);
  const hbg::Event &ev = r.events[0];
  CHECK(std::isnan(ev.energyBefore[0]));
  double q = ev.before[1];
  CHECK(ev.energyBefore[1] == doctest::Approx(q * q / (2 * 0.5)).epsilon(1e-14));
  CHECK(ev.storedBefore == ev.energyBefore[1]);
  CHECK(ev.removed == ev.energyBefore[1]);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].message.find("(cap 1 J -> 0 J)") != std::string::npos);
}

TEST_CASE("ideal conductors in parallel are redundant, not a short circuit") {
  // 10 V into an RL load (tau = 1 ms) through two ideal switches in
  // parallel, closing at 1 ms and 2 ms; then the same load through two
  // ideal diodes in parallel. The load current is 10 (1 - exp(-(t - t0) /
  // tau)) from the first closing; the parallel conductors split it by the
  // documented rule (the first by name carries none once both conduct),
  // and each element's current is reported.
  const std::string head = R"(import electrical;
model Parallel {
    VoltageSource supply(V = 10);
    Ground gnd;
    Resistor r(R = 1);
    Inductor l(L = 1e-3);
    0 plus; 0 minus; 0 a; 0 m;
    bond supply.p -> plus; bond minus -> supply.n; bond minus -> gnd.p;
    bond plus -> s1.p; bond s1.n -> a;
    bond plus -> s2.p; bond s2.n -> a;
    bond a -> r.p; bond r.n -> m; bond m -> l.p; bond l.n -> minus;
    output i = l.i, i1 = s1.i, i2 = s2.i;
)";
  SUBCASE("two switches") {
    hbg::Result r = run(head + R"(
    IdealSwitch s1(on = if time > 0.001 then 1 else 0);
    IdealSwitch s2(on = if time > 0.002 then 1 else 0);
})",
                        0.004);
    REQUIRE_MESSAGE(r.ok(), r.error);
    CHECK(r.warnings.empty());
    REQUIRE(r.events.size() == 2);
    CHECK(r.events[1].modes.back() == "s1.j=closed, s2.j=closed");
    const std::vector<double> &t = r.at("time");
    for (std::size_t k = 0; k < t.size(); ++k) {
      double exact = t[k] <= 0.001 ? 0 : 10 * (1 - std::exp(-(t[k] - 0.001) / 1e-3));
      CHECK(r.at("i")[k] == doctest::Approx(exact).scale(10).epsilon(1e-5));
      CHECK(r.at("i1")[k] + r.at("i2")[k] == doctest::Approx(r.at("i")[k]).scale(10));
      // Rows at an event time are the one before it and the one after.
      if (t[k] > r.events[1].time)
        CHECK(r.at("i1")[k] == 0);
      else if (t[k] < r.events[1].time)
        CHECK(r.at("i2")[k] == 0);
    }
  }
  SUBCASE("two diodes") {
    hbg::Result r = run(head + R"(
    IdealDiode s1; IdealDiode s2;
})",
                        0.004);
    REQUIRE_MESSAGE(r.ok(), r.error);
    CHECK(r.warnings.empty());
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].modes.back() == "s1.j=blocking, s2.j=conducting");
    const std::vector<double> &t = r.at("time");
    for (std::size_t k = 0; k < t.size(); ++k) {
      CHECK(r.at("i")[k] == doctest::Approx(10 * (1 - std::exp(-t[k] / 1e-3))).scale(10).epsilon(1e-5));
      CHECK(r.at("i1")[k] == 0);
    }
  }
}
