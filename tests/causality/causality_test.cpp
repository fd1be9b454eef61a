//===- tests/causality/causality_test.cpp - SCAP on hand-built graphs ----===//
//
// Every graph here is built with BondGraph::addElement/addBond (no parser),
// so diagnostics have no location and render as `hbgc: error: ...`.
//
//===----------------------------------------------------------------------===//

#include "causality/RandomBondGraph.h"
#include "hbg/causality/Causality.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace hbg;
using namespace hbg::bg;
using namespace hbg::causality;

namespace {

/// A graph under construction and the causality found for it.
struct Hand {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  BondGraph g;
  std::optional<CausalAssignment> ca;

  ElementId add(ElementKind k, const std::string &name) {
    ElementId id = g.addElement(k, name);
    if (!isJunction(k))
      g.elements[id.index].value = g.ctx->constant(1);
    if (isStorage(k)) {
      sym::SymbolId s =
          g.addVariable(name + (k == ElementKind::C ? ".q" : ".p"), {VariableInfo::State, id.index});
      g.elements[id.index].state = s;
      g.elements[id.index].initial = g.ctx->constant(0);
    }
    return id;
  }
  BondId bond(ElementId from, ElementId to, std::string name = {}) {
    return g.addBond(from, to, std::move(name));
  }
  /// Runs SCAP; requires success.
  const CausalAssignment &run() {
    REQUIRE(g.verify() == "");
    ca = assignCausality(g, diags);
    INFO(diags.renderAll());
    REQUIRE(ca);
    CHECK(diags.diagnostics().empty());
    CHECK(ca->verify(g) == "");
    return *ca;
  }
  /// Runs SCAP; requires failure and returns the rendered diagnostics.
  std::string fail() {
    ca = assignCausality(g, diags);
    CHECK_FALSE(ca);
    CHECK(diags.errorCount() == 1);
    return diags.renderAll();
  }
  /// The name of the element that sets the effort of `b`.
  std::string effortBy(BondId b) const {
    REQUIRE(ca);
    EffortFrom c = ca->bonds[b.index].effort;
    if (c == EffortFrom::Unassigned)
      return "(unassigned)";
    return g.element(c == EffortFrom::Tail ? g.bond(b).from : g.bond(b).to).name;
  }
  std::string origin(BondId b) const {
    ElementId o = ca->bonds[b.index].origin;
    return o.valid() ? g.element(o).name : "(none)";
  }
  std::string path(const std::vector<ElementId> &p) const {
    std::string out;
    for (ElementId e : p)
      out += (out.empty() ? "" : " ") + g.element(e).name;
    return out;
  }
};

} // namespace

TEST_CASE("series circuit Se-1-R-C-I: every bond, integral causality") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId j = h.add(ElementKind::One, "j");
  ElementId r = h.add(ElementKind::R, "r");
  ElementId c = h.add(ElementKind::C, "c");
  ElementId i = h.add(ElementKind::I, "i");
  BondId b1 = h.bond(se, j), b2 = h.bond(j, r), b3 = h.bond(j, c), b4 = h.bond(j, i);
  const CausalAssignment &ca = h.run();

  REQUIRE(ca.bonds.size() == 4);
  CHECK(ca.bonds[b1.index].effort == EffortFrom::Tail); // the source sets it
  CHECK(ca.bonds[b2.index].effort == EffortFrom::Head); // R sets the effort from the flow
  CHECK(ca.bonds[b3.index].effort == EffortFrom::Head); // C: integral causality
  CHECK(ca.bonds[b4.index].effort == EffortFrom::Tail); // I: integral causality
  CHECK(h.effortBy(b1) == "se");
  CHECK(h.effortBy(b2) == "r");
  CHECK(h.effortBy(b3) == "c");
  CHECK(h.effortBy(b4) == "j");
  CHECK(ca.setsEffort(h.g, b1, se));
  CHECK_FALSE(ca.setsEffort(h.g, b1, j));
  CHECK(ca.setsEffort(h.g, b4, j));
  CHECK_FALSE(ca.setsEffort(h.g, b4, i));
  CHECK_FALSE(ca.setsEffort(h.g, b4, r)); // not an end of b4

  // Who started each wave and through which bond.
  CHECK(h.origin(b1) == "se");
  CHECK(h.origin(b3) == "c");
  CHECK(h.origin(b4) == "i");
  CHECK(h.origin(b2) == "i"); // forced by the I's wave
  CHECK(ca.bonds[b2.index].via == b4);
  CHECK_FALSE(ca.bonds[b4.index].via.valid());

  CHECK(ca.choices.empty());
  CHECK(ca.derivative.empty());
  CHECK(ca.dump(h.g) == R"(causality
  bond b1: se -> j   effort set by se, flow set by j
  bond b2: j -> r   effort set by r, flow set by j
  bond b3: j -> c   effort set by c, flow set by j
  bond b4: j -> i   effort set by j, flow set by i
  C c: integral causality
  I i: integral causality
)");
}

TEST_CASE("CausalAssignment::verify catches each broken rule") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId j = h.add(ElementKind::One, "j");
  ElementId t = h.add(ElementKind::TF, "t");
  ElementId g = h.add(ElementKind::GY, "g");
  ElementId c = h.add(ElementKind::C, "c");
  ElementId i = h.add(ElementKind::I, "i");
  BondId b1 = h.bond(se, j), b2 = h.bond(j, t), b3 = h.bond(t, c);
  BondId b4 = h.bond(j, g), b5 = h.bond(g, i);
  const CausalAssignment good = h.run();
  auto flip = [](CausalAssignment ca, BondId b) {
    EffortFrom &e = ca.bonds[b.index].effort;
    e = e == EffortFrom::Tail ? EffortFrom::Head : EffortFrom::Tail;
    return ca;
  };
  CausalAssignment ca = good;
  ca.bonds[b3.index].effort = EffortFrom::Unassigned;
  CHECK(ca.verify(h.g) == "bond `b3` has no causality");
  CHECK(flip(good, b1).verify(h.g) == "source `se` has the wrong causality");
  CHECK(flip(good, b3).verify(h.g) == "two-port `t` has inconsistent causality");
  CHECK(flip(good, b5).verify(h.g) == "two-port `g` has inconsistent causality");
  // j sets the effort on the GY (so the I is in derivative causality).
  REQUIRE(h.effortBy(b4) == "j");
  REQUIRE(h.effortBy(b2) == "t");
  REQUIRE(good.derivative.size() == 1);
  CHECK(flip(flip(good, b4), b5).verify(h.g) == "junction `j` has 0 bonds setting its flow");
  CHECK(flip(flip(good, b2), b3).verify(h.g) == "junction `j` has 2 bonds setting its flow");
  (void)c;
  (void)i;
}

