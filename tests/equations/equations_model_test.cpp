//===- tests/equations/equations_model_test.cpp - Equations of models ----===//
//
// Equations of small models written as text (parsed and analysed first),
// checked symbolically where the printed form is stable and numerically
// (ExprContext::evaluate at random states, parameters and times) against
// hand-derived formulas, one sign convention at a time. equations_test.cpp
// has the tests on graphs built without the parser.
//
//===----------------------------------------------------------------------===//

#include "hbg/equations/Equations.h"
#include "hbg/sema/Sema.h"
#include "hbg/syntax/Parser.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>

using namespace hbg;

namespace {

/// Values of time, states and parameters by name.
struct Point {
  double t = 0;
  std::map<std::string, double> values;
  double operator()(const std::string &name) const {
    auto it = values.find(name);
    if (it == values.end()) {
      FAIL_CHECK("no value for " << name);
      return 0;
    }
    return it->second;
  }
};

/// A model run through parse, sema, causality and equations.
struct Model {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::unique_ptr<ast::File> file;
  std::optional<bg::BondGraph> g;
  std::optional<causality::CausalAssignment> ca;
  std::optional<eq::EquationSystem> sys;

  explicit Model(std::string text) {
    std::uint32_t id = sm.addBuffer("test.hbg", std::move(text));
    file = syntax::parse(id, sm, diags);
    INFO(diags.renderAll());
    REQUIRE(file);
    g = sema::analyze(*file, sm, diags);
    REQUIRE(g);
    ca = causality::assignCausality(*g, diags);
    REQUIRE(ca);
    sys = eq::buildEquations(*g, *ca, diags);
  }

  /// The equations; fails the test if there were none.
  const eq::EquationSystem &eqs() const {
    INFO(diags.renderAll());
    REQUIRE(sys);
    CHECK(diags.diagnostics().empty());
    CHECK(sys->verify() == "");
    return *sys;
  }
  std::string print(sym::ExprId e) const { return sys->ctx->print(e); }
  const eq::State &state(const std::string &name) const {
    for (const eq::State &s : eqs().states)
      if (s.name == name)
        return s;
    FAIL("no state " << name);
    throw std::logic_error("unreachable");
  }
  sym::ExprId output(const std::string &name) const {
    for (const eq::Output &o : eqs().outputs)
      if (o.name == name)
        return o.value;
    FAIL("no output " << name);
    throw std::logic_error("unreachable");
  }
  std::vector<std::string> stateNames() const {
    std::vector<std::string> out;
    for (const eq::State &s : eqs().states)
      out.push_back(s.name);
    return out;
  }

  double eval(sym::ExprId e, const Point &pt) const {
    const eq::EquationSystem &s = eqs();
    REQUIRE(e.valid());
    return s.ctx->evaluate(e, [&](sym::SymbolId id) {
      const sym::Symbol &sy = s.ctx->symbol(id);
      switch (sy.kind) {
      case sym::SymbolKind::Time:
        return pt.t;
      case sym::SymbolKind::State:
        return pt(s.states.at(sy.slot).name);
      case sym::SymbolKind::Parameter:
        return pt(s.parameters.at(sy.slot).name);
      case sym::SymbolKind::Algebraic: // a Newton unknown, by its name
        return pt(sy.name);
      case sym::SymbolKind::Variable:
        break;
      }
      FAIL_CHECK("variable " << sy.name << " left in an equation");
      return 0.0;
    });
  }

  /// A random point: parameters in [0.5, 2], states in [-2, 2], time in [0, 3].
  Point randomPoint(std::mt19937 &rng) const {
    std::uniform_real_distribution<double> par(0.5, 2), st(-2, 2), tm(0, 3);
    Point pt;
    pt.t = tm(rng);
    for (const eq::Parameter &p : eqs().parameters)
      pt.values[p.name] = par(rng);
    for (const eq::State &s : eqs().states)
      pt.values[s.name] = st(rng);
    return pt;
  }
};

using Formula = std::function<double(const Point &)>;

/// Checks each state's derivative (and any output) against its formula at
/// 25 random points.
void checkNumerically(const Model &m, const std::map<std::string, Formula> &derivatives,
                      const std::map<std::string, Formula> &outputs = {}) {
  const eq::EquationSystem &s = m.eqs();
  REQUIRE(derivatives.size() == s.states.size());
  std::mt19937 rng(12345);
  for (int k = 0; k < 25; ++k) {
    Point pt = m.randomPoint(rng);
    for (const auto &[name, f] : derivatives) {
      CAPTURE(name);
      CAPTURE(m.print(m.state(name).derivative));
      CHECK(m.eval(m.state(name).derivative, pt) == doctest::Approx(f(pt)).epsilon(1e-10));
    }
    for (const auto &[name, f] : outputs) {
      CAPTURE(name);
      CAPTURE(m.print(m.output(name)));
      CHECK(m.eval(m.output(name), pt) == doctest::Approx(f(pt)).epsilon(1e-10));
    }
  }
}

} // namespace

// --- Symbolic --------------------------------------------------------------

