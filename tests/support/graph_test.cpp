//===- tests/support/graph_test.cpp - Algorithms on directed graphs -------===//

#include "hbg/support/Graph.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

using hbg::support::findCycle;
using hbg::support::stronglyConnectedComponents;
using Graph = std::vector<std::vector<std::uint32_t>>;

namespace {
/// Whether `cycle` (first repeated at the end) is a cycle of `g`.
bool isCycle(const Graph &g, const std::vector<std::uint32_t> &cycle) {
  if (cycle.size() < 2 || cycle.front() != cycle.back())
    return false;
  for (std::size_t k = 0; k + 1 < cycle.size(); ++k)
    if (std::find(g[cycle[k]].begin(), g[cycle[k]].end(), cycle[k + 1]) == g[cycle[k]].end())
      return false;
  return true;
}
} // namespace

TEST_CASE("graph: strongly connected components of small graphs, dependencies first") {
  CHECK(stronglyConnectedComponents({}).empty());
  // 0 -> 1 -> 2 -> 0 is one component; 3 depends on it; 4 stands alone.
  Graph g = {{1}, {2}, {0}, {0}, {}};
  std::vector<std::vector<std::uint32_t>> c = stronglyConnectedComponents(g);
  REQUIRE(c.size() == 3);
  auto position = [&](std::uint32_t v) {
    for (std::size_t k = 0; k < c.size(); ++k)
      if (std::find(c[k].begin(), c[k].end(), v) != c[k].end())
        return k;
    return c.size();
  };
  CHECK(c[position(0)] == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(c[position(3)] == std::vector<std::uint32_t>{3});
  CHECK(c[position(4)] == std::vector<std::uint32_t>{4});
  CHECK(position(0) < position(3)); // 3 depends on the cycle
  // Two cycles joined one way: 0 <-> 1, 2 <-> 3, 2 -> 1.
  Graph two = {{1}, {0}, {3, 1}, {2}};
  c = stronglyConnectedComponents(two);
  REQUIRE(c.size() == 2);
  CHECK(c[0] == std::vector<std::uint32_t>{0, 1});
  CHECK(c[1] == std::vector<std::uint32_t>{2, 3});
  // A self-loop is a component of one, like a vertex without one.
  CHECK(stronglyConnectedComponents({{0}}) == std::vector<std::vector<std::uint32_t>>{{0}});
}

TEST_CASE("graph: cycles of small graphs, or none") {
  CHECK(findCycle({}).empty());
  CHECK(findCycle({{1}, {2}, {}}).empty()); // a chain
  CHECK(findCycle({{1, 2}, {3}, {3}, {}}).empty()); // a diamond: two paths, no cycle
  Graph self = {{0}};
  CHECK(findCycle(self) == std::vector<std::uint32_t>{0, 0});
  Graph g = {{1}, {2}, {3}, {1}}; // 1 -> 2 -> 3 -> 1, reached from 0
  std::vector<std::uint32_t> cycle = findCycle(g);
  CHECK(cycle == std::vector<std::uint32_t>{1, 2, 3, 1});
  CHECK(isCycle(g, cycle));
  // Found from a later root when the first ones reach none.
  Graph late = {{}, {}, {3}, {2}};
  CHECK(findCycle(late) == std::vector<std::uint32_t>{2, 3, 2});
}

TEST_CASE("graph: a chain of a million vertices costs no stack") {
  std::size_t n = 1000000;
  Graph chain(n);
  for (std::uint32_t v = 0; v + 1 < n; ++v)
    chain[v].push_back(v + 1);
  CHECK(findCycle(chain).empty());
  CHECK(stronglyConnectedComponents(chain).size() == n);
  chain[n - 1].push_back(0); // closed: one cycle through all
  std::vector<std::uint32_t> cycle = findCycle(chain);
  CHECK(cycle.size() == n + 1);
  CHECK(isCycle(chain, cycle));
  CHECK(stronglyConnectedComponents(chain).size() == 1);
}
