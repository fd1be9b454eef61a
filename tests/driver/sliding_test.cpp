//===- tests/driver/sliding_test.cpp - Sign laws that stick (Filippov) ----===//
//
// Coulomb friction written as a law, `R friction(e = Fk * sign(f))`,
// sticks where both branches drive the relative velocity back to zero:
// the sign slides, the contact carries what the rest of the model asks of
// it, and it slips again, as an event, when that leaves [-Fk, Fk].
// Checked against the closed form of a block on a moving belt.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "RunDefaults.h"
#include "TestMethod.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace {

/// A block m on a belt moving at v0, tied to a wall by a spring k, with
/// Coulomb friction Fk between block and belt; it starts at rest at x = 0.
const char *const kBelt = R"(model CoulombBelt {
    parameter m = 1;  parameter k = 1;  parameter Fk = 1;  parameter v0 = 0.5;
    Sf belt(v0);
    I mass(m);
    C spring(1 / k);
    R friction(e = Fk * sign(f));
    1 vb; 0 contact; 1 vm;
    bond belt -> vb; bond vb -> contact; bond contact -> vm; bond contact -> friction;
    bond vm -> mass; bond vm -> spring;
    output x = spring.q, v = mass.f, force = friction.e;
})";

/// The closed form, with w = sqrt(k / m) = 1, Fk / k = 1:
///   slipping from rest, the belt faster: x = 1 - cos t, v = sin t, until
///   v = v0 at ts = asin(v0) (pi / 6); both branches then drive the
///   relative velocity back to zero: it sticks, x = xs + v0 (t - ts), the
///   friction holding k x, until k x = Fk at tp = ts + (1 - xs) / v0;
///   then x = 1 + v0 sin(t - tp), v = v0 cos(t - tp): the relative
///   velocity v0 (1 - cos) stays >= 0, touching zero at each period, where
///   the force needed is Fk exactly: it slips on.
struct BeltExact {
  double ts = std::asin(0.5), xs = 1 - std::cos(ts), tp = ts + (1 - xs) / 0.5;
  double x(double t) const {
    if (t < ts)
      return 1 - std::cos(t);
    if (t < tp)
      return xs + 0.5 * (t - ts);
    return 1 + 0.5 * std::sin(t - tp);
  }
  double v(double t) const {
    if (t < ts)
      return std::sin(t);
    if (t < tp)
      return 0.5;
    return 0.5 * std::cos(t - tp);
  }
  double force(double t) const { return t >= ts && t < tp ? x(t) : 1; }
};

hbg::Result runBelt(hbg::runtime::Method method, double rtol) {
  hbg::Model model = hbg::Compiler().compileString(kBelt, "belt.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 10;
  opts.dtOut = 0.01;
  opts.method = method;
  opts.rtol = rtol;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}

} // namespace

TEST_CASE("a block on a belt with a Coulomb sign law sticks and slips at the closed form's times") {
  BeltExact exact;
  hbg::Result r = runBelt(hbg::runtime::Method::DormandPrince, 1e-10);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].time == doctest::Approx(exact.ts).epsilon(1e-8));
  CHECK(r.events[0].transitions.at(0) == "sign(v0 - mass.p / m): branch +1 -> sliding");
  CHECK(r.events[1].time == doctest::Approx(exact.tp).epsilon(1e-8));
  CHECK(r.events[1].transitions.at(0) == "sign(v0 - mass.p / m): branch sliding -> +1");
  CHECK(std::abs(r.events[0].time - exact.ts) < 1e-8);
  CHECK(std::abs(r.events[1].time - exact.tp) < 1e-8);
  const std::vector<double> &t = r.at("time");
  double worst = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    // Rows at the events: the force is the law's on one side, the
    // holding force on the other; both are exact at the located time.
    if ((i + 1 < t.size() && t[i + 1] == t[i]) || (i > 0 && t[i - 1] == t[i]))
      continue;
    worst = std::max({worst, std::abs(r.at("x")[i] - exact.x(t[i])),
                      std::abs(r.at("v")[i] - exact.v(t[i])),
                      std::abs(r.at("force")[i] - exact.force(t[i]))});
  }
  CHECK(worst < 1e-8);
}