TEST_CASE("RLC: the state equations as printed") {
  Model m(R"(model RLC {
    parameter V = 1.0;
    parameter R = 1.0;
    parameter L = 0.5;
    parameter C = 0.1;
    Se source(V);
    R  resistor(R);
    I  inductor(L)  { p0 = 0; }
    C  capacitor(C) { q0 = 0; }
    1  loop;
    bond source -> loop;
    bond loop -> resistor;
    bond loop -> inductor;
    bond loop -> capacitor;
    output capacitor.q, inductor.f;
})");
  const eq::EquationSystem &s = m.eqs();
  CHECK(s.modelName == "RLC");
  CHECK(m.stateNames() == std::vector<std::string>{"inductor.p", "capacitor.q"});
  CHECK(m.print(m.state("inductor.p").derivative) ==
        "V - R * (inductor.p / L) - capacitor.q / C");
  CHECK(m.print(m.state("capacitor.q").derivative) == "inductor.p / L");
  CHECK(m.print(m.output("inductor.f")) == "inductor.p / L");
  CHECK(m.print(m.output("capacitor.q")) == "capacitor.q");
  // States are State symbols with slots in order; parameters keep theirs.
  for (std::uint32_t k = 0; k < s.states.size(); ++k) {
    CHECK(s.ctx->symbol(s.states[k].symbol).kind == sym::SymbolKind::State);
    CHECK(s.ctx->symbol(s.states[k].symbol).slot == k);
    CHECK(s.ctx->isConst(s.states[k].initial, 0));
  }
  REQUIRE(s.parameters.size() == 4);
  CHECK(s.parameters[2].name == "L");
  CHECK(s.ctx->isConst(s.parameters[2].defaultValue, 0.5));
  // Every bond's variables, for `explain`.
  CHECK(s.bondNames == std::vector<std::string>{"b1", "b2", "b3", "b4"});
  CHECK(m.print(s.bondEffort[0]) == "V");
  CHECK(m.print(s.bondFlow[0]) == "inductor.p / L");
  CHECK(m.print(s.bondEffort[1]) == "R * (inductor.p / L)");
  CHECK(m.print(s.bondEffort[3]) == "capacitor.q / C");
  // The common flow is one shared node.
  CHECK(s.bondFlow[0] == s.bondFlow[1]);
  CHECK(s.bondFlow[1] == s.bondFlow[3]);
  std::string dump = s.dump();
  CHECK(dump.find("state equations\n  d/dt inductor.p = V - R * (inductor.p / L) - capacitor.q / C\n"
                  "  d/dt capacitor.q = inductor.p / L\n") != std::string::npos);
  CHECK(dump.find("states\n  inductor.p(0) = 0\n  capacitor.q(0) = 0\n") != std::string::npos);
  CHECK(dump.find("outputs\n  capacitor.q = capacitor.q\n  inductor.f = inductor.p / L\n") !=
        std::string::npos);
  checkNumerically(m, {{"inductor.p", [](const Point &p) {
                          return p("V") - p("R") * p("inductor.p") / p("L") - p("capacitor.q") / p("C");
                        }},
                       {"capacitor.q", [](const Point &p) { return p("inductor.p") / p("L"); }}});
}

TEST_CASE("RC discharge: the equation printed") {
  Model m(R"(model RC {
    parameter R = 2;
    parameter C = 0.5;
    C c(C) { q0 = 3 * C; }
    R r(R);
    0 j;
    bond j -> c;
    bond j -> r;
})");
  CHECK(m.print(m.state("c.q").derivative) == "-(c.q / C / R)");
  CHECK(m.print(m.state("c.q").initial) == "3 * C");
}

// --- Sign conventions, numerically ------------------------------------------

TEST_CASE("storage and R with bonds pointing out of them") {
  SUBCASE("bond c -> j") {
    Model m(R"(model M {
      parameter C = 0.5;
      parameter R = 2;
      C c(C);
      R r(R);
      0 j;
      bond c -> j;
      bond j -> r;
      output c.f, r.f;
  })");
    checkNumerically(m, {{"c.q", [](const Point &p) { return -p("c.q") / (p("R") * p("C")); }}},
                     {// The bond points out of c: its flow is the discharge current.
                      {"c.f", [](const Point &p) { return p("c.q") / (p("R") * p("C")); }},
                      {"r.f", [](const Point &p) { return p("c.q") / (p("R") * p("C")); }}});
  }
  SUBCASE("bond r -> j too") {
    Model m(R"(model M {
      parameter C = 0.5;
      parameter R = 2;
      C c(C);
      R r(R);
      0 j;
      bond c -> j;
      bond r -> j;
      output r.f, r.e;
  })");
    checkNumerically(m, {{"c.q", [](const Point &p) { return -p("c.q") / (p("R") * p("C")); }}},
                     {{"r.f", [](const Point &p) { return -p("c.q") / (p("R") * p("C")); }},
                      {"r.e", [](const Point &p) { return p("c.q") / p("C"); }}});
  }
  SUBCASE("bond r -> j on a 1-junction: the R sets the effort") {
    Model m(R"(model M {
      parameter V = 1;
      parameter L = 0.5;
      parameter R = 2;
      Se s(V);
      I i(L);
      R r(R);
      1 j;
      bond s -> j;
      bond j -> i;
      bond r -> j;
      output r.e;
  })");
    // The R's own flow is -p/L: e_b = -R p/L, and V - e_i + e_b = 0.
    checkNumerically(m, {{"i.p", [](const Point &p) { return p("V") - p("R") * p("i.p") / p("L"); }}},
                     {{"r.e", [](const Point &p) { return -p("R") * p("i.p") / p("L"); }}});
  }
  SUBCASE("bond i -> j") {
    Model m(R"(model M {
      parameter L = 0.5;
      parameter R = 2;
      I i(L);
      R r(R);
      1 j;
      bond i -> j;
      bond j -> r;
      output i.f, i.e;
  })");
    // f_b = -p/L, the R sees -p/L, e_r = -R p/L, balance e_i - e_r = 0.
    checkNumerically(m, {{"i.p", [](const Point &p) { return -p("R") * p("i.p") / p("L"); }}},
                     {{"i.f", [](const Point &p) { return -p("i.p") / p("L"); }},
                      {"i.e", [](const Point &p) { return -p("R") * p("i.p") / p("L"); }}});
  }
}

TEST_CASE("sources with bonds pointing into them") {
  SUBCASE("bond j -> Se") {
    Model m(R"(model M {
      parameter V = 1;
      parameter L = 1;
      parameter R = 1;
      Se s(V);
      I i(L);
      R r(R);
      1 j;
      bond j -> s;
      bond j -> i;
      bond j -> r;
      output s.e, s.f;
  })");
    checkNumerically(m, {{"i.p", [](const Point &p) { return -p("V") - p("R") * p("i.p") / p("L"); }}},
                     {{"s.e", [](const Point &p) { return p("V"); }},
                      {"s.f", [](const Point &p) { return p("i.p") / p("L"); }}});
  }
  SUBCASE("bond j -> Sf, bond r -> j") {
    Model m(R"(model M {
      parameter F = 1;
      parameter C = 1;
      parameter R = 1;
      Sf s(F);
      C c(C);
      R r(R);
      0 j;
      bond j -> s;
      bond j -> c;
      bond r -> j;
      output s.f, s.e;
  })");
    checkNumerically(m,
                     {{"c.q", [](const Point &p) { return -p("F") - p("c.q") / (p("R") * p("C")); }}},
                     {{"s.f", [](const Point &p) { return p("F"); }},
                      {"s.e", [](const Point &p) { return p("c.q") / p("C"); }}});
  }
}

