//===- hbg/bondgraph/Path.h - Paths through the bond graph as text --------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"

#include <string>
#include <vector>

namespace hbg::bg {

/// A path of elements as text with the bonds between them, junctions
/// with their kind: `r1 [b3] 1:j [b4] r2`. Consecutive elements of
/// `path` share a bond.
std::string pathText(const BondGraph &g, const std::vector<ElementId> &path);

} // namespace hbg::bg
