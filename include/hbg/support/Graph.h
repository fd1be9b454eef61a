//===- hbg/support/Graph.h - Algorithms on directed graphs ----------------===//
//
// Dependency graphs over vertices 0..n-1, given as adjacency lists
// (edges v -> deps[v]: v depends on deps[v]). Both searches are iterative:
// a chain of a million dependencies costs no stack.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace hbg::support {

/// The strongly connected components, each sorted, in an order where every
/// component comes after those it depends on (Tarjan's algorithm emits
/// them that way).
std::vector<std::vector<std::uint32_t>>
stronglyConnectedComponents(const std::vector<std::vector<std::uint32_t>> &deps);

/// A cycle, as the vertices along it with the first repeated at the end
/// (`a b c a`, `a a` for a self-loop), found by depth-first search from
/// vertex 0, 1, ... in turn; empty when the graph has none.
std::vector<std::uint32_t> findCycle(const std::vector<std::vector<std::uint32_t>> &deps);

} // namespace hbg::support