TEST_CASE("the belt at default options, under every method: one stick, one slip") {
  // The slip leaves tangentially (the force needed reaches Fk with zero
  // rate of the relative velocity), and the integration leaves that
  // velocity a tolerance off zero: the slip starts it from zero on the
  // side it leaves to, so no rounding-level event follows.
  BeltExact exact;
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runBelt(method, 1e-6);
    REQUIRE(r.events.size() == 2);
    CHECK(std::abs(r.events[0].time - exact.ts) < 1e-5);
    CHECK(std::abs(r.events[1].time - exact.tp) < 1e-5);
    CHECK(std::abs(r.at("x").back() - exact.x(10)) < 1e-5);
    // The stick is a mode of its own in the event log (and plots).
    CHECK(r.events[0].modes.front() == "");
    CHECK(r.events[0].modes.back() == "sliding(sign(v0 - mass.p / m))");
    CHECK(r.events[1].modes.front() == "sliding(sign(v0 - mass.p / m))");
    CHECK(r.events[1].modes.back() == "");
  }
}

TEST_CASE("a relay thermostat written as a sign law holds 20 C with the duty the losses need") {
  // A room (1e5 J/K, 100 W/K to 0 C) heated with 4 kW below 20 C and not
  // above: from 15 C, T = 40 - 25 exp(-t / 1000) reaches 20 C at
  // 1000 ln(1.25); then the relay slides, holding 20 C with the heater on
  // for the fraction of the time that balances the loss, 2 kW / 4 kW.
  hbg::Model model = hbg::Compiler().compileString(R"(model Thermostat {
    parameter Ct = 1e5;  parameter G = 100;  parameter P = 4000;
    signal on = (1 - sign(room.e - 20)) / 2;
    MSf heater(P * on);
    C room(Ct) { q0 = 15 * Ct; }
    R loss(1 / G);
    0 node;
    bond heater -> node; bond node -> room; bond node -> loss;
    output T = room.e, duty = on;
})",
                                                   "thermostat.hbg");
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runAtDefaults(model, 3000, 10, method);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].time == doctest::Approx(1000 * std::log(1.25)).epsilon(1e-5));
    const std::vector<double> &t = r.at("time");
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i] > r.events[0].time) {
        CHECK(std::abs(r.at("T")[i] - 20) < 1e-6);
        CHECK(std::abs(r.at("duty")[i] - 0.5) < 1e-6);
      }
  }
}

namespace {

/// A room (1e5 J/K, 100 W/K of losses) heated from a 100 C source behind
/// 1/50 K/W through a relay junction without hysteresis at 20 C; its
/// losses go to `ambient`. Outputs T and the heater's duty.
std::string relayRoom(const std::string &ambient, const std::string &start,
                      const std::string &guards) {
  return R"(model RelayRoom {
    parameter Ct = 1e5;
    parameter G = 100;
    Se heater(100);
    R element(1 / 50);
    C room(Ct) { q0 = )" +
         start + R"( * Ct; }
    R loss(1 / G);
    MSe outside()" +
         ambient + R"();
    0 node; 1 leak;
    1 sw switched {
        on heating initial;  off idle;
)" + guards + R"(
    }
    bond heater -> sw; bond sw -> element; bond sw -> node; bond node -> room;
    bond node -> leak; bond leak -> loss; bond leak -> outside;
    output T = room.e, duty = activeState(sw.heating);
})";
}

const char *const kRelayGuards = R"(        heating -> idle when (room.e > 20)-;
        idle -> heating when (room.e < 20)-;)";

/// How closely a slide holds its surface, under every method: an affine
/// surface function is a linear invariant of the explicit methods' stages,
/// and of the stiff method's with the combination's Jacobian.
const double kHold = 1e-6;

hbg::Result runRelay(const std::string &source, double tEnd, hbg::runtime::Method method) {
  hbg::Model model = hbg::Compiler().compileString(source, "relay.hbg");
  return runAtDefaults(model, tEnd, 10, method);
}

} // namespace

TEST_CASE("a relay junction without hysteresis slides: 20 C held with the duty the losses need") {
  // Heating from 15 C with 0 C outside: T' = (50 (100 - T) - 100 T) / 1e5,
  // so T = 100/3 - (100/3 - 15) exp(-150 t / 1e5) reaches 20 C at
  // (1e5 / 150) ln(55 / 40). Then the relay slides: the heater's 4 kW at
  // 20 C for the fraction of time that balances the 2 kW lost, 1/2, read
  // as `activeState(sw.heating)`. One event, under every method.
  std::string source = relayRoom("0", "15", kRelayGuards);
  double reach = 1e5 / 150 * std::log(55.0 / 40.0);
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runRelay(source, 3000, method);
    REQUIRE(r.events.size() == 1);
    CHECK(r.events[0].time == doctest::Approx(reach).epsilon(1e-5));
    CHECK(r.events[0].modes.back() == "sw=sliding(heating, idle)");
    CHECK(r.finalMode == "sw=sliding(heating, idle)");
    const std::vector<double> &t = r.at("time");
    std::size_t held = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i] > r.events[0].time) {
        CHECK(std::abs(r.at("T")[i] - 20) < kHold);
        CHECK(std::abs(r.at("duty")[i] - 0.5) < kHold);
        ++held;
      }
    CHECK(held > 250);
  }
}

