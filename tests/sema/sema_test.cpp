//===- tests/sema/sema_test.cpp - AST to checked bond graph ---------------===//
//
// Inline models through SourceManager + syntax::parse + sema::analyze: the
// bond graph built (elements, bonds, parameters, signals, integrators,
// outputs), BondGraph::verify() and dump(), and sema's errors to the letter.
//
//===----------------------------------------------------------------------===//

#include "hbg/sema/Sema.h"
#include "hbg/syntax/Parser.h"

#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <unordered_map>

using namespace hbg;
using namespace hbg::bg;

namespace {

/// One buffer `test.hbg`, parsed and analysed.
struct Analyzed {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  std::unique_ptr<ast::File> file;
  std::optional<BondGraph> graph;

  explicit Analyzed(std::string text) {
    std::uint32_t id = sm.addBuffer("test.hbg", std::move(text));
    file = syntax::parse(id, sm, diags);
    INFO(diags.renderAll());
    REQUIRE(file); // sema tests need text that parses
    graph = sema::analyze(*file, sm, diags);
  }

  /// The graph; fails the test if sema reported anything.
  const BondGraph &g() const {
    INFO(diags.renderAll());
    REQUIRE(graph);
    REQUIRE(diags.diagnostics().empty());
    return *graph;
  }
  ElementId element(const std::string &name) const {
    const BondGraph &bg = g();
    for (std::uint32_t i = 0; i < bg.elements.size(); ++i)
      if (bg.elements[i].name == name)
        return ElementId{i};
    FAIL("no element " << name);
    return {};
  }
  const Element &el(const std::string &name) const { return g().element(element(name)); }
  BondId bond(const std::string &name) const {
    const BondGraph &bg = g();
    for (std::uint32_t i = 0; i < bg.bonds.size(); ++i)
      if (bg.bonds[i].name == name)
        return BondId{i};
    FAIL("no bond " << name);
    return {};
  }
  /// The bond from `a` to `b`.
  BondId bondBetween(const std::string &a, const std::string &b) const {
    const BondGraph &bg = g();
    for (std::uint32_t i = 0; i < bg.bonds.size(); ++i)
      if (bg.element(bg.bonds[i].from).name == a && bg.element(bg.bonds[i].to).name == b)
        return BondId{i};
    FAIL("no bond " << a << " -> " << b);
    return {};
  }
};

/// The rendered diagnostics of a model that must fail in sema.
std::string errorsOf(std::string text) {
  Analyzed a(std::move(text));
  CHECK_FALSE(a.graph); // errors give an empty result
  CHECK(a.diags.hasErrors());
  return a.diags.renderAll();
}

/// The single error message (no location) of a model that must fail in sema.
std::string messageOf(std::string text) {
  Analyzed a(std::move(text));
  CHECK_FALSE(a.graph);
  INFO(a.diags.renderAll());
  REQUIRE(a.diags.errorCount() == 1);
  return a.diags.diagnostics().at(0).message;
}

/// Evaluates `e` with symbols looked up by name (a missing one fails).
double eval(const BondGraph &g, sym::ExprId e, const std::unordered_map<std::string, double> &values) {
  REQUIRE(e.valid());
  return g.ctx->evaluate(e, [&](sym::SymbolId s) {
    const std::string &name = g.ctx->symbol(s).name;
    auto it = values.find(name);
    if (it == values.end()) {
      FAIL_CHECK("unexpected symbol " << name);
      return 0.0;
    }
    return it->second;
  });
}

const char *kRlc = R"(// Series RLC circuit driven by a 1 V step.
model RLC {
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
}
)";

} // namespace

// --- The graph built -------------------------------------------------------

TEST_CASE("every element kind, junctions after elements, two-ports ordered [in, out]") {
  Analyzed a(R"(model Kinds {
    parameter n = 2;
    0 z;
    Se se(1);
    Sf sf(-1);
    MSe mse(sin(time));
    MSf msf(c.q);
    C c(1);
    I i(1);
    R r(1);
    TF tf(n);
    GY gy(3);
    MTF mtf(1 + time);
    MGY mgy(c.q);
    1 o;
    bond se -> o;
    bond sf -> z;
    bond mse -> o;
    bond msf -> z;
    bond z -> c;
    bond o -> i;
    bond o -> r;
    bond tf -> z;      // the out bond declared first
    bond o -> tf;
    bond z -> gy;
    bond gy -> o;
    bond mtf -> z;     // out first again
    bond o -> mtf;
    bond mgy -> o;
    bond z -> mgy;
})");
  const BondGraph &g = a.g();
  CHECK(g.modelName == "Kinds");
  CHECK(g.verify() == "");

  // Elements in declaration order, then junctions in declaration order.
  std::vector<std::string> names;
  std::vector<std::string> kinds;
  for (const Element &e : g.elements) {
    names.push_back(e.name);
    kinds.push_back(kindName(e.kind));
  }
  CHECK(names == std::vector<std::string>{"se", "sf", "mse", "msf", "c", "i", "r", "tf", "gy",
                                          "mtf", "mgy", "z", "o"});
  CHECK(kinds == std::vector<std::string>{"Se", "Sf", "MSe", "MSf", "C", "I", "R", "TF", "GY",
                                          "MTF", "MGY", "0", "1"});
  CHECK(a.el("z").kind == ElementKind::Zero);
  CHECK(a.el("o").kind == ElementKind::One);
  CHECK(isSource(a.el("msf").kind));
  CHECK_FALSE(isSource(a.el("c").kind));
  CHECK(isStorage(a.el("i").kind));
  CHECK_FALSE(isStorage(a.el("r").kind));
  CHECK(isJunction(a.el("z").kind));
  CHECK(isTwoPort(a.el("mgy").kind));
  CHECK_FALSE(isTwoPort(a.el("o").kind));

  // Two-ports: [in, out] whatever the declaration order.
  for (const char *tp : {"tf", "gy", "mtf", "mgy"}) {
    CAPTURE(tp);
    const Element &e = a.el(tp);
    REQUIRE(e.bonds.size() == 2);
    CHECK(g.bond(e.bonds[0]).to == a.element(tp));
    CHECK(g.bond(e.bonds[1]).from == a.element(tp));
    CHECK(g.sign(e.bonds[0], a.element(tp)) == 1);
    CHECK(g.sign(e.bonds[1], a.element(tp)) == -1);
  }
  CHECK(a.el("tf").bonds[0] == a.bondBetween("o", "tf"));
  CHECK(a.el("tf").bonds[1] == a.bondBetween("tf", "z"));
  CHECK(a.el("mtf").bonds[0] == a.bondBetween("o", "mtf"));
  CHECK(a.el("mgy").bonds[0] == a.bondBetween("z", "mgy"));
  CHECK(a.el("mgy").bonds[1] == a.bondBetween("mgy", "o"));

  // Junctions keep their bonds in declaration order.
  const Element &o = a.el("o");
  REQUIRE(o.bonds.size() == 8);
  CHECK(o.bonds[0] == a.bondBetween("se", "o"));
  CHECK(o.bonds[7] == a.bondBetween("mgy", "o"));

  // Values: constant ones stay parametric, modulated ones may use anything.
  CHECK(g.ctx->print(a.el("tf").value) == "n");
  CHECK(g.ctx->isConst(a.el("sf").value, -1));
  CHECK(g.ctx->print(a.el("mse").value) == "sin(time)");
  CHECK(g.ctx->dependsOn(a.el("msf").value, a.el("c").state));
  CHECK(g.ctx->dependsOn(a.el("mgy").value, a.el("c").state));
  CHECK(g.ctx->dependsOn(a.el("mtf").value, g.ctx->timeSymbol()));
  // Only storage elements have states and initial values.
  CHECK(a.el("c").state.valid());
  CHECK(a.el("i").state.valid());
  CHECK_FALSE(a.el("r").state.valid());
  CHECK_FALSE(a.el("r").initial.valid());
  CHECK(g.ctx->isConst(a.el("c").initial, 0)); // q0 defaults to 0
  CHECK(g.ctx->isConst(a.el("i").initial, 0));

  // otherEnd and sign.
  BondId b = a.bondBetween("z", "c");
  CHECK(g.otherEnd(b, a.element("z")) == a.element("c"));
  CHECK(g.otherEnd(b, a.element("c")) == a.element("z"));
  CHECK(g.sign(b, a.element("c")) == 1);
  CHECK(g.sign(b, a.element("z")) == -1);
}

