//===- tests/equations/equations_test.cpp - State equations ---------------===//
//
// The equations stage on bond graphs built without the parser (this test
// links no ANTLR symbol: the stage does not depend on the front end). A
// randomised property: on random tree-shaped graphs every element's law
// and every junction, TF and GY rule holds for the bond variables; and
// the kinks the stage takes out of expressions.
//
//===----------------------------------------------------------------------===//

#include "causality/RandomBondGraph.h"
#include "hbg/equations/Equations.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

using namespace hbg;

namespace {

/// Checks every element's law and every junction, TF and GY rule on the
/// bond variables of `sys` at one random state.
void checkRules(const hbgtest::RandomBondGraph &rg, const eq::EquationSystem &sys, std::mt19937 &rng) {
  using namespace hbg::bg;
  const BondGraph &g = rg.g;
  const sym::ExprContext &ctx = *sys.ctx;
  std::uniform_real_distribution<double> st(-2, 2);
  std::vector<double> x(sys.states.size());
  for (double &v : x)
    v = st(rng);
  double t = 0.7;
  auto eval = [&](sym::ExprId e) {
    return ctx.evaluate(e, [&](sym::SymbolId s) {
      const sym::Symbol &sy = ctx.symbol(s);
      if (sy.kind == sym::SymbolKind::State)
        return x.at(sy.slot);
      if (sy.kind == sym::SymbolKind::Time)
        return t;
      FAIL_CHECK("unexpected symbol " << sy.name);
      return 0.0;
    });
  };
  std::vector<double> e(g.bonds.size()), f(g.bonds.size());
  for (std::size_t k = 0; k < g.bonds.size(); ++k) {
    e[k] = eval(sys.bondEffort[k]);
    f[k] = eval(sys.bondFlow[k]);
  }
  std::map<std::string, std::size_t> stateIndex;
  for (std::size_t k = 0; k < sys.states.size(); ++k)
    stateIndex[sys.states[k].name] = k;
  auto value = [&](const Element &el) {
    REQUIRE(ctx.isConst(el.value));
    return ctx.node(el.value).value;
  };
  auto approx = [](double v) { return doctest::Approx(v).epsilon(1e-9); };
  double power = 0; // into all one-ports: zero by conservation
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    const Element &el = g.elements[i];
    ElementId id{i};
    CAPTURE(el.name);
    if (isJunction(el.kind)) {
      bool zero = el.kind == ElementKind::Zero;
      double sum = 0, scale = 1;
      for (BondId b : el.bonds) {
        double common = zero ? e[b.index] : f[b.index];
        CHECK(common == approx(zero ? e[el.bonds[0].index] : f[el.bonds[0].index]));
        double other = zero ? f[b.index] : e[b.index];
        sum += g.sign(b, id) * other;
        scale += std::fabs(other);
      }
      CHECK(std::fabs(sum) <= 1e-9 * scale);
      continue;
    }
    if (isTwoPort(el.kind)) {
      std::uint32_t b1 = el.bonds[0].index, b2 = el.bonds[1].index;
      double n = value(el);
      if (el.kind == ElementKind::TF || el.kind == ElementKind::MTF) {
        CHECK(e[b1] == approx(n * e[b2]));
        CHECK(f[b2] == approx(n * f[b1]));
      } else {
        CHECK(e[b1] == approx(n * f[b2]));
        CHECK(e[b2] == approx(n * f[b1]));
      }
      continue;
    }
    std::uint32_t b = el.bonds[0].index;
    int s = g.sign(el.bonds[0], id);
    power += s * e[b] * f[b];
    switch (el.kind) {
    case ElementKind::Se:
    case ElementKind::MSe:
      CHECK(e[b] == approx(value(el)));
      break;
    case ElementKind::Sf:
    case ElementKind::MSf:
      CHECK(f[b] == approx(value(el)));
      break;
    case ElementKind::C: {
      std::size_t k = stateIndex.at(el.name + ".q");
      CHECK(e[b] == approx(x[k] / value(el)));
      CHECK(eval(sys.states[k].derivative) == approx(s * f[b]));
      break;
    }
    case ElementKind::I: {
      std::size_t k = stateIndex.at(el.name + ".p");
      CHECK(s * f[b] == approx(x[k] / value(el)));
      CHECK(eval(sys.states[k].derivative) == approx(e[b]));
      break;
    }
    case ElementKind::R: {
      if (el.law == LawForm::Linear) {
        CHECK(e[b] == approx(value(el) * s * f[b]));
      } else {
        const auto &c = rg.laws.at(i);
        auto law = [&](double v) { return c.a * v + c.b * v * v * v; };
        if (el.law == LawForm::EffortLaw)
          CHECK(e[b] == approx(law(s * f[b])));
        else
          CHECK(s * f[b] == approx(law(e[b])));
      }
      break;
    }
    default:
      FAIL("unexpected element kind");
    }
  }
  double scale = 1;
  for (std::size_t k = 0; k < e.size(); ++k)
    scale += std::fabs(e[k] * f[k]);
  CHECK(std::fabs(power) <= 1e-9 * scale);
}

} // namespace