TEST_CASE("0-junction flow balance with mixed directions") {
  Model m(R"(model M {
    parameter Fa = 1;
    parameter Fb = 1;
    parameter C = 1;
    parameter R = 1;
    Sf a(Fa);
    Sf b(Fb);
    C c(C);
    R r(R);
    0 j;
    bond a -> j;
    bond j -> b;
    bond c -> j;
    bond j -> r;
    output j.e, c.f;
})");
  // In: Fa, f_c; out: Fb, e/R. dq/dt = -f_c.
  checkNumerically(
      m, {{"c.q", [](const Point &p) { return p("Fa") - p("Fb") - p("c.q") / (p("C") * p("R")); }}},
      {{"j.e", [](const Point &p) { return p("c.q") / p("C"); }},
       {"c.f", [](const Point &p) { return -p("Fa") + p("Fb") + p("c.q") / (p("C") * p("R")); }}});
}

TEST_CASE("1-junction effort balance with mixed directions") {
  Model m(R"(model M {
    parameter Va = 1;
    parameter Vb = 1;
    parameter L = 1;
    parameter R = 1;
    Se a(Va);
    Se b(Vb);
    I i(L);
    R r(R);
    1 j;
    bond a -> j;
    bond j -> b;
    bond i -> j;
    bond j -> r;
    output j.f, r.e;
})");
  // Common flow -p/L (the bond points out of i); Va - Vb + e_i - e_r = 0.
  checkNumerically(
      m, {{"i.p", [](const Point &p) { return p("Vb") - p("Va") - p("R") * p("i.p") / p("L"); }}},
      {{"j.f", [](const Point &p) { return -p("i.p") / p("L"); }},
       {"r.e", [](const Point &p) { return -p("R") * p("i.p") / p("L"); }}});
}

TEST_CASE("TF: e1 = n e2, f2 = n f1, in both causal orientations") {
  SUBCASE("effort in at port 1 (Se -> TF -> 1 with I)") {
    Model m(R"(model M {
      parameter V = 1;
      parameter n = 2;
      parameter L = 1;
      parameter R = 1;
      Se s(V);
      TF t(n);
      I i(L);
      R r(R);
      1 j;
      bond s -> t;
      bond t -> j;
      bond j -> i;
      bond j -> r;
      output t.e1, t.f1, t.e2, t.f2;
  })");
    checkNumerically(m, {{"i.p", [](const Point &p) { return p("V") / p("n") - p("R") * p("i.p") / p("L"); }}},
                     {{"t.e1", [](const Point &p) { return p("V"); }},
                      {"t.e2", [](const Point &p) { return p("V") / p("n"); }},
                      {"t.f2", [](const Point &p) { return p("i.p") / p("L"); }},
                      {"t.f1", [](const Point &p) { return p("i.p") / (p("n") * p("L")); }}});
  }
  SUBCASE("flow in at port 1 (Sf -> TF -> 0 with C)") {
    Model m(R"(model M {
      parameter F = 1;
      parameter n = 2;
      parameter C = 1;
      parameter R = 1;
      Sf s(F);
      TF t(n);
      C c(C);
      R r(R);
      0 j;
      bond s -> t;
      bond t -> j;
      bond j -> c;
      bond j -> r;
      output t.e1, t.f1, t.e2, t.f2;
  })");
    checkNumerically(m, {{"c.q", [](const Point &p) { return p("n") * p("F") - p("c.q") / (p("C") * p("R")); }}},
                     {{"t.f1", [](const Point &p) { return p("F"); }},
                      {"t.f2", [](const Point &p) { return p("n") * p("F"); }},
                      {"t.e2", [](const Point &p) { return p("c.q") / p("C"); }},
                      {"t.e1", [](const Point &p) { return p("n") * p("c.q") / p("C"); }}});
  }
  SUBCASE("effort in at port 2 (1 -> TF -> Se, the bond into the source)") {
    Model m(R"(model M {
      parameter V = 1;
      parameter n = 2;
      parameter L = 1;
      Se s(V);
      MTF t(n);
      I i(L);
      1 j;
      bond j -> t;
      bond t -> s;
      bond j -> i;
      output t.e1, t.f1, t.e2, t.f2;
  })");
    checkNumerically(m, {{"i.p", [](const Point &p) { return -p("n") * p("V"); }}},
                     {{"t.e2", [](const Point &p) { return p("V"); }},
                      {"t.e1", [](const Point &p) { return p("n") * p("V"); }},
                      {"t.f1", [](const Point &p) { return p("i.p") / p("L"); }},
                      {"t.f2", [](const Point &p) { return p("n") * p("i.p") / p("L"); }}});
  }
}

TEST_CASE("GY: e1 = r f2, e2 = r f1, in both causal orientations") {
  SUBCASE("effort in at port 1 (Se -> GY -> 0 with C)") {
    Model m(R"(model M {
      parameter V = 1;
      parameter r = 2;
      parameter C = 1;
      parameter R = 1;
      Se s(V);
      GY g(r);
      C c(C);
      R rr(R);
      0 j;
      bond s -> g;
      bond g -> j;
      bond j -> c;
      bond j -> rr;
      output g.e1, g.f1, g.e2, g.f2;
  })");
    checkNumerically(m, {{"c.q", [](const Point &p) { return p("V") / p("r") - p("c.q") / (p("C") * p("R")); }}},
                     {{"g.e1", [](const Point &p) { return p("V"); }},
                      {"g.f2", [](const Point &p) { return p("V") / p("r"); }},
                      {"g.e2", [](const Point &p) { return p("c.q") / p("C"); }},
                      {"g.f1", [](const Point &p) { return p("c.q") / (p("C") * p("r")); }}});
  }
  SUBCASE("flow in at port 1 (Sf -> GY -> 1 with I)") {
    Model m(R"(model M {
      parameter F = 1;
      parameter r = 2;
      parameter L = 1;
      parameter R = 1;
      Sf s(F);
      MGY g(r);
      I i(L);
      R rr(R);
      1 j;
      bond s -> g;
      bond g -> j;
      bond j -> i;
      bond j -> rr;
      output g.e1, g.f1, g.e2, g.f2;
  })");
    checkNumerically(m, {{"i.p", [](const Point &p) { return p("r") * p("F") - p("R") * p("i.p") / p("L"); }}},
                     {{"g.f1", [](const Point &p) { return p("F"); }},
                      {"g.e2", [](const Point &p) { return p("r") * p("F"); }},
                      {"g.f2", [](const Point &p) { return p("i.p") / p("L"); }},
                      {"g.e1", [](const Point &p) { return p("r") * p("i.p") / p("L"); }}});
  }
}