TEST_CASE("bonds: auto names b1.. by position, named bonds, ends, variables") {
  Analyzed a(R"(model Bonds {
    Se s(1);
    C c(2);
    R r(3);
    0 j;
    bond s -> j;
    bond toc: j -> c;
    bond r -> j;
    output toc.f, j.e;
})");
  const BondGraph &g = a.g();
  REQUIRE(g.bonds.size() == 3);
  CHECK(g.bonds[0].name == "b1");
  CHECK(g.bonds[1].name == "toc");
  CHECK(g.bonds[2].name == "b3"); // numbered by position among all bonds
  CHECK(g.element(g.bonds[0].from).name == "s");
  CHECK(g.element(g.bonds[0].to).name == "j");
  CHECK(g.element(g.bonds[1].from).name == "j");
  CHECK(g.element(g.bonds[1].to).name == "c");
  CHECK(g.element(g.bonds[2].from).name == "r"); // the direction as written
  CHECK(g.element(g.bonds[2].to).name == "j");
  for (std::uint32_t i = 0; i < g.bonds.size(); ++i) {
    const Bond &b = g.bonds[i];
    CHECK(g.ctx->symbol(b.effort).name == b.name + ".e");
    CHECK(g.ctx->symbol(b.flow).name == b.name + ".f");
    CHECK(g.ctx->symbol(b.effort).kind == sym::SymbolKind::Variable);
    CHECK(g.variable(b.effort).kind == VariableInfo::Effort);
    CHECK(g.variable(b.effort).index == i);
    CHECK(g.variable(b.flow).kind == VariableInfo::Flow);
    CHECK(g.variable(b.flow).index == i);
  }
  // Every element registers its bonds.
  CHECK(a.el("j").bonds.size() == 3);
  CHECK(a.el("c").bonds == std::vector<BondId>{a.bond("toc")});
  REQUIRE(g.outputs.size() == 2);
  CHECK(g.outputs[0].value == g.ctx->ref(g.bonds[1].flow));
  CHECK(g.outputs[1].value == g.ctx->ref(g.bonds[0].effort));
}

TEST_CASE("bond names are unique even when a user name looks automatic") {
  Analyzed a(R"(model Clash {
    Se s(1);
    C c(2);
    R r(3);
    0 j;
    bond b3: s -> j;
    bond j -> c;
    bond j -> r;
})");
  if (!a.graph) {
    // Rejecting the name is an acceptable fix too.
    CHECK(a.diags.hasErrors());
    return;
  }
  std::set<std::string> names;
  for (const Bond &b : a.graph->bonds)
    names.insert(b.name);
  CHECK(names.size() == a.graph->bonds.size());
}

