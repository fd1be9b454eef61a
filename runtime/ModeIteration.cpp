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
#include <cstdint>

namespace hbg::runtime {

namespace {
/// The last of `pool`, with its storage, or a new one when it is empty.
template <class T> T take(std::vector<T> &pool) {
  if (pool.empty())
    return T();
  T v = std::move(pool.back());
  pool.pop_back();
  return v;
}

/// Moves the elements of `from` (their storage) into `pool`, up to `most`
/// in all, and empties `from`.
template <class T> void give(std::vector<T> &from, std::vector<T> &pool, std::size_t most) {
  for (T &v : from)
    if (pool.size() < most)
      pool.push_back(std::move(v));
  from.clear();
}
} // namespace

Event Run::newEvent() {
  Event ev = take(pool_.events);
  // An event passes through a few modes: room for them up front (a
  // recycled event has it already).
  ev.modes.reserve(4);
  ev.states.reserve(4);
  ev.transitions.reserve(4);
  return ev;
}

std::size_t Run::eventsKept() const { return std::max(o_.keepEvents, o_.zenoEvents + 12); }

void Run::recycle(Event &ev) {
  // Bounded by what one drop of the record frees: the pool never holds
  // more than the record held.
  std::size_t keep = eventsKept();
  std::size_t most = keep > SIZE_MAX / 8 ? SIZE_MAX : 8 * keep;
  give(ev.modes, pool_.strings, most);
  give(ev.transitions, pool_.strings, most);
  give(ev.states, pool_.vectors, most);
  give(ev.remapIterations, pool_.vectors, most);
  ev.real.clear();
  ev.before.clear();
  ev.after.clear();
  ev.outputsBefore.clear();
  ev.outputsAfter.clear();
  ev.discreteBefore.clear();
  ev.discreteAfter.clear();
  ev.energyBefore.clear();
  ev.energyAfter.clear();
  ev.junctionsSwitched.clear();
  ev.time = ev.storedBefore = ev.storedAfter = ev.removed = 0;
  if (pool_.events.size() < keep)
    pool_.events.push_back(std::move(ev));
}

void Run::addMode(Event &ev, const std::string &text, bool real) {
  ev.modes.push_back(take(pool_.strings));
  ev.modes.back().assign(text);
  ev.real.push_back(real);
  ev.states.push_back(take(pool_.vectors));
  ev.states.back().assign(X_.begin(), X_.end());
}

void Run::addTransition(Event &ev, const std::string &text) {
  ev.transitions.push_back(take(pool_.strings));
  ev.transitions.back().assign(text);
}

bool Run::iterateModes(const std::vector<double> *yBefore) {
  yAfterKept_ = false;
  Event ev = newEvent();
  ev.time = t_;
  ev.before = X_;
  if (yBefore)
    ev.outputsBefore = *yBefore;
  else
    outputsNow(ev.outputsBefore);
  const std::string &fromText = modeText(q_);
  addMode(ev, fromText, true);
  eventFrom_ = &fromText;
  std::vector<std::uint32_t> &qBefore = buf_.qBefore;
  qBefore = q_;
  energyBefore(ev);
  discreteValues(ev.discreteBefore);
  // The a priori values of the event: what `pre(...)` holds from now on.
  Mode &fromMode = mode(q_);
  std::vector<double> fromBranches;
  if (o_.trace) {
    for (std::size_t k = 0; k < fromMode.numKinks(); ++k)
      fromBranches.push_back(fromMode.branch(k));
    traceEntries_.clear();
    traceComparisons_.clear();
  }
  std::vector<std::pair<std::string, double>> branchesBefore = branches(fromMode);
  // The ticks of clocks at this instant count for the values held.
  chooseTimeFloors(fromMode);
  holdValues(fromMode);
  // A junction sliding on a guard surface goes on in one of its modes; a
  // switch from that mode may start a slide again (JunctionSliding.cpp).
  bool slid = leaveSlide(ev);
  std::vector<std::uint32_t> &from = buf_.from;
  from = q_;
  // Rounds and the modes of a round are few: cycles are found by looking
  // back through them. The buffers keep their entries' storage between
  // events; the first `rounds` and `steps` entries are this event's.
  auto &roundStarts = buf_.roundStarts;
  std::size_t rounds = 0, steps = 0;
  std::vector<double> &minus = buf_.minus, &plus = buf_.plus;
  std::vector<std::uint32_t> &cur = buf_.cur, &next = buf_.next;
  std::vector<std::vector<std::uint32_t>> &path = buf_.path;
  auto texts = [&](std::size_t from) {
    std::vector<std::string> out;
    for (std::size_t i = from; i < steps; ++i)
      out.push_back(modeText(path[i]));
    return out;
  };
  bool switched = false, nudged = false;
  // The transitions the round's first step takes, from the real mode.
  std::vector<std::pair<std::size_t, std::size_t>> &first = buf_.first;
  // Once the modes and kinks settle, edge-clocked discrete values update
  // (settleEdges); where one does, the guards may hold now: the event goes
  // on with another round, from the values it left.
  bool edged = false;
  for (int settling = 0;; ++settling) {
    for (int round = 0;; ++round) {
      bool again = std::any_of(roundStarts.begin(), roundStarts.begin() + rounds,
                               [&](const auto &start) { return start.first == q_ && start.second == X_; });
      if (again || round == 1000) {
        // ev.modes ends with this round's start, which closes the cycle.
        std::vector<std::string> modes(ev.modes.begin(), ev.modes.end() - 1);
        throw cycleError(ev, modes, modeText(q_));
      }
      if (roundStarts.size() == rounds)
        roundStarts.emplace_back();
      roundStarts[rounds].first = q_;
      roundStarts[rounds++].second = X_;
      guardSides(mode(q_), minus, otherMode(q_));
      if (round == 0)
        for (std::uint32_t k : reachedEqualities_)
          minus[2 * k + 1] = minus[2 * k];
      plus = minus;
      cur = q_;
      auto visit = [&](const std::vector<std::uint32_t> &q) {
        if (path.size() == steps)
          path.emplace_back();
        path[steps++] = q;
      };
      steps = 0;
      visit(cur);
      first.clear();
      std::size_t transitionsAt = ev.transitions.size(), modesAt = ev.modes.size(),
                  switchedAt = ev.junctionsSwitched.size();
      bool retry = false;
      for (;;) {
        next = cur;
        bool any = false;
        for (std::size_t j = 0; j < sw_.junctions().size(); ++j) {
          int i = sw_.enabledTransition(j, cur[j], plus.data(), minus.data());
          if (i < 0)
            continue;
          if (steps == 1)
            first.push_back({j, std::size_t(i)});
          next[j] = sw_.junctions()[j].transitions[i].to;
          addTransition(ev, labels_[j][i]);
          if (std::find(ev.junctionsSwitched.begin(), ev.junctionsSwitched.end(), j) ==
              ev.junctionsSwitched.end())
            ev.junctionsSwitched.push_back(std::uint32_t(j));
          any = true;
        }
        ++r_.modeIterations;
        if (o_.trace && steps == 1 && round == 0) {
          std::vector<const GuardNode *> compares;
          for (auto [j, i] : first)
            comparisonsOf(sw_.junctions()[j].transitions[i].guard, compares);
          for (const GuardNode *c : compares)
            traceComparisons_.push_back(c->comparison);
        }
        if (!any)
          break;
        std::swap(cur, next);
        if (std::find(path.begin(), path.begin() + steps, cur) != path.begin() + steps) {
          // Back in the real mode the round started from: the guards that
          // left it hold again there. Where they hold only by what the
          // integration may have erred (a stiff step leaving a clutch's
          // slip a rounding error below zero just after it broke loose),
          // the state moves onto their thresholds, once, and the round is
          // judged again.
          if (cur == q_ && !nudged) {
            nudged = true;
            retry = nudgeOffGuards(first);
          }
          if (retry)
            break;
          throw cycleError(ev, texts(0), modeText(cur));
        }
        visit(cur);
        addMode(ev, modeText(cur), false);
        Mode &through = mode(cur);
        guardSides(through, plus, otherMode(cur));
        judgeImpulses(through, plus);
      }
      if (retry) {
        ev.transitions.resize(transitionsAt);
        ev.junctionsSwitched.resize(switchedAt);
        ev.modes.resize(modesAt);
        ev.real.resize(modesAt);
        ev.states.resize(modesAt);
        continue;
      }
      if (cur == q_)
        break;
      switched = true;
      ev.real.back() = true;
      Mode &to = mode(cur);
      // Sources joined through ideal conductors whose values agree (a switch
      // closed across its conducting 0 V diode) only make the conductors
      // redundant: the mode is real, each stand-in carrying no flow.
      if (!to.shortCircuit().empty()) {
        std::vector<double> x = gather(to);
        if (disagreeing(to, t_, x.data()) >= 0)
          throw RunError(DiagKind::RunModeShortCircuit, t_, modeText(q_),
                         {DiagArg::mode(modeText(cur)), to.shortCircuit()});
      }
      // Kinks slide in the mode they started sliding in; the new mode
      // chooses its branches afresh.
      slider(mode(q_)).clear();
      q_ = cur;
      chooseBranches(to);
      if (!to.dependentSlots().empty())
        remap(to, ev);
      if (o_.trace)
        traceEntry(mode(q_), !to.dependentSlots().empty());
      ev.states.back() = X_; // the real mode's state: remapped
    }
    // Kinks whose argument crossed (or that a new mode puts on another
    // side): an event of their own when nothing switched.
    chooseBranches(mode(q_));
    if (!settleEdges(mode(q_)))
      break;
    edged = true;
    rounds = 0;
    if (settling == 1000)
      throw cycleError(ev, {modeText(q_)}, modeText(q_));
  }
  // Mode `now`: the sliding wrapper when a kink has started sliding.
  Mode &now = mode(q_);
  std::vector<std::string> kinks = branchChanges(branchesBefore, now);
  if (!kinks.empty() && !now.dependentSlots().empty()) {
    // Dependent storage may read the kinks that changed (a velocity
    // source's step into a mass): where it jumps, its impulses reach the
    // independent storage, as at a mode change.
    remap(now, ev);
    if (o_.trace)
      traceEntry(now, true);
  } else if (o_.trace && !kinks.empty()) {
    traceEntry(now, false);
  }
  if (o_.trace)
    for (std::size_t k = 0; k < now.numKinks(); ++k)
      for (const auto &[text, b] : branchesBefore)
        if (text == now.kinkText(k) && b != now.branch(k))
          traceComparisons_.push_back(std::uint32_t(sw_.numComparisons() + k));
  if (!switched && kinks.empty() && !slid && !edged) {
    eventFrom_ = nullptr;
    recycle(ev);
    return false;
  }
  ev.transitions.insert(ev.transitions.end(), kinks.begin(), kinks.end());
  if (!switched && !slid) {
    addMode(ev, modeText(q_), true);
  } else {
    ev.modes.back() = modeText(q_); // kinks may have started sliding
  }
  if (r_.rows == 0) {
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
  if (switched)
    enterSlide(from, ev);
  ev.after = X_;
  outputsNow(ev.outputsAfter);
  discreteValues(ev.discreteAfter);
  buf_.yAfter = ev.outputsAfter;
  yAfterKept_ = true;
  auditEnergy(ev);
  if (o_.trace)
    traceJump(fromMode, fromBranches, ev);
  if (o_.onEvent)
    o_.onEvent(ev);
  r_.events.push_back(std::move(ev));
  eventFrom_ = nullptr; // the event is over: the run is in its new mode
  checkZeno();
  std::size_t keep = eventsKept();
  if (o_.keepEvents != SIZE_MAX && r_.events.size() > 2 * keep) {
    std::size_t drop = r_.events.size() - keep;
    for (std::size_t k = 0; k < drop; ++k)
      recycle(r_.events[k]);
    r_.events.erase(r_.events.begin(), r_.events.begin() + static_cast<std::ptrdiff_t>(drop));
    r_.eventsDropped += drop;
  }
  return true;
}

void Run::judgeImpulses(Mode &m, std::vector<double> &plus) {
  // Entering `m` from X would make its dependent storage jump; during the
  // jump the sides that the jump's impulses reach carry Dirac parts,
  // which dominate their finite values. A comparison whose sides' Dirac
  // strengths differ is judged on them (scaled to the terms that form
  // them); one whose strengths cancel, to rounding, on its finite values.
  // In a short-circuited mode the stand-ins' impulses are unbounded and
  // dominate those of real storage.
  const std::vector<std::uint32_t> &slots = m.dependentSlots();
  std::size_t nd = slots.size(), nc = sw_.numComparisons();
  if (nd == 0 || nc == 0)
    return;
  std::vector<double> &x = buf_.impulseX, &coef = buf_.impulseCoef;
  gather(m, x);
  coef.assign(2 * nc * nd, 0.0);
  if (!m.guardImpulses(t_, x.data(), coef.data()) ||
      std::all_of(coef.begin(), coef.end(), [](double c) { return c == 0; }))
    return;
  // The jump: the exact remap from X, on copies; a stand-in's from zero.
  std::vector<double> &d = buf_.impulseD, &jump = buf_.impulseJump;
  d.resize(nd);
  for (std::size_t k = 0; k < nd; ++k)
    d[k] = slots[k] == kNoSlot ? 0.0 : X_[slots[k]];
  jump = d;
  bool shorted = !m.shortCircuit().empty();
  if (shorted) {
    // The short circuit's impulses come first and need no remap (the
    // mode is never real); real storage is judged at the unchanged state.
    if (!m.dependent(t_, x.data(), d.data()))
      return;
    // Sources that agree at this instant are judged on how they part an
    // instant later (two phases of a rectifier's supply crossing); those
    // that agree for good (a switch closed across its conducting 0 V
    // diode), as the limit of the stand-in's source a little above its
    // value: the diode whose drop stands in yields its current.
    std::vector<char> agree = standInsAgree(m, t_, x.data());
    if (std::find(agree.begin(), agree.end(), char(1)) != agree.end()) {
      std::size_t n = x.size();
      double h = 1e-6 * std::max(stepScale(), 1e-9 * std::max(1.0, std::abs(t_)));
      std::vector<double> xdot(n), later(n), earlier(n), up(nd), down(nd);
      if (n > 0 && !m.rhs(t_, x.data(), xdot.data()))
        return;
      for (std::size_t i = 0; i < n; ++i) {
        later[i] = x[i] + h * xdot[i];
        earlier[i] = x[i] - h * xdot[i];
      }
      if (!m.dependent(t_ + h, later.data(), up.data()) ||
          !m.dependent(t_ - h, earlier.data(), down.data()))
        return;
      // Parting by more than the agreement's tolerance: the sign it parts
      // with; else the source a little above its value.
      const std::vector<double> &scale = buf_.standInScale;
      for (std::size_t k = 0; k < nd; ++k)
        if (slots[k] == kNoSlot && agree[k])
          d[k] = up[k] - down[k] > 1e-10 * scale[k] ? 1 : -1;
    }
  } else {
    try {
      remapExact(m, m.name(), t_, x, d, remapWork_);
    } catch (const RunError &) {
      return; // no jump into m is defined: judged as before, and an error if m becomes real
    }
  }
  // A jump within the integration's tolerance of the storage is no jump:
  // it comes from where the event was located (a slipping body that
  // sticks again at zero relative speed meets its partner's speed only to
  // that accuracy), and its impulse, however weak, would decide every
  // side it reaches.
  const IntegratorOptions &io = o_;
  for (std::size_t k = 0; k < nd; ++k) {
    double before = jump[k];
    jump[k] = d[k] - before;
    if (slots[k] == kNoSlot)
      continue;
    // The state's scale as the steps judge it: the model's nominal grown
    // to the largest value it has had.
    double nominal =
        std::max(slots[k] < o_.nominal.size() ? o_.nominal[slots[k]] : 0.0, peak_[slots[k]]);
    double tol = std::max(io.atol, io.rtol * nominal) +
                 io.rtol * std::max(std::abs(before), std::abs(d[k]));
    if (std::abs(jump[k]) <= tol)
      jump[k] = 0;
  }
  for (std::size_t c = 0; c < nc; ++c)
    for (bool unbounded : {true, false}) {
      if (unbounded && !shorted)
        continue;
      double strength[2] = {0, 0}, scale = 0;
      for (int side = 0; side < 2; ++side)
        for (std::size_t k = 0; k < nd; ++k) {
          if ((slots[k] == kNoSlot) != unbounded)
            continue;
          double term = coef[(2 * c + side) * nd + k] * jump[k];
          strength[side] += term;
          scale += std::abs(term);
        }
      if (scale > 0 && std::abs(strength[0] - strength[1]) > 1e-9 * scale) {
        plus[2 * c] = strength[0] / scale;
        plus[2 * c + 1] = strength[1] / scale;
        break;
      }
    }
}

void Run::remap(Mode &to, Event &ev) {
  auto start = std::chrono::steady_clock::now();
  std::vector<double> &x = buf_.remapX, &d = buf_.remapD;
  gather(to, x);
  d.clear();
  for (std::uint32_t s : to.dependentSlots())
    d.push_back(s == kNoSlot ? 0.0 : X_[s]); // a stand-in from zero
  auto store = [&](const std::vector<double> &xs, const std::vector<double> &ds) {
    for (std::size_t i = 0; i < xs.size(); ++i)
      X_[to.stateSlots()[i]] = xs[i];
    for (std::size_t k = 0; k < ds.size(); ++k)
      if (to.dependentSlots()[k] != kNoSlot)
        X_[to.dependentSlots()[k]] = ds[k];
  };
  const std::string &text = modeText(q_);
  if (o_.remap == SimulateOptions::Remap::Iterative) {
    remapIterative(to, text, t_, o_.remapFactor, o_.remapTolerance, x, d,
                   [&](const std::vector<double> &xs, const std::vector<double> &ds) {
                     store(xs, ds);
                     ev.remapIterations.push_back(X_);
                   });
  } else {
    remapExact(to, text, t_, x, d, remapWork_);
    store(x, d);
  }
  r_.remapSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

RunError Run::cycleError(const Event &ev, const std::vector<std::string> &modes,
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
  out += junctions.size() == 1 ? " switches" : " switch";
  std::string cycle;
  for (auto it = first; it != modes.end(); ++it)
    cycle += "`" + *it + "` -> ";
  cycle += "`" + again + "`";
  // A non-strict comparison judged a priori that sits on its threshold
  // (`(slip.f <= 0)-` at the instant a clutch breaks loose, where the
  // locked state held slip.f = 0) takes a junction back to the state it
  // just left: the strict form is the fix. (A posteriori comparisons on
  // their threshold, `(time >= 0.5)+` both ways, cycle either way.)
  const std::vector<double> &minus = buf_.minus;
  for (std::size_t j = 0; j < sw_.junctions().size(); ++j) {
    const std::vector<Transition> &transitions = sw_.junctions()[j].transitions;
    for (std::size_t i = 0; i < transitions.size(); ++i) {
      if (std::find(ev.transitions.begin(), ev.transitions.end(), labels_[j][i]) ==
          ev.transitions.end())
        continue;
      std::vector<const GuardNode *> todo{&transitions[i].guard};
      while (!todo.empty()) {
        const GuardNode *g = todo.back();
        todo.pop_back();
        for (const GuardNode &c : g->children)
          todo.push_back(&c);
        if (g->kind != GuardNode::Compare || !g->minus ||
            (g->op != CompareOp::LessEqual && g->op != CompareOp::GreaterEqual))
          continue;
        const std::vector<double> &sides = minus;
        std::size_t c = g->comparison;
        if (2 * c + 1 >= sides.size())
          continue;
        double lhs = sides[2 * c], rhs = sides[2 * c + 1];
        if (std::abs(lhs - rhs) > comparisonTolerance(lhs, rhs))
          continue;
        bool le = g->op == CompareOp::LessEqual;
        return RunError(DiagKind::RunModesDoNotSettleNonStrict, t_, ev.modes.front(),
                        {out, cycle, labels_[j][i], le ? "<" : ">", le ? "<=" : ">="});
      }
    }
  }
  return RunError(DiagKind::RunModesDoNotSettle, t_, ev.modes.front(), {out, cycle});
}

bool Run::moveOffGuard(Mode &m, const GuardNode &g, std::vector<double> &x, double within) {
  std::vector<double> sides(2 * (sw_.numComparisons() + m.numKinks()));
  call(m.guards(t_, x.data(), sides.data()), m, "guards");
  if (!sw_.holds(g, sides.data(), sides.data()))
    return true;
  std::vector<const GuardNode *> all;
  comparisonsOf(g, all);
  for (const GuardNode *node : all) {
    std::uint32_t c = node->comparison;
    if (!comparisonHolds(node->op, sides[2 * c], sides[2 * c + 1]) || node->op == CompareOp::Equal)
      continue;
    auto side = [&](const double *at) {
      call(m.guards(t_, at, sides.data()), m, "guards");
      return sides[2 * c] - sides[2 * c + 1];
    };
    // Onto the side where it does not hold: a strict comparison does not
    // hold on its threshold, a non-strict one is aimed past it by its
    // tolerance.
    bool less = node->op == CompareOp::Less || node->op == CompareOp::LessEqual;
    bool strict = node->op == CompareOp::Less || node->op == CompareOp::Greater;
    double tol = strict ? 0.0 : 4 * comparisonTolerance(sides[2 * c], sides[2 * c + 1]);
    moveState(m, x, side, less ? tol : -tol, less ? 1.0 : -1.0, 0, within);
  }
  call(m.guards(t_, x.data(), sides.data()), m, "guards");
  return !sw_.holds(g, sides.data(), sides.data());
}

bool Run::nudgeOffGuards(const std::vector<std::pair<std::size_t, std::size_t>> &taken) {
  Mode &m = mode(q_);
  std::vector<double> before = X_, x = gather(m);
  auto guardOf = [&](const std::pair<std::size_t, std::size_t> &t) -> const GuardNode & {
    return sw_.junctions()[t.first].transitions[t.second].guard;
  };
  bool off = std::all_of(taken.begin(), taken.end(), [&](const auto &t) {
    return moveOffGuard(m, guardOf(t), x, o_.rtol);
  });
  // Only guards the motion leaves: a millionth of a step ahead along the
  // mode's flow none of them holds (a value that goes on across its
  // threshold makes the cycle it makes).
  if (off) {
    double tau = 1e-6 * stepScale();
    std::vector<double> xdot(x.size()), sides(2 * (sw_.numComparisons() + m.numKinks()));
    call(m.rhs(t_, x.data(), xdot.data()), m, "state derivatives");
    for (std::size_t i = 0; i < x.size(); ++i)
      xdot[i] = x[i] + tau * xdot[i];
    call(m.guards(t_ + tau, xdot.data(), sides.data()), m, "guards");
    off = std::none_of(taken.begin(), taken.end(), [&](const auto &t) {
      return sw_.holds(guardOf(t), sides.data(), sides.data());
    });
  }
  if (!off) {
    X_ = std::move(before);
    x = gather(m);
    complete(m, x.data());
  }
  return off;
}

void Run::traceEntry(Mode &m, bool remapped) {
  RunTrace::Entry e;
  e.mode = &m;
  for (std::size_t k = 0; k < m.numKinks(); ++k)
    e.branches.push_back(m.branch(k));
  e.remapped = remapped;
  traceEntries_.push_back(std::move(e));
}

void Run::traceJump(Mode &from, const std::vector<double> &fromBranches, const Event &ev) {
  RunTrace &trace = *o_.trace;
  if (slide_.active || sliding(q_))
    trace.unsupported = "a junction or a kink sliding on its surface";
  RunTrace::Jump j;
  j.time = ev.time;
  j.from = &from;
  j.fromBranches = fromBranches;
  j.before = ev.before;
  j.after = ev.after;
  j.comparisons = traceComparisons_;
  j.entries = std::move(traceEntries_);
  traceEntries_.clear();
  trace.order.push_back({true, trace.jumps.size()});
  trace.jumps.push_back(std::move(j));
}

} // namespace hbg::runtime