TEST_CASE("modulated sources driven by time and by a state") {
  SUBCASE("MSe") {
    Model m(R"(model M {
      parameter A = 1;
      parameter w = 2;
      parameter k = 0.5;
      parameter R = 1;
      parameter C = 1;
      MSe s(A * sin(w * time) + k * c.q);
      R r(R);
      C c(C);
      1 j;
      bond s -> j;
      bond j -> r;
      bond j -> c;
  })");
    checkNumerically(m, {{"c.q", [](const Point &p) {
                            double u = p("A") * std::sin(p("w") * p.t) + p("k") * p("c.q");
                            return (u - p("c.q") / p("C")) / p("R");
                          }}});
  }
  SUBCASE("MSf") {
    Model m(R"(model M {
      parameter B = 1;
      parameter g = 2;
      parameter L = 1;
      parameter R = 1;
      MSf s(B * time + g * i.p);
      I i(L);
      R r(R);
      0 j;
      bond s -> j;
      bond j -> i;
      bond j -> r;
  })");
    checkNumerically(m, {{"i.p", [](const Point &p) {
                            double u = p("B") * p.t + p("g") * p("i.p");
                            return p("R") * (u - p("i.p") / p("L"));
                          }}});
  }
  SUBCASE("MSe reading its own flow, set by an I: no loop") {
    Model m(R"(model M {
      parameter k = 1;
      parameter L = 1;
      MSe s(-k * s.f);
      I i(L);
      1 j;
      bond s -> j;
      bond j -> i;
  })");
    checkNumerically(m, {{"i.p", [](const Point &p) { return -p("k") * p("i.p") / p("L"); }}});
  }
}

TEST_CASE("nonlinear storage: C with e = f(q), I with f = f(p)") {
  SUBCASE("C, bond pointing out of it") {
    Model m(R"(model M {
      parameter k = 2;
      parameter R = 1;
      parameter F = 0.5;
      Sf s(F);
      C c(e = k * q^3 + q);
      R r(R);
      0 j;
      bond s -> j;
      bond c -> j;
      bond j -> r;
      output c.e;
  })");
    auto e = [](const Point &p) { return p("k") * std::pow(p("c.q"), 3) + p("c.q"); };
    checkNumerically(m, {{"c.q", [=](const Point &p) { return p("F") - e(p) / p("R"); }}},
                     {{"c.e", e}});
  }
  SUBCASE("I, bond pointing out of it") {
    Model m(R"(model M {
      parameter m = 2;
      parameter a = 0.1;
      parameter V = 1;
      parameter R = 0.5;
      Se s(V);
      I i(f = p / m + a * p^3);
      R r(R);
      1 j;
      bond s -> j;
      bond i -> j;
      bond j -> r;
      output i.f;
  })");
    auto f = [](const Point &p) { return p("i.p") / p("m") + p("a") * std::pow(p("i.p"), 3); };
    checkNumerically(m, {{"i.p", [=](const Point &p) { return -p("V") - p("R") * f(p); }}},
                     {{"i.f", [=](const Point &p) { return -f(p); }}});
  }
}

TEST_CASE("nonlinear R: e = f(f) and f = f(e), with laws that are not odd") {
  SUBCASE("e = law(f), bond pointing out of the R") {
    Model m(R"(model M {
      parameter V = 1;
      parameter L = 0.5;
      parameter a = 2;
      parameter b = 0.3;
      Se s(V);
      I i(L);
      R r(e = a * f + b * f^2);
      1 j;
      bond s -> j;
      bond j -> i;
      bond r -> j;
      output r.e, r.f;
  })");
    // The R's own flow is -f_b = -p/L.
    auto law = [](const Point &p, double f) { return p("a") * f + p("b") * f * f; };
    checkNumerically(m, {{"i.p", [=](const Point &p) { return p("V") + law(p, -p("i.p") / p("L")); }}},
                     {{"r.e", [=](const Point &p) { return law(p, -p("i.p") / p("L")); }},
                      {"r.f", [](const Point &p) { return p("i.p") / p("L"); }}});
  }
  SUBCASE("e = law(f), bond pointing at the R") {
    Model m(R"(model M {
      parameter V = 1;
      parameter L = 0.5;
      parameter a = 2;
      parameter b = 0.3;
      Se s(V);
      I i(L);
      R r(e = a * f + b * f^2);
      1 j;
      bond s -> j;
      bond j -> i;
      bond j -> r;
  })");
    auto law = [](const Point &p, double f) { return p("a") * f + p("b") * f * f; };
    checkNumerically(m, {{"i.p", [=](const Point &p) { return p("V") - law(p, p("i.p") / p("L")); }}});
  }
  SUBCASE("f = law(e), bond pointing out of the R") {
    Model m(R"(model M {
      parameter C = 0.5;
      parameter g = 1.5;
      parameter h = 0.2;
      parameter F = 0.3;
      Sf s(F);
      C c(C);
      R r(f = g * e + h * e^2);
      0 j;
      bond s -> j;
      bond j -> c;
      bond r -> j;
      output r.f;
  })");
    auto law = [](const Point &p, double e) { return p("g") * e + p("h") * e * e; };
    checkNumerically(m, {{"c.q", [=](const Point &p) { return p("F") - law(p, p("c.q") / p("C")); }}},
                     {{"r.f", [=](const Point &p) { return -law(p, p("c.q") / p("C")); }}});
  }
  SUBCASE("f = law(e), bond pointing at the R") {
    Model m(R"(model M {
      parameter C = 0.5;
      parameter g = 1.5;
      parameter h = 0.2;
      parameter F = 0.3;
      Sf s(F);
      C c(C);
      R r(f = g * e + h * e^2);
      0 j;
      bond s -> j;
      bond j -> c;
      bond j -> r;
  })");
    auto law = [](const Point &p, double e) { return p("g") * e + p("h") * e * e; };
    checkNumerically(m, {{"c.q", [=](const Point &p) { return p("F") - law(p, p("c.q") / p("C")); }}});
  }
}

TEST_CASE("integrator signals add states after the storage elements") {
  Model m(R"(model M {
    parameter k = 2;
    parameter C = 1;
    parameter R = 1;
    C c(C) { q0 = 1; }
    R r(R);
    0 j;
    bond j -> c;
    bond j -> r;
    signal x = integral(c.q - k * x) + 1;
    signal y = 3 * integral(time);
    output x, y;
})");
  const eq::EquationSystem &s = m.eqs();
  CHECK(m.stateNames() == std::vector<std::string>{"c.q", "x.integral", "y.integral"});
  CHECK(s.ctx->isConst(s.states[0].initial, 1));
  CHECK(s.ctx->isConst(s.states[1].initial, 0));
  CHECK(s.ctx->isConst(s.states[2].initial, 0));
  CHECK(m.print(m.state("y.integral").derivative) == "time");
  checkNumerically(
      m,
      {{"c.q", [](const Point &p) { return -p("c.q") / (p("C") * p("R")); }},
       {"x.integral", [](const Point &p) { return p("c.q") - p("k") * (p("x.integral") + 1); }},
       {"y.integral", [](const Point &p) { return p.t; }}},
      {{"x", [](const Point &p) { return p("x.integral") + 1; }},
       {"y", [](const Point &p) { return 3 * p("y.integral"); }}});
}