TEST_CASE("a sliding relay junction leaves where one mode alone no longer returns to 20 C") {
  // Outside warms as 10 + t / 100 from 20 C inside: the duty that holds
  // 20 C, 100 (20 - Ta) / (50 (100 - 20)) = (10 - t / 100) / 40, reaches 0
  // at t = 1000, where the room, idle, warms on its own:
  // T = t / 100 + 10 exp(-(t - 1000) / 1000).
  std::string source = relayRoom("10 + time / 100", "20", kRelayGuards);
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runRelay(source, 3000, method);
    REQUIRE(r.events.size() == 2);
    CHECK(r.events[0].time < 1e-6);
    CHECK(r.events[0].modes.back() == "sw=sliding(heating, idle)");
    CHECK(r.events[1].time == doctest::Approx(1000).epsilon(1e-8));
    REQUIRE(r.events[1].transitions.size() == 1);
    CHECK(r.events[1].transitions[0] == "sw: sliding -> idle");
    CHECK(r.events[1].modes.back() == "sw=idle");
    const std::vector<double> &t = r.at("time");
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] > r.events[0].time && t[i] < r.events[1].time) {
        CHECK(std::abs(r.at("T")[i] - 20) < kHold);
        CHECK(std::abs(r.at("duty")[i] - (10 - t[i] / 100) / 40) < kHold);
      } else if (t[i] > r.events[1].time) {
        double exact = t[i] / 100 + 10 * std::exp(-(t[i] - 1000) / 1000);
        CHECK(std::abs(r.at("T")[i] - exact) < 1e-4);
        CHECK(r.at("duty")[i] == 0);
      }
    }
  }
}

TEST_CASE("a relay junction on a schedule slides until the schedule closes the way back") {
  // The relay heats below 20 C until t = 2000 s: the slide goes on while
  // the guards' other conditions hold, then the room cools on its own,
  // T = 20 exp(-(t - 2000) / 1000).
  std::string source =
      relayRoom("0", "15", R"(        heating -> idle when (room.e > 20)- or (time > 2000)-;
        idle -> heating when (room.e < 20)- and (time < 2000)-;)");
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result r = runRelay(source, 3000, method);
    REQUIRE(r.events.size() == 2);
    CHECK(r.events[1].time == doctest::Approx(2000).epsilon(1e-9));
    CHECK(r.events[1].modes.back() == "sw=idle");
    const std::vector<double> &t = r.at("time");
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i] > r.events[1].time)
        CHECK(std::abs(r.at("T")[i] - 20 * std::exp(-(t[i] - 2000) / 1000)) < 1e-4);
      else if (t[i] > r.events[0].time && t[i] < r.events[1].time)
        CHECK(std::abs(r.at("duty")[i] - 0.5) < kHold);
  }
}

namespace {

/// Three plates (1, 0.5 and 2 kg m^2) pressed together, the first driven
/// by 3 sin(2 t) N m, the last braked by 0.5 N m s/rad; the contacts
/// between them carry up to 1 and 0.8 N m of Coulomb friction, `contact`
/// being a component with ports a and b and a parameter F.
std::string threePlates(const std::string &contact) {
  return R"(import rotational;
)" + contact + R"(
model Plates {
    MSe drive(3 * sin(2 * time));
    Inertia p1(J = 1);
    Inertia p2(J = 0.5);
    Inertia p3(J = 2);
    Contact c12(F = 1);
    Contact c23(F = 0.8);
    RotationalDamper load(d = 0.5);
    FixedShaft ground;
    bond drive -> p1.a;
    bond p1.a -> c12.a; bond c12.b -> p2.a;
    bond p2.a -> c23.a; bond c23.b -> p3.a;
    bond p3.a -> load.a; bond load.b -> ground.a;
    output w1 = p1.w, w2 = p2.w, w3 = p3.w;
})";
}

/// What each contact does after each group of events (events closer than
/// 1e-5 s are one group): -1, 0, 1 for slipping backward, stuck, slipping
/// forward, with the group's time. `status(event, k)` updates contact k
/// from one event.
struct ContactHistory {
  std::vector<double> times;
  std::vector<std::vector<int>> states;
};