TEST_CASE("parameters: declaration order, defaults using other parameters") {
  Analyzed a(R"(model Params {
    parameter m = 2 * k + base;   // uses parameters declared later
    parameter k = 3;
    parameter base = 0.5;
    parameter q0 = m / 4;
    C c(k) { q0 = q0 + 1; }
    I i(m) { p0 = -k; }
    1 j;
    bond j -> c;
    bond j -> i;
})");
  const BondGraph &g = a.g();
  REQUIRE(g.parameters.size() == 4);
  std::vector<std::string> names;
  for (std::uint32_t k = 0; k < g.parameters.size(); ++k) {
    const Parameter &p = g.parameters[k];
    names.push_back(p.name);
    const sym::Symbol &s = g.ctx->symbol(p.symbol);
    CHECK(s.kind == sym::SymbolKind::Parameter);
    CHECK(s.slot == k); // slot = index
    CHECK(s.name == p.name);
    CHECK(g.variable(p.symbol).kind == VariableInfo::None);
    CHECK(g.ctx->isParametric(p.defaultValue));
  }
  CHECK(names == std::vector<std::string>{"m", "k", "base", "q0"});
  std::unordered_map<std::string, double> vals{{"m", 6.5}, {"k", 3}, {"base", 0.5}, {"q0", 1.625}};
  CHECK(eval(g, g.parameters[0].defaultValue, vals) == doctest::Approx(6.5));
  CHECK(eval(g, g.parameters[0].defaultValue, {{"k", 10}, {"base", 1}}) == doctest::Approx(21));
  CHECK(eval(g, g.parameters[1].defaultValue, {}) == 3);
  CHECK(eval(g, g.parameters[3].defaultValue, {{"m", 8}}) == doctest::Approx(2));
  // The linear values are the parameters themselves, initial values may use them.
  CHECK(a.el("c").value == g.ctx->ref(g.parameters[1].symbol));
  CHECK(a.el("i").value == g.ctx->ref(g.parameters[0].symbol));
  CHECK(eval(g, a.el("c").initial, {{"q0", 2}}) == doctest::Approx(3));
  CHECK(eval(g, a.el("i").initial, {{"k", 3}}) == doctest::Approx(-3));
  // Storage states.
  CHECK(g.ctx->symbol(a.el("c").state).name == "c.q");
  CHECK(g.ctx->symbol(a.el("i").state).name == "i.p");
  CHECK(g.variable(a.el("c").state).kind == VariableInfo::State);
  CHECK(g.variable(a.el("c").state).index == a.element("c").index);
  CHECK(g.variable(a.el("i").state).index == a.element("i").index);
  CHECK(a.el("c").law == LawForm::Linear);
}

TEST_CASE("nonlinear laws: C of q, I of p, R of f or e") {
  Analyzed a(R"(model Laws {
    parameter k = 2;
    C c(e = k * q^3);
    I i(f = p / 2 + time);
    R re(e = 3 * f + abs(f));
    R rf(f = tanh(e) - c.q);
    0 z;
    1 o;
    bond z -> c;
    bond z -> re;
    bond z -> o;
    bond o -> i;
    bond o -> rf;
})");
  const BondGraph &g = a.g();
  CHECK(g.verify() == "");
  const Element &c = a.el("c"), &i = a.el("i"), &re = a.el("re"), &rf = a.el("rf");
  CHECK(c.law == LawForm::EffortLaw);
  CHECK(c.lawArg == c.state); // `q` is the element's state
  CHECK(eval(g, c.lawExpr, {{"k", 2}, {"c.q", 1.5}}) == doctest::Approx(2 * 3.375));
  CHECK(i.law == LawForm::FlowLaw);
  CHECK(i.lawArg == i.state);
  CHECK(eval(g, i.lawExpr, {{"i.p", 3}, {"time", 0.25}}) == doctest::Approx(1.75));
  CHECK(re.law == LawForm::EffortLaw);
  CHECK(g.ctx->symbol(re.lawArg).name == "re.f");
  CHECK(g.ctx->symbol(re.lawArg).kind == sym::SymbolKind::Variable);
  CHECK(eval(g, re.lawExpr, {{"re.f", -2}}) == doctest::Approx(-4));
  CHECK(rf.law == LawForm::FlowLaw);
  CHECK(g.ctx->symbol(rf.lawArg).name == "rf.e");
  CHECK(eval(g, rf.lawExpr, {{"rf.e", 0.5}, {"c.q", 0.25}}) ==
        doctest::Approx(std::tanh(0.5) - 0.25));
  // The law's argument is not the bond variable: sema keeps them apart.
  CHECK(re.lawArg != g.bond(re.bonds[0]).flow);
  CHECK(rf.lawArg != g.bond(rf.bonds[0]).effort);
}

TEST_CASE("signals, integrators and outputs") {
  Analyzed a(R"(model Signals {
    parameter k = 3;
    C cap(k) { q0 = 1; }
    I ind(2);
    R res(k);
    1 loop;
    bond loop -> cap;
    bond current: loop -> ind;
    bond res -> loop;
    signal x = -0.2 + integral(ind.f) + integral(v);
    signal v = 2 * cap.q + time;
    output cap.q, speed = ind.f, 2*cap.q  /* twice */ + 1, loop.f, current.e, x, res.e;
})");
  const BondGraph &g = a.g();
  CHECK(g.verify() == "");

  REQUIRE(g.signals.size() == 2);
  const Signal &x = g.signals[0], &v = g.signals[1];
  CHECK(x.name == "x");
  CHECK(v.name == "v");
  CHECK(g.ctx->symbol(v.symbol).name == "v");
  CHECK(g.variable(v.symbol).kind == VariableInfo::Signal);
  CHECK(g.variable(v.symbol).index == 1);
  CHECK(g.variable(x.symbol).index == 0);
  CHECK(eval(g, v.value, {{"cap.q", 1.5}, {"time", 0.25}}) == doctest::Approx(3.25));

  REQUIRE(g.integrators.size() == 2);
  CHECK(g.integrators[0].name == "x.integral");
  CHECK(g.integrators[1].name == "x.integral2");
  CHECK(g.integrators[0].input == g.ctx->ref(g.bond(a.bond("current")).flow));
  CHECK(g.integrators[1].input == g.ctx->ref(v.symbol));
  for (std::uint32_t k = 0; k < 2; ++k) {
    CHECK(g.variable(g.integrators[k].state).kind == VariableInfo::Integrator);
    CHECK(g.variable(g.integrators[k].state).index == k);
    CHECK(g.ctx->symbol(g.integrators[k].state).name == g.integrators[k].name);
  }
  CHECK(eval(g, x.value, {{"x.integral", 1}, {"x.integral2", 10}}) == doctest::Approx(10.8));

  REQUIRE(g.outputs.size() == 7);
  std::vector<std::string> names;
  for (const Output &o : g.outputs)
    names.push_back(o.name);
  // A bare expression is named by its text as written, each run of blanks
  // and comments between tokens shown as one space.
  std::string joined;
  for (const std::string &n : names)
    joined += n + "|";
  CHECK(joined == "cap.q|speed|2*cap.q + 1|loop.f|current.e|x|res.e|");
  CHECK(g.outputs[0].value == g.ctx->ref(a.el("cap").state));
  CHECK(g.outputs[1].value == g.ctx->ref(g.bond(a.bond("current")).flow));
  CHECK(eval(g, g.outputs[2].value, {{"cap.q", 2}}) == doctest::Approx(5));
  // The 1-junction's common flow is its first bond's flow.
  CHECK(g.outputs[3].value == g.ctx->ref(g.bonds[0].flow));
  CHECK(g.outputs[4].value == g.ctx->ref(g.bond(a.bond("current")).effort));
  CHECK(g.outputs[5].value == g.ctx->ref(x.symbol));
  CHECK(g.outputs[6].value == g.ctx->ref(g.bond(a.bondBetween("res", "loop")).effort));
}