TEST_CASE("0-junction with Sf, C and R, bonds in mixed directions") {
  Hand h;
  ElementId sf = h.add(ElementKind::Sf, "sf");
  ElementId j = h.add(ElementKind::Zero, "j");
  ElementId c = h.add(ElementKind::C, "c");
  ElementId r = h.add(ElementKind::R, "r");
  BondId b1 = h.bond(sf, j), b2 = h.bond(c, j), b3 = h.bond(r, j);
  const CausalAssignment &ca = h.run();
  CHECK(h.effortBy(b1) == "j"); // the flow source receives the effort
  CHECK(ca.bonds[b1.index].effort == EffortFrom::Head);
  CHECK(h.effortBy(b2) == "c"); // the C sets the junction's effort
  CHECK(ca.bonds[b2.index].effort == EffortFrom::Tail);
  CHECK(h.effortBy(b3) == "j"); // the R receives it
  CHECK(ca.bonds[b3.index].effort == EffortFrom::Head);
  CHECK(ca.setsEffort(h.g, b3, j));
  CHECK_FALSE(ca.setsEffort(h.g, b3, r));
  CHECK(ca.derivative.empty());
  CHECK(ca.choices.empty());
  (void)c;
}

TEST_CASE("TF propagates causality from port 1 to port 2 and back") {
  SUBCASE("effort in at port 1: Se -> TF -> I") {
    Hand h;
    ElementId se = h.add(ElementKind::Se, "se");
    ElementId t = h.add(ElementKind::TF, "t");
    ElementId i = h.add(ElementKind::I, "i");
    BondId in = h.bond(se, t), out = h.bond(t, i);
    const CausalAssignment &ca = h.run();
    CHECK(h.effortBy(in) == "se");
    CHECK(h.effortBy(out) == "t"); // effort passes through
    CHECK(h.origin(out) == "se");
    CHECK(ca.bonds[out.index].via == in);
    CHECK(ca.derivative.empty());
    (void)i;
  }
  SUBCASE("effort in at port 2: R -> TF -> C, started by the C") {
    Hand h;
    ElementId r = h.add(ElementKind::R, "r");
    ElementId t = h.add(ElementKind::MTF, "t");
    ElementId c = h.add(ElementKind::C, "c");
    BondId in = h.bond(r, t), out = h.bond(t, c);
    const CausalAssignment &ca = h.run();
    CHECK(h.effortBy(out) == "c");
    CHECK(h.effortBy(in) == "t"); // the R receives the effort back through the TF
    CHECK(h.origin(in) == "c");
    CHECK(ca.choices.empty());
    CHECK(ca.derivative.empty());
    (void)r;
    (void)c;
  }
  SUBCASE("flow in at port 1: Sf -> TF -> 0 with C") {
    Hand h;
    ElementId sf = h.add(ElementKind::Sf, "sf");
    ElementId t = h.add(ElementKind::TF, "t");
    ElementId j = h.add(ElementKind::Zero, "j");
    ElementId c = h.add(ElementKind::C, "c");
    BondId in = h.bond(sf, t), out = h.bond(t, j), bc = h.bond(j, c);
    const CausalAssignment &ca = h.run();
    CHECK(h.effortBy(in) == "t");
    CHECK(h.effortBy(out) == "j");
    CHECK(h.effortBy(bc) == "c");
    CHECK(ca.derivative.empty());
    (void)sf;
  }
}

TEST_CASE("GY propagates causality in both directions") {
  SUBCASE("effort in at port 1 gives effort out at port 2: Se -> GY -> C") {
    Hand h;
    ElementId se = h.add(ElementKind::Se, "se");
    ElementId g = h.add(ElementKind::GY, "g");
    ElementId c = h.add(ElementKind::C, "c");
    BondId in = h.bond(se, g), out = h.bond(g, c);
    const CausalAssignment &ca = h.run();
    CHECK(h.effortBy(in) == "se");
    CHECK(h.effortBy(out) == "c"); // the GY sets neither effort
    CHECK(ca.derivative.empty());   // so the C keeps integral causality
    CHECK(h.origin(out) == "se");
  }
  SUBCASE("from port 2 back to port 1: R -> GY -> I, started by the I") {
    Hand h;
    ElementId r = h.add(ElementKind::R, "r");
    ElementId g = h.add(ElementKind::MGY, "g");
    ElementId i = h.add(ElementKind::I, "i");
    BondId in = h.bond(r, g), out = h.bond(g, i);
    const CausalAssignment &ca = h.run();
    CHECK(h.effortBy(out) == "g");
    CHECK(h.effortBy(in) == "g"); // the GY sets both efforts
    CHECK(h.origin(in) == "i");
    CHECK(ca.bonds[in.index].via == out);
    CHECK(ca.choices.empty());
    CHECK(ca.derivative.empty());
  }
  SUBCASE("a GY turns a flow source into derivative causality for a C") {
    Hand h;
    ElementId sf = h.add(ElementKind::Sf, "sf");
    ElementId g = h.add(ElementKind::GY, "g");
    ElementId c = h.add(ElementKind::C, "c");
    h.bond(sf, g);
    BondId out = h.bond(g, c);
    const CausalAssignment &ca = h.run();
    CHECK(h.effortBy(out) == "g");
    REQUIRE(ca.derivative.size() == 1);
    CHECK(ca.derivative[0].element == c);
    CHECK(h.path(ca.derivative[0].path) == "sf g c");
  }
}

TEST_CASE("source conflicts name both sources") {
  SUBCASE("two Se on one 0-junction") {
    Hand h;
    ElementId se1 = h.add(ElementKind::Se, "se1");
    ElementId j = h.add(ElementKind::Zero, "j");
    ElementId se2 = h.add(ElementKind::MSe, "se2");
    ElementId c = h.add(ElementKind::R, "r");
    h.bond(se1, j);
    h.bond(j, c);
    h.bond(se2, j);
    CHECK(h.fail() == "hbgc: error: `se2` and `se1` both impose the effort at `j`\n"
                      "hbgc: note: `se1` imposes the effort here\n");
    CHECK(h.diags.diagnostics()[0].kind == DiagKind::SourceConflict);
  }
  SUBCASE("two Sf on one 1-junction, bonds pointing into the junction and out") {
    Hand h;
    ElementId sf1 = h.add(ElementKind::MSf, "sf1");
    ElementId j = h.add(ElementKind::One, "j");
    ElementId sf2 = h.add(ElementKind::Sf, "sf2");
    h.bond(j, sf1);
    h.bond(sf2, j);
    h.bond(j, h.add(ElementKind::C, "c"));
    CHECK(h.fail() == "hbgc: error: `sf2` and `sf1` both impose the flow at `j`\n"
                      "hbgc: note: `sf1` imposes the flow here\n");
  }
  SUBCASE("Se against Sf through a GY: the junction named is the far one") {
    Hand h;
    ElementId se = h.add(ElementKind::Se, "se");
    ElementId a = h.add(ElementKind::Zero, "a");
    ElementId g = h.add(ElementKind::GY, "g");
    ElementId b = h.add(ElementKind::One, "b");
    ElementId sf = h.add(ElementKind::Sf, "sf");
    h.bond(se, a);
    h.bond(a, g);
    h.bond(g, b);
    h.bond(b, sf);
    h.bond(a, h.add(ElementKind::R, "r"));
    // se sets a's effort, so the GY receives the effort on port 1 and sets
    // the flow on port 2: b's flow, which sf wants to set too.
    CHECK(h.fail().find("`sf` and `se` both impose the flow at `b`") != std::string::npos);
  }
  SUBCASE("Se and Sf on one bond agree") {
    Hand h;
    ElementId se = h.add(ElementKind::Se, "se");
    ElementId sf = h.add(ElementKind::Sf, "sf");
    BondId b = h.bond(sf, se);
    h.run();
    CHECK(h.effortBy(b) == "se");
  }
}

