//===- runtime/Kinks.cpp - Branches of sign, abs, min, max and floor -------===//
//
// A kink's branch is held between events (Mode::numKinks). At the start
// and at every event each branch is set from the sign of its argument.
// An argument at zero, or so close to it that it moves further in 1e-12
// of a step, takes the branch the motion continues on: the one
// under which the argument moves to that branch's own side. When both
// branches turn the argument back (a sliding mode: Coulomb friction that
// holds a velocity at zero) no branch is right and the run stops with an
// error; when neither moves it, the branch is 0; when both let it leave,
// the side it is on, or +1.
//
// A floor kink's branch is the integer below its argument; an argument
// on an integer n (or that close to it) takes n when it moves up or
// stays, n - 1 when it moves down. Arguments may read other kinks'
// branches (the floor inside `pwm`'s comparison): the branches are set
// again until none changes.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace hbg::runtime {

namespace {
const std::string kNoKink;
double signOf(double c) { return c > 0 ? 1.0 : (c < 0 ? -1.0 : 0.0); }
/// Branches as Run::branches() records them: NaN, a sliding kink's, is
/// the same as NaN.
bool sameBranch(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }
std::string branchText(const Mode &m, std::size_t k, double b) {
  if (std::isnan(b))
    return "sliding";
  if (m.kinkFloor(k)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", b);
    return buf;
  }
  return b > 0 ? "+1" : (b < 0 ? "-1" : "0");
}
} // namespace

const std::string &Mode::kinkText(std::size_t) const { return kNoKink; }
bool Mode::kinkFloor(std::size_t) const { return false; }
bool Mode::kinkSlides(std::size_t) const { return false; }
const std::string &Mode::shortCircuit() const {
  static const std::string none;
  return none;
}
bool Mode::encloseGuardSlopes(Interval, const Interval *, const Interval *, Interval *,
                              Interval *) {
  return false;
}
const std::vector<std::uint32_t> &Mode::timeComparisons() const {
  static const std::vector<std::uint32_t> none;
  return none;
}
bool Mode::kinkArguments(double, const double *, double *) { return true; }
bool Mode::guardImpulses(double, const double *, double *) { return false; }
double Mode::branch(std::size_t) const { return 0; }
void Mode::setBranch(std::size_t, double) {}

std::vector<std::pair<std::string, double>> Run::branches(const Mode &m) {
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t k = 0; k < m.numKinks(); ++k)
    out.push_back({m.kinkText(k), m.branch(k)});
  return out;
}

std::vector<std::string> Run::branchChanges(const std::vector<std::pair<std::string, double>> &before,
                                            const Mode &m) {
  std::vector<std::string> changes;
  for (std::size_t k = 0; k < m.numKinks(); ++k)
    for (const auto &[text, b] : before)
      if (text == m.kinkText(k) && !sameBranch(b, m.branch(k)))
        changes.push_back(text + ": branch " + branchText(m, k, b) + " -> " +
                          branchText(m, k, m.branch(k)));
  return changes;
}

void Run::chooseBranches(Mode &m) {
  std::size_t nk = m.numKinks();
  // A sliding junction's exit is no kink of the model's.
  if (nk == 0 || (slide_.active && &m == slide_.mode))
    return;
  // Each round sets every branch from the arguments under the branches of
  // the round before; arguments that read no branch settle in one.
  std::vector<double> before(nk);
  slider(m).forgetExits();
  for (std::size_t round = 0; round <= nk; ++round) {
    for (std::size_t k = 0; k < nk; ++k)
      before[k] = m.branch(k);
    chooseBranchesOnce(m);
    bool changed = false;
    for (std::size_t k = 0; k < nk; ++k)
      changed = changed || !sameBranch(m.branch(k), before[k]);
    if (!changed)
      return;
  }
}

double Run::stepScale() const {
  double span = o_.tEnd - o_.tStart;
  return lastStep_ > 0 ? lastStep_ : 1e-3 * (span > 0 ? span : std::max(1.0, std::abs(t_)));
}