TEST_CASE("variables of junctions and two-ports") {
  Analyzed a(R"(model Ports {
    Se s(1);
    TF t(2);
    I i(1);
    C c(1);
    0 z;
    1 o;
    bond s -> z;
    bond z -> c;
    bond out: t -> o;
    bond in: z -> t;
    bond o -> i;
    output z.e, o.f, t.e1, t.f1, t.e2, t.f2;
})");
  const BondGraph &g = a.g();
  const Bond &in = g.bond(a.bond("in")), &out = g.bond(a.bond("out"));
  REQUIRE(g.outputs.size() == 6);
  CHECK(g.outputs[0].value == g.ctx->ref(g.bonds[0].effort)); // z's first bond
  CHECK(g.outputs[1].value == g.ctx->ref(out.flow));          // o's first bond
  CHECK(g.outputs[2].value == g.ctx->ref(in.effort));
  CHECK(g.outputs[3].value == g.ctx->ref(in.flow));
  CHECK(g.outputs[4].value == g.ctx->ref(out.effort));
  CHECK(g.outputs[5].value == g.ctx->ref(out.flow));
}

// --- verify() and dump() ---------------------------------------------------

TEST_CASE("BondGraph::verify catches each broken invariant") {
  Analyzed a(R"(model V {
    Se s(1);
    TF t(2);
    C c(1);
    0 z;
    bond s -> t;
    bond t -> z;
    bond z -> c;
})");
  const BondGraph &good = a.g();
  REQUIRE(good.verify() == "");

  SUBCASE("two-port not ordered [in, out]") {
    BondGraph g = good;
    std::uint32_t t = a.element("t").index;
    std::swap(g.elements[t].bonds[0], g.elements[t].bonds[1]);
    CHECK(g.verify() == "two-port `t` is not ordered [in, out]");
  }
  SUBCASE("two-port with a missing bond") {
    BondGraph g = good;
    g.elements[a.element("t").index].bonds.pop_back();
    // The bond is no longer registered on `t` either; that is found first.
    CHECK(g.verify() == "bond `b2` is not registered on `t`");
  }
  SUBCASE("bond not registered on an end") {
    BondGraph g = good;
    g.elements[a.element("c").index].bonds.clear();
    CHECK(g.verify() == "bond `b3` is not registered on `c`");
  }
  SUBCASE("bond with an invalid end") {
    BondGraph g = good;
    g.bonds[0].to = ElementId{};
    CHECK(g.verify() == "bond `b1` has an invalid end");
    g.bonds[0].to = ElementId{99};
    CHECK(g.verify() == "bond `b1` has an invalid end");
  }
  SUBCASE("bond variables not mapped") {
    BondGraph g = good;
    std::swap(g.bonds[1].effort, g.bonds[1].flow);
    CHECK(g.verify() == "bond `b2` has unmapped variables");
  }
  SUBCASE("storage without a state") {
    BondGraph g = good;
    g.elements[a.element("c").index].state = sym::SymbolId{};
    CHECK(g.verify() == "storage `c` has no state variable");
  }
}

TEST_CASE("graphs built by hand with addElement and addBond") {
  BondGraph g;
  ElementId s = g.addElement(ElementKind::Se, "s");
  ElementId t = g.addElement(ElementKind::GY, "t");
  ElementId j = g.addElement(ElementKind::One, "j");
  ElementId i = g.addElement(ElementKind::I, "i");
  CHECK(s.index == 0);
  CHECK(i.index == 3);
  BondId b1 = g.addBond(s, t);
  BondId b2 = g.addBond(t, j, "shaft");
  BondId b3 = g.addBond(j, i);
  CHECK(g.bond(b1).name == "b1");
  CHECK(g.bond(b2).name == "shaft");
  CHECK(g.bond(b3).name == "b3");
  CHECK(g.element(j).bonds == std::vector<BondId>{b2, b3});
  // The storage element still lacks its state variable.
  CHECK(g.verify() == "storage `i` has no state variable");
  g.elements[i.index].state = g.addVariable("i.p", {VariableInfo::State, i.index});
  CHECK(g.verify() == "");
  CHECK(g.variable(g.element(i).state).kind == VariableInfo::State);
  CHECK(g.variable(g.ctx->timeSymbol()).kind == VariableInfo::None);
  CHECK(g.variable(sym::SymbolId{12345}).kind == VariableInfo::None);
}

TEST_CASE("dump of the RLC model") {
  Analyzed a(kRlc);
  CHECK(a.g().dump() == R"(bond graph RLC
  parameter V = 1
  parameter R = 1
  parameter L = 0.5
  parameter C = 0.1
  Se source (V)
  R resistor (R)
  I inductor (L) initial inductor.p = 0
  C capacitor (C) initial capacitor.q = 0
  1 loop
  bond b1: source -> loop
  bond b2: loop -> resistor
  bond b3: loop -> inductor
  bond b4: loop -> capacitor
  output capacitor.q = capacitor.q
  output inductor.f = b3.f
)");
}

TEST_CASE("dump shows laws, named bonds, signals and integrators") {
  Analyzed a(R"(model D {
    parameter k = 2;
    C c(e = q / k) { q0 = k; }
    R r(f = e);
    0 z;
    bond z -> c;
    bond leak: z -> r;
    signal x = integral(c.q);
    output x;
})");
  CHECK(a.g().dump() == R"(bond graph D
  parameter k = 2
  C c (e = c.q / k) initial c.q = k
  R r (f = r.e)
  0 z
  bond b1: z -> c
  bond leak: z -> r
  signal x = x.integral
  integrator x.integral = integral(c.q)
  output x = x
)");
}