TEST_CASE("a junction structure conflict is a causal conflict, not a crash") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId a = h.add(ElementKind::Zero, "a");
  ElementId b = h.add(ElementKind::Zero, "b");
  h.bond(se, a);
  h.bond(a, b);
  h.bond(a, b); // two bonds set b's effort
  h.bond(b, h.add(ElementKind::R, "r"));
  CHECK(h.fail() == "hbgc: error: causal conflict at `b`: more than one bond sets its effort\n");
  CHECK(h.diags.diagnostics()[0].kind == DiagKind::CausalConflict);
}

TEST_CASE("a conflict at a TF inside a junction loop is reported") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId a = h.add(ElementKind::Zero, "a");
  ElementId b = h.add(ElementKind::Zero, "b");
  ElementId t = h.add(ElementKind::TF, "t");
  h.bond(se, a);
  h.bond(a, b); // a's wave reaches b directly first ...
  h.bond(a, t); // ... and t's port 1 ...
  h.bond(t, b); // ... while b has set t's port 2 before t is examined
  h.bond(b, h.add(ElementKind::R, "r"));
  std::optional<CausalAssignment> ca;
  CHECK_NOTHROW(ca = assignCausality(h.g, h.diags));
  CHECK_FALSE(ca);
  CHECK(h.diags.hasErrors());

  // Both ports of a TF on one 0-junction (e = n e): integral causality for
  // the C contradicts the TF, so SCAP retracts it and the C takes
  // derivative causality (the equations then find e = 0).
  Hand k;
  ElementId t2 = k.add(ElementKind::TF, "t");
  ElementId j = k.add(ElementKind::Zero, "j");
  ElementId c = k.add(ElementKind::C, "c");
  k.bond(j, t2);
  k.bond(t2, j);
  k.bond(j, c);
  std::optional<CausalAssignment> ca2;
  CHECK_NOTHROW(ca2 = assignCausality(k.g, k.diags));
  REQUIRE(ca2);
  CHECK_FALSE(k.diags.hasErrors());
  REQUIRE(ca2->derivative.size() == 1);
  CHECK(ca2->derivative[0].element == c);
}

TEST_CASE("derivative causality: two C on one 0-junction") {
  Hand h;
  ElementId c1 = h.add(ElementKind::C, "c1");
  ElementId c2 = h.add(ElementKind::C, "c2");
  ElementId r = h.add(ElementKind::R, "r");
  ElementId j = h.add(ElementKind::Zero, "j");
  h.bond(j, c1);
  BondId b2 = h.bond(c2, j);
  h.bond(j, r);
  const CausalAssignment &ca = h.run();
  REQUIRE(ca.derivative.size() == 1);
  CHECK(ca.derivative[0].element == c2);
  CHECK(h.path(ca.derivative[0].path) == "c1 j c2");
  CHECK(h.effortBy(b2) == "j");
  CHECK(ca.choices.empty());
  CHECK(ca.dump(h.g).find("  C c1: integral causality\n  C c2: derivative causality\n") !=
        std::string::npos);
  REQUIRE(ca.derivative.size() == 1);
  CHECK(h.path(ca.derivative[0].path) == "c1 j c2");
  (void)r;
}

TEST_CASE("derivative causality: an I driven by a flow source") {
  Hand h;
  ElementId sf = h.add(ElementKind::Sf, "sf");
  ElementId j = h.add(ElementKind::One, "j");
  ElementId i = h.add(ElementKind::I, "i");
  ElementId r = h.add(ElementKind::R, "r");
  h.bond(sf, j);
  h.bond(i, j);
  h.bond(j, r);
  const CausalAssignment &ca = h.run();
  REQUIRE(ca.derivative.size() == 1);
  CHECK(ca.derivative[0].element == i);
  CHECK(h.path(ca.derivative[0].path) == "sf j i");
  (void)r;
}

TEST_CASE("algebraic loop: R elements left free") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId j1 = h.add(ElementKind::One, "j1");
  ElementId r1 = h.add(ElementKind::R, "r1");
  ElementId j0 = h.add(ElementKind::Zero, "j0");
  ElementId r2 = h.add(ElementKind::R, "r2");
  ElementId r3 = h.add(ElementKind::R, "r3");
  h.bond(se, j1);
  BondId br1 = h.bond(j1, r1);
  BondId link = h.bond(j1, j0);
  BondId br2 = h.bond(j0, r2);
  BondId br3 = h.bond(r3, j0);
  const CausalAssignment &ca = h.run();
  REQUIRE(ca.choices.size() == 1);
  const Choice &c = ca.choices[0];
  CHECK(c.element == r1);
  CHECK(c.bond == br1);
  CHECK(h.path(c.path) == "r1 j1 j0 r2");
  CHECK(h.effortBy(br1) == "r1"); // a linear R is chosen to set the effort
  CHECK(h.effortBy(link) == "j1");
  CHECK(h.effortBy(br2) == "j0");
  CHECK(h.effortBy(br3) == "j0");
  CHECK(h.origin(br3) == "r1");
  CHECK(ca.derivative.empty());
  INFO(ca.dump(h.g));
  CHECK(ca.dump(h.g).find("  choice: r1 (loop r1 [b2] 1:j1 [b3] 0:j0 [b4] r2)\n") !=
        std::string::npos);
  REQUIRE(ca.choices.size() == 1);
  CHECK(h.path(ca.choices[0].path) == "r1 j1 j0 r2");
  (void)r2;
  (void)r3;
}

