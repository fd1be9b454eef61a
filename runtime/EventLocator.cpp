//===- runtime/EventLocator.cpp - The first event inside a step -----------===//

#include "hbg/runtime/EventLocator.h"

#include "hbg/runtime/RootFind.h"

#include "DenseEnclosure.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hbg::runtime {

namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();
} // namespace

namespace {
/// comparisonMargin() with a zero moved to the side comparisonReached()
/// puts it on (equalities keep it): a function whose sign change is where
/// the comparison becomes reached.
double sidedMargin(CompareOp op, double lhs, double rhs) {
  double m = comparisonMargin(op, lhs, rhs);
  if (m == 0 && op != CompareOp::Equal)
    m = (comparisonReached(op, lhs, rhs) ? 1 : -1) * std::numeric_limits<double>::denorm_min();
  return m;
}
} // namespace

double EventLocator::eventAt(const Stepper &s, double te, std::vector<double> &xEvent) {
  ++stats.provenSteps;
  xEvent.resize(s.x().size());
  if (te == s.t())
    xEvent = s.x();
  else
    s.interpolate(te, xEvent.data());
  return te;
}

Truth EventLocator::anyEvent(const Truth *truths) const {
  Truth any = sw_->anyEnabled(*q_, truths);
  for (std::size_t k = numGuardComparisons_; k < numComparisons_ && any != Truth::True; ++k)
    if (truths[k] != Truth::False)
      any = truths[k];
  return any;
}

bool EventLocator::anyEvent(const double *sides, const std::vector<std::uint32_t> *forced) const {
  if (sw_->anyEnabled(*q_, sides, forced))
    return true;
  for (std::size_t k = numGuardComparisons_; k < numComparisons_; ++k)
    if (comparisonReached(CompareOp::LessEqual, sides[2 * k], sides[2 * k + 1]))
      return true;
  return false;
}

void EventLocator::sidesAt(const Stepper &s, Mode &mode, double tau, std::vector<double> &out) {
  x_.resize(s.x().size());
  out.resize(2 * numComparisons_);
  s.interpolate(tau, x_.data());
  call(mode.guards(tau, x_.data(), out.data()), mode, "guards");
}

double EventLocator::refine(const Stepper &s, Mode &mode,
                            const std::vector<std::uint32_t> &enabled, double a, double b,
                            const std::vector<double> &sidesA, const std::vector<double> &atB) {
  // The event lies in [a, b], no wider than the tolerance. A comparison
  // whose truth changes between a and b is located closer still, down to
  // neighbouring doubles (a time event `time >= 0.1` lands on 0.1), and
  // the earliest such point at which a guard holds is the event.
  std::vector<double> atA = sidesA;
  if (a != s.tPrev())
    sidesAt(s, mode, a, atA);
  double best = b;
  for (std::uint32_t k : enabled) {
    CompareOp op = opOf(k);
    double fa = comparisonMargin(op, atA[2 * k], atA[2 * k + 1]);
    double fb = comparisonMargin(op, atB[2 * k], atB[2 * k + 1]);
    bool ra = comparisonReached(op, atA[2 * k], atA[2 * k + 1]);
    bool rb = comparisonReached(op, atB[2 * k], atB[2 * k + 1]);
    bool equality = op == CompareOp::Equal;
    // Where a comparison becomes reached; where an equality's sides cross.
    if ((equality ? (fa < 0) == (fb < 0) : ra == rb) || fa == 0 || fb == 0 ||
        (fa < 0) == (fb < 0))
      continue;
    auto f = [&, k, op](double tau) {
      sidesAt(s, mode, tau, refineSides_);
      return sidedMargin(op, refineSides_[2 * k], refineSides_[2 * k + 1]);
    };
    Bracket br = locateSignChange(f, a, fa, b, fb, 0);
    if (br.hi < best) {
      sidesAt(s, mode, br.hi, refineSides_);
      refineTruths_.assign(numComparisons_, Truth::False);
      for (std::uint32_t j : enabled)
        refineTruths_[j] = comparisonReached(opOf(j), refineSides_[2 * j], refineSides_[2 * j + 1])
                               ? Truth::True
                               : Truth::False;
      if (equality)
        refineTruths_[k] = Truth::True;
      if (anyEvent(refineTruths_.data()) == Truth::True)
        best = br.hi;
    }
  }
  return best;
}

