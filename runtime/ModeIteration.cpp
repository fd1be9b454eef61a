//===- runtime/ModeIteration.cpp - The mythical mode algorithm ------------===//
//
// At an event at time t with state x: every junction takes its first
// enabled transition, all at once; comparisons marked + are judged on the
// values of the new configuration computed from the unchanged state, those
// marked - on the last real mode's; this repeats, the state never
// changing, until no junction switches (the modes passed through are
// mythical). If the mode changed, the state is remapped into the final
// mode, which is now real, and the iteration starts again from it, until a
// round switches nothing. A mode seen twice within a round, or a round
// starting from a mode and state it started from before, is a cycle.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "hbg/runtime/Remap.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace hbg::runtime {

bool Run::iterateModes() {
  Event ev;
  ev.time = t_;
  ev.before = X_;
  ev.modes.push_back(sw_.modeText(q_));
  ev.real.push_back(true);
  ev.states.push_back(X_);
  std::vector<std::uint32_t> qBefore = q_;
  // The a priori values of the event: what `pre(...)` holds from now on.
  holdValues(mode(q_));
  std::vector<std::pair<std::string, double>> branchesBefore = branches(mode(q_));
  std::set<std::pair<std::vector<std::uint32_t>, std::vector<double>>> roundStarts;
  bool switched = false;
  for (int round = 0;; ++round) {
    if (!roundStarts.insert({q_, X_}).second || round == 1000) {
      // ev.modes ends with this round's start, which closes the cycle.
      std::vector<std::string> modes(ev.modes.begin(), ev.modes.end() - 1);
      throw RunError{"the modes do not settle at t = " + timeText(t_) + ": " +
                     cycleText(ev, modes, sw_.modeText(q_))};
    }
    std::vector<double> minus = guardSides(mode(q_)), plus = minus;
    std::vector<std::uint32_t> cur = q_;
    std::set<std::vector<std::uint32_t>> visited{cur};
    std::vector<std::string> seen{sw_.modeText(cur)};
    for (;;) {
      std::vector<std::uint32_t> next = cur;
      bool any = false;
      for (std::size_t j = 0; j < sw_.junctions().size(); ++j) {
        int i = sw_.enabledTransition(j, cur[j], plus.data(), minus.data());
        if (i < 0)
          continue;
        const Transition &t = sw_.junctions()[j].transitions[i];
        next[j] = t.to;
        ev.transitions.push_back(sw_.junctions()[j].name + ": " + t.text);
        any = true;
      }
      ++r_.modeIterations;
      if (!any)
        break;
      cur = next;
      if (!visited.insert(cur).second)
        throw RunError{"the modes do not settle at t = " + timeText(t_) + ": " +
                       cycleText(ev, seen, sw_.modeText(cur))};
      seen.push_back(sw_.modeText(cur));
      ev.modes.push_back(sw_.modeText(cur));
      ev.real.push_back(false);
      ev.states.push_back(X_);
      plus = guardSides(mode(cur));
    }
    if (cur == q_)
      break;
    switched = true;
    ev.real.back() = true;
    Mode &to = mode(cur);
    q_ = cur;
    chooseBranches(to);
    if (!to.dependentSlots().empty())
      remap(to, ev);
    ev.states.back() = X_; // the real mode's state: remapped
  }
  // Kinks whose argument crossed (or that a new mode puts on another
  // side): an event of their own when nothing switched.
  Mode &now = mode(q_);
  chooseBranches(now);
  std::vector<std::string> kinks = branchChanges(branchesBefore, now);
  if (!kinks.empty() && !now.dependentSlots().empty()) {
    // Dependent storage may read the kinks that changed.
    std::vector<double> x = gather(now);
    complete(now, x.data());
  }
  if (!switched && kinks.empty())
    return false;
  ev.transitions.insert(ev.transitions.end(), kinks.begin(), kinks.end());
  if (!switched) {
    ev.modes.push_back(ev.modes.back());
    ev.real.push_back(true);
    ev.states.push_back(X_);
  }
  if (r_.columns[0].empty()) {
    // An event at the start: the row before it, in the mode before it
    // (after it, X holds the remapped state).
    std::vector<double> after = X_;
    std::vector<std::uint32_t> q = q_;
    X_ = ev.before;
    q_ = qBefore;
    Mode &m = mode(q_);
    std::vector<double> x = gather(m);
    sample(m, t_, x.data());
    X_ = std::move(after);
    q_ = std::move(q);
  }
  ev.after = X_;
  r_.events.push_back(std::move(ev));
  checkZeno();
  return true;
}

void Run::remap(Mode &to, Event &ev) {
  auto start = std::chrono::steady_clock::now();
  std::vector<double> x = gather(to), d;
  for (std::uint32_t s : to.dependentSlots())
    d.push_back(X_[s]);
  auto store = [&](const std::vector<double> &xs, const std::vector<double> &ds) {
    for (std::size_t i = 0; i < xs.size(); ++i)
      X_[to.stateSlots()[i]] = xs[i];
    for (std::size_t k = 0; k < ds.size(); ++k)
      X_[to.dependentSlots()[k]] = ds[k];
  };
  std::string text = sw_.modeText(q_);
  if (o_.remap == SimulateOptions::Remap::Iterative) {
    remapIterative(to, text, t_, o_.remapFactor, o_.remapTolerance, x, d,
                   [&](const std::vector<double> &xs, const std::vector<double> &ds) {
                     store(xs, ds);
                     ev.remapIterations.push_back(X_);
                   });
  } else {
    remapExact(to, text, t_, x, d);
    store(x, d);
  }
  r_.remapSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string Run::cycleText(const Event &ev, const std::vector<std::string> &modes,
                           const std::string &again) const {
  // The junctions that switched, then the cycle from the first occurrence
  // of the repeated mode.
  std::vector<std::string> junctions;
  for (const std::string &t : ev.transitions) {
    std::string j = "`" + t.substr(0, t.find(':')) + "`";
    if (std::find(junctions.begin(), junctions.end(), j) == junctions.end())
      junctions.push_back(j);
  }
  std::string out = junctions.size() == 1 ? "junction " : "junctions ";
  for (std::size_t i = 0; i < junctions.size(); ++i)
    out += (i ? ", " : "") + junctions[i];
  auto first = std::find(modes.begin(), modes.end(), again);
  out += junctions.size() == 1 ? " switches in a cycle through " : " switch in a cycle through ";
  for (auto it = first; it != modes.end(); ++it)
    out += "(" + *it + ") -> ";
  out += "(" + again + ")";
  return out;
}

} // namespace hbg::runtime