TEST_CASE("a free nonlinear R is chosen in the causality of its law") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId j1 = h.add(ElementKind::One, "j1");
  ElementId r1 = h.add(ElementKind::R, "r1");
  ElementId j0 = h.add(ElementKind::Zero, "j0");
  h.g.elements[r1.index].law = LawForm::FlowLaw;
  h.bond(se, j1);
  BondId br1 = h.bond(j1, r1);
  h.bond(j1, j0);
  h.bond(j0, h.add(ElementKind::R, "r2"));
  h.bond(j0, h.add(ElementKind::R, "r3"));
  const CausalAssignment &ca = h.run();
  // r1 receiving the effort does not fix j0's effort: r2 is a second choice.
  REQUIRE(ca.choices.size() == 2);
  CHECK(ca.choices[0].element == r1);
  CHECK(h.path(ca.choices[0].path) == "r1 j1 j0"); // no other R forced: the wave
  CHECK(h.path(ca.choices[1].path) == "r2 j0 r3");
  CHECK(h.effortBy(br1) == "j1"); // f = law(e): the R receives the effort
}

TEST_CASE("the origin of a chosen flow-law R's wave is the R") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId j1 = h.add(ElementKind::One, "j1");
  ElementId r1 = h.add(ElementKind::R, "r1");
  ElementId j0 = h.add(ElementKind::Zero, "j0");
  h.g.elements[r1.index].law = LawForm::FlowLaw;
  h.bond(se, j1);
  BondId br1 = h.bond(j1, r1);
  BondId link = h.bond(j1, j0);
  h.bond(j0, h.add(ElementKind::R, "r2"));
  h.bond(j0, h.add(ElementKind::R, "r3"));
  h.run();
  CHECK(h.origin(br1) == "r1");
  CHECK(h.origin(link) == "r1");
}

TEST_CASE("junction structure left free: a choice on a bond") {
  Hand h;
  ElementId se = h.add(ElementKind::Se, "se");
  ElementId a = h.add(ElementKind::Zero, "a");
  ElementId b = h.add(ElementKind::One, "b");
  BondId x = h.bond(a, b, "x");
  BondId y = h.bond(a, b, "y");
  h.bond(se, b);
  const CausalAssignment &ca = h.run();
  REQUIRE(ca.choices.size() == 1);
  CHECK_FALSE(ca.choices[0].element.valid());
  CHECK(ca.choices[0].bond == x);
  CHECK(h.path(ca.choices[0].path) == "a b");
  CHECK(h.effortBy(x) == "a");
  CHECK(h.effortBy(y) == "b");
  CHECK(ca.dump(h.g).find("  choice: x (loop 0:a [x] 1:b)\n") != std::string::npos);
  REQUIRE(ca.choices.size() == 1);
  CHECK(h.path(ca.choices[0].path) == "a b");
}

TEST_CASE("nonlinear R laws used against their causality") {
  SUBCASE("f = law(e) where the R must set the effort") {
    Hand h;
    ElementId sf = h.add(ElementKind::Sf, "sf");
    ElementId j = h.add(ElementKind::One, "j");
    ElementId r = h.add(ElementKind::R, "r");
    h.g.elements[r.index].law = LawForm::FlowLaw;
    h.bond(sf, j);
    BondId br = h.bond(j, r);
    h.run();
    CHECK(h.effortBy(br) == "r");
    // Propagation, not the law, decided: the equations invert the law.
    CHECK(h.ca->choices.empty());
  }
  SUBCASE("e = law(f) where the R receives the effort") {
    Hand h;
    ElementId se = h.add(ElementKind::Se, "se");
    ElementId r = h.add(ElementKind::R, "r");
    h.g.elements[r.index].law = LawForm::EffortLaw;
    h.bond(r, se);
    h.run();
    CHECK(h.effortBy(h.g.elements[r.index].bonds[0]) == "se");
    CHECK(h.ca->choices.empty());
  }
  SUBCASE("laws that fit are not reported") {
    Hand h;
    ElementId se = h.add(ElementKind::Se, "se");
    ElementId sf = h.add(ElementKind::Sf, "sf");
    ElementId r1 = h.add(ElementKind::R, "r1");
    ElementId r2 = h.add(ElementKind::R, "r2");
    h.g.elements[r1.index].law = LawForm::FlowLaw;   // gets the effort of se
    h.g.elements[r2.index].law = LawForm::EffortLaw; // gets the flow of sf
    h.bond(se, r1);
    h.bond(sf, r2);
    h.run();
    }
}

// --- Randomised properties -------------------------------------------------

TEST_CASE("random well-posed trees: the one integral causality, exactly") {
  int bonds = 0;
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    CAPTURE(seed);
    hbgtest::RandomBondGraph rg = hbgtest::randomBondGraph(seed, true);
    const BondGraph &g = rg.g;
    REQUIRE(g.verify() == "");
    SourceManager sm;
    DiagnosticEngine diags(sm);
    std::optional<CausalAssignment> ca;
    REQUIRE_NOTHROW(ca = assignCausality(g, diags));
    INFO(diags.renderAll());
    REQUIRE(ca);
    CHECK(ca->verify(g) == "");
    CHECK(ca->choices.empty());
    CHECK(ca->derivative.empty());
    for (std::uint32_t k = 0; k < g.bonds.size(); ++k) {
      BondId b{k};
      REQUIRE(ca->bonds[k].effort != EffortFrom::Unassigned);
      ++bonds;
      for (ElementId end : {g.bond(b).from, g.bond(b).to}) {
        const Element &e = g.element(end);
        if (!isJunction(e.kind))
          continue;
        bool storage = rg.storageBond.at(end.index) == b;
        bool expected = e.kind == ElementKind::Zero ? !storage : storage;
        CAPTURE(g.bond(b).name);
        CAPTURE(e.name);
        CHECK(ca->setsEffort(g, b, end) == expected);
      }
    }
    CHECK(ca->choices.empty());
    CHECK(ca->derivative.empty());
  }
  CHECK(bonds > 2000); // the generator is not degenerate
}

