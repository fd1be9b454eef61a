//===- hbg/bondgraph/Path.h - Paths through the bond graph as text --------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"

#include <string>
#include <vector>

namespace hbg::bg {

/// A path of elements as text with the bonds between them, junctions
/// with their kind: `r1 [b3] 1:j [b4] r2`. Consecutive elements that
/// share no bond (the elements a causal wave reached, which need not be
/// one path) are separated by a comma: `r1 [b3] 1:j, 0:k`. The one
/// syntax of loop paths in explain, the causality dump, `hbgc dot` and
/// run-time errors.
std::string pathText(const BondGraph &g, const std::vector<ElementId> &path);

} // namespace hbg::bg