// --- Errors, to the letter -------------------------------------------------

TEST_CASE("error: unknown bond end with a suggestion") {
  CHECK(errorsOf(R"(model M {
    C cap(1);
    0 j;
    R r(1);
    bond j -> capp;
    bond j -> r;
}
)") == R"(test.hbg:5:15: error: unknown name `capp`; did you mean `cap`?
    bond j -> capp;
              ^~~~
)");
}

TEST_CASE("error: unknown names in expressions, with and without a suggestion") {
  CHECK(errorsOf(R"(model M {
    parameter gain = 2;
    signal s = gainn * zzz;
}
)") == R"(test.hbg:3:16: error: unknown name `gainn`; did you mean `gain`?
    signal s = gainn * zzz;
               ^~~~~
test.hbg:3:24: error: unknown name `zzz`
    signal s = gainn * zzz;
                       ^~~
)");
  CHECK(messageOf("model M { signal s = 2; output cpa.q; }") == "unknown name `cpa`");
  CHECK(messageOf("model M { signal s = sinx(time); }") ==
        "unknown function `sinx`; did you mean `sin`?");
  CHECK(messageOf("model M { signal s = frobnicate(time); }") == "unknown function `frobnicate`");
}

TEST_CASE("error: duplicate name with a note at the first definition") {
  CHECK(errorsOf(R"(model M {
    parameter k = 1;
    C c(k);
    0 j;
    R k(2);
    bond j -> c;
}
)") == R"(test.hbg:5:7: error: redefinition of `k`
    R k(2);
      ^
test.hbg:2:15: note: `k` first defined here
    parameter k = 1;
              ^
)");
  // Across kinds and with the later declaration first in the model text.
  Analyzed a("model M { bond x: a -> b; signal x = 1; 0 a; 1 b; }");
  CHECK_FALSE(a.graph);
  REQUIRE(a.diags.diagnostics().size() == 1);
  const Diagnostic &d = a.diags.diagnostics()[0];
  CHECK(d.message == "redefinition of `x`");
  CHECK(a.sm.lineCol(d.range.begin).column == 34);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].message == "`x` first defined here");
  CHECK(a.sm.lineCol(d.notes[0].range.begin).column == 16);
}

TEST_CASE("error: bond counts of one-ports, two-ports and junctions") {
  CHECK(errorsOf(R"(model M {
    Se s(1);
    C c(1);
    TF t(2);
    GY g(3);
    0 j;
    1 k;
    0 z;
    bond s -> j;
    bond s -> c;
    bond j -> t;
    bond j -> g;
    bond k -> g;
}
)") == R"(test.hbg:2:8: error: Se element `s` has 2 bonds; it takes exactly one
    Se s(1);
       ^
test.hbg:4:8: error: TF element `t` has one bond; it takes exactly two, one in and one out
    TF t(2);
       ^
test.hbg:5:8: error: GY element `g` needs one bond in and one bond out; it has 2 in and 0 out
    GY g(3);
       ^
test.hbg:7:7: error: junction `k` has one bond; a junction needs at least two
    1 k;
      ^
test.hbg:8:7: error: junction `z` has no bonds; a junction needs at least two
    0 z;
      ^
)");
  CHECK(messageOf("model M { C c(1); 0 j; 1 k; bond j -> k; bond k -> j; }") ==
        "C element `c` has no bonds; it takes exactly one");
  CHECK(messageOf("model M { MTF t(time); 0 a; 0 b; bond t -> a; bond t -> b; bond a -> b; }") ==
        "MTF element `t` needs one bond in and one bond out; it has 0 in and 2 out");
  CHECK(messageOf("model M { C c(1); 0 j; bond c -> c; bond c -> j; bond j -> c; }") ==
        "bond connects `c` to itself");
}

TEST_CASE("error: a constant value that is not constant, with its note") {
  CHECK(errorsOf(R"(model M {
    Se s(2 * c.q);
    C c(1);
    1 j;
    bond s -> j;
    bond j -> c;
}
)") == R"(test.hbg:2:10: error: the value of Se element `s` must be constant (parameters and numbers only)
    Se s(2 * c.q);
         ^~~~~~~
test.hbg:2:5: note: a source driven by a signal is written `MSe s(...)`
    Se s(2 * c.q);
    ^~
)");
  // Storage and R values, parameter defaults and initial values: no note.
  Analyzed a(R"(model M {
    parameter p = time;
    C c(1) { q0 = c.f; }
    R r(time);
    0 j;
    bond j -> c;
    bond j -> r;
})");
  CHECK_FALSE(a.graph);
  std::string messages;
  for (const Diagnostic &d : a.diags.diagnostics()) {
    messages += d.message + "\n";
    CHECK(d.notes.empty());
  }
  CHECK(messages == "the default of parameter `p` must be constant (parameters and numbers only)\n"
                    "the initial value of `c` must be constant (parameters and numbers only)\n"
                    "the value of R element `r` must be constant (parameters and numbers only)\n");
}

