//===- runtime/Zeno.cpp - Too many events, and events that accumulate -----===//

#include "Run.h"

#include <algorithm>
#include <set>

namespace hbg::runtime {

void Run::checkZeno() {
  std::size_t n = r_.events.size();
  if (n + r_.eventsDropped > o_.maxEvents)
    throw RunError(DiagKind::RunTooManyEvents, t_, modeText(q_), {o_.maxEvents});
  // Zeno behaviour: many events within a tiny span, or events whose
  // spacing shrinks geometrically towards an accumulation point that is
  // closer than that span.
  double span = o_.zenoSpan * std::max(1.0, std::abs(t_));
  std::size_t window = 0;
  if (o_.zenoEvents >= 2 && n >= o_.zenoEvents &&
      t_ - r_.events[n - o_.zenoEvents].time <= span)
    window = o_.zenoEvents;
  const std::size_t geometric = 10;
  if (!window && n > geometric + 1) {
    bool shrinking = true;
    double ratio = 0;
    for (std::size_t k = n - geometric; k < n && shrinking; ++k) {
      double last = r_.events[k].time - r_.events[k - 1].time;
      double before = r_.events[k - 1].time - r_.events[k - 2].time;
      ratio = before > 0 ? last / before : 1;
      shrinking = ratio > 0 && ratio < 0.99;
    }
    double interval = r_.events[n - 1].time - r_.events[n - 2].time;
    if (shrinking && interval * ratio / (1 - ratio) <= span)
      window = geometric + 1;
  }
  if (!window)
    return;
  double first = r_.events[n - window].time, last = r_.events[n - 1].time;
  std::set<std::string> junctions;
  for (std::size_t k = n - window; k < n; ++k)
    for (const std::string &t : r_.events[k].transitions)
      junctions.insert(t.substr(0, t.find(':')));
  std::string names;
  for (const std::string &j : junctions)
    names += (names.empty() ? "`" : ", `") + j + "`";
  throw RunError(DiagKind::RunZeno, last, modeText(q_), {names, window, DiagArg::time(first)});
}

} // namespace hbg::runtime