TEST_CASE("random trees: every element law, junction, TF and GY rule holds") {
  int built = 0;
  std::mt19937 rng(777);
  for (std::uint32_t seed = 1; seed <= 600; ++seed) {
    CAPTURE(seed);
    hbgtest::RandomBondGraph rg = hbgtest::randomBondGraph(seed, seed % 3 == 0);
    SourceManager sm;
    DiagnosticEngine diags(sm);
    std::optional<causality::CausalAssignment> ca = causality::assignCausality(rg.g, diags);
    if (!ca || !ca->choices.empty() || !ca->derivative.empty())
      continue;
    bool inverted = false; // a nonlinear R against its law needs Newton
    for (std::uint32_t i = 0; i < rg.g.elements.size(); ++i) {
      const bg::Element &e = rg.g.elements[i];
      inverted |= e.kind == bg::ElementKind::R && e.law != bg::LawForm::Linear &&
                  ca->setsEffort(rg.g, e.bonds[0], bg::ElementId{i}) !=
                      (e.law == bg::LawForm::EffortLaw);
    }
    if (inverted)
      continue;
    std::optional<eq::EquationSystem> sys;
    REQUIRE_NOTHROW(sys = eq::buildEquations(rg.g, *ca, diags));
    INFO(diags.renderAll());
    REQUIRE(sys); // trees without choices have no algebraic loops
    CHECK(sys->verify() == "");
    INFO(sys->dump());
    ++built;
    for (int k = 0; k < 3; ++k)
      checkRules(rg, *sys, rng);
  }
  CHECK(built > 200);
}

TEST_CASE("extractKinks: kinks of changing values only, select conditions left alone") {
  // dx/dt = (abs(x) - 1 > 0 ? x : 2 x) + abs(p) + min(x, time) + sign(x) * abs(x):
  // the condition is a pivot choice (kept), abs(p) is of a parameter (kept),
  // min gives one kink with argument time - x, and sign(x), abs(x) share one.
  eq::EquationSystem s;
  s.ctx = std::make_shared<sym::ExprContext>();
  sym::ExprContext &c = *s.ctx;
  sym::SymbolId x = c.addSymbol("x", sym::SymbolKind::State, 0);
  sym::SymbolId p = c.addSymbol("p", sym::SymbolKind::Parameter, 0);
  s.parameters.push_back({"p", p, c.constant(1)});
  sym::ExprId X = c.ref(x), P = c.ref(p);
  sym::ExprId pivot = c.select(c.sub(c.unary(sym::Op::Abs, X), c.constant(1)), X,
                               c.mul(c.constant(2), X));
  sym::ExprId d = c.add(c.add(pivot, c.unary(sym::Op::Abs, P)),
                        c.add(c.min(X, c.time()),
                              c.mul(c.unary(sym::Op::Sign, X), c.unary(sym::Op::Abs, X))));
  s.states.push_back({"x", x, c.constant(0), d, {}});
  eq::extractKinks(s);
  REQUIRE(s.kinks.size() == 2);
  std::vector<std::string> texts = {s.kinks[0].text, s.kinks[1].text};
  std::sort(texts.begin(), texts.end());
  CHECK(texts[0] == "min(x, time)");
  bool signOrAbs = texts[1] == "sign(x)" || texts[1] == "abs(x)";
  CHECK(signOrAbs);
  CHECK(s.verify().empty());
  // Evaluated with branches +1 (x < time, x > 0) it is the original at
  // x = 0.5, t = 2: pivot 2 x = 1, abs(p) = 1, min = 0.5, sign * abs = 0.5.
  auto value = [&](sym::SymbolId sy) -> double {
    const sym::Symbol &info = c.symbol(sy);
    if (info.kind == sym::SymbolKind::State)
      return 0.5;
    if (info.kind == sym::SymbolKind::Time)
      return 2;
    return 1.0; // p, and every branch
  };
  CHECK(c.evaluate(s.states[0].derivative, value) == doctest::Approx(3));
}

