//===- codegen/Partition.cpp - Reachable node sets and output slicing -----===//

#include "Partition.h"

#include <algorithm>

namespace hbg::codegen {

NodeSet::NodeSet(const sym::ExprContext &ctx) : ctx_(ctx), stamp_(ctx.size(), 0) {}

void NodeSet::clear() {
  if (++epoch_ == 0) {
    // Wrapped after 2^32 clears: old stamps could alias the new epoch.
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
}

void NodeSet::addReachable(sym::ExprId root, std::vector<std::uint32_t> &added) {
  auto push = [&](sym::ExprId id) {
    if (stamp_[id.index] == epoch_)
      return;
    stamp_[id.index] = epoch_;
    added.push_back(id.index);
    stack_.push_back(id.index);
  };
  push(root);
  while (!stack_.empty()) {
    const sym::Node &n = ctx_.node(sym::ExprId{stack_.back()});
    stack_.pop_back();
    sym::forEachOperand(n, push);
  }
}

std::vector<OutputSlice> partitionOutputs(const sym::ExprContext &ctx,
                                          const std::vector<sym::ExprId> &outputs,
                                          std::size_t maxNodes) {
  std::vector<OutputSlice> slices;
  NodeSet set(ctx);
  std::vector<std::uint32_t> members;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    set.addReachable(outputs[i], members);
    if (members.size() > maxNodes && i > begin) {
      // Output i does not fit: close the slice before it and start afresh,
      // recounting the nodes it shares with the closed slice.
      slices.push_back({begin, i});
      set.clear();
      members.clear();
      begin = i;
      set.addReachable(outputs[i], members);
    }
  }
  slices.push_back({begin, outputs.size()});
  return slices;
}

} // namespace hbg::codegen
