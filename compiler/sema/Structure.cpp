//===- compiler/sema/Structure.cpp - Elements and bonds -------------------===//
//
// Step 2 of sema: the model's parameters, elements, junctions and signals
// become the bond graph's, its bonds join the elements they name, and each
// element is checked to have the bonds its kind needs, in the directions a
// two-port needs.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <map>
#include <string>

namespace hbg::sema {

using namespace hbg::bg;

namespace {

/// Kinds by keyword.
const std::map<std::string, ElementKind> kElementKinds = {
    {"Se", ElementKind::Se}, {"Sf", ElementKind::Sf},   {"MSe", ElementKind::MSe},
    {"MSf", ElementKind::MSf}, {"C", ElementKind::C},   {"I", ElementKind::I},
    {"R", ElementKind::R},   {"TF", ElementKind::TF},   {"GY", ElementKind::GY},
    {"MTF", ElementKind::MTF}, {"MGY", ElementKind::MGY},
};

/// "no bonds", "one bond", "3 bonds".
std::string bondCount(std::size_t n) {
  return n == 0 ? "no bonds" : n == 1 ? "one bond" : std::to_string(n) + " bonds";
}

} // namespace

std::string elementNoun(ElementKind k) {
  return isJunction(k) ? std::string(kindName(k)) + "-junction"
                       : std::string(kindName(k)) + " element";
}

void Analyzer::buildStructure(const ast::Model &m) {
  for (const ast::Parameter &p : m.parameters) {
    Parameter param;
    param.name = p.name;
    param.range = p.nameRange;
    param.structural = p.structural;
    param.input = p.input;
    param.symbol = ctx().addSymbol(p.name, sym::SymbolKind::Parameter,
                                   static_cast<std::uint32_t>(g_.parameters.size()));
    g_.parameters.push_back(std::move(param));
  }
  for (const ast::Element &e : m.elements) {
    ElementId id = g_.addElement(kElementKinds.at(e.kind), e.name, e.nameRange);
    Element &el = g_.elements[id.index];
    if (el.kind == ElementKind::C)
      el.state = g_.addVariable(e.name + ".q", {VariableInfo::State, id.index});
    else if (el.kind == ElementKind::I)
      el.state = g_.addVariable(e.name + ".p", {VariableInfo::State, id.index});
  }
  for (const ast::Junction &j : m.junctions) {
    ElementId id = g_.addElement(j.kind == '0' ? ElementKind::Zero : ElementKind::One, j.name, j.nameRange);
    g_.elements[id.index].pseudo = j.pseudo;
    // Flattening reports this first in a model it flattens (once per
    // component); a plain model comes here unflattened.
    if (!j.mark.empty() && !j.pseudo)
      diags_.report(DiagKind::BadJunctionMark, j.markRange, {j.mark, j.name});
  }
  for (const ast::Signal &s : m.signals) {
    if (s.boolean)
      booleans_.insert(s.name);
    Signal sig;
    sig.name = s.name;
    sig.range = s.nameRange;
    if (s.discrete) {
      // Read like a parameter: a slot the run sets at its clock's ticks
      // (Sampled.cpp). Its value as a signal is that slot.
      sig.symbol = addHeld(Held::Kind::Discrete, s.name, s.nameRange);
      sig.value = ctx().ref(sig.symbol);
    } else {
      sig.symbol = g_.addVariable(s.name, {VariableInfo::Signal, std::uint32_t(g_.signals.size())});
    }
    g_.signals.push_back(std::move(sig));
  }

  // Bonds: both ends must name elements or junctions.
  for (const ast::Bond &b : m.bonds) {
    auto resolveEnd = [&](const std::string &name, SourceRange range) -> ElementId {
      auto it = names_.find(name);
      if (it == names_.end()) {
        std::vector<std::string> elementNames;
        for (const Element &e : g_.elements)
          elementNames.push_back(e.name);
        unknownName(name, range, elementNames);
        return {};
      }
      if (it->second.kind != NameInfo::Element) {
        static const char *nouns[] = {"parameter", "element", "bond", "signal"};
        diags_.report(DiagKind::NotAnElement, range, {name, nouns[it->second.kind]});
        return {};
      }
      return ElementId{it->second.index};
    };
    ElementId from = resolveEnd(b.from, b.fromRange);
    ElementId to = resolveEnd(b.to, b.toRange);
    if (!from.valid() || !to.valid())
      continue;
    if (from == to) {
      diags_.report(DiagKind::BondToItself, b.range, {b.from});
      continue;
    }
    std::string name = b.name;
    if (name.empty()) {
      // Unnamed bonds are b1, b2, ... by position; a declared name wins and
      // the bond takes the next free suffix.
      name = "b" + std::to_string(g_.bonds.size() + 1);
      while (names_.count(name))
        name += "_";
    }
    g_.addBond(from, to, name, b.range);
  }
  markPseudo();
}

void Analyzer::markPseudo() {
  // A pseudo bond graph is everything bonded to a junction declared
  // `pseudo`: its parts in one component of the graph (union-find over
  // the bonds), which signals alone (a heat port's `MSf(v * i)`) do not
  // join to the electrical part.
  std::vector<std::uint32_t> parent(g_.elements.size());
  for (std::uint32_t i = 0; i < parent.size(); ++i)
    parent[i] = i;
  auto root = [&](std::uint32_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const Bond &b : g_.bonds)
    parent[root(b.from.index)] = root(b.to.index);
  std::vector<bool> pseudo(parent.size(), false);
  for (std::uint32_t i = 0; i < parent.size(); ++i)
    if (g_.elements[i].pseudo)
      pseudo[root(i)] = true;
  for (std::uint32_t i = 0; i < parent.size(); ++i)
    g_.elements[i].pseudo = pseudo[root(i)];
}

void Analyzer::checkBondCounts() {
  for (std::size_t i = 0; i < g_.elements.size(); ++i) {
    Element &e = g_.elements[i];
    ElementId id{static_cast<std::uint32_t>(i)};
    std::size_t n = e.bonds.size();
    if (isJunction(e.kind)) {
      if (n < 2)
        diags_.report(DiagKind::JunctionTooFewBonds, e.range, {e.name, bondCount(n)});
    } else if (isTwoPort(e.kind)) {
      if (n != 2) {
        diags_.report(DiagKind::TwoPortBondCount, e.range, {kindName(e.kind), e.name, bondCount(n)});
        continue;
      }
      int in = (g_.sign(e.bonds[0], id) > 0) + (g_.sign(e.bonds[1], id) > 0);
      if (in != 1) {
        diags_.report(DiagKind::TwoPortDirection, e.range, {kindName(e.kind), e.name, in, 2 - in});
        continue;
      }
      if (g_.sign(e.bonds[0], id) < 0)
        std::swap(e.bonds[0], e.bonds[1]);
    } else if (n != 1) {
      diags_.report(DiagKind::OnePortBondCount, e.range, {kindName(e.kind), e.name, bondCount(n)});
    }
  }
}

} // namespace hbg::sema
