//===- runtime/Zeno.cpp - Too many events, and events that accumulate -----===//

#include "Run.h"

#include <algorithm>
#include <cmath>
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
  if (!window) {
    checkChattering();
    return;
  }
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

void Run::checkChattering() {
  // Junctions that switch back and forth among two modes (or a few) while
  // the state stays where it was, to a millionth of its scale: the guard
  // surface attracts from both sides (a relay without hysteresis), and
  // the events come as fast as the integration's tolerance lets the state
  // cross it. Where the run could not slide on it (JunctionSliding.cpp),
  // such a run would go on to the event limit.
  const std::size_t kChatter = 100, kFewModes = 4;
  std::size_t n = r_.events.size();
  // A model without states (a switch on a source) cannot be held anywhere.
  std::size_t slots = X_.size();
  if (n < kChatter || slots == 0)
    return;
  auto scale = [&](std::size_t i) {
    double nominal = i < o_.nominal.size() ? o_.nominal[i] : 0.0;
    return 1e-6 * std::max(nominal, peak_[i]);
  };
  // This runs after every event, so first what is cheap. A state held in
  // place has all its values in the window within its scale of each
  // other: those of the first and the last two events among them. Where
  // no state does that, nothing chatters.
  const Event &oldest = r_.events[n - kChatter];
  auto near = [&](const Event &e, std::size_t i) {
    return std::abs(e.before[i] - oldest.before[i]) <= scale(i) &&
           std::abs(e.after[i] - oldest.before[i]) <= scale(i);
  };
  const Event &last = r_.events[n - 1], &beforeLast = r_.events[n - 2];
  for (const Event *e : {&oldest, &beforeLast, &last})
    if (e->before.size() != slots || e->after.size() != slots)
      return;
  bool someHeld = false;
  for (std::size_t i = 0; i < slots && !someHeld; ++i)
    someHeld = near(last, i) && near(beforeLast, i) && near(oldest, i);
  if (!someHeld)
    return;
  // Every event of the window switches between few modes (an event that
  // comes back to the mode it started from, a bounce, does not chatter);
  // then the range of each state over the window.
  std::vector<std::string> modes;
  bool together = false;
  for (std::size_t k = n - kChatter; k < n; ++k) {
    const Event &e = r_.events[k];
    if (e.modes.front() == e.modes.back() || e.before.size() != slots ||
        e.after.size() != slots)
      return;
    for (const std::string *m : {&e.modes.front(), &e.modes.back()})
      if (std::find(modes.begin(), modes.end(), *m) == modes.end())
        modes.push_back(*m);
    if (modes.size() > kFewModes)
      return;
    together = together || e.junctionsSwitched.size() > 1;
  }
  std::vector<double> lo(r_.events[n - kChatter].before), hi(lo);
  for (std::size_t k = n - kChatter; k < n; ++k) {
    const Event &e = r_.events[k];
    for (std::size_t i = 0; i < slots; ++i) {
      lo[i] = std::min({lo[i], e.before[i], e.after[i]});
      hi[i] = std::max({hi[i], e.before[i], e.after[i]});
    }
  }
  // A state that jumps at the switching (storage a mode makes dependent:
  // a source closed across a capacitor) moves with the mode; the others
  // must stay in place, and at least one of them must exist.
  std::vector<bool> jumps(slots, false);
  for (std::size_t k = n - kChatter; k < n; ++k)
    for (std::size_t i = 0; i < slots; ++i)
      if (std::abs(r_.events[k].after[i] - r_.events[k].before[i]) > scale(i))
        jumps[i] = true;
  bool held = false;
  for (std::size_t i = 0; i < slots; ++i) {
    if (jumps[i])
      continue;
    if (hi[i] - lo[i] > scale(i))
      return;
    held = true;
  }
  if (!held)
    return;
  std::string names;
  for (std::size_t i = 0; i < modes.size(); ++i)
    names += (i == 0 ? "`" : i + 1 < modes.size() ? ", `" : " and `") + modes[i] + "`";
  std::string transitions;
  for (std::size_t k = n - 2; k < n; ++k)
    for (const std::string &t : r_.events[k].transitions)
      transitions += (transitions.empty() ? "`" : ", `") + t + "`";
  std::string why = modes.size() > 2 ? "more than two modes meet on it"
                    : together       ? "more than one junction switches at once on it"
                    : !slideRefused_.empty()
                        ? slideRefused_
                        : "the junction's other threshold is too close to hold the two apart, "
                          "and too far to slide on one";
  throw RunError(DiagKind::RunChattering, r_.events[n - 1].time, modeText(q_),
                 {names, kChatter, DiagArg::time(r_.events[n - kChatter].time), transitions, why});
}

} // namespace hbg::runtime