TEST_CASE("extractKinks: floor, and the sign conditions of if") {
  // dx/dt = floor(2 x) + select(sign(time - 1), 3, 4) + select(x - 5, 6, 7):
  // floor of a state is a floor kink (its branch the integer below 2 x);
  // a select whose condition is a sign (as `if` writes it) gives that sign
  // as a kink; one whose condition is anything else is a pivot choice and
  // stays.
  eq::EquationSystem s;
  s.ctx = std::make_shared<sym::ExprContext>();
  sym::ExprContext &c = *s.ctx;
  sym::SymbolId x = c.addSymbol("x", sym::SymbolKind::State, 0);
  sym::ExprId X = c.ref(x);
  sym::ExprId d = c.add(
      c.add(c.unary(sym::Op::Floor, c.mul(c.constant(2), X)),
            c.select(c.unary(sym::Op::Sign, c.sub(c.time(), c.constant(1))), c.constant(3),
                     c.constant(4))),
      c.select(c.sub(X, c.constant(5)), c.constant(6), c.constant(7)));
  s.states.push_back({"x", x, c.constant(0), d, {}});
  eq::extractKinks(s);
  REQUIRE(s.kinks.size() == 2);
  const eq::Kink &fl = s.kinks[0].floor ? s.kinks[0] : s.kinks[1];
  const eq::Kink &sg = s.kinks[0].floor ? s.kinks[1] : s.kinks[0];
  CHECK(fl.floor);
  CHECK(!sg.floor);
  CHECK(c.print(fl.argument) == "2 * x");
  CHECK(c.print(sg.argument) == "time - 1");
  CHECK(s.verify().empty());
  // With the floor's branch 3 and the sign's -1 at x = 1.7, t = 0.5: the
  // derivative reads the branches, not floor(3.4) and sign(-0.5) again.
  auto value = [&](sym::SymbolId sy) -> double {
    if (sy == x)
      return 1.7;
    if (c.symbol(sy).kind == sym::SymbolKind::Time)
      return 0.5;
    return sy == fl.branch ? 3.0 : -1.0;
  };
  CHECK(c.evaluate(s.states[0].derivative, value) == doctest::Approx(3 + 4 + 7));
  // A floor of parameters alone is no kink.
  eq::EquationSystem p;
  p.ctx = std::make_shared<sym::ExprContext>();
  sym::SymbolId k = p.ctx->addSymbol("k", sym::SymbolKind::Parameter, 0);
  sym::SymbolId y = p.ctx->addSymbol("y", sym::SymbolKind::State, 0);
  p.parameters.push_back({"k", k, p.ctx->constant(2.5)});
  p.states.push_back({"y", y, p.ctx->constant(0), p.ctx->unary(sym::Op::Floor, p.ctx->ref(k)), {}});
  eq::extractKinks(p);
  CHECK(p.kinks.empty());
}
