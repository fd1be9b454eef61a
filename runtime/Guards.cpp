//===- runtime/Guards.cpp - Guard comparisons and state machines ----------===//

#include "hbg/runtime/Guards.h"

#include <algorithm>

namespace hbg::runtime {

void comparisonsOf(const GuardNode &g, std::vector<const GuardNode *> &out) {
  if (g.kind == GuardNode::Compare)
    out.push_back(&g);
  else if (g.kind != GuardNode::Not)
    for (const GuardNode &c : g.children)
      comparisonsOf(c, out);
}

namespace {
double magnitude(Interval a) { return std::max(std::abs(a.lo), std::abs(a.hi)); }
double mignitude(Interval a) {
  return a.lo <= 0 && a.hi >= 0 ? 0 : std::min(std::abs(a.lo), std::abs(a.hi));
}
} // namespace

Truth comparisonTruth(CompareOp op, Interval lhs, Interval rhs, Interval diff) {
  if (lhs.isWhole() || rhs.isWhole() || diff.isWhole())
    return Truth::Unknown;
  // comparisonReached() subtracts the sides in floating point; `diff` may
  // have been computed otherwise (simplified symbolically). Their rounding
  // differs by far less than this, and far less than the tolerances.
  double sizes = magnitude(lhs) + magnitude(rhs);
  double slack = 1e-15 * sizes;
  double lo = diff.lo - slack, hi = diff.hi + slack;
  auto decide = [](bool always, bool never) {
    return always ? Truth::True : never ? Truth::False : Truth::Unknown;
  };
  // Only strict comparisons have a tolerance: its largest and smallest
  // values over the enclosures.
  auto tolMax = [&] { return 1e-11 * sizes + 1e-14; };
  auto tolMin = [&] { return 1e-11 * (mignitude(lhs) + mignitude(rhs)) + 1e-14; };
  switch (op) {
  case CompareOp::Less: return decide(hi < -tolMax(), lo >= -tolMin());
  case CompareOp::LessEqual: return decide(hi <= 0, lo > 0);
  case CompareOp::Greater: return decide(lo > tolMax(), hi <= tolMin());
  case CompareOp::GreaterEqual: return decide(lo >= 0, hi < 0);
  case CompareOp::Equal: return decide(lo == 0 && hi == 0, lo > 0 || hi < 0);
  }
  return Truth::Unknown;
}

Switching::Switching(std::vector<Junction> junctions, std::vector<CompareOp> ops)
    : junctions_(std::move(junctions)), ops_(std::move(ops)) {}

std::vector<std::uint32_t> Switching::initialStates() const {
  std::vector<std::uint32_t> q;
  for (const Junction &j : junctions_)
    q.push_back(j.initial);
  return q;
}

std::string Switching::modeText(const std::vector<std::uint32_t> &q) const {
  std::string out;
  for (std::size_t j = 0; j < junctions_.size(); ++j)
    out += (j ? ", " : "") + junctions_[j].name + "=" + junctions_[j].stateNames[q[j]];
  return out;
}

bool Switching::holds(const GuardNode &g, const double *plus, const double *minus,
                      const std::vector<std::uint32_t> *forced) const {
  switch (g.kind) {
  case GuardNode::Compare: {
    std::uint32_t k = g.comparison;
    if (forced && std::find(forced->begin(), forced->end(), k) != forced->end())
      return true;
    const double *s = g.minus ? minus : plus;
    return comparisonHolds(g.op, s[2 * k], s[2 * k + 1]);
  }
  case GuardNode::Not:
    return !holds(g.children[0], plus, minus, forced);
  case GuardNode::And:
    return std::all_of(g.children.begin(), g.children.end(),
                       [&](const GuardNode &c) { return holds(c, plus, minus, forced); });
  case GuardNode::Or:
    return std::any_of(g.children.begin(), g.children.end(),
                       [&](const GuardNode &c) { return holds(c, plus, minus, forced); });
  }
  return false;
}

int Switching::enabledTransition(std::size_t j, std::uint32_t state, const double *plus,
                                 const double *minus,
                                 const std::vector<std::uint32_t> *forced) const {
  const std::vector<Transition> &ts = junctions_[j].transitions;
  for (std::size_t i = 0; i < ts.size(); ++i)
    if (ts[i].from == state && holds(ts[i].guard, plus, minus, forced))
      return static_cast<int>(i);
  return -1;
}

bool Switching::anyEnabled(const std::vector<std::uint32_t> &q, const double *sides,
                           const std::vector<std::uint32_t> *forced) const {
  for (std::size_t j = 0; j < junctions_.size(); ++j)
    if (enabledTransition(j, q[j], sides, sides, forced) >= 0)
      return true;
  return false;
}

namespace {
void collect(const GuardNode &g, std::vector<std::uint32_t> &out) {
  if (g.kind == GuardNode::Compare)
    out.push_back(g.comparison);
  for (const GuardNode &c : g.children)
    collect(c, out);
}
} // namespace

std::vector<std::uint32_t> Switching::comparisonsFrom(const std::vector<std::uint32_t> &q) const {
  std::vector<std::uint32_t> out;
  for (std::size_t j = 0; j < junctions_.size(); ++j)
    for (const Transition &t : junctions_[j].transitions)
      if (t.from == q[j])
        collect(t.guard, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Truth Switching::truth(const GuardNode &g, const Truth *comparisons) const {
  switch (g.kind) {
  case GuardNode::Compare:
    return comparisons[g.comparison];
  case GuardNode::Not: {
    Truth c = truth(g.children[0], comparisons);
    return c == Truth::Unknown ? c : (c == Truth::True ? Truth::False : Truth::True);
  }
  case GuardNode::And:
  case GuardNode::Or: {
    // And: any False decides; Or: any True decides.
    Truth decisive = g.kind == GuardNode::And ? Truth::False : Truth::True;
    bool unknown = false;
    for (const GuardNode &c : g.children) {
      Truth v = truth(c, comparisons);
      if (v == decisive)
        return decisive;
      unknown = unknown || v == Truth::Unknown;
    }
    if (unknown)
      return Truth::Unknown;
    return g.kind == GuardNode::And ? Truth::True : Truth::False;
  }
  }
  return Truth::Unknown;
}

Truth Switching::anyEnabled(const std::vector<std::uint32_t> &q,
                                       const Truth *comparisons) const {
  bool unknown = false;
  for (std::size_t j = 0; j < junctions_.size(); ++j)
    for (const Transition &t : junctions_[j].transitions) {
      if (t.from != q[j])
        continue;
      Truth v = truth(t.guard, comparisons);
      if (v == Truth::True)
        return v;
      unknown = unknown || v == Truth::Unknown;
    }
  return unknown ? Truth::Unknown : Truth::False;
}

} // namespace hbg::runtime