TEST_CASE("error: misc sema errors, one at a time") {
  CHECK(messageOf("model M { C c(1); R r(1); 0 j; bond j -> c; bond j -> r; output c.x; }") ==
        "C element `c` has no variable `x`; it has `e`, `f` and `q`");
  CHECK(messageOf("model M { C c(1); R r(1); 0 j; bond j -> c; bond j -> r; output j.f; }") ==
        "0-junction `j` has no variable `f`; it has `e`");
  CHECK(messageOf("model M { C c(1); R r(1); 0 j; bond j -> c; bond j -> r; output c; }") ==
        "`c` is a C element; use one of its variables (`c.e`, `c.f` and `c.q`)");
  CHECK(messageOf("model M { parameter k = 1; C c(1); 0 j; bond j -> c; bond k -> j; }") ==
        "`k` is a parameter, not an element or junction");
  CHECK(messageOf("model M { parameter a = b; parameter b = 2 * a; }") ==
        "parameter `a` depends on itself: `a` -> `b` -> `a`");
  CHECK(messageOf("model M { signal x = y + 1; signal y = 2 * x; }") ==
        "signal `x` depends on itself: `x` -> `y` -> `x`");
  CHECK(messageOf("model M { signal x = 1; output integral(x); }") ==
        "`integral` may only appear in a signal definition");
  CHECK(messageOf("model M { C c(1) { p0 = 1; } R r(1); 0 j; bond j -> c; bond j -> r; }") ==
        "C element `c` has no state `p0`; its initial value is `q0`");
  CHECK(messageOf("model M { R r(1) { q0 = 1; } C c(1); 0 j; bond j -> r; bond j -> c; }") ==
        "R element `r` has no state to initialise");
  CHECK(messageOf("model M { I i(e = p); R r(1); 1 j; bond j -> i; bond j -> r; }") ==
        "I element `i` cannot take a law for `e`; it takes a value or `f = ...` of `p`");
  CHECK(messageOf("model M { C c(1, 2); R r(1); 0 j; bond j -> c; bond j -> r; }") ==
        "C element `c` takes one argument, 2 given");
  CHECK(messageOf("model M { C c(1); R r(1); 0 j; bond j -> c; bond j -> r; output c.q, c.q; }") ==
        "output `c.q` is listed twice");
  CHECK(messageOf("model M { parameter time = 1; }") ==
        "`time` is reserved and cannot name a declaration");
  CHECK(messageOf("model M { signal s = max(time); }") == "function `max` takes two arguments, 1 given");
}

TEST_CASE("a signal may depend on its own integral") {
  Analyzed a("model M { signal x = integral(1 - x); output x; }");
  const BondGraph &g = a.g();
  REQUIRE(g.integrators.size() == 1);
  CHECK(g.ctx->dependsOn(g.integrators[0].input, g.signals[0].symbol));
  CHECK(g.signals[0].value == g.ctx->ref(g.integrators[0].state));
}

TEST_CASE("errors: files without exactly one model") {
  {
    Analyzed a("// nothing here\n");
    CHECK_FALSE(a.graph);
    CHECK(a.diags.renderAll() == "hbgc: error: no model in `test.hbg`\n");
  }
  {
    Analyzed a("model A { }\nmodel B { }\n");
    CHECK_FALSE(a.graph);
    CHECK(a.diags.renderAll() == "test.hbg:2:7: error: more than one model in one file: `B`\n"
                                 "model B { }\n"
                                 "      ^\n");
  }
}

// --- Switched junctions ------------------------------------------------------

namespace {
const char *kCollision = R"(model NonelasticCollision {
    parameter m1 = 1.0;   // bullet
    parameter m2 = 1.0;   // wood
    I bullet(m1) { p0 = 1.0; }
    I wood(m2)   { p0 = 0.0; }
    1 v1; 1 v2;
    0 contact switched {
        off initial;  on;
        off -> on  when (x2 - x1 <= 0)+;
        on  -> off when (contact.e < 0)-;
    }
    bond v1 -> bullet;  bond v2 -> wood;
    bond v1 -> contact; bond contact -> v2;
    signal x1 = -0.2 + integral(v1.f);
    signal x2 =  0.0 + integral(v2.f);
    output bullet.f, wood.f, x1, x2;
}
)";

/// `model M` with a 0-junction `j` switched by `fsm` between two inertias.
std::string switchedModel(const std::string &fsm) {
  return "model M { parameter k = 2; I a(1); I b(1); 0 j switched { " + fsm +
         " } bond a -> j; bond j -> b; signal s = integral(a.f); }";
}
} // namespace

TEST_CASE("switched junctions: the FSM stored on the junction") {
  Analyzed a(kCollision);
  const BondGraph &g = a.g();
  const Element &contact = a.el("contact");
  CHECK(contact.kind == ElementKind::Zero);
  REQUIRE(contact.fsm);
  const Fsm &fsm = *contact.fsm;
  REQUIRE(fsm.states.size() == 2);
  CHECK(fsm.states[0].name == "off");
  CHECK_FALSE(fsm.states[0].on);
  CHECK(fsm.states[1].name == "on");
  CHECK(fsm.states[1].on);
  CHECK(fsm.initial == 0);
  REQUIRE(fsm.transitions.size() == 2);

  const FsmTransition &close = fsm.transitions[0];
  CHECK(close.from == 0);
  CHECK(close.to == 1);
  CHECK(close.guard.kind == Guard::Compare);
  CHECK(close.guard.op == CompareOp::LessEqual);
  CHECK(close.guard.mark == '+');
  CHECK(g.ctx->print(close.guard.lhs) == "x2 - x1");
  CHECK(g.ctx->print(close.guard.rhs) == "0");
  CHECK(eval(g, close.guard.value, {{"x1", 0.5}, {"x2", 2}}) == doctest::Approx(1.5));

  const FsmTransition &open = fsm.transitions[1];
  CHECK(open.from == 1);
  CHECK(open.to == 0);
  CHECK(open.guard.op == CompareOp::Less);
  CHECK(open.guard.mark == '-');
  // `contact.e` is the effort of the junction's bonds.
  CHECK(open.guard.lhs == g.ctx->ref(g.bond(a.bondBetween("v1", "contact")).effort));

  // Plain junctions have none.
  CHECK_FALSE(a.el("v1").fsm);
}