bool Run::moveState(Mode &m, std::vector<double> &x, const std::function<double(const double *)> &g,
                    double aim, double side, double past, double within) {
  std::size_t n = x.size();
  double value = g(x.data());
  if (past == 0 && side * (value - aim) >= 0)
    return true;
  if (n == 0)
    return false;
  // The smallest move of the state, each component measured against its
  // scale: along the scaled gradient, by differences.
  const std::vector<std::uint32_t> &slots = m.stateSlots();
  std::vector<double> grad(n), scale(n), xp;
  double norm = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double nominal = slots[i] < o_.nominal.size() ? o_.nominal[slots[i]] : 0.0;
    scale[i] = std::max({nominal, peak_[slots[i]], std::abs(x[i])});
    if (!(scale[i] > 0))
      scale[i] = 1;
    xp = x;
    double h = 1e-6 * scale[i];
    xp[i] += h;
    h = xp[i] - x[i];
    grad[i] = (g(xp.data()) - value) / h;
    norm += (scale[i] * grad[i]) * (scale[i] * grad[i]);
  }
  if (!(norm > 0) || !std::isfinite(norm))
    return false;
  // `past` scaled units of state beyond the aim: what g changes by when
  // the state moves that far along its scaled gradient.
  aim += side * past * std::sqrt(norm);
  if (side * (value - aim) >= 0)
    return true;
  if (std::abs(value - aim) / std::sqrt(norm) > within)
    return false;
  // Rounding may leave g a few ulps short of the aim: aim past it, by
  // what is left, until g is there.
  for (int round = 0; round < 4 && side * (value - aim) < 0; ++round) {
    double target = round == 0 ? aim : aim + (aim - value);
    for (std::size_t i = 0; i < n; ++i)
      x[i] -= (value - target) * scale[i] * scale[i] * grad[i] / norm;
    value = g(x.data());
  }
  complete(m, x.data());
  return side * (value - aim) >= 0;
}

void Run::zeroArgument(Mode &m, std::size_t k, double side, std::vector<double> &x) {
  std::vector<double> c(m.numKinks());
  auto argument = [&](const double *at) {
    call(m.kinkArguments(t_, at, c.data()), m, "kinks");
    return c[k];
  };
  // Past zero on `side` by a few ulps of the states: a step's rounding
  // (a stiff step's linear algebra) does not put it back across.
  moveState(m, x, argument, 0, side, 16 * std::numeric_limits<double>::epsilon());
}

namespace {
/// A floor kink's branch at argument c, which moves by `move` over a
/// millionth of a step: the floor, but at an integer the argument is on
/// to the step's resolution, the integer's own unless it moves down.
double floorBranch(double c, double move) {
  double nearest = std::round(c);
  if (std::abs(c - nearest) <= 1e-6 * std::abs(move))
    return move < 0 ? nearest - 1 : nearest;
  return std::floor(c);
}
} // namespace

void Run::chooseTimeFloors(Mode &m) {
  std::size_t nk = m.numKinks(), nc = sw_.numComparisons();
  if (nk == 0 || (slide_.active && &m == slide_.mode))
    return;
  std::vector<double> x = gather(m), c(nk), later(nk);
  double delta = 1e-6 * stepScale();
  call(m.kinkArguments(t_, x.data(), c.data()), m, "kinks");
  call(m.kinkArguments(t_ + delta, x.data(), later.data()), m, "kinks");
  // Sign kinks of time alone first, on the side time moves into: a floor's
  // argument may read one (a clock that starts later than the run:
  // compiler/sema/Sampled.cpp), and so may what values are held.
  bool signs = false;
  for (std::uint32_t k : m.timeComparisons()) {
    if (k < nc || k - nc >= nk || m.kinkFloor(k - nc))
      continue;
    std::size_t i = k - nc;
    double move = later[i] - c[i];
    bool on = c[i] == 0 || std::abs(c[i]) <= 1e-6 * std::abs(move);
    m.setBranch(i, on && move != 0 ? signOf(move) : signOf(c[i]));
    signs = true;
  }
  if (signs) {
    call(m.kinkArguments(t_, x.data(), c.data()), m, "kinks");
    call(m.kinkArguments(t_ + delta, x.data(), later.data()), m, "kinks");
  }
  for (std::uint32_t k : m.timeComparisons()) {
    if (k < nc || k - nc >= nk || !m.kinkFloor(k - nc))
      continue;
    std::size_t i = k - nc;
    if (!std::isfinite(c[i]))
      throw RunError(DiagKind::RunKinkNotFinite, t_, m.name(),
                     {DiagArg::element(m.kinkText(i)), c[i]});
    m.setBranch(i, floorBranch(c[i], later[i] - c[i]));
  }
}

