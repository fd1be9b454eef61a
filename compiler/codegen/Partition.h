//===- codegen/Partition.h - Reachable node sets and output slicing -------===//
//
// Internal to hbg_codegen. Decides which DAG nodes one LLVM function lowers:
// NodeSet collects the nodes reachable from a group of roots without
// recursion (DAGs of derived equations can be very deep), and
// partitionOutputs cuts a long output list into consecutive slices whose
// node sets stay under a bound, so that no single function grows beyond
// what the optimiser handles in roughly linear time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/symbolic/Expr.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hbg::codegen {

/// A set of DAG nodes, grown by reachability from roots. Clearing is O(1)
/// (an epoch counter), so one NodeSet can serve many functions in turn.
class NodeSet {
public:
  explicit NodeSet(const sym::ExprContext &ctx);

  /// Empties the set.
  void clear();
  /// Adds every node reachable from `root` that is not yet in the set and
  /// appends the newly added ids to `added` (in no particular order).
  void addReachable(sym::ExprId root, std::vector<std::uint32_t> &added);
  bool contains(std::uint32_t id) const { return stamp_[id] == epoch_; }
  /// Adds one node (not what it reaches).
  void mark(std::uint32_t id) { stamp_[id] = epoch_; }

private:
  const sym::ExprContext &ctx_;
  std::vector<std::uint32_t> stamp_;
  std::uint32_t epoch_ = 1;
  std::vector<std::uint32_t> stack_; ///< reused DFS stack
};

/// A half-open range [begin, end) of a function's outputs.
struct OutputSlice {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// Splits `outputs` greedily into consecutive slices, each as long as it can
/// be while the nodes reachable from it number at most `maxNodes`. A single
/// output that alone exceeds the bound gets a slice of its own. Returns one
/// slice covering everything (possibly empty) when no split is needed.
std::vector<OutputSlice> partitionOutputs(const sym::ExprContext &ctx,
                                          const std::vector<sym::ExprId> &outputs,
                                          std::size_t maxNodes);

} // namespace hbg::codegen
