//===- runtime/JunctionSliding.cpp - Junctions held on a guard surface -----===//
//
// A relay written as a switched junction without hysteresis (`heating ->
// idle when (room.e > 20)-; idle -> heating when (room.e < 20)-`) would
// switch as fast as the integration lets its state cross the surface:
// each mode drives the state back into the other's side. After an event
// that switches one junction, the run looks a millionth of a step ahead
// along the new mode's flow; if the junction would switch straight back,
// the surface attracts from both sides and the run slides on it, in the
// Filippov combination of the two modes (FilippovMode in Sliding.h). It
// leaves, as an event, where one mode alone stops driving the state back
// (the combination's weight leaves [0, 1]), into that mode.
//
// Only two modes that share their states, with no dependent storage (a
// switch that makes the state jump) and no kinks, combine; the guard back
// must be a single comparison, whose surface is the one held. Otherwise
// the junction chatters, and Run::checkChattering stops the run saying
// why it could not slide.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include <algorithm>
#include <cmath>

namespace hbg::runtime {

namespace {
/// The comparison of guard `g` that switched it on between `now` and
/// `ahead` (both sides of every comparison): the one whose truth changed,
/// if there is exactly one, not negated and not an equality.
const GuardNode *surfaceOf(const GuardNode &g, const double *now, const double *ahead) {
  std::vector<const GuardNode *> all;
  comparisonsOf(g, all);
  const GuardNode *found = nullptr;
  for (const GuardNode *c : all) {
    std::uint32_t k = c->comparison;
    if (comparisonHolds(c->op, now[2 * k], now[2 * k + 1]) ==
        comparisonHolds(c->op, ahead[2 * k], ahead[2 * k + 1]))
      continue;
    if (found || c->op == CompareOp::Equal)
      return nullptr;
    found = c;
  }
  return found;
}
} // namespace

void Run::enterSlide(const std::vector<std::uint32_t> &from, Event &ev) {
  // One junction switched, from a real mode the run was in.
  std::size_t nj = q_.size(), j = nj;
  for (std::size_t i = 0; i < nj; ++i)
    if (from[i] != q_[i]) {
      if (j != nj)
        return;
      j = i;
    }
  if (j == nj)
    return;
  // Only a junction that has a way straight back can chatter: the test
  // below costs an evaluation of the mode at every such event.
  const Junction &junction = sw_.junctions()[j];
  if (std::none_of(junction.transitions.begin(), junction.transitions.end(),
                   [&](const Transition &u) { return u.from == q_[j] && u.to == from[j]; }))
    return;
  Mode &b = mode(q_);
  Mode &a = mode(from);
  // Would it switch straight back? The guards of the new mode a
  // millionth of a step ahead along its flow (a relay with hysteresis has
  // its other threshold further away than that). The first steps of a
  // run, and those before an event, may be far shorter than what the run
  // goes on with: a thousandth of the span at least.
  double span = o_.tEnd - o_.tStart;
  double h = std::max(stepScale(), 1e-3 * (span > 0 ? span : std::max(1.0, std::abs(t_))));
  double tau = 1e-6 * h;
  std::vector<double> &x = buf_.slideX, &xdot = buf_.slideXdot, &ahead = buf_.slideAhead,
                      &now = buf_.slideNow;
  gather(b, x);
  xdot.resize(x.size());
  call(b.rhs(t_, x.data(), xdot.data()), b, "state derivatives");
  for (std::size_t i = 0; i < x.size(); ++i)
    xdot[i] = x[i] + tau * xdot[i]; // the state a little ahead
  ahead.resize(2 * (sw_.numComparisons() + b.numKinks()));
  call(b.guards(t_ + tau, xdot.data(), ahead.data()), b, "guards");
  int back = sw_.enabledTransition(j, q_[j], ahead.data(), ahead.data());
  if (back < 0 || junction.transitions[std::size_t(back)].to != from[j])
    return;
  now.resize(ahead.size());
  call(b.guards(t_, x.data(), now.data()), b, "guards");
  const Transition &t = junction.transitions[std::size_t(back)];
  const std::string &textA = modeText(from), &textB = modeText(q_);
  // Whether the two modes can be combined.
  const std::vector<std::string> &names = sys_.stateNames();
  auto refuse = [&](std::string why) { slideRefused_ = std::move(why); };
  for (Mode *m : {&a, &b}) {
    const std::string &text = m == &a ? textA : textB;
    if (!m->dependentSlots().empty()) {
      std::uint32_t s = m->dependentSlots().front();
      return refuse("switching into `" + text + "` makes the state jump (`" +
                    (s < names.size() ? names[s] : std::string("a source")) +
                    "` is dependent storage there)");
    }
    if (m->numKinks() > 0)
      return refuse("mode `" + text + "` has kinks (`" + m->kinkText(0) +
                    "`), which a sliding junction does not combine");
  }
  if (a.stateSlots() != b.stateSlots())
    return refuse("modes `" + textA + "` and `" + textB + "` do not have the same states");
  const GuardNode *surface = surfaceOf(t.guard, now.data(), ahead.data());
  if (!surface)
    return refuse("more than one comparison of `" + labels_[j][std::size_t(back)] +
                  "` changes there, or an equality or a negated one: its surface is not one "
                  "comparison `<`, `<=`, `>` or `>=` that could be held");
  auto key = std::make_tuple(static_cast<const Mode *>(&a), static_cast<const Mode *>(&b),
                             surface->comparison);
  std::unique_ptr<FilippovMode> &f = filippov_[key];
  if (!f) {
    // `sw=sliding(heating, idle)`: the junction in neither state.
    std::string text;
    for (std::size_t i = 0; i < nj; ++i) {
      const Junction &J = sw_.junctions()[i];
      text += (i ? ", " : "") + J.name + "=";
      text += i == j ? "sliding(" + J.stateNames[from[i]] + ", " + J.stateNames[q_[i]] + ")"
                     : J.stateNames[q_[i]];
    }
    f = std::make_unique<FilippovMode>(a, b, surface->comparison, surface->op, text,
                                       sw_.numComparisons(), sys_.numOutputs(), sys_.numHeld());
  }
  // The explicit methods keep an affine g still to rounding (a linear
  // invariant of every stage); what rounding, or the stiff method's
  // Jacobian by differences, moves it by is brought back slowly, since a
  // relaxation as fast as the steps would hold the steps down once the
  // slide lets them grow.
  f->setScales(1e-3 * h, 1e3 * h);
  // The way from a to b: the transition that switched (the first from
  // a's state to b's whose guard holds), with its comparisons that sit on
  // the surface.
  std::vector<double> sidesA(2 * sw_.numComparisons());
  call(a.guards(t_, x.data(), sidesA.data()), a, "guards");
  const Transition *forward = nullptr;
  for (const Transition &u : junction.transitions)
    if (u.from == from[j] && u.to == q_[j] && sw_.holds(u.guard, sidesA.data(), sidesA.data())) {
      forward = &u;
      break;
    }
  if (!forward)
    return;
  std::vector<const GuardNode *> all;
  std::vector<std::uint32_t> forwardOn;
  comparisonsOf(forward->guard, all);
  for (const GuardNode *g : all) {
    double lhs = sidesA[2 * g->comparison], rhs = sidesA[2 * g->comparison + 1];
    if (std::abs(lhs - rhs) <= 1e-6 * (std::abs(lhs) + std::abs(rhs)) + 1e-300)
      forwardOn.push_back(g->comparison);
  }
  f->setGuards(sw_, t.guard, {surface->comparison}, forward->guard, forwardOn);
  double w = 0;
  call(f->weight(t_, x.data(), w), *f, "guards");
  if (!(w > 0 && w < 1))
    return refuse("the surface of `" + labels_[j][std::size_t(back)] +
                  "` does not attract from both sides where the junction reaches it");
  slideRefused_.clear();
  slide_.active = true;
  slide_.q = q_;
  slide_.qa = from;
  slide_.junction = j;
  slide_.mode = f.get();
  slide_.text = f->name();
  enabledValid_ = false;
  ev.modes.back() = slide_.text;
}

bool Run::leaveSlide(Event &ev) {
  if (!slide_.active)
    return false;
  FilippovMode &f = *slide_.mode;
  std::vector<double> x = gather(f);
  double w = 0;
  call(f.weight(t_, x.data(), w), f, "guards");
  slide_.active = false;
  enabledValid_ = false;
  std::size_t j = slide_.junction;
  // Where a guard's other conditions stopped holding, the mode still
  // possible; else the mode with the larger weight: at an exit, the one
  // whose flow alone no longer returns to the surface.
  std::vector<double> combined(2 * (sw_.numComparisons() + f.numKinks()));
  call(f.guards(t_, x.data(), combined.data()), f, "guards");
  Mode *stays = f.blocked(combined.data());
  if (stays ? stays == &f.a() : !(w >= 0.5))
    q_ = slide_.qa;
  const Junction &junction = sw_.junctions()[j];
  ev.transitions.push_back(junction.name + ": sliding -> " + junction.stateNames[q_[j]]);
  // The integration holds the surface to its tolerance: where that leaves
  // the state across a comparison of the mode's own transitions out, the
  // state moves onto the comparison's threshold, so that the junction
  // does not switch on rounding.
  Mode &m = mode(q_);
  for (const Transition &t : junction.transitions)
    if (t.from == q_[j])
      moveOffGuard(m, t.guard, x, o_.rtol);
  addMode(ev, modeText(q_), true);
  return true;
}

} // namespace hbg::runtime