// --- Parameters, verify() -----------------------------------------------------

TEST_CASE("parameterOrder puts dependencies first") {
  Model m(R"(model M {
    parameter a = b + c;
    parameter e = a * d;
    parameter b = 2 * c;
    parameter c = 1;
    parameter d = 4;
    parameter p1 = p2;
    parameter p2 = p3 - c;
    parameter p3 = 7;
    C cap(a) { q0 = e; }
    R r(1);
    0 j;
    bond j -> cap;
    bond j -> r;
})");
  const eq::EquationSystem &s = m.eqs();
  std::vector<std::string> names;
  for (const eq::Parameter &p : s.parameters)
    names.push_back(p.name);
  // Slots stay in declaration order.
  CHECK(names == std::vector<std::string>{"a", "e", "b", "c", "d", "p1", "p2", "p3"});
  std::vector<std::uint32_t> order = s.parameterOrder();
  REQUIRE(order.size() == s.parameters.size());
  std::vector<int> position(order.size(), -1);
  for (std::size_t k = 0; k < order.size(); ++k) {
    REQUIRE(order[k] < order.size());
    CHECK(position[order[k]] == -1); // each exactly once
    position[order[k]] = static_cast<int>(k);
  }
  auto before = [&](const char *x, const char *y) {
    auto at = [&](const char *n) {
      return position[std::find(names.begin(), names.end(), n) - names.begin()];
    };
    return at(x) < at(y);
  };
  CHECK(before("b", "a"));
  CHECK(before("c", "a"));
  CHECK(before("c", "b"));
  CHECK(before("a", "e"));
  CHECK(before("d", "e"));
  CHECK(before("p3", "p2"));
  CHECK(before("p2", "p1"));
  CHECK(before("c", "p2"));
  // Evaluating defaults in that order needs only values already computed.
  std::vector<double> value(order.size(), std::nan(""));
  for (std::uint32_t i : order) {
    value[i] = s.ctx->evaluate(s.parameters[i].defaultValue, [&](sym::SymbolId id) {
      double v = value.at(s.ctx->symbol(id).slot);
      CHECK_FALSE(std::isnan(v));
      return v;
    });
  }
  CHECK(value == std::vector<double>{3, 12, 2, 1, 4, 6, 6, 7});
}

TEST_CASE("parameterOrder on a long chain declared backwards") {
  std::string text = "model M {\n";
  for (int k = 0; k < 40; ++k)
    text += "  parameter p" + std::to_string(k) + " = " +
            (k == 39 ? std::string("1") : "p" + std::to_string(k + 1) + " + 1") + ";\n";
  text += "  C c(p0); R r(1); 0 j; bond j -> c; bond j -> r;\n}\n";
  Model m(text);
  std::vector<std::uint32_t> order = m.eqs().parameterOrder();
  REQUIRE(order.size() == 40);
  for (std::uint32_t k = 0; k < 40; ++k)
    CHECK(order[k] == 39 - k);
}

TEST_CASE("EquationSystem::verify catches leftover variables and bad slots") {
  Model m(R"(model M {
    parameter C = 1;
    C c(C);
    R r(1);
    0 j;
    bond j -> c;
    bond j -> r;
    output c.e;
})");
  eq::EquationSystem s = m.eqs();
  REQUIRE(s.verify() == "");
  sym::ExprContext &ctx = *s.ctx;
  SUBCASE("a Variable symbol left") {
    s.states[0].derivative = ctx.ref(m.g->bonds[0].flow);
    CHECK(s.verify() == "derivative of `c.q` still refers to `b1.f`");
  }
  SUBCASE("an output missing") {
    s.outputs[0].value = sym::ExprId{};
    CHECK(s.verify() == "output `c.e` is missing");
  }
  SUBCASE("a default that is not parametric") {
    s.parameters[0].defaultValue = ctx.time();
    CHECK(s.verify() == "default of `C` must depend on parameters only");
  }
  SUBCASE("an initial value that uses a state") {
    s.states[0].initial = ctx.ref(s.states[0].symbol);
    CHECK(s.verify() == "initial value of `c.q` must depend on parameters only");
  }
  SUBCASE("slots out of range") {
    s.states[0].derivative = ctx.ref(ctx.addSymbol("x9", sym::SymbolKind::State, 9));
    CHECK(s.verify() == "derivative of `c.q` refers to state slot 9");
    s.states[0].derivative = ctx.ref(ctx.addSymbol("p7", sym::SymbolKind::Parameter, 7));
    CHECK(s.verify() == "derivative of `c.q` refers to parameter slot 7");
  }
}

// --- Algebraic loops -----------------------------------------------------------

TEST_CASE("a loop through a modulated source reading its own flow is torn and solved") {
  // The 0-junction balance gives s.f = e - 1 (Sf 1 in, R 1 out); the source
  // sets e = 2 s.f, so e = 2 and s.f = 1.
  auto check = [](Model &m) {
    const eq::EquationSystem &s = m.eqs();
    REQUIRE(s.loops.size() == 1);
    CHECK(s.loops[0].linear);
    CHECK(s.loops[0].tearing.size() == 1);
    CHECK(s.unknowns.empty());
    Point pt{0, {}};
    CHECK(m.eval(s.bondEffort[1], pt) == doctest::Approx(2));
    CHECK(m.eval(s.bondFlow[0], pt) == doctest::Approx(1));
  };
  SUBCASE("with only sources and an R") {
    Model m(R"(model Loop {
    MSe s(2 * s.f);
    R r(1);
    Sf q(1);
    0 j;
    bond sb: s -> j;
    bond rb: j -> r;
    bond qb: q -> j;
})");
    check(m);
  }
  SUBCASE("through a signal") {
    Model m(R"(model Loop {
    signal u = 2 * s.f;
    MSe s(u);
    R r(1);
    Sf q(1);
    0 j;
    bond s -> j;
    bond j -> r;
    bond q -> j;
})");
    check(m);
  }
}

// --- Randomised: every rule holds on random trees -----------------------------