namespace {

/// The invariants of any SCAP result on `g`.
void checkInvariants(const BondGraph &g, std::uint32_t seed, int &succeeded, int &failed,
                     int &withChoices, int &withDerivative) {
  CAPTURE(seed);
  REQUIRE(g.verify() == "");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::optional<CausalAssignment> ca;
  REQUIRE_NOTHROW(ca = assignCausality(g, diags));
  if (!ca) {
    ++failed;
    // Conflicts stop SCAP at the first one.
    REQUIRE(diags.errorCount() == 1);
    DiagKind k = diags.diagnostics()[0].kind;
    CHECK((k == DiagKind::SourceConflict || k == DiagKind::CausalConflict));
    return;
  }
  ++succeeded;
  INFO(ca->dump(g));
  CHECK(diags.diagnostics().empty());
  CHECK(ca->verify(g) == "");
  auto adjacent = [&](ElementId a, ElementId b) {
    for (BondId x : g.element(a).bonds)
      if (g.otherEnd(x, a) == b)
        return true;
    return false;
  };
  for (std::uint32_t k = 0; k < g.bonds.size(); ++k) {
    const BondCausality &bc = ca->bonds[k];
    CHECK(bc.effort != EffortFrom::Unassigned);
    REQUIRE(bc.origin.valid());
    const Bond &b = g.bonds[k];
    if (bc.via.valid()) {
      // The bond that forced this one shares an element with it.
      const Bond &v = g.bond(bc.via);
      CHECK((v.from == b.from || v.from == b.to || v.to == b.from || v.to == b.to));
    } else {
      CHECK((bc.origin == b.from || bc.origin == b.to));
    }
  }
  // Derivative storage is exactly the storage against its preference, each
  // with a causal path of adjacent elements ending at it.
  std::size_t against = 0;
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    const Element &e = g.elements[i];
    if (!isStorage(e.kind))
      continue;
    ElementId id{i};
    bool integral = ca->setsEffort(g, e.bonds[0], id) == (e.kind == ElementKind::C);
    auto it = std::find_if(ca->derivative.begin(), ca->derivative.end(),
                           [&](const DerivativeStorage &d) { return d.element == id; });
    CHECK(integral == (it == ca->derivative.end()));
    if (!integral) {
      ++against;
      REQUIRE(it->path.size() >= 2);
      CHECK(it->path.back() == id);
      for (std::size_t p = 0; p + 1 < it->path.size(); ++p)
        CHECK(adjacent(it->path[p], it->path[p + 1]));
    }
  }
  CHECK(ca->derivative.size() == against);
  withDerivative += against > 0;
  withChoices += !ca->choices.empty();
  // Choices: R elements, with paths from them.
  for (const Choice &c : ca->choices) {
    REQUIRE(!c.path.empty());
    if (!c.element.valid())
      continue;
    const Element &e = g.element(c.element);
    CHECK(e.kind == ElementKind::R);
    CHECK(e.bonds[0] == c.bond);
    CHECK(c.path.front() == c.element);
    if (c.path.size() > 1 && g.element(c.path.back()).kind == ElementKind::R)
      for (std::size_t p = 0; p + 1 < c.path.size(); ++p)
        CHECK(adjacent(c.path[p], c.path[p + 1]));
  }
  // A choice takes the causality its law prefers unless that contradicts
  // the junction structure; then SCAP retracts it and takes the other one.
  // Either way the graph is causal (verify() above).
}

} // namespace

TEST_CASE("random trees: whenever SCAP succeeds, every bond is causal and verify() holds") {
  int succeeded = 0, failed = 0, withChoices = 0, withDerivative = 0;
  for (std::uint32_t seed = 1; seed <= 1500; ++seed)
    checkInvariants(hbgtest::randomBondGraph(seed, false).g, seed, succeeded, failed, withChoices,
                    withDerivative);
  // Every outcome is exercised.
  INFO(succeeded << " succeeded, " << failed << " failed, " << withChoices << " with choices, "
                 << withDerivative << " with derivative causality");
  CHECK(succeeded > 100);
  CHECK(failed > 50);
  CHECK(withChoices > 20);
  CHECK(withDerivative > 20);
}

// Loops of junctions let two waves meet at a TF or GY: a conflict, never an
// internal error.
TEST_CASE("random graphs with junction loops: the same invariants") {
  int succeeded = 0, failed = 0, withChoices = 0, withDerivative = 0;
  for (std::uint32_t seed = 1; seed <= 1500; ++seed)
    checkInvariants(hbgtest::randomBondGraph(seed, false, true).g, seed, succeeded, failed,
                    withChoices, withDerivative);
  CHECK(succeeded > 100);
  CHECK(failed > 50);
}

// --- Modes: OFF junctions ----------------------------------------------------

namespace {
/// Makes junction `j` switched (OFF initially, one ON state) so that it
/// shows in the mode's text.
void makeSwitched(Hand &h, ElementId j, bool initiallyOn = false) {
  Fsm fsm;
  fsm.states.push_back({"off", false, {}});
  fsm.states.push_back({"on", true, {}});
  fsm.initial = initiallyOn ? 1 : 0;
  h.g.elements[j.index].fsm = fsm;
}
/// The mode with junction `j` ON or OFF, everything else ON.
Mode modeWith(const Hand &h, ElementId j, bool on) {
  Mode m = initialMode(h.g);
  m.on[j.index] = on;
  return m;
}
} // namespace

TEST_CASE("OFF 0-junction: sets the effort of every bond; elements propagate as usual") {
  Hand h;
  ElementId src = h.add(ElementKind::Sf, "src");
  ElementId j = h.add(ElementKind::Zero, "j");
  ElementId i = h.add(ElementKind::I, "i");
  ElementId k = h.add(ElementKind::One, "k");
  ElementId m = h.add(ElementKind::I, "m");
  ElementId r = h.add(ElementKind::R, "r");
  ElementId c = h.add(ElementKind::C, "c");
  BondId b1 = h.bond(src, j), b2 = h.bond(j, i), b3 = h.bond(j, k), b4 = h.bond(k, m),
         b5 = h.bond(k, r), b6 = h.bond(j, c);
  makeSwitched(h, j);
  CHECK_FALSE(initialMode(h.g).isOn(j));
  CHECK(modeText(h.g, initialMode(h.g)) == "j=off");

  // The initial mode (the convenience signature) and the explicit one agree.
  const CausalAssignment &ca = h.run();
  CHECK_FALSE(ca.mode.isOn(j));
  for (BondId b : {b1, b2, b3, b6})
    CHECK(h.effortBy(b) == "j"); // zero effort imposed on every bond
  CHECK(h.origin(b1) == "j");
  CHECK(h.effortBy(b4) == "k"); // m integral sets the flow, k the effort
  CHECK(h.effortBy(b5) == "r"); // k sets r's flow, r the effort
  // The C cannot set its effort: derivative causality (its q stays 0); the
  // I elements are integral.
  REQUIRE(ca.derivative.size() == 1);
  CHECK(ca.derivative[0].element == c);
  CHECK(ca.choices.empty());

  // ON, the same graph is an ordinary 0-junction: src's flow is shared out,
  // c sets the junction's effort.
  Hand on;
  on.g = h.g;
  on.ca = assignCausality(on.g, modeWith(h, j, true), on.diags);
  INFO(on.diags.renderAll());
  REQUIRE(on.ca);
  CHECK(on.ca->verify(on.g) == "");
  CHECK(on.effortBy(b6) == "c");
  CHECK(on.effortBy(b1) == "j");
  CHECK(on.effortBy(b2) == "j");
  CHECK(on.effortBy(b3) == "j");
  CHECK(on.ca->derivative.empty());
}