template <class Status>
ContactHistory contactHistory(const hbg::Result &r, Status status) {
  ContactHistory h;
  std::vector<int> now(2, 0);
  for (const hbg::Event &e : r.events) {
    if (e.time == 0)
      continue; // the junctions settle at the start, the sign laws need no event
    for (int k = 0; k < 2; ++k)
      status(e, k, now[std::size_t(k)]);
    if (h.times.empty() || e.time - h.times.back() > 1e-5) {
      h.times.push_back(e.time);
      h.states.push_back(now);
    } else {
      h.states.back() = now;
    }
  }
  return h;
}

} // namespace

TEST_CASE("a three-plate clutch: sign laws and switched junctions give the same events") {
  // The same contacts written as Coulomb sign laws and as the standard
  // library's Clutch (a switched junction, breakaway = kinetic torque):
  // the same stick and slip of each contact at the same times, and the
  // same speeds between events. Under the stiff method both runs used to
  // stop where the first contact breaks loose while the second slips
  // (t = 0.2428): its slip acceleration is zero there, and the first stiff
  // step left the slip a rounding error below zero, which the junction
  // took for sticking again (a mode cycle forward -> locked -> forward) and
  // the sign law for 1000 events a rounding apart.
  hbg::Model signs = hbg::Compiler().compileString(threePlates(R"(component Contact {
    parameter F = 1;
    port a = j, b = j;
    0 j;
    R friction(e = F * sign(f));
    bond j -> friction;
})"),
                                                   "plates_sign.hbg");
  hbg::Model junctions = hbg::Compiler().compileString(threePlates(R"(component Contact {
    parameter F = 1;
    port a = c.a, b = c.b;
    Clutch c(Ts = F, Tk = F);
})"),
                                                       "plates_junction.hbg");
  const std::string plates[2][2] = {{"p1.", "p2."}, {"p2.", "p3."}};
  auto fromBranches = [&](const hbg::Event &e, int k, int &state) {
    // `sign(p1.body.p / p1.J - p2.body.p / p2.J): branch +1 -> sliding`
    for (const std::string &t : e.transitions) {
      std::size_t first = t.find(plates[k][0]), second = t.find(plates[k][1]);
      if (first == std::string::npos || second == std::string::npos || second < first)
        continue;
      std::string to = t.substr(t.rfind("-> ") + 3);
      state = to == "sliding" ? 0 : to == "+1" ? 1 : -1;
    }
  };
  auto fromModes = [&](const hbg::Event &e, int k, int &state) {
    // `c12.c.slip=forward, c23.c.slip=locked`
    const std::string &mode = e.modes.back();
    std::string key = k == 0 ? "c12.c.slip=" : "c23.c.slip=";
    std::size_t at = mode.find(key);
    REQUIRE(at != std::string::npos);
    std::string s = mode.substr(at + key.size());
    state = s.rfind("forward", 0) == 0 ? 1 : s.rfind("backward", 0) == 0 ? -1 : 0;
  };
  for (hbg::runtime::Method method : kEveryMethod) {
    CAPTURE(static_cast<int>(method));
    hbg::Result a = runAtDefaults(signs, 10, 0.01, method);
    hbg::Result b = runAtDefaults(junctions, 10, 0.01, method);
    ContactHistory ha = contactHistory(a, fromBranches), hb = contactHistory(b, fromModes);
    REQUIRE(ha.times.size() == hb.times.size());
    CHECK(ha.times.size() == 19);
    for (std::size_t i = 0; i < ha.times.size(); ++i) {
      CAPTURE(i);
      CHECK(std::abs(ha.times[i] - hb.times[i]) < 1e-5);
      CHECK(ha.states[i] == hb.states[i]);
    }
    // Speeds at the grid's times, away from the events (where a row may
    // fall either side of an event a few microseconds apart in the two
    // runs).
    std::map<double, std::size_t> rowOf;
    for (std::size_t j = 0; j < b.at("time").size(); ++j)
      rowOf[b.at("time")[j]] = j;
    const std::vector<double> &t = a.at("time");
    std::size_t compared = 0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      bool nearEvent = std::any_of(ha.times.begin(), ha.times.end(),
                                   [&](double te) { return std::abs(t[i] - te) < 1e-3; });
      auto row = rowOf.find(t[i]);
      if (nearEvent || row == rowOf.end())
        continue;
      ++compared;
      std::size_t j = row->second;
      for (const char *w : {"w1", "w2", "w3"})
        CHECK(a.at(w)[i] == doctest::Approx(b.at(w)[j]).epsilon(1e-5).scale(1));
    }
    CHECK(compared > 950);
  }
}