TEST_CASE("a source driving a dependent capacitor is differentiated in time") {
  // The MSe imposes e = A sin(w t) on C directly, so C is in derivative
  // causality: q = C e and its flow i = C A w cos(w t), with no state left
  // but the resistor's neighbour.
  Model m(R"(model Driven {
    parameter A = 2;
    parameter w = 3;
    parameter Cv = 0.5;
    MSe src(A * sin(w * time));
    C c(Cv) { q0 = 0; }
    R r(4);
    0 n;
    bond src -> n;
    bond n -> c;
    bond n -> r;
    output c.q, c.f;
})");
  const eq::EquationSystem &s = m.eqs();
  CHECK(s.states.empty());
  REQUIRE(s.dependent.size() == 1);
  CHECK(s.dependent[0].name == "c.q");
  for (double t : {0.0, 0.3, 1.7}) {
    Point pt{t, {{"A", 2}, {"w", 3}, {"Cv", 0.5}}};
    CHECK(m.eval(s.outputs[0].value, pt) == doctest::Approx(0.5 * 2 * std::sin(3 * t)));
    CHECK(m.eval(s.outputs[1].value, pt) == doctest::Approx(0.5 * 2 * 3 * std::cos(3 * t)));
    // The source delivers the capacitor's and the resistor's current.
    CHECK(m.eval(s.bondFlow[0], pt) ==
          doctest::Approx(0.5 * 2 * 3 * std::cos(3 * t) + 2 * std::sin(3 * t) / 4));
  }
}

namespace {
/// Checks that `m` has one dependent state `name`, a Newton unknown of the
/// same name closed by `residual` (of the states and the unknown), and that
/// the state derivatives hold at random points, with the unknown drawn
/// in [0.2, 2] (the formulas hold whether or not the residual is zero).
void checkNonlinearDependent(const Model &m, const std::string &name, const Formula &residual,
                             const std::map<std::string, Formula> &derivatives) {
  const eq::EquationSystem &s = m.eqs();
  REQUIRE(s.dependent.size() == 1);
  CHECK(s.dependent[0].name == name);
  REQUIRE(s.unknowns.size() == 1);
  CHECK(s.unknowns[0].name == name);
  CHECK(s.dependent[0].value == s.ctx->ref(s.unknowns[0].symbol));
  CHECK(s.dependent[0].impulse.size() == s.states.size());
  // Two loops: the stored quantity's (Newton) and the element's rate's,
  // linear once the stored quantity is known.
  REQUIRE(s.loops.size() == 2);
  CHECK(!s.loops[0].linear);
  CHECK(s.loops[0].tearing == std::vector<std::string>{name});
  CHECK(s.loops[1].linear);
  std::mt19937 rng(777);
  std::uniform_real_distribution<double> unknown(0.2, 2);
  for (int k = 0; k < 25; ++k) {
    Point pt = m.randomPoint(rng);
    pt.values[name] = unknown(rng);
    CHECK(m.eval(s.residuals[0], pt) == doctest::Approx(residual(pt)).epsilon(1e-10));
    for (const auto &[state, f] : derivatives) {
      CAPTURE(state);
      CAPTURE(m.print(m.state(state).derivative));
      CHECK(m.eval(m.state(state).derivative, pt) == doctest::Approx(f(pt)).epsilon(1e-10));
    }
  }
}
} // namespace

TEST_CASE("two nonlinear capacitors in parallel: the dependent one's charge solves its law") {
  // c1 sets the node's effort e = law1(q1); c2 follows it: law2(q2) = e,
  // so q2' = law1'(q1) q1' / law2'(q2), and q1' + q2' is the resistor's
  // current i = (V - e) / R.
  Model m(R"(model Parallel {
    parameter V = 1; parameter R = 0.5; parameter a = 2; parameter b = 0.5;
    Se s(V); R r(R);
    C c1(e = q + a * q^3);
    C c2(e = q^3 / 3 + b * q);
    1 loop; 0 n;
    bond s -> loop; bond loop -> r; bond loop -> n;
    bond n -> c1; bond n -> c2;
    output c2.q, c2.f;
})");
  auto law1 = [](const Point &p) { return p("c1.q") + p("a") * std::pow(p("c1.q"), 3); };
  auto slope1 = [](const Point &p) { return 1 + 3 * p("a") * p("c1.q") * p("c1.q"); };
  auto law2 = [](const Point &p) { return std::pow(p("c2.q"), 3) / 3 + p("b") * p("c2.q"); };
  auto slope2 = [](const Point &p) { return p("c2.q") * p("c2.q") + p("b"); };
  auto q1dot = [=](const Point &p) {
    return (p("V") - law1(p)) / p("R") / (1 + slope1(p) / slope2(p));
  };
  checkNonlinearDependent(m, "c2.q", [=](const Point &p) { return law2(p) - law1(p); },
                          {{"c1.q", q1dot}});
  const eq::EquationSystem &s = m.eqs();
  CHECK(m.print(s.residuals[0]) == "c2.q^3 / 3 + b * c2.q - (c1.q + a * c1.q^3)");
  // The dependent charge is the unknown; its rate, the bond flow into c2,
  // takes what c1 does not.
  CHECK(m.print(m.output("c2.q")) == "c2.q");
  std::mt19937 rng(3);
  for (int k = 0; k < 10; ++k) {
    Point pt = m.randomPoint(rng);
    pt.values["c2.q"] = 0.7;
    CHECK(m.eval(m.output("c2.f"), pt) ==
          doctest::Approx(slope1(pt) * q1dot(pt) / slope2(pt)).epsilon(1e-10));
    // An impulse into c2 comes out of c1.
    CHECK(m.eval(s.dependent[0].impulse[0], pt) == doctest::Approx(-1));
  }
}

TEST_CASE("a nonlinear dependent capacitor whose law depends on time") {
  // law2(q2, t) = q2 + q2^3 + A sin(w t) = e = q1 / C1: differentiating in
  // time, (1 + 3 q2^2) q2' + A w cos(w t) = q1' / C1.
  Model m(R"(model Timed {
    parameter V = 1; parameter R = 0.5; parameter C1 = 2; parameter A = 0.3; parameter w = 2;
    Se s(V); R r(R);
    C c1(C1);
    C c2(e = q + q^3 + A * sin(w * time));
    1 loop; 0 n;
    bond s -> loop; bond loop -> r; bond loop -> n;
    bond n -> c1; bond n -> c2;
})");
  auto q1dot = [](const Point &p) {
    double i = (p("V") - p("c1.q") / p("C1")) / p("R");
    double slope = 1 + 3 * p("c2.q") * p("c2.q");
    double forced = p("A") * p("w") * std::cos(p("w") * p.t) / slope;
    return (i + forced) / (1 + 1 / (p("C1") * slope));
  };
  checkNonlinearDependent(m, "c2.q",
                          [](const Point &p) {
                            double q = p("c2.q");
                            return q + q * q * q + p("A") * std::sin(p("w") * p.t) -
                                   p("c1.q") / p("C1");
                          },
                          {{"c1.q", q1dot}});
}