TEST_CASE("OFF 1-junction: sets the flow of every bond; the other ends set the effort") {
  Hand h;
  ElementId src = h.add(ElementKind::Se, "src");
  ElementId j = h.add(ElementKind::One, "j");
  ElementId c = h.add(ElementKind::C, "c");
  ElementId k = h.add(ElementKind::Zero, "k");
  ElementId m = h.add(ElementKind::C, "m");
  ElementId r = h.add(ElementKind::R, "r");
  ElementId i = h.add(ElementKind::I, "i");
  BondId b1 = h.bond(src, j), b2 = h.bond(j, c), b3 = h.bond(j, k), b4 = h.bond(k, m),
         b5 = h.bond(k, r), b6 = h.bond(j, i);
  makeSwitched(h, j, /*initiallyOn=*/true);
  CHECK(initialMode(h.g).isOn(j));

  h.ca = assignCausality(h.g, modeWith(h, j, false), h.diags);
  INFO(h.diags.renderAll());
  REQUIRE(h.ca);
  CHECK(h.diags.diagnostics().empty());
  CHECK(h.ca->verify(h.g) == "");
  const CausalAssignment &ca = *h.ca;
  CHECK(h.effortBy(b1) == "src");
  CHECK(h.effortBy(b2) == "c"); // integral
  CHECK(h.effortBy(b3) == "k");
  CHECK(h.effortBy(b6) == "i"); // the I must take zero flow: derivative
  CHECK(h.effortBy(b4) == "m"); // m integral gives k its effort
  CHECK(h.effortBy(b5) == "k"); // r takes k's effort and sets its flow
  REQUIRE(ca.derivative.size() == 1);
  CHECK(ca.derivative[0].element == i);
  CHECK(h.origin(b6) == "j");
  (void)r;

  // The verifier holds OFF junctions to their rule.
  CausalAssignment wrong = ca;
  wrong.mode = modeWith(h, j, true);
  CHECK(wrong.verify(h.g) != ""); // ON, j would have four bonds setting its flow
  CausalAssignment flipped = ca;
  flipped.bonds[b6.index].effort =
      flipped.bonds[b6.index].effort == EffortFrom::Tail ? EffortFrom::Head : EffortFrom::Tail;
  CHECK(flipped.verify(h.g).find("OFF junction `j`") != std::string::npos);
}

TEST_CASE("OFF junction against a source: a conflict naming both and the mode") {
  Hand h;
  ElementId src = h.add(ElementKind::Se, "push");
  ElementId j = h.add(ElementKind::Zero, "contact");
  ElementId k = h.add(ElementKind::One, "v");
  ElementId i = h.add(ElementKind::I, "mass");
  h.bond(src, j);
  h.bond(j, k);
  h.bond(k, i);
  makeSwitched(h, j);
  std::string out = h.fail();
  CHECK(out.find("`push` and OFF junction `contact` both impose the effort on the bond between "
                 "them in mode `contact=off`") != std::string::npos);
  CHECK(out.find("`contact` imposes the effort here") != std::string::npos);

  // ON, the source drives the mass through the junctions.
  Hand on;
  on.g = h.g;
  on.ca = assignCausality(on.g, modeWith(h, j, true), on.diags);
  CHECK(on.ca);
  CHECK(on.diags.diagnostics().empty());
}

TEST_CASE("two OFF 0-junctions on one bond both impose its effort") {
  Hand h;
  ElementId a = h.add(ElementKind::Zero, "a");
  ElementId b = h.add(ElementKind::Zero, "b");
  ElementId ia = h.add(ElementKind::I, "ia");
  ElementId ib = h.add(ElementKind::I, "ib");
  h.bond(a, b);
  h.bond(a, ia);
  h.bond(b, ib);
  makeSwitched(h, a);
  makeSwitched(h, b);
  std::string out = h.fail();
  CHECK(out.find("`b` and OFF junction `a` both impose the effort on the bond between them in "
                 "mode `a=off, b=off`") != std::string::npos);
}

TEST_CASE("parseMode: names, values and errors") {
  Hand h;
  ElementId a = h.add(ElementKind::Zero, "contact");
  ElementId b = h.add(ElementKind::One, "clutch");
  ElementId v = h.add(ElementKind::One, "v");
  h.bond(a, b);
  h.bond(b, v);
  makeSwitched(h, a);
  makeSwitched(h, b, true);
  Mode base = initialMode(h.g), m;
  ModeError err;
  REQUIRE(parseMode(h.g, "contact=on", base, m, err));
  CHECK(m.isOn(a));
  CHECK(m.isOn(b)); // not named: initial state
  REQUIRE(parseMode(h.g, " clutch = off , contact=on", base, m, err));
  CHECK(modeText(h.g, m) == "contact=on, clutch=off");
  CHECK_FALSE(parseMode(h.g, "contcat=on", base, m, err));
  CHECK(err.kind == ModeError::UnknownJunction);
  CHECK(err.suggestion == "contact");
  CHECK_FALSE(parseMode(h.g, "v=on", base, m, err));
  CHECK(err.kind == ModeError::NotSwitched);
  CHECK(err.element == v);
  CHECK_FALSE(parseMode(h.g, "contact=closed", base, m, err));
  CHECK(err.kind == ModeError::BadValue);
  CHECK(err.value == "closed");
  CHECK_FALSE(parseMode(h.g, "contact", base, m, err));
  CHECK(err.kind == ModeError::Syntax);
  CHECK_FALSE(parseMode(h.g, "contact=on,", base, m, err));
  CHECK(err.kind == ModeError::Syntax);
}

// --- Modes: junctions isolated by OFF junctions -------------------------------

namespace {
/// HYBRSIM's tank: src -> 0:level -> tank; level -> 1:valve1 -> r1;
/// valve1 -> 0:pipe -> 1:valve2 -> r2, both valves switched and OFF
/// initially. `extra` (when given) hangs one more element on the pipe.
struct Tank {
  Hand h;
  ElementId level, valve1, pipe, valve2, extra;
  BondId intoPipe, outOfPipe, toExtra;
  explicit Tank(std::optional<ElementKind> extraKind = std::nullopt) {
    ElementId src = h.add(ElementKind::Sf, "src");
    level = h.add(ElementKind::Zero, "level");
    ElementId tank = h.add(ElementKind::C, "tank");
    valve1 = h.add(ElementKind::One, "valve1");
    ElementId r1 = h.add(ElementKind::R, "r1");
    pipe = h.add(ElementKind::Zero, "pipe");
    valve2 = h.add(ElementKind::One, "valve2");
    ElementId r2 = h.add(ElementKind::R, "r2");
    h.bond(src, level);
    h.bond(level, tank);
    h.bond(level, valve1);
    h.bond(valve1, r1);
    intoPipe = h.bond(valve1, pipe);
    outOfPipe = h.bond(pipe, valve2);
    h.bond(valve2, r2);
    if (extraKind) {
      extra = h.add(*extraKind, "extra");
      toExtra = h.bond(pipe, extra);
    }
    makeSwitched(h, valve1);
    makeSwitched(h, valve2);
  }
};
} // namespace