double EventLocator::locate(const Stepper &s, Mode &mode, const Switching &sw,
                            const std::vector<std::uint32_t> &q,
                            const std::vector<std::uint32_t> &enabled,
                            const std::vector<double> &sidesA, const std::vector<double> &sidesB,
                            std::vector<double> &xEvent,
                            const std::vector<std::uint32_t> &steady) {
  sw_ = &sw;
  q_ = &q;
  numGuardComparisons_ = sw.numComparisons();
  numComparisons_ = numGuardComparisons_ + mode.numKinks();
  double ta = s.tPrev(), tb = s.t();
  if (!(tb > ta))
    return kNaN;
  std::size_t n = s.x().size();
  box_.assign(n, Interval::whole());
  enclosure_.resize(3 * numComparisons_);
  truths_.assign(numComparisons_, Truth::False);

  // Comparisons proven to keep their values at ta over [ta, tb): those
  // values inside the step, and the change at tb seen at the end. An
  // equality that holds at ta is not steady (it stops holding).
  steadyTruth_.assign(numComparisons_, Truth::Unknown);
  for (std::uint32_t k : steady) {
    bool reached = comparisonReached(opOf(k), sidesA[2 * k], sidesA[2 * k + 1]);
    if (!(reached && opOf(k) == CompareOp::Equal))
      steadyTruth_[k] = reached ? Truth::True : Truth::False;
  }
  auto atEnd = [&]() {
    // No event in [ta, tb) with the steady comparisons steady: the event,
    // if any, is at tb, where they may have changed.
    if (steady.empty()) {
      ++stats.provenSteps;
      return kNaN;
    }
    for (std::uint32_t k : enabled) {
      CompareOp op = opOf(k);
      bool reached = comparisonReached(op, sidesB[2 * k], sidesB[2 * k + 1]);
      if (op == CompareOp::Equal && steadyTruth_[k] != Truth::Unknown)
        reached = reached ||
                  (sidesA[2 * k] - sidesA[2 * k + 1] < 0) != (sidesB[2 * k] - sidesB[2 * k + 1] < 0);
      truths_[k] = reached ? Truth::True : Truth::False;
    }
    if (anyEvent(truths_.data()) == Truth::True)
      return eventAt(s, tb, xEvent);
    ++stats.provenSteps;
    return kNaN;
  };
  if (!steady.empty()) {
    // Often the steady comparisons alone rule every guard out.
    for (std::uint32_t k : enabled)
      truths_[k] = steadyTruth_[k];
    if (anyEvent(truths_.data()) == Truth::False)
      return atEnd();
  }

  // Earliest interval first: each interval is either proven to hold no
  // enabled guard (every comparison keeps one truth over it and no
  // transition leaving q can be enabled with those truths), or halved in
  // place; an interval no wider than the tolerance is decided by the
  // guards' point values at its end. The first such end where a guard
  // holds is the event: everything before it was proven event-free. The
  // whole step comes first; if it is not decided, the march from tPrev
  // starts with the width decided last (in this step or an earlier one),
  // and each interval decided makes the next one twice as wide.
  double tol = 1e-12 * (tb - ta);
  const std::vector<std::uint32_t> &read = mode.guardStates();
  dense_.resize(5 * read.size());
  for (std::size_t r = 0; r < read.size(); ++r)
    s.densePolynomial(read[r], &dense_[5 * r]);
  std::size_t budget = kMaxEnclosures;
  bool slopes = true;
  double width = tb - ta;
  for (double a = ta, b = tb; a < tb; a = b, width *= 2, b = width < tb - a ? a + width : tb) {
    for (std::size_t r = 0; r < read.size(); ++r) {
      Interval &xi = box_[read[r]];
      encloseDense(&dense_[5 * r], ta, tb, a, b, xi.lo, xi.hi); // s.enclose()
    }
    // A mode whose guards read the unknowns of a loop solved by Newton's
    // method cannot enclose them (on the first call).
    if (!mode.encloseGuards({a, b}, box_.data(), enclosure_.data()))
      return locateBySampling(s, mode, enabled, sidesA, sidesB, xEvent);
    ++stats.enclosures;
    for (std::uint32_t k : enabled)
      truths_[k] = steadyTruth_[k] != Truth::Unknown
                       ? steadyTruth_[k]
                       : comparisonTruth(opOf(k), enclosure_[3 * k], enclosure_[3 * k + 1],
                                         enclosure_[3 * k + 2]);
    if (anyEvent(truths_.data()) == Truth::False) {
      locateWidth_ = b - a;
      continue;
    }
    if (slopes) {
      double te = kNaN;
      switch (certify(s, mode, enabled, a, b, sidesA, sidesB, te)) {
      case Certified::Free:
        ++stats.certified;
        locateWidth_ = b - a;
        continue;
      case Certified::Event:
        ++stats.certified;
        locateWidth_ = b - a;
        return eventAt(s, te, xEvent);
      case Certified::NoSlopes:
        slopes = false;
        break;
      case Certified::Unknown: break;
      }
    }
    double mid = 0.5 * (a + b);
    if (b - a > tol && mid > a && mid < b) {
      if (--budget == 0) {
        // Guards that hover on their thresholds for a long stretch cannot
        // be decided by subdividing: sample this step instead.
        ++stats.unprovenSteps;
        return locateBySampling(s, mode, enabled, sidesA, sidesB, xEvent);
      }
      double next = 0.5 * (b - a);
      if (a == ta && b == tb && locateWidth_ > 0 && locateWidth_ < next)
        next = locateWidth_;
      width = 0.5 * next; // doubled by the loop: [a, a + next] next
      b = a;
      continue;
    }
    // A leaf: the guards at its end decide. An equality whose two sides
    // cross inside it counts as holding there.
    ++stats.leaves;
    const std::vector<double> *atB = &sidesB;
    if (b != tb) {
      sidesAt(s, mode, b, pointB_);
      atB = &pointB_;
    }
    bool needA = false;
    for (std::uint32_t k : enabled)
      needA = needA || (opOf(k) == CompareOp::Equal && truths_[k] == Truth::Unknown);
    if (needA) {
      if (a == ta)
        pointA_ = sidesA;
      else
        sidesAt(s, mode, a, pointA_);
    }
    for (std::uint32_t k : enabled) {
      const std::vector<double> &B = *atB;
      bool reached = comparisonReached(opOf(k), B[2 * k], B[2 * k + 1]);
      if (needA && opOf(k) == CompareOp::Equal && truths_[k] == Truth::Unknown)
        reached = reached || (pointA_[2 * k] - pointA_[2 * k + 1] < 0) != (B[2 * k] - B[2 * k + 1] < 0);
      truths_[k] = reached ? Truth::True : Truth::False;
    }
    if (anyEvent(truths_.data()) == Truth::True)
      return eventAt(s, refine(s, mode, enabled, a, b, sidesA, *atB), xEvent);
  }
  return atEnd();
}