TEST_CASE("a nonlinear inertia rigidly coupled to a linear one") {
  // Both share the junction's flow v = p1 / m1 (up to the bond's sign on
  // mass2's side); mass2's law f = p2 / m2 + a p2^3 gives p2 implicitly,
  // and p2' = +-v' / law'(p2), so p1' = F / (1 + 1 / (m1 law'(p2))).
  for (const char *bond : {"bond v -> mass2;", "bond mass2 -> v;"}) {
    CAPTURE(bond);
    bool out = std::string(bond) == "bond mass2 -> v;";
    Model m(std::string(R"(model Rigid {
      parameter F = 2; parameter m1 = 1; parameter m2 = 2; parameter a = 0.3;
      Se push(F);
      I mass1(m1);
      I mass2(f = p / m2 + a * p^3);
      1 v;
      bond push -> v; bond v -> mass1; )") +
            bond + "\n}");
    auto slope = [](const Point &p) {
      return 1 / p("m2") + 3 * p("a") * p("mass2.p") * p("mass2.p");
    };
    double sign = out ? -1 : 1; // mass2's port flow is -v when its bond points out
    checkNonlinearDependent(
        m, "mass2.p",
        [=](const Point &p) {
          double q = p("mass2.p");
          return q / p("m2") + p("a") * q * q * q - sign * p("mass1.p") / p("m1");
        },
        {{"mass1.p", [=](const Point &p) { return p("F") / (1 + 1 / (p("m1") * slope(p))); }}});
    // An impulse into mass2 comes out of mass1 (along the bond's sign).
    Point pt{0, {{"F", 2}, {"m1", 1}, {"m2", 2}, {"a", 0.3}, {"mass1.p", 0.4}, {"mass2.p", 0.6}}};
    CHECK(m.eval(m.eqs().dependent[0].impulse[0], pt) == doctest::Approx(-sign));
  }
}

TEST_CASE("nonlinear dependent storage that cannot follow the others is rejected") {
  auto error = [](const std::string &element) {
    Model m(R"(model M {
      Se source(1); R series(1); R diode(f = e^3 + e); 1 loop;
      bond source -> loop; bond loop -> series; bond loop -> diode;
      Se supply(1); 0 node;
      )" + element +
            R"(
      bond supply -> node; bond node -> cap;
    })");
    CHECK_FALSE(m.sys);
    return m.diags.renderAll();
  };
  // A law that does not involve q leaves q undetermined.
  CHECK(error("C cap(e = 2);")
            .find("error: the equations of the algebraic loop `supply [b4] "
                  "0:node [b5] cap` are singular: they do not determine "
                  "`cap.q`") != std::string::npos);
  // Differentiating the law needs the time derivative of a loop's variable.
  CHECK(error("C cap(e = q^3 + diode.f);")
            .find("error: C element `cap` is in derivative causality, but its law depends on "
                  "the algebraic loop `diode [b3] 1:loop [b2] series`") != std::string::npos);
  // ... or of a function that switches where time meets the solution (a
  // piecewise function of time alone is differentiated branch by branch).
  CHECK(error("C cap(e = q^3 + abs(time - q));")
            .find("error: C element `cap` is in derivative causality, so its law must be "
                  "differentiated, but `abs` switches where time meets the solution and has no "
                  "derivative there") != std::string::npos);
  Model piecewise(R"(model M {
      Se source(1); R series(1); R diode(f = e^3 + e); 1 loop;
      bond source -> loop; bond loop -> series; bond loop -> diode;
      Se supply(1); 0 node;
      C cap(e = q^3 + abs(time - 1));
      bond supply -> node; bond node -> cap;
    })");
  CHECK(piecewise.sys);
}

TEST_CASE("a loop of six coupled tearing variables is solved by the generated LU") {
  // A resistor ladder with six inner nodes between a source and a
  // capacitor: every inner node's voltage is free, the choices couple into
  // one loop of six unknowns, above the closed-form bound.
  const int K = 6;
  const double V = 3, Ra = 2, Rc = 5, Cv = 0.25;
  std::string text = "model Ladder {\n Se src(3); 0 m0; bond src -> m0;\n";
  for (int k = 1; k <= K + 1; ++k) {
    std::string a = "a" + std::to_string(k), ra = "ra" + std::to_string(k);
    std::string from = "m" + std::to_string(k - 1), to = k <= K ? "m" + std::to_string(k) : "nc";
    text += " 1 " + a + "; R " + ra + "(2); 0 " + to + ";\n";
    text += " bond " + from + " -> " + a + "; bond " + a + " -> " + to + "; bond " + a + " -> " +
            ra + ";\n";
    if (k <= K)
      text += " R rc" + std::to_string(k) + "(5); bond " + to + " -> rc" + std::to_string(k) + ";\n";
  }
  text += " C cap(0.25) { q0 = 0; }\n bond nc -> cap;\n output cap.f;\n}\n";
  Model m(text);
  const eq::EquationSystem &s = m.eqs();
  REQUIRE(s.loops.size() == 1);
  CHECK(s.loops[0].tearing.size() == K);
  CHECK(s.loops[0].linear);
  CHECK_FALSE(s.loops[0].closedForm);
  CHECK(s.unknowns.empty());
  // Nodal analysis: (u[k-1] - u[k]) / Ra - u[k] / Rc + (u[k+1] - u[k]) / Ra = 0,
  // u[0] = V, u[K+1] = vc, by the Thomas algorithm.
  for (double vc : {0.0, 1.2, -0.7}) {
    std::vector<double> diag(K, 2 / Ra + 1 / Rc), rhs(K, 0.0), cp(K), dp(K);
    rhs[0] += V / Ra;
    rhs[K - 1] += vc / Ra;
    const double off = -1 / Ra;
    cp[0] = off / diag[0];
    dp[0] = rhs[0] / diag[0];
    for (int k = 1; k < K; ++k) {
      double den = diag[k] - off * cp[k - 1];
      cp[k] = off / den;
      dp[k] = (rhs[k] - off * dp[k - 1]) / den;
    }
    std::vector<double> u(K);
    u[K - 1] = dp[K - 1];
    for (int k = K - 2; k >= 0; --k)
      u[k] = dp[k] - cp[k] * u[k + 1];
    double expected = (u[K - 1] - vc) / Ra;
    Point pt{0, {{"cap.q", Cv * vc}}};
    CHECK(m.eval(s.states[0].derivative, pt) == doctest::Approx(expected).epsilon(1e-12));
  }
}

