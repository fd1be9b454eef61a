//===- support/Graph.cpp - Algorithms on directed graphs ------------------===//

#include "hbg/support/Graph.h"

#include <algorithm>

namespace hbg::support {

std::vector<std::vector<std::uint32_t>>
stronglyConnectedComponents(const std::vector<std::vector<std::uint32_t>> &deps) {
  std::size_t n = deps.size();
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<char> onStack(n, 0);
  std::vector<std::uint32_t> stack;
  std::vector<std::vector<std::uint32_t>> out;
  int counter = 0;
  // Iterative depth-first search: (node, next edge to follow).
  std::vector<std::pair<std::uint32_t, std::size_t>> work;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (index[root] >= 0)
      continue;
    work.push_back({root, 0});
    while (!work.empty()) {
      auto &[v, edge] = work.back();
      if (edge == 0 && index[v] < 0) {
        index[v] = low[v] = counter++;
        stack.push_back(v);
        onStack[v] = 1;
      }
      if (edge < deps[v].size()) {
        std::uint32_t w = deps[v][edge++];
        if (index[w] < 0)
          work.push_back({w, 0});
        else if (onStack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      if (low[v] == index[v]) {
        std::vector<std::uint32_t> comp;
        std::uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = 0;
          comp.push_back(w);
        } while (w != v);
        std::sort(comp.begin(), comp.end());
        out.push_back(std::move(comp));
      }
      std::uint32_t finished = v;
      work.pop_back();
      if (!work.empty())
        low[work.back().first] = std::min(low[work.back().first], low[finished]);
    }
  }
  return out;
}

std::vector<std::uint32_t> findCycle(const std::vector<std::vector<std::uint32_t>> &deps) {
  std::size_t n = deps.size();
  std::vector<char> state(n, 0); // 0 new, 1 on the path, 2 done
  // The path from the root, each vertex with the next edge to follow.
  std::vector<std::pair<std::uint32_t, std::size_t>> path;
  for (std::uint32_t root = 0; root < n; ++root) {
    if (state[root] != 0)
      continue;
    path.push_back({root, 0});
    state[root] = 1;
    while (!path.empty()) {
      auto &[v, edge] = path.back();
      if (edge == deps[v].size()) {
        state[v] = 2;
        path.pop_back();
        continue;
      }
      std::uint32_t w = deps[v][edge++];
      if (state[w] == 1) {
        // Back to a vertex on the path: the cycle runs from it to v.
        std::vector<std::uint32_t> cycle;
        auto from = std::find_if(path.begin(), path.end(),
                                 [w](const auto &entry) { return entry.first == w; });
        for (auto it = from; it != path.end(); ++it)
          cycle.push_back(it->first);
        cycle.push_back(w);
        return cycle;
      }
      if (state[w] == 0) {
        state[w] = 1;
        path.push_back({w, 0});
      }
    }
  }
  return {};
}

} // namespace hbg::support