void Run::chooseBranchesOnce(Mode &m) {
  SlidingMode &slide = slider(m);
  Mode &plain = slide.inner();
  // What evaluates the flow: the sliding wrapper solves the branches of
  // the kinks that slide before each evaluation.
  auto flow = [&]() -> Mode & { return slide.active() ? static_cast<Mode &>(slide) : plain; };
  std::size_t nk = plain.numKinks(), n = plain.stateSlots().size();
  std::vector<double> x = gather(plain), c(nk);
  call(plain.kinkArguments(t_, x.data(), c.data()), plain, "kinks");

  double h = stepScale();
  slide.setScales(1e-3 * h, h);
  // A sliding kink goes on sliding while its branch stays inside (-1, 1);
  // one that has reached the edge takes the side the motion leaves to,
  // the edge's sign (the law's force no longer holds the argument).
  std::vector<bool> decided(nk, false);
  for (const auto &[k, b] : slide.exited()) {
    decided[k] = true;
    plain.setBranch(k, b);
  }
  if (slide.active()) {
    slide.solve(t_, x.data());
    std::vector<std::size_t> kinks = slide.kinks();
    for (std::size_t k : kinks) {
      double b = slide.equivalent(k);
      decided[k] = true;
      if (std::abs(b) < 1)
        continue;
      slide.exit(k, signOf(b));
      plain.setBranch(k, signOf(b));
      // It leaves tangentially (its rate under the edge's branch is zero
      // there), so an argument the integration left a little on the
      // wrong side would cross back at once: it starts from zero.
      zeroArgument(plain, k, signOf(b), x);
      call(plain.kinkArguments(t_, x.data(), c.data()), plain, "kinks");
    }
  }
  for (std::size_t k = 0; k < nk; ++k)
    if (!decided[k])
      plain.setBranch(k, plain.kinkFloor(k) ? std::floor(c[k]) : signOf(c[k]));

  // How far each argument moves in a short time delta along the flow
  // with the branches as they are set: c(t + delta, x + delta x') - c.
  double delta = 1e-6 * h;
  std::vector<double> xdot(n), xp(n), cp(nk), move(nk), trial(nk);
  auto drift = [&](std::vector<double> &d) {
    Mode &f = flow();
    call(f.rhs(t_, x.data(), xdot.data()), f, "state derivatives");
    for (std::size_t i = 0; i < n; ++i)
      xp[i] = x[i] + delta * xdot[i];
    call(plain.kinkArguments(t_ + delta, xp.data(), cp.data()), plain, "kinks");
    for (std::size_t k = 0; k < nk; ++k)
      d[k] = cp[k] - c[k];
  };
  std::vector<double> xdot1(n), x1(n);
  auto curve = [&](std::vector<double> &d) {
    double longer = 1e-3 * h;
    Mode &f = flow();
    call(f.rhs(t_, x.data(), xdot.data()), f, "state derivatives");
    for (std::size_t i = 0; i < n; ++i)
      x1[i] = x[i] + longer * xdot[i];
    call(f.rhs(t_ + longer, x1.data(), xdot1.data()), f, "state derivatives");
    for (std::size_t i = 0; i < n; ++i)
      xp[i] = x[i] + 0.5 * longer * (xdot[i] + xdot1[i]);
    call(plain.kinkArguments(t_ + longer, xp.data(), cp.data()), plain, "kinks");
    for (std::size_t k = 0; k < nk; ++k)
      d[k] = cp[k] - c[k];
  };
  drift(move);
  for (std::size_t k = 0; k < nk; ++k) {
    if (decided[k])
      continue;
    // `delta` is a millionth of a step: |c| <= 1e-6 |move| is what c moves
    // in 1e-12 of a step, the event locator's resolution, so a branch
    // chosen here against c's side is on it by the first point examined.
    if (plain.kinkFloor(k)) {
      // The floor's jumps are its argument's integers; the branch below
      // an integer it is on only when it moves down.
      plain.setBranch(k, floorBranch(c[k], move[k]));
      continue;
    }
    if (c[k] != 0 && std::abs(c[k]) > 1e-6 * std::abs(move[k]))
      continue;
    bool consistent[2], back[2];
    for (int side = 0; side < 2; ++side) {
      double b = side == 0 ? 1.0 : -1.0;
      plain.setBranch(k, b);
      drift(trial);
      consistent[side] = b * trial[k] > 0;
      back[side] = b * trial[k] < 0;
      if (consistent[side] || back[side])
        continue;
      // Tangential: under this branch the argument does not move to first
      // order (a contact breaking loose, where the force needed has just
      // reached the law's bound). Whether it leaves on the branch's side
      // is the second-order term: a Heun step over a thousandth of a step.
      curve(trial);
      consistent[side] = b * trial[k] > 0;
    }
    if (back[0] && back[1]) {
      // Both branches drive the argument back to zero: it slides (a body
      // that friction holds still), with the branch that holds it.
      if (!plain.kinkSlides(k))
        throw RunError(DiagKind::RunKinkSliding, t_, plain.name(),
                       {DiagArg::element(plain.kinkText(k))});
      slide.start(k);
      slide.solve(t_, x.data());
      if (std::abs(slide.equivalent(k)) >= 1) {
        // On the edge of the law's set: the motion leaves on the edge's
        // side.
        double edge = signOf(slide.equivalent(k));
        slide.exit(k, edge);
        plain.setBranch(k, edge);
      }
      continue;
    }
    double b = consistent[0] && consistent[1] ? (c[k] != 0 ? signOf(c[k]) : 1.0)
               : consistent[0]               ? 1.0
               : consistent[1]               ? -1.0
                                             : 0.0;
    plain.setBranch(k, b);
    // An argument a rounding error on the other side of zero (a stiff
    // step's) starts from zero on the branch's side, as at a slide's
    // exit: else it would cross back at once.
    if (b != 0 && b * c[k] < 0) {
      zeroArgument(plain, k, b, x);
      call(plain.kinkArguments(t_, x.data(), c.data()), plain, "kinks");
    }
  }
}

} // namespace hbg::runtime
