//===- compiler/bondgraph/Path.cpp - Paths through the bond graph as text -===//

#include "hbg/bondgraph/Path.h"

namespace hbg::bg {

std::string pathText(const BondGraph &g, const std::vector<ElementId> &path) {
  std::string out;
  for (std::size_t k = 0; k < path.size(); ++k) {
    const Element &e = g.element(path[k]);
    if (k) {
      std::string via = ", ";
      for (BondId b : e.bonds)
        if (g.otherEnd(b, path[k]) == path[k - 1]) {
          via = " [" + g.bond(b).name + "] ";
          break;
        }
      out += via;
    }
    out += isJunction(e.kind) ? std::string(kindName(e.kind)) + ":" + e.name : e.name;
  }
  return out;
}

} // namespace hbg::bg