EventLocator::Certified EventLocator::certify(const Stepper &s, Mode &mode,
                                              const std::vector<std::uint32_t> &enabled,
                                              double a, double b,
                                              const std::vector<double> &sidesA,
                                              const std::vector<double> &sidesB, double &te) {
  // Derivative enclosures over [a, b]: each comparison whose truth the
  // enclosures leave open must have a margin that is strictly monotone
  // there, so that it changes at most once, where its end values say.
  slopeBox_.assign(box_.size(), Interval::whole());
  const std::vector<std::uint32_t> &read = mode.guardStates();
  for (std::size_t r = 0; r < read.size(); ++r) {
    Interval &di = slopeBox_[read[r]];
    encloseDenseSlope(&dense_[5 * r], s.tPrev(), s.t(), a, b, di.lo, di.hi); // s.encloseSlope()
  }
  values_.resize(3 * numComparisons_);
  slope_.resize(3 * numComparisons_);
  if (!mode.encloseGuardSlopes({a, b}, box_.data(), slopeBox_.data(), values_.data(),
                               slope_.data()))
    return Certified::NoSlopes;
  for (std::uint32_t k : enabled)
    if (truths_[k] == Truth::Unknown && !monotone(k))
      return Certified::Unknown;
  // The ends: where no guard may hold at a, the changes in between, in
  // order, decide.
  const std::vector<double> *atA = &sidesA, *atB = &sidesB;
  if (a != s.tPrev()) {
    sidesAt(s, mode, a, pointA_);
    atA = &pointA_;
  }
  if (b != s.t()) {
    sidesAt(s, mode, b, pointB_);
    atB = &pointB_;
  }
  certTruths_ = truths_;
  for (std::uint32_t k : enabled)
    if (truths_[k] == Truth::Unknown)
      certTruths_[k] = comparisonReached(opOf(k), (*atA)[2 * k], (*atA)[2 * k + 1]) ? Truth::True
                                                                                   : Truth::False;
  if (anyEvent(certTruths_.data()) != Truth::False)
    return Certified::Unknown;
  // An equality that holds at a stops holding right after it, which the
  // halving decides (at its first leaf).
  for (std::uint32_t k : enabled)
    if (truths_[k] == Truth::Unknown && opOf(k) == CompareOp::Equal &&
        certTruths_[k] == Truth::True)
      return Certified::Unknown;
  // The comparisons that change in (a, b], each once.
  const std::vector<double> &A = *atA, &B = *atB;
  changing_.clear();
  for (std::uint32_t k : enabled) {
    if (truths_[k] != Truth::Unknown)
      continue;
    CompareOp op = opOf(k);
    double fa = sidedMargin(op, A[2 * k], A[2 * k + 1]);
    double fb = sidedMargin(op, B[2 * k], B[2 * k + 1]);
    bool changes = op == CompareOp::Equal ? (fa < 0) != (fb < 0) || fb == 0
                                          : comparisonReached(op, A[2 * k], A[2 * k + 1]) !=
                                                comparisonReached(op, B[2 * k], B[2 * k + 1]);
    if (!changes)
      continue;
    changing_.push_back({k, fa, fb, kNaN});
  }
  // Locate each change. The root finder sees nothing of a margin but its
  // values at the points it asks for, so a comparison whose margin has the
  // same bits as one being located at both ends and at each of those
  // points (the same test in two transitions: `d <= 0` to an impact and
  // to rest) would be located to the same point: it takes that point
  // without a search of its own.
  auto same = [](double u, double v) { return std::memcmp(&u, &v, sizeof u) == 0; };
  for (Change &c : changing_)
    c.at = c.fb != 0 && (c.fa < 0) != (c.fb < 0) ? kNaN : b;
  for (std::size_t i = 0; i < changing_.size(); ++i) {
    Change &c = changing_[i];
    if (!std::isnan(c.at))
      continue;
    std::uint32_t k = c.k;
    CompareOp op = opOf(k);
    replays_.clear();
    for (std::size_t j = i + 1; j < changing_.size(); ++j)
      if (std::isnan(changing_[j].at) && opOf(changing_[j].k) == op &&
          same(changing_[j].fa, c.fa) && same(changing_[j].fb, c.fb))
        replays_.push_back(j);
    auto f = [&, k, op](double tau) {
      sidesAt(s, mode, tau, refineSides_);
      double m = sidedMargin(op, refineSides_[2 * k], refineSides_[2 * k + 1]);
      for (std::size_t &j : replays_) {
        if (j == SIZE_MAX)
          continue;
        std::uint32_t kj = changing_[j].k;
        if (!same(sidedMargin(op, refineSides_[2 * kj], refineSides_[2 * kj + 1]), m))
          j = SIZE_MAX; // it parts from k here: located on its own
      }
      return m;
    };
    c.at = locateSignChange(f, a, c.fa, b, c.fb, 0).hi;
    for (std::size_t j : replays_)
      if (j != SIZE_MAX)
        changing_[j].at = c.at;
  }
  changes_.clear();
  for (const Change &c : changing_)
    changes_.push_back({c.at, c.k});
  std::sort(changes_.begin(), changes_.end());
  for (std::size_t i = 0; i < changes_.size();) {
    double at = changes_[i].first;
    std::size_t j = i;
    for (; j < changes_.size() && changes_[j].first == at; ++j) {
      std::uint32_t k = changes_[j].second;
      certTruths_[k] = opOf(k) == CompareOp::Equal ||
                               comparisonReached(opOf(k), (*atB)[2 * k], (*atB)[2 * k + 1])
                           ? Truth::True
                           : Truth::False;
    }
    if (anyEvent(certTruths_.data()) == Truth::True) {
      te = at;
      return Certified::Event;
    }
    for (std::size_t m = i; m < j; ++m)
      if (opOf(changes_[m].second) == CompareOp::Equal)
        certTruths_[changes_[m].second] = Truth::False; // crossed, no longer equal
    i = j;
  }
  return Certified::Free;
}

