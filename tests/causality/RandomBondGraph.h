//===- tests/causality/RandomBondGraph.h - Seeded random bond graphs ------===//
//
// Tree-shaped bond graphs built by hand (no parser) for property tests of
// causality and equations. Shared by tests/causality and tests/equations.
//
//   wellPosed: junctions linked by plain bonds and TFs between a 0- and a
//     1-junction and by GYs between junctions of the same kind; every
//     0-junction has one C, every 1-junction one I, plus R elements and Sf
//     (on 0) / Se (on 1) sources. Such a graph has exactly one causality:
//     integral everywhere, no choices, and on every bond at a junction the
//     junction sets the effort exactly when (0) the bond is not the C's or
//     (1) the bond is the I's.
//   otherwise: junction kinds, links, storage, R (linear and nonlinear laws)
//     and sources all at random; conflicts, derivative causality and
//     algebraic loops may all happen. `loops` adds extra bonds between
//     junctions, so the graph is no longer a tree.
//
// Every direction is random. Values are constants in [0.5, 2]; nonlinear R
// laws are `a x + b x^3` with their coefficients recorded.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"

#include <map>
#include <random>
#include <string>

namespace hbgtest {

using namespace hbg::bg;
namespace sym = hbg::sym;

struct RandomBondGraph {
  BondGraph g;
  /// Well-posed graphs: per junction (element index), its storage bond.
  std::map<std::uint32_t, BondId> storageBond;
  /// Nonlinear R laws `a x + b x^3`, by element index.
  struct Cubic {
    double a, b;
  };
  std::map<std::uint32_t, Cubic> laws;
};

inline RandomBondGraph randomBondGraph(std::uint32_t seed, bool wellPosed, bool loops = false) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto value = [&] { return std::uniform_real_distribution<double>(0.5, 2.0)(rng); };
  RandomBondGraph out;
  BondGraph &g = out.g;
  int counter = 0;
  auto fresh = [&](const char *prefix) { return prefix + std::to_string(++counter); };
  auto link = [&](ElementId a, ElementId b) { return pick(0, 1) ? g.addBond(a, b) : g.addBond(b, a); };
  auto onePort = [&](ElementKind k, ElementId at) {
    const char *prefix = k == ElementKind::C   ? "c"
                         : k == ElementKind::I ? "i"
                         : k == ElementKind::R ? "r"
                                               : "s";
    ElementId id = g.addElement(k, fresh(prefix));
    Element &e = g.elements[id.index];
    e.value = g.ctx->constant(value());
    if (k == ElementKind::C || k == ElementKind::I) {
      std::string name = e.name + (k == ElementKind::C ? ".q" : ".p");
      e.initial = g.ctx->constant(0);
      sym::SymbolId s = g.addVariable(name, {VariableInfo::State, id.index});
      g.elements[id.index].state = s;
    }
    return std::make_pair(id, link(at, id));
  };
  auto nonlinearR = [&](ElementId at) {
    ElementId id = onePort(ElementKind::R, at).first;
    bool effortLaw = pick(0, 1);
    RandomBondGraph::Cubic c{value(), value() / 4};
    Element &e = g.elements[id.index];
    e.law = effortLaw ? LawForm::EffortLaw : LawForm::FlowLaw;
    e.value = {};
    e.lawArg = g.ctx->addSymbol(e.name + (effortLaw ? ".f" : ".e"), sym::SymbolKind::Variable, 0);
    sym::ExprId x = g.ctx->ref(e.lawArg);
    e.lawExpr = g.ctx->add(g.ctx->mul(g.ctx->constant(c.a), x),
                           g.ctx->mul(g.ctx->constant(c.b), g.ctx->pow(x, g.ctx->constant(3))));
    out.laws[id.index] = c;
  };

  int n = pick(1, 7);
  std::vector<ElementId> junctions;
  for (int k = 0; k < n; ++k) {
    ElementKind kind = pick(0, 1) ? ElementKind::Zero : ElementKind::One;
    ElementId parent;
    int how = pick(0, 2); // plain bond, TF, GY
    if (k > 0) {
      parent = junctions[pick(0, k - 1)];
      if (wellPosed) {
        ElementKind pk = g.element(parent).kind;
        ElementKind opposite = pk == ElementKind::Zero ? ElementKind::One : ElementKind::Zero;
        kind = how == 2 ? pk : opposite;
      }
    }
    ElementId j = g.addElement(kind, fresh(kind == ElementKind::Zero ? "z" : "o"));
    junctions.push_back(j);
    if (k > 0) {
      if (how == 0) {
        link(parent, j);
      } else {
        bool modulated = pick(0, 1);
        ElementKind tk = how == 1 ? (modulated ? ElementKind::MTF : ElementKind::TF)
                                  : (modulated ? ElementKind::MGY : ElementKind::GY);
        ElementId t = g.addElement(tk, fresh(how == 1 ? "tf" : "gy"));
        g.elements[t.index].value = g.ctx->constant(value());
        // Port 1 is the bond in, port 2 the bond out: add them in that order.
        ElementId a = parent, b = j;
        if (pick(0, 1))
          std::swap(a, b);
        g.addBond(a, t);
        g.addBond(t, b);
      }
    }
    if (wellPosed) {
      bool zero = kind == ElementKind::Zero;
      out.storageBond[j.index] = onePort(zero ? ElementKind::C : ElementKind::I, j).second;
      for (int r = pick(0, 2); r > 0; --r)
        onePort(ElementKind::R, j);
      if (pick(0, 2) == 0) {
        bool modulated = pick(0, 1);
        onePort(zero ? (modulated ? ElementKind::MSf : ElementKind::Sf)
                     : (modulated ? ElementKind::MSe : ElementKind::Se),
                j);
      }
    } else {
      for (int s = pick(0, 2); s > 0; --s)
        onePort(pick(0, 1) ? ElementKind::C : ElementKind::I, j);
      for (int r = pick(0, 2); r > 0; --r) {
        if (pick(0, 2) == 0)
          nonlinearR(j);
        else
          onePort(ElementKind::R, j);
      }
      if (pick(0, 2) == 0) {
        static const ElementKind sources[] = {ElementKind::Se, ElementKind::Sf, ElementKind::MSe,
                                              ElementKind::MSf};
        onePort(sources[pick(0, 3)], j);
      }
    }
  }
  if (loops && n > 2)
    for (int extra = pick(1, 2); extra > 0; --extra) {
      ElementId a = junctions[pick(0, n - 1)], b = junctions[pick(0, n - 1)];
      if (a != b)
        link(a, b);
    }
  // Junctions need at least two bonds (sema's rule).
  for (ElementId j : junctions)
    while (g.element(j).bonds.size() < 2)
      onePort(ElementKind::R, j);
  return out;
}

} // namespace hbgtest