TEST_CASE("switched junctions: guards combine, use any value, and dump") {
  Analyzed a(switchedModel("on closed; off open initial; off blocked;"
                           "open -> closed when not (a.p > k)+ and ((time >= 1)- or (s = 0)+);"
                           "closed -> blocked when (b.f < -1)-;"
                           "blocked -> open when ((a.p < 1)+ and (b.p < 1)+) and (j.e > 0)+;"
                           "closed -> open when (j.e < 0)- or (time > 9)- or (k > 1)+;"));
  const BondGraph &g = a.g();
  const Fsm &fsm = *a.el("j").fsm;
  REQUIRE(fsm.states.size() == 3);
  CHECK(fsm.initial == 1);
  CHECK(fsm.states[0].on);
  CHECK_FALSE(fsm.states[2].on);
  REQUIRE(fsm.transitions.size() == 4);
  const Guard &guard = fsm.transitions[0].guard;
  CHECK(guard.kind == Guard::And);
  REQUIRE(guard.children.size() == 2);
  CHECK(guard.children[0].kind == Guard::Not);
  CHECK(guard.children[0].children.at(0).op == CompareOp::Greater);
  CHECK(guard.children[1].kind == Guard::Or);
  CHECK(guard.children[1].children.at(0).lhs == g.ctx->time());
  CHECK(guard.children[1].children.at(1).op == CompareOp::Equal);
  CHECK(fsm.transitions[3].guard.kind == Guard::Or);
  CHECK(fsm.transitions[3].guard.children.size() == 3);

  std::string dump = g.dump();
  CHECK(dump.find("  0 j switched\n"
                  "    state closed: on\n"
                  "    state open: off initial\n"
                  "    state blocked: off\n"
                  "    open -> closed when not (a.p > k)+ and ((time >= 1)- or (s = 0)+)\n"
                  "    closed -> blocked when (b2.f < -1)-\n"
                  "    blocked -> open when ((a.p < 1)+ and (b.p < 1)+) and (b1.e > 0)+\n"
                  "    closed -> open when (b1.e < 0)- or (time > 9)- or (k > 1)+\n") !=
        std::string::npos);
}

TEST_CASE("switched junctions: no transitions at all is allowed") {
  Analyzed a(switchedModel("on initial;"));
  const Fsm &fsm = *a.el("j").fsm;
  CHECK(fsm.states.size() == 1);
  CHECK(fsm.transitions.empty());
}

TEST_CASE("error: switched junctions, one at a time") {
  CHECK(messageOf(switchedModel("off; on; off -> on when (k > 1)+;")) ==
        "switched junction `j` has no initial state; mark one state `initial`");
  CHECK(messageOf(switchedModel("")) ==
        "switched junction `j` has no initial state; mark one state `initial`");
  CHECK(messageOf(switchedModel("off initial; on initial; off -> on when (k > 1)+;")) ==
        "switched junction `j` has more than one initial state: `off` and `on`");
  CHECK(messageOf(switchedModel("off initial; on x; off x; off -> x when (k > 1)+;")) ==
        "switched junction `j` has two states named `x`");
  CHECK(messageOf(switchedModel("off initial; on closed; off -> close when (k > 1)+;")) ==
        "switched junction `j` has no state `close`; did you mean `closed`?");
  CHECK(messageOf(switchedModel("off initial; on; off -> on when (k > 1)+; on -> zzz when (k < 1)+;")) ==
        "switched junction `j` has no state `zzz`");
  CHECK(messageOf(switchedModel("off initial; on; off -> on when (k > 1)+; on -> on when (k < 1)+;")) ==
        "transition from state `on` of `j` to itself");
  CHECK(messageOf(switchedModel("off initial; on; on -> off when (k > 1)+;")) ==
        "state `on` of switched junction `j` cannot be reached from its initial state `off`");
  CHECK(messageOf(switchedModel("off initial; on; off -> on when (kk > 1)+;")) ==
        "unknown name `kk`; did you mean `k`?");
  CHECK(messageOf(switchedModel("off initial; on; off -> on when not (j.f > 1)+;")) ==
        "0-junction `j` has no variable `f`; it has `e`");
  CHECK(messageOf(switchedModel("off initial; on; off -> on when (integral(k) > 1)+;")) ==
        "`integral` may only appear in a signal definition");
}

TEST_CASE("error: duplicate and extra initial states carry notes") {
  CHECK(errorsOf(switchedModel("off initial; on; off; off -> on when (k > 1)+;")) ==
        "test.hbg:1:76: error: switched junction `j` has two states named `off`\n"
        "model M { parameter k = 2; I a(1); I b(1); 0 j switched { off initial; on; off; off -> on when (k > 1)+; } bond a -> j; bond j -> b; signal s = integral(a.f); }\n"
        "                                                                           ^~~\n"
        "test.hbg:1:59: note: `off` first defined here\n"
        "model M { parameter k = 2; I a(1); I b(1); 0 j switched { off initial; on; off; off -> on when (k > 1)+; } bond a -> j; bond j -> b; signal s = integral(a.f); }\n"
        "                                                          ^~~\n");
}

// --- pre(expr): held values ---------------------------------------------------

namespace {
/// A ball on a floor, its rebound a modulated flow source using `pre`.
const char *kRebound = R"(model Rebound {
    parameter m = 2;
    parameter cr = 0.8;
    I ball(m) { p0 = 1; }
    MSf rebound(-cr * pre(ball.f));
    R floor(f = pre( ball.f ) + pre(cr) * e);
    1 v;
    bond v -> ball;  bond rebound -> v;  bond v -> floor;
    signal y = integral(pre(time)) + pre(y);
    output last = pre(ball.f), pre(v.f) - y;
    0 j switched { off initial; on; off -> on when (pre(ball.p) > 1)-; }
    Se s(1);
    bond s -> j;  bond j -> floor2;
    R floor2(1);
}
)";
} // namespace