// --- Modes: OFF junctions ----------------------------------------------------

namespace {
/// A model's equations in the mode given as `j1=on,j2=off` ("" = initial).
struct ModeModel : Model {
  ModeModel(std::string text, const std::string &modeText) : Model(std::move(text)) {
    bg::Mode mode = bg::initialMode(*g);
    if (!modeText.empty()) {
      bg::ModeError err;
      bg::Mode parsed;
      REQUIRE(bg::parseMode(*g, modeText, mode, parsed, err));
      mode = parsed;
    }
    ca = causality::assignCausality(*g, mode, diags);
    INFO(diags.renderAll());
    REQUIRE(ca);
    sys = eq::buildEquations(*g, *ca, mode, diags);
  }
};

/// Two damped masses on 0-junctions, joined by a switched 1-junction.
const char *kDampedPair = R"(
model DampedPair {
    parameter m1 = 1; parameter m2 = 2; parameter r1 = 0.5; parameter r2 = 0.25;
    I mass1(m1) { p0 = 1; }
    I mass2(m2);
    R damper1(r1);
    R damper2(r2);
    0 a; 0 b;
    1 link switched { off initial; on; off -> on when (time > 1)+; }
    bond a -> mass1; bond a -> damper1; bond a -> link;
    bond link -> b;  bond b -> mass2;   bond b -> damper2;
}
)";
} // namespace

TEST_CASE("an OFF 1-junction decouples two masses: each keeps its own momentum derivative") {
  ModeModel m(kDampedPair, "");
  CHECK(m.stateNames() == std::vector<std::string>{"mass1.p", "mass2.p"});
  CHECK(m.eqs().dependent.empty());
  CHECK(m.eqs().loops.empty());
  // The link's flow is 0, so each damper carries its own mass's flow.
  CHECK(m.print(m.state("mass1.p").derivative) == "-(r1 * (mass1.p / m1))");
  checkNumerically(m, {
                          {"mass1.p", [](const Point &p) { return -p("r1") * p("mass1.p") / p("m1"); }},
                          {"mass2.p", [](const Point &p) { return -p("r2") * p("mass2.p") / p("m2"); }},
                      });
  // Every bond of the link has zero flow; its efforts come from a and b.
  const eq::EquationSystem &s = m.eqs();
  for (std::size_t k = 0; k < s.bondNames.size(); ++k) {
    const bg::Bond &b = m.g->bonds[k];
    bool linkBond = m.g->element(b.from).name == "link" || m.g->element(b.to).name == "link";
    if (linkBond)
      CHECK(m.print(s.bondFlow[k]) == "0");
  }
}

TEST_CASE("the same 1-junction ON couples the masses through their common effort") {
  ModeModel m(kDampedPair, "link=on");
  CHECK(m.stateNames() == std::vector<std::string>{"mass1.p", "mass2.p"});
  // a and b share the effort e; the flows balance through the link:
  // p1/m1 + e/r1 + p2/m2 + e/r2 = 0.
  auto e = [](const Point &p) {
    return -(p("mass1.p") / p("m1") + p("mass2.p") / p("m2")) / (1 / p("r1") + 1 / p("r2"));
  };
  checkNumerically(m, {{"mass1.p", e}, {"mass2.p", e}});
}

TEST_CASE("masses in series on a switched 1-junction: ON one dependent state, OFF no motion") {
  const char *text = R"(
model Series {
    parameter m1 = 1; parameter m2 = 3; parameter F = 2;
    Se push(F);
    I mass1(m1);
    I mass2(m2);
    1 s switched { on initial; off; on -> off when (time > 1)+; }
    bond push -> s; bond s -> mass1; bond s -> mass2;
}
)";
  {
    ModeModel on(text, "");
    CHECK(on.stateNames() == std::vector<std::string>{"mass1.p"});
    REQUIRE(on.eqs().dependent.size() == 1);
    CHECK(on.eqs().dependent[0].name == "mass2.p");
    CHECK(on.print(on.eqs().dependent[0].value) == "m2 * (mass1.p / m1)");
    checkNumerically(on, {{"mass1.p", [](const Point &p) {
                             return p("F") * p("m1") / (p("m1") + p("m2"));
                           }}});
  }
  {
    // OFF: zero flow on every bond; both masses follow it (momentum 0) and
    // the source's power is 0.
    ModeModel off(text, "s=off");
    CHECK(off.stateNames().empty());
    CHECK(off.eqs().dependent.size() == 2);
    for (sym::ExprId f : off.eqs().bondFlow)
      CHECK(off.print(f) == "0");
  }
}

TEST_CASE("an OFF 0-junction between two masses: free masses; ON: one dependent state") {
  const char *text = R"(
model Collision {
    parameter m1 = 1; parameter m2 = 3;
    I bullet(m1) { p0 = 1; }
    I wood(m2);
    1 v1; 1 v2;
    0 contact switched { off initial; on; off -> on when (time > 1)+; }
    bond v1 -> bullet; bond v2 -> wood; bond v1 -> contact; bond contact -> v2;
}
)";
  {
    ModeModel off(text, "");
    CHECK(off.stateNames() == std::vector<std::string>{"bullet.p", "wood.p"});
    CHECK(off.print(off.state("bullet.p").derivative) == "0");
    CHECK(off.print(off.state("wood.p").derivative) == "0");
    for (sym::ExprId e : off.eqs().bondEffort)
      CHECK(off.print(e) == "0");
  }
  {
    ModeModel on(text, "contact=on");
    CHECK(on.stateNames() == std::vector<std::string>{"bullet.p"});
    REQUIRE(on.eqs().dependent.size() == 1);
    CHECK(on.print(on.eqs().dependent[0].value) == "m2 * (bullet.p / m1)");
  }
}

TEST_CASE("equations in another mode than the causality's are an internal error") {
  Model m(kDampedPair);
  bg::Mode on = bg::initialMode(*m.g);
  for (std::size_t k = 0; k < m.g->elements.size(); ++k)
    if (m.g->elements[k].fsm)
      on.on[k] = true;
  CHECK_THROWS_AS(eq::buildEquations(*m.g, *m.ca, on, m.diags), InternalError);
}