TEST_CASE("a 0-junction between OFF 1-junctions is isolated: it sets effort 0 on its bonds") {
  Tank t;
  Hand &h = t.h;
  CHECK(modeText(h.g, initialMode(h.g)) == "valve1=off, valve2=off");
  const CausalAssignment &ca = h.run(); // no conflict: the pipe takes effort 0
  REQUIRE(ca.isolated.size() == h.g.elements.size());
  CHECK(ca.isolated[t.pipe.index]);
  CHECK(ca.imposesZero(t.pipe));
  CHECK(std::count(ca.isolated.begin(), ca.isolated.end(), true) == 1);
  CHECK_FALSE(ca.isolated[t.valve1.index]); // OFF, not isolated
  CHECK_FALSE(ca.isolated[t.level.index]);
  CHECK(h.effortBy(t.intoPipe) == "pipe");
  CHECK(h.effortBy(t.outOfPipe) == "pipe");
  CHECK(ca.dump(h.g).find("\n  0 pipe: isolated by OFF junctions (effort 0)\n") !=
        std::string::npos);
  CHECK(ca.derivative.empty());
  CHECK(ca.choices.empty());
}

TEST_CASE("a junction with any other neighbour than OFF junctions is not isolated") {
  for (ElementKind k : {ElementKind::R, ElementKind::C}) {
    Tank t(k);
    CAPTURE(kindName(k));
    const CausalAssignment &ca = t.h.run();
    CHECK(std::none_of(ca.isolated.begin(), ca.isolated.end(), [](bool b) { return b; }));
    CHECK_FALSE(ca.imposesZero(t.pipe));
    // The extra element gives the pipe its effort, which it passes on.
    CHECK(t.h.effortBy(t.toExtra) == "extra");
    CHECK(t.h.effortBy(t.intoPipe) == "pipe");
    CHECK(t.h.effortBy(t.outOfPipe) == "pipe");
    CHECK(ca.dump(t.h.g).find("isolated") == std::string::npos);
  }

  // Between OFF junctions of its own kind a 0-junction is not isolated: both
  // impose its effort, a conflict as before.
  Hand h;
  ElementId z = h.add(ElementKind::Zero, "z");
  ElementId a = h.add(ElementKind::Zero, "a");
  ElementId b = h.add(ElementKind::Zero, "b");
  h.bond(a, z);
  h.bond(z, b);
  h.bond(a, h.add(ElementKind::I, "ia"));
  h.bond(b, h.add(ElementKind::I, "ib"));
  makeSwitched(h, a);
  makeSwitched(h, b);
  CHECK(h.fail().find("`b` and OFF junction `a` both impose the effort at `z` in mode `a=off, "
                      "b=off`") != std::string::npos);
}

TEST_CASE("a 1-junction between OFF 0-junctions is isolated: it sets flow 0 on its bonds") {
  Hand h;
  ElementId k = h.add(ElementKind::One, "k"); // first, so verify() checks it first
  ElementId z1 = h.add(ElementKind::Zero, "z1");
  ElementId z2 = h.add(ElementKind::Zero, "z2");
  ElementId i1 = h.add(ElementKind::I, "i1");
  ElementId i2 = h.add(ElementKind::I, "i2");
  BondId b1 = h.bond(z1, k), b2 = h.bond(k, z2);
  h.bond(z1, i1);
  h.bond(i2, z2);
  makeSwitched(h, z1);
  makeSwitched(h, z2);
  const CausalAssignment &ca = h.run();
  CHECK(ca.isolated[k.index]);
  CHECK(ca.imposesZero(k));
  CHECK(h.effortBy(b1) == "z1"); // the OFF 0-junctions set the efforts,
  CHECK(h.effortBy(b2) == "z2"); // k the flows (0)
  CHECK(ca.derivative.empty());  // the I elements take effort 0: integral
  CHECK(ca.dump(h.g).find("\n  1 k: isolated by OFF junctions (flow 0)\n") != std::string::npos);
  (void)i1;
  (void)i2;

  // The verifier holds isolated junctions to the rule of OFF ones.
  CausalAssignment flipped = ca;
  flipped.bonds[b1.index].effort =
      flipped.bonds[b1.index].effort == EffortFrom::Tail ? EffortFrom::Head : EffortFrom::Tail;
  CHECK(flipped.verify(h.g) == "isolated junction `k` does not set the flow of `b1`");
}

TEST_CASE("with every junction ON, or one valve open, no junction is isolated") {
  Tank t;
  Mode on = modeWith(t.h, t.valve1, true), valve1On = on;
  on.on[t.valve2.index] = true;
  for (const Mode &m : {on, valve1On}) {
    CAPTURE(modeText(t.h.g, m));
    Hand &h = t.h;
    h.ca = assignCausality(h.g, m, h.diags);
    INFO(h.diags.renderAll());
    REQUIRE(h.ca);
    CHECK(h.ca->verify(h.g) == "");
    CHECK(std::none_of(h.ca->isolated.begin(), h.ca->isolated.end(), [](bool b) { return b; }));
  }
  // valve1 ON, valve2 OFF: the pipe takes valve1's effort and passes the
  // zero flow back.
  CHECK(t.h.effortBy(t.intoPipe) == "valve1");
  CHECK(t.h.effortBy(t.outOfPipe) == "pipe");
}

namespace {
/// A rectifier's DC side: nodes P and M joined by the 1-junction dc, which
/// feeds a capacitor and a load through the 0-junction out, and cut off by
/// two OFF diodes from a node A that a source sets. `reversed` declares
/// everything in the opposite order.
struct DcSide {
  Hand h;
  ElementId p, m, out, dc;
  explicit DcSide(bool reversed) {
    auto add = [&](ElementKind k, const char *name) { return h.add(k, name); };
    std::vector<std::pair<ElementKind, const char *>> decl = {
        {ElementKind::Se, "src"},  {ElementKind::Zero, "A"}, {ElementKind::One, "d1"},
        {ElementKind::One, "d4"},  {ElementKind::Zero, "P"}, {ElementKind::Zero, "M"},
        {ElementKind::One, "dc"},  {ElementKind::Zero, "out"}, {ElementKind::C, "cap"},
        {ElementKind::R, "load"}};
    if (reversed)
      std::reverse(decl.begin(), decl.end());
    std::map<std::string, ElementId> id;
    for (auto [k, name] : decl)
      id[name] = add(k, name);
    std::vector<std::pair<const char *, const char *>> bonds = {
        {"src", "A"}, {"A", "d1"}, {"d1", "P"}, {"M", "d4"}, {"d4", "A"},
        {"P", "dc"},  {"dc", "M"}, {"dc", "out"}, {"out", "cap"}, {"out", "load"}};
    if (reversed)
      std::reverse(bonds.begin(), bonds.end());
    for (auto [from, to] : bonds)
      h.bond(id[from], id[to]);
    makeSwitched(h, id["d1"]);
    makeSwitched(h, id["d4"]);
    p = id["P"];
    m = id["M"];
    out = id["out"];
    dc = id["dc"];
  }
};
} // namespace