bool EventLocator::monotone(std::uint32_t k) const {
  auto magnitude = [](Interval v) { return std::max(std::abs(v.lo), std::abs(v.hi)); };
  CompareOp op = opOf(k);
  Interval d = slope_[3 * k + 2];
  // A strict comparison's margin also moves with its tolerance.
  double drift = op == CompareOp::Less || op == CompareOp::Greater
                     ? 1e-11 * (magnitude(slope_[3 * k]) + magnitude(slope_[3 * k + 1]))
                     : 0;
  return d.lo > drift || d.hi < -drift;
}

double EventLocator::nextTimeEvent(Mode &mode, const Switching &sw,
                                   const std::vector<std::uint32_t> &comparisons, double ta,
                                   double tb, const std::vector<double> &x, double &clearTo) {
  clearTo = ta;
  if (comparisons.empty() || !(tb > ta))
    return kNaN;
  sw_ = &sw;
  numGuardComparisons_ = sw.numComparisons();
  numComparisons_ = numGuardComparisons_ + mode.numKinks();
  box_.assign(x.size(), Interval::whole());
  slopeBox_.assign(x.size(), Interval::whole());
  enclosure_.resize(3 * numComparisons_);
  slope_.resize(3 * numComparisons_);
  std::vector<double> &atA = pointA_, &at = pointB_;
  atA.resize(2 * numComparisons_);
  at.resize(2 * numComparisons_);
  // Values first; derivatives only over an interval whose values leave a
  // comparison open (most are decided by the values alone, and a mode
  // that has both reuses the values of the same box for the slopes).
  // Guards that read Newton-solved values cannot be enclosed: no
  // lookahead (and no point evaluation at a state that is not the
  // trajectory's).
  auto enclose = [&](double a, double b) {
    return mode.encloseGuards({a, b}, box_.data(), enclosure_.data());
  };
  // The march below starts with the width of the last interval decided in
  // the previous search.
  double width = marchWidth_ > 0 && marchWidth_ < tb - ta ? marchWidth_ : tb - ta;
  double b0 = width < tb - ta ? ta + width : tb;
  bool slopes = true;
  if (!enclose(ta, b0))
    return kNaN;
  auto sides = [&](double tau, std::vector<double> &out) {
    call(mode.guards(tau, x.data(), out.data()), mode, "guards");
  };
  sides(ta, atA);
  // Whether comparison k has changed, at a point, from its value at ta:
  // reached or not (either way: a guard may negate it), or for an
  // equality, reached or crossed.
  auto changed = [&](std::uint32_t k, const std::vector<double> &v) {
    CompareOp op = opOf(k);
    bool reached = comparisonReached(op, v[2 * k], v[2 * k + 1]);
    if (op == CompareOp::Equal)
      return reached || (atA[2 * k] - atA[2 * k + 1] < 0) != (v[2 * k] - v[2 * k + 1] < 0);
    return reached != comparisonReached(op, atA[2 * k], atA[2 * k + 1]);
  };
  // March from ta, earliest interval first: skip what the enclosures
  // prove unchanged; where each comparison they leave open has a strictly
  // monotone margin (by derivative enclosures), it changes at most once,
  // and the value at the interval's end says whether; halve the rest in
  // place. Each interval decided, the next one is twice as wide. An
  // interval that cannot be halved further (a millionth of the window, or
  // the budget spent) is decided by its end alone: a change that comes
  // and goes inside it is left to locate(), and the proof ends at its
  // start.
  double tol = 1e-6 * (tb - ta);
  bool proven = true;
  std::size_t budget = kMaxEnclosures;
  for (double a = ta, b = b0; a < tb; a = b, width *= 2, b = width < tb - a ? a + width : tb) {
    // The first interval's enclosures are those computed above.
    if (a != ta || b != b0) {
      if (!enclose(a, b))
        return kNaN;
    }
    ++stats.enclosures;
    open_.clear();
    for (std::uint32_t k : comparisons) {
      CompareOp op = opOf(k);
      const Interval *e = &enclosure_[3 * k];
      Truth tr = comparisonTruth(op, e[0], e[1], e[2]);
      bool unchanged =
          op == CompareOp::Equal
              ? tr == Truth::False && (e[2].lo > 0 || e[2].hi < 0)
              : tr == (comparisonReached(op, atA[2 * k], atA[2 * k + 1]) ? Truth::True
                                                                         : Truth::False);
      if (!unchanged)
        open_.push_back(k);
    }
    marchWidth_ = b - a;
    if (open_.empty()) {
      if (proven)
        clearTo = b;
      continue;
    }
    if (slopes)
      slopes = mode.encloseGuardSlopes({a, b}, box_.data(), slopeBox_.data(), enclosure_.data(),
                                       slope_.data());
    if (!(slopes && std::all_of(open_.begin(), open_.end(),
                                [&](std::uint32_t k) { return monotone(k); }))) {
      double mid = 0.5 * (a + b);
      if (b - a > tol && mid > a && mid < b && budget > 0) {
        --budget;
        width = 0.25 * (b - a); // doubled by the loop: [a, mid] next
        b = a;
        continue;
      }
      proven = false;
    }
    sides(b, at);
    bool any = false;
    for (std::uint32_t k : open_)
      any = any || changed(k, at);
    if (!any) {
      if (proven)
        clearTo = b;
      continue;
    }
    // A change in (a, b]: the earliest comparison to change there, down to
    // neighbouring doubles, on the margin with the side of ta negative.
    // The earliest change so far lies in (firstLo, first]: a comparison
    // that changes there too (`x >= 0` and `x < 0`) needs no new search.
    double first = b, firstLo = a;
    std::vector<double> &atLo = refineSides_;
    atLo.resize(2 * numComparisons_);
    if (a == ta)
      atLo = atA;
    else
      sides(a, atLo);
    for (std::uint32_t k : open_) {
      if (!changed(k, at) || changed(k, atLo))
        continue;
      // The margin's size, signed by whether the change has happened:
      // continuous where the change is a crossing, so Illinois converges
      // fast.
      CompareOp op = opOf(k);
      auto value = [&, k, op](const std::vector<double> &v) {
        double size = std::max(std::abs(comparisonMargin(op, v[2 * k], v[2 * k + 1])),
                               std::numeric_limits<double>::denorm_min());
        return changed(k, v) ? size : -size;
      };
      auto f = [&](double tau) {
        buffer_.resize(2 * numComparisons_);
        sides(tau, buffer_);
        return value(buffer_);
      };
      double fFirst = first == b ? value(at) : f(first);
      if (!(fFirst > 0))
        continue; // changed at b, but not yet where another one does
      double lo = a, fLo = value(atLo);
      if (firstLo > a) {
        double fl = f(firstLo);
        if (fl > 0) {
          first = firstLo;
          fFirst = fl;
        } else {
          lo = firstLo;
          fLo = fl;
        }
      }
      Bracket br = locateSignChange(f, lo, fLo, first, fFirst, 0);
      first = br.hi;
      firstLo = br.lo;
    }
    if (proven)
      clearTo = first;
    return first;
  }
  return kNaN;
}