TEST_CASE("pre: held values after the parameters, shared by what they hold") {
  Analyzed a(kRebound);
  const BondGraph &g = a.g();
  CHECK(g.verify() == "");
  REQUIRE(g.parameters.size() == 2);
  // In order of first appearance; `pre( ball.f )` and `pre(v.f)` hold the
  // same variable as the first `pre(ball.f)`, and share its held value.
  REQUIRE(g.held.size() == 5);
  const sym::ExprId ballF = g.ctx->ref(g.bond(a.bondBetween("v", "ball")).flow);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < g.held.size(); ++i) {
    const Held &h = g.held[i];
    names.push_back(h.name);
    const sym::Symbol &sy = g.ctx->symbol(h.symbol);
    CHECK(sy.kind == sym::SymbolKind::Parameter);
    CHECK(sy.slot == g.parameters.size() + i);
    CHECK(sy.name == h.name);
    CHECK(g.heldOf(h.symbol) == &h);
  }
  CHECK(names == std::vector<std::string>{"pre(ball.f)", "pre(cr)", "pre(time)", "pre(y)",
                                          "pre(ball.p)"});
  CHECK(g.held[0].value == ballF);
  CHECK(g.held[1].value == g.ctx->ref(g.parameters[1].symbol));
  CHECK(g.held[2].value == g.ctx->time());
  CHECK(g.held[3].value == g.ctx->ref(g.signals[0].symbol));
  CHECK(g.held[4].value == g.ctx->ref(a.el("ball").state));
  CHECK(g.heldOf(g.parameters[0].symbol) == nullptr);
  CHECK(g.heldOf(a.el("ball").state) == nullptr);

  // Where they are used: the symbol stands for the call.
  CHECK(eval(g, a.el("rebound").value, {{"cr", 0.5}, {"pre(ball.f)", 3}}) == doctest::Approx(-1.5));
  CHECK(eval(g, a.el("floor").lawExpr, {{"floor.e", 2}, {"pre(cr)", 0.5}, {"pre(ball.f)", 3}}) ==
        doctest::Approx(4));
  CHECK(g.integrators.at(0).input == g.ctx->ref(g.held[2].symbol));
  CHECK(g.outputs.at(0).value == g.ctx->ref(g.held[0].symbol));
  CHECK(g.outputs.at(1).name == "pre(v.f) - y");
  CHECK(eval(g, g.outputs.at(1).value, {{"pre(ball.f)", 3}, {"y", 1}}) == doctest::Approx(2));
  const Guard &guard = a.el("j").fsm->transitions.at(0).guard;
  CHECK(guard.lhs == g.ctx->ref(g.held[4].symbol));
}

TEST_CASE("pre: an R law's local name is held as the R's bond variable") {
  Analyzed a(R"(model M {
    Sf s(1);
    R r(e = 2 * pre(f) + f);
    C c(1);
    0 j;
    bond s -> j;  bond j -> r;  bond j -> c;
    output pre(r.f), pre(c.q);
    C d(e = pre(q) * q);
    bond j -> d;
})");
  const BondGraph &g = a.g();
  REQUIRE(g.held.size() == 3);
  CHECK(g.held[0].name == "pre(f)");
  CHECK(g.held[0].value == g.ctx->ref(g.bond(a.bondBetween("j", "r")).flow));
  // `pre(r.f)` holds the same variable: one held value.
  CHECK(g.outputs.at(0).value == g.ctx->ref(g.held[0].symbol));
  // Elements are lowered before outputs. A C's local name is its state.
  CHECK(g.held[1].name == "pre(q)");
  CHECK(g.held[1].value == g.ctx->ref(a.el("d").state));
  CHECK(g.held[2].value == g.ctx->ref(a.el("c").state));
  CHECK(g.verify() == "");
}

TEST_CASE("pre: dump lists held values, and verify checks their slots") {
  Analyzed a(R"(model M {
    parameter k = 2;
    I ball(1);
    MSf push(-k * pre(ball.f));
    1 v;
    bond push -> v;  bond v -> ball;
})");
  BondGraph g = a.g();
  CHECK(g.dump() == R"(bond graph M
  parameter k = 2
  I ball (1) initial ball.p = 0
  MSf push (-(k * pre(ball.f)))
  1 v
  bond b1: push -> v
  bond b2: v -> ball
  held pre(ball.f) = b2.f
)");
  BondGraph wrongSlot = g;
  wrongSlot.held[0].symbol = wrongSlot.ctx->addSymbol("pre(x)", sym::SymbolKind::Parameter, 0);
  CHECK(wrongSlot.verify() == "held value `pre(ball.f)` is not in slot 1");
  BondGraph nested = g;
  nested.held[0].value = nested.ctx->ref(nested.held[0].symbol);
  CHECK(nested.verify() == "held value `pre(ball.f)` holds another held value");
  BondGraph unmapped = g;
  unmapped.held[0].value =
      unmapped.ctx->ref(unmapped.ctx->addSymbol("r.f", sym::SymbolKind::Variable, 0));
  CHECK(unmapped.verify() == "held value `pre(ball.f)` uses the unmapped symbol `r.f`");
  BondGraph noValue = g;
  noValue.held[0].value = {};
  CHECK(noValue.verify() == "held value `pre(ball.f)` has no value");
}

TEST_CASE("error: pre nested, with a wrong argument count, or where a constant is required") {
  CHECK(messageOf("model M { signal s = pre(1 + pre(time)); }") ==
        "`pre` may not appear inside another `pre`");
  CHECK(messageOf("model M { signal s = pre(time, 1); }") ==
        "function `pre` takes one argument, 2 given");
  CHECK(messageOf("model M { signal s = pre(); }") == "function `pre` takes one argument, 0 given");
  CHECK(messageOf("model M { signal s = pr(time); }") ==
        "unknown function `pr`; did you mean `pre`?");
  // Even of a constant: `pre` is never allowed where a constant is required.
  CHECK(errorsOf(R"(model M {
    parameter k = 2 * pre(1);
})") == R"(test.hbg:2:19: error: the default of parameter `k` must be constant (parameters and numbers only)
    parameter k = 2 * pre(1);
                  ^~~~~~~~~~
test.hbg:2:23: note: `pre(1)` is constant between events but changes at each one
    parameter k = 2 * pre(1);
                      ^~~~~~
)");
  Analyzed a(R"(model M {
    Se s(pre(c.e));
    C c(pre(  time  )) { q0 = pre(c.q); }
    0 j;
    bond s -> j;  bond j -> c;
})");
  CHECK_FALSE(a.graph);
  std::string messages;
  for (const Diagnostic &d : a.diags.diagnostics()) {
    messages += d.message + "\n";
    for (const Diagnostic &n : d.notes)
      messages += "  " + n.message + "\n";
  }
  CHECK(messages == "the value of Se element `s` must be constant (parameters and numbers only)\n"
                    "  `pre(c.e)` is constant between events but changes at each one\n"
                    "  a source driven by a signal is written `MSe s(...)`\n"
                    "the value of C element `c` must be constant (parameters and numbers only)\n"
                    "  `pre( time )` is constant between events but changes at each one\n"
                    "the initial value of `c` must be constant (parameters and numbers only)\n"
                    "  `pre(c.q)` is constant between events but changes at each one\n");
}