TEST_CASE("a part that OFF junctions cut off floats: its first node by name takes effort 0") {
  // With both diodes OFF nothing sets the common potential of P and M:
  // the capacitor fixes only their difference. M, first by name, is
  // isolated whatever the order of declarations; out, whose effort is the
  // capacitor's, is not a node of the part.
  for (bool reversed : {false, true}) {
    CAPTURE(reversed);
    DcSide s(reversed);
    const CausalAssignment &ca = s.h.run();
    CHECK(ca.isolated[s.m.index]);
    CHECK(std::count(ca.isolated.begin(), ca.isolated.end(), true) == 1);
    CHECK(ca.derivative.empty()); // the capacitor keeps integral causality
    CHECK(ca.dump(s.h.g).find("\n  0 M: isolated by OFF junctions (effort 0)\n") !=
          std::string::npos);
  }
  // With d1 ON, A sets P's potential and nothing floats.
  DcSide s(false);
  ElementId d1;
  for (std::uint32_t i = 0; i < s.h.g.elements.size(); ++i)
    if (s.h.g.elements[i].name == "d1")
      d1 = ElementId{i};
  s.h.ca = assignCausality(s.h.g, modeWith(s.h, d1, true), s.h.diags);
  INFO(s.h.diags.renderAll());
  REQUIRE(s.h.ca);
  CHECK(std::none_of(s.h.ca->isolated.begin(), s.h.ca->isolated.end(), [](bool b) { return b; }));
}

TEST_CASE("a part with an element on one of its nodes does not float") {
  // A resistor from P to A's side would fix P's potential: here a C on P
  // itself makes P no node, and the part, whose only node is then M, is
  // unbalanced at dc (M's bond points out, nothing points in).
  DcSide s(false);
  s.h.bond(s.p, s.h.add(ElementKind::C, "stray"));
  const CausalAssignment &ca = s.h.run();
  CHECK(std::none_of(ca.isolated.begin(), ca.isolated.end(), [](bool b) { return b; }));
}

TEST_CASE("the smallest resistance sets the effort, whatever the order of declarations") {
  // A flow source into a node with a 1 kOhm leak and a 1 mOhm path: one
  // of the two resistors must set the node's effort. The 1 mOhm one does
  // (e = R f is accurate; f = e / R from a 1 mOhm resistor is not),
  // declared first or last; resistances given by parameters are compared
  // at their defaults.
  for (bool smallFirst : {true, false}) {
    CAPTURE(smallFirst);
    Hand h;
    sym::ExprContext &ctx = *h.g.ctx;
    Parameter ron{"Ron", {}, ctx.addSymbol("Ron", sym::SymbolKind::Parameter, 0),
                  ctx.constant(1e-3)};
    Parameter rleak{"Rleak", {}, ctx.addSymbol("Rleak", sym::SymbolKind::Parameter, 1),
                    ctx.mul(ctx.constant(1e6), ctx.ref(ron.symbol))};
    h.g.parameters = {ron, rleak};
    ElementId sf = h.add(ElementKind::Sf, "sf");
    ElementId node = h.add(ElementKind::Zero, "node");
    ElementId small = h.add(ElementKind::R, smallFirst ? "a" : "z");
    ElementId leak = h.add(ElementKind::R, smallFirst ? "z" : "a");
    h.g.elements[small.index].value = ctx.ref(ron.symbol);
    h.g.elements[leak.index].value = ctx.ref(rleak.symbol);
    h.bond(sf, node);
    BondId bs = h.bond(node, small), bl = h.bond(node, leak);
    const CausalAssignment &ca = h.run();
    REQUIRE(ca.choices.size() == 1);
    CHECK(ca.choices[0].element == small);
    CHECK(h.effortBy(bs) == h.g.element(small).name);
    CHECK(h.effortBy(bl) == "node");
  }
}

TEST_CASE("equal resistances choose by name, whatever the order of declarations") {
  for (bool reversed : {false, true}) {
    CAPTURE(reversed);
    Hand h;
    ElementId sf = h.add(ElementKind::Sf, "sf");
    ElementId node = h.add(ElementKind::Zero, "node");
    ElementId first = h.add(ElementKind::R, reversed ? "r2" : "r1");
    ElementId second = h.add(ElementKind::R, reversed ? "r1" : "r2");
    h.bond(sf, node);
    h.bond(node, first);
    h.bond(node, second);
    const CausalAssignment &ca = h.run();
    REQUIRE(ca.choices.size() == 1);
    CHECK(h.g.element(ca.choices[0].element).name == "r1");
  }
}

TEST_CASE("resistor grids: a causality for every size, the capacitor integral") {
  // Nodes (0-junctions) on an n x m grid, a resistor on a 1-junction
  // between neighbours, a source through a resistor at one corner and a
  // capacitor at the other. Greedy choices in order of resistance run into
  // conflicts here from 4 x 4 on; the matching must find the causality.
  for (auto [n, m] : {std::pair{2, 2}, {3, 3}, {4, 4}, {5, 7}, {8, 8}, {12, 5}, {20, 20}}) {
    CAPTURE(n);
    CAPTURE(m);
    Hand h;
    auto node = [&](int i, int j) { return ElementId{static_cast<std::uint32_t>(i * m + j)}; };
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        h.add(ElementKind::Zero, "n" + std::to_string(i) + "_" + std::to_string(j));
    int k = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j)
        for (auto [a, b] : {std::pair{i + 1, j}, {i, j + 1}}) {
          if (a >= n || b >= m)
            continue;
          ++k;
          ElementId e = h.add(ElementKind::One, "e" + std::to_string(k));
          ElementId r = h.add(ElementKind::R, "r" + std::to_string(k));
          h.g.elements[r.index].value = h.g.ctx->constant(1 + (k * 37 % 101) / 100.0);
          h.bond(node(i, j), e);
          h.bond(e, node(a, b));
          h.bond(e, r);
        }
    ElementId se = h.add(ElementKind::Se, "src");
    ElementId s0 = h.add(ElementKind::One, "s0");
    ElementId r0 = h.add(ElementKind::R, "r0");
    ElementId c = h.add(ElementKind::C, "cap");
    h.bond(se, s0);
    h.bond(s0, r0);
    h.bond(s0, node(0, 0));
    h.bond(node(n - 1, m - 1), c);
    const CausalAssignment &ca = h.run();
    CHECK(ca.derivative.empty());
  }
}