double EventLocator::locateBySampling(const Stepper &s, Mode &mode,
                                      const std::vector<std::uint32_t> &enabled,
                                      const std::vector<double> &sidesA,
                                      const std::vector<double> &sidesB,
                                      std::vector<double> &xEvent) {
  double ta = s.tPrev(), tb = s.t(), tol = 1e-12 * (tb - ta);
  std::vector<double> &x = x_, &buffer = buffer_;
  ++stats.sampledSteps;
  xEvent.resize(s.x().size());
  x.resize(s.x().size());
  buffer.resize(sidesA.size());
  auto sidesAt = [&](double tau) -> const std::vector<double> & {
    s.interpolate(tau, x.data());
    call(mode.guards(tau, x.data(), buffer.data()), mode, "guards");
    return buffer;
  };
  // The guards at a few points inside the step as well, so that a
  // comparison that goes and comes back within one step (a short flight of
  // a bouncing ball) is not missed.
  // Very early in the step too: a comparison that starts the step on or
  // near its threshold (just after an event: a ball leaving the floor,
  // located a few rounding errors beyond it) has left the threshold there
  // in its direction of motion, so a crossing back later in the step is
  // seen as one.
  static const double kEarly[] = {1e-9, 1e-7, 1e-5, 1e-3}, kInside[] = {0.25, 0.5, 0.75, 1.0};
  std::vector<double> &times = times_;
  std::vector<std::vector<double>> &sides = sides_;
  std::size_t count = 0;
  auto probe = [&](double tau, const std::vector<double> &values) {
    if (sides.size() <= count)
      sides.emplace_back();
    sides[count].assign(values.begin(), values.end());
    times.resize(count + 1);
    times[count++] = tau;
  };
  probe(ta, sidesA);
  bool any = false;
  for (int part = 0; part < 2; ++part)
    for (double f : part == 0 ? kEarly : kInside) {
      double tau = f < 1 ? ta + (tb - ta) * f : tb;
      probe(tau, f < 1 ? sidesAt(tau) : sidesB);
      any = any || anyEvent(sides[count - 1].data());
    }
  // An equality holds only at an instant, which the probes rarely hit: its
  // sign change counts too.
  for (std::uint32_t k : enabled) {
    if (any || opOf(k) != CompareOp::Equal)
      continue;
    for (std::size_t i = 1; i < count && !any; ++i)
      any = (sides[i - 1][2 * k] - sides[i - 1][2 * k + 1] < 0) !=
            (sides[i][2 * k] - sides[i][2 * k + 1] < 0);
  }
  if (!any)
    return std::numeric_limits<double>::quiet_NaN();

  struct Crossing {
    double t;
    std::uint32_t comparison;
  };
  std::vector<Crossing> crossings;
  for (std::uint32_t k : enabled) {
    CompareOp op = opOf(k);
    bool strict = op == CompareOp::Less || op == CompareOp::Greater;
    // The margin as a function of time, with zero moved to the side it
    // belongs to (true for <= and >=, false for < and >), so that the
    // bracket's end on the later side has the later truth.
    auto f = [&, k](double tau) {
      const std::vector<double> &sd = sidesAt(tau);
      double m = comparisonMargin(op, sd[2 * k], sd[2 * k + 1]);
      if (m == 0 && op != CompareOp::Equal)
        m = strict ? -std::numeric_limits<double>::denorm_min()
                   : std::numeric_limits<double>::denorm_min();
      return m;
    };
    for (std::size_t i = 1; i < count; ++i) {
      const std::vector<double> &A = sides[i - 1], &B = sides[i];
      double fa = comparisonMargin(op, A[2 * k], A[2 * k + 1]),
             fb = comparisonMargin(op, B[2 * k], B[2 * k + 1]);
      bool hA = comparisonHolds(op, A[2 * k], A[2 * k + 1]),
           hB = comparisonHolds(op, B[2 * k], B[2 * k + 1]);
      bool crossed = op == CompareOp::Equal ? (fa < 0) != (fb < 0) : hA != hB;
      if (!crossed)
        continue;
      if (op != CompareOp::Equal) {
        if (fa == 0)
          fa = hA ? std::numeric_limits<double>::denorm_min()
                  : -std::numeric_limits<double>::denorm_min();
        if (fb == 0)
          fb = hB ? std::numeric_limits<double>::denorm_min()
                  : -std::numeric_limits<double>::denorm_min();
      }
      if ((fa < 0) == (fb < 0) || fa == 0 || fb == 0) {
        crossings.push_back({times[i], k});
        continue;
      }
      Bracket br = locateSignChange(f, times[i - 1], fa, times[i], fb, tol);
      crossings.push_back({br.hi, k});
    }
  }
  std::sort(crossings.begin(), crossings.end(),
            [](const Crossing &a, const Crossing &b) { return a.t < b.t; });
  for (std::size_t i = 0; i < crossings.size();) {
    // Crossings within the tolerance of each other are handled together.
    std::size_t j = i;
    double tc = crossings[i].t;
    std::vector<std::uint32_t> forced;
    while (j < crossings.size() && crossings[j].t <= crossings[i].t + tol) {
      tc = crossings[j].t;
      if (opOf(crossings[j].comparison) == CompareOp::Equal)
        forced.push_back(crossings[j].comparison);
      ++j;
    }
    std::vector<double> sd = tc == tb ? sidesB : sidesAt(tc);
    if (anyEvent(sd.data(), &forced)) {
      if (tc == tb)
        xEvent = s.x();
      else
        s.interpolate(tc, xEvent.data());
      return tc;
    }
    i = j;
  }
  // A guard holds somewhere but no located crossing makes it hold (it held
  // at a sample point only through rounding): take the first such point.
  for (std::size_t i = 1; i < count; ++i)
    if (anyEvent(sides[i].data())) {
      if (times[i] == tb)
        xEvent = s.x();
      else
        s.interpolate(times[i], xEvent.data());
      return times[i];
    }
  return std::numeric_limits<double>::quiet_NaN();
}

} // namespace hbg::runtime
