//===- runtime/Interval.cpp - Interval enclosures of guard operations -----===//
//
// An enclosure here proves that a guard keeps its sign, so it must never
// be too narrow; a little too wide only loses a proof the caller can do
// without. Hence every bound computed in floating point is moved outward
// (a rounded bound may lie inside the range, and libm results are off by
// up to a couple of ulps, not even monotone at that scale), and every
// case where the generated code may produce NaN gives the whole line,
// which proves nothing.
//
// Most enclosures come from the values at the ends of the operands,
// where the operation is monotone on the box; sin, cos and even powers
// add the extrema the box may hold.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Interval.h"

#include "IntervalArith.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hbg::runtime {

namespace {

using arith::corners;
using arith::down;
using arith::holdsZero;
using arith::kInf;
using arith::make;
using arith::unbounded;
using arith::up;

/// 2/pi rounded to double. Multiplying by it numbers the quarter periods
/// (quadrants) of sin, cos and tan, whose extrema and poles lie on their
/// boundaries n * pi/2.
constexpr double kTwoOverPi = 0.636619772367581343075535053490057448;

/// Beyond this many quadrants from 0, sin and cos give [-1, 1] and tan the
/// whole line (for intervals wider than a point): quadrant numbers then
/// still fit an int64 with a rounding error far below one quadrant, and
/// guards do not run that far.
constexpr double kMaxQuadrant = 0x1p40;

/// a, or the whole line for an invalid a.
Interval valid(Interval a) { return a.isWhole() ? Interval::whole() : a; }

/// v, with -0 and negative numbers as +0.
double positivePart(double v) { return v > 0 ? v : 0.0; }

double signOf(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

/// The enclosure of a nondecreasing libm function f over a from its values
/// at the ends.
template <typename F> Interval increasing(F f, Interval a) {
  return make(down(f(a.lo), kLibmUlps), up(f(a.hi), kLibmUlps));
}

/// The integers n for which n * pi/2 may lie in a, as [first, last] (empty
/// when last < first): a superset, since a's ends are numbered with a
/// margin over the rounding. False when a is too far from 0.
bool quadrants(Interval a, std::int64_t &first, std::int64_t &last) {
  double ql = a.lo * kTwoOverPi, qh = a.hi * kTwoOverPi;
  if (!(std::fabs(ql) <= kMaxQuadrant && std::fabs(qh) <= kMaxQuadrant))
    return false;
  // Rounding 2/pi and the product puts q within 2^-52 |q| of a.lo * 2/pi;
  // the margin is four times that, plus DBL_MIN for products that
  // underflow.
  double el = std::fabs(ql) * 0x1p-50 + DBL_MIN, eh = std::fabs(qh) * 0x1p-50 + DBL_MIN;
  first = static_cast<std::int64_t>(std::ceil(ql - el));
  last = static_cast<std::int64_t>(std::floor(qh + eh));
  return true;
}

/// sin (cosine false) or cos over a. Between consecutive extrema the
/// function is monotone, so the range is the values at the ends, widened
/// to 1 or -1 when a may hold a maximum or a minimum.
Interval sinOrCos(Interval a, bool cosine) {
  if (a.isWhole() || unbounded(a)) // sin(inf) is NaN
    return Interval::whole();
  auto f = [cosine](double v) { return cosine ? std::cos(v) : std::sin(v); };
  double fl = f(a.lo), fh = f(a.hi);
  Interval r{down(std::min(fl, fh), kLibmUlps), up(std::max(fl, fh), kLibmUlps)};
  if (a.lo != a.hi) {
    // Maxima at quadrant numbers 4k + 1 for sin and 4k for cos, minima two
    // quadrants on.
    const std::int64_t maxAt = cosine ? 0 : 1;
    std::int64_t first, last;
    if (!quadrants(a, first, last) || last - first >= 3)
      return {-1, 1}; // every residue mod 4, or too far out to tell
    for (std::int64_t n = first; n <= last; ++n) {
      std::int64_t phase = ((n - maxAt) % 4 + 4) % 4;
      if (phase == 0)
        r.hi = 1;
      else if (phase == 2)
        r.lo = -1;
    }
  }
  // The computed values keep |sin| <= 1 too: glibc's sin and cos are
  // within an ulp, which cannot carry a value of at most 1 past the double
  // 1.
  return {std::max(r.lo, -1.0), std::min(r.hi, 1.0)};
}

/// x^m by the multiplication chain of powi(double, int), m > 0. Starting
/// from 1 instead of the first square taken changes nothing: 1 * v is v.
double powiChain(double x, std::uint32_t m) {
  double result = 1, square = x;
  for (; m != 0; m >>= 1) {
    if (m & 1)
      result *= square;
    square *= square;
  }
  return result;
}

/// std::pow over a box with a nonnegative base (zeros as +0). For x >= 0,
/// pow is monotone in x for each y and in y for each x, so its extremes
/// over a box lie at corners; this also holds where pow reaches 0 or inf.
Interval powNonnegative(Interval a, Interval b) {
  Interval c = corners(std::pow(a.lo, b.lo), std::pow(a.lo, b.hi), std::pow(a.hi, b.lo),
                       std::pow(a.hi, b.hi));
  return make(std::max(0.0, down(c.lo, kLibmUlps)), up(c.hi, kLibmUlps));
}

} // namespace

bool Interval::contains(double v) const {
  if (isWhole())
    return true;
  return lo <= v && v <= hi; // false for NaN
}

Interval hull(Interval a, Interval b) {
  if (a.isWhole() || b.isWhole())
    return Interval::whole();
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

// --- Unary -----------------------------------------------------------------

Interval neg(Interval a) { return arith::neg(a); }

Interval sin(Interval a) { return sinOrCos(a, false); }

Interval cos(Interval a) { return sinOrCos(a, true); }

Interval tan(Interval a) {
  if (a.isWhole() || unbounded(a))
    return Interval::whole();
  if (a.lo != a.hi) {
    // Poles at odd quadrant numbers; between them tan increases.
    std::int64_t first, last;
    if (!quadrants(a, first, last) || last > first || (last == first && first % 2 != 0))
      return Interval::whole();
  }
  return increasing([](double v) { return std::tan(v); }, a);
}

Interval exp(Interval a) {
  if (a.isWhole())
    return Interval::whole();
  Interval r = increasing([](double v) { return std::exp(v); }, a);
  return {std::max(r.lo, 0.0), r.hi};
}

Interval exp2(Interval a) {
  if (a.isWhole())
    return Interval::whole();
  Interval r = increasing([](double v) { return std::exp2(v); }, a);
  return {std::max(r.lo, 0.0), r.hi};
}

Interval log(Interval a) {
  if (a.isWhole() || a.lo < 0) // log of a negative number is NaN
    return Interval::whole();
  return increasing([](double v) { return std::log(v); }, a); // log(0) is -inf
}

Interval sqrt(Interval a) {
  if (a.isWhole() || a.lo < 0) // sqrt of a negative number is NaN
    return Interval::whole();
  // Correctly rounded, so one ulp suffices.
  return make(std::max(0.0, down(std::sqrt(a.lo))), up(std::sqrt(a.hi)));
}

Interval tanh(Interval a) {
  if (a.isWhole())
    return Interval::whole();
  return increasing([](double v) { return std::tanh(v); }, a);
}

Interval abs(Interval a) {
  if (a.isWhole())
    return Interval::whole();
  if (a.lo >= 0)
    return a;
  if (a.hi <= 0)
    return {-a.hi, -a.lo};
  return {0, std::max(-a.lo, a.hi)};
}

Interval sign(Interval a) {
  if (a.isWhole())
    return {-1, 1}; // sign(NaN) is 0
  return {signOf(a.lo), signOf(a.hi)}; // sign is nondecreasing
}

Interval floor(Interval a) {
  if (a.isWhole())
    return Interval::whole(); // floor(NaN) is NaN
  return {std::floor(a.lo), std::floor(a.hi)};
}

// --- Binary ----------------------------------------------------------------

Interval add(Interval a, Interval b) { return arith::add(a, b); }

Interval sub(Interval a, Interval b) { return arith::sub(a, b); }

Interval mul(Interval a, Interval b) { return arith::mul(a, b); }

Interval div(Interval a, Interval b) { return arith::div(a, b); }

Interval square(Interval a) { return powi(a, 2); }

Interval powi(Interval a, int n) {
  if (n == 0)
    return {1, 1};
  if (a.isWhole())
    return Interval::whole();
  std::uint32_t m = n < 0 ? 0u - static_cast<std::uint32_t>(n) : static_cast<std::uint32_t>(n);
  bool even = m % 2 == 0;
  // The chain is odd or even in x like x^m, and nondecreasing for x >= 0
  // (each product only grows with x), so the computed values over a are
  // bounded by those at the ends, and by 0 for an even power around 0.
  double cl = powiChain(a.lo, m), ch = powiChain(a.hi, m);
  Interval r{cl, ch};
  if (even && a.hi <= 0)
    r = {ch, cl};
  else if (even && a.lo < 0)
    r = {0, std::max(cl, ch)};
  if (n > 0)
    return make(even ? std::max(0.0, down(r.lo)) : down(r.lo), up(r.hi));
  // The reciprocal. An even power is never negative, so 1 / r runs from
  // 1 / r.hi up to inf when r reaches 0; an odd power keeps the sign of a
  // zero, and 1 / -0 is -inf.
  if (holdsZero(r)) {
    if (!even)
      return Interval::whole();
    return make(std::max(0.0, down(1 / r.hi)), kInf);
  }
  return make(down(1 / r.hi), up(1 / r.lo));
}

Interval pow(Interval a, Interval b) {
  // pow(x, 0) and pow(1, y) are 1 even for a NaN x or y.
  if ((b.lo == 0 && b.hi == 0) || (a.lo == 1 && a.hi == 1))
    return {1, 1};
  if (a.isWhole() || b.isWhole())
    return Interval::whole();
  const bool integerExponent = b.lo == b.hi && std::isfinite(b.lo) && b.lo == std::trunc(b.lo);
  if (a.lo < 0 && !integerExponent)
    return Interval::whole(); // a negative base to a non-integer power is NaN
  Interval r{0, 0};
  if (a.hi >= 0)
    r = powNonnegative({positivePart(a.lo), positivePart(a.hi)}, b);
  if (a.lo > 0)
    return r;
  // The base reaches 0 or below; -0 is included.
  if (integerExponent) {
    // pow(-x, k) is pow(x, k) with the sign of (-1)^k.
    Interval m = powNonnegative({positivePart(-a.hi), -a.lo}, b);
    if (std::fmod(b.lo, 2) != 0)
      m = neg(m);
    return a.hi >= 0 ? hull(r, m) : m;
  }
  // Only -0 lies below +0 here; pow(-0, y) differs from pow(+0, y) for odd
  // integers y only, and reaches -inf for negative ones.
  if (b.lo <= -1)
    r.lo = -kInf;
  return r;
}

Interval min(Interval a, Interval b) {
  // A whole operand may be NaN, which fmin passes over; its lo of -inf
  // already covers that case.
  a = valid(a);
  b = valid(b);
  return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
}

Interval max(Interval a, Interval b) {
  a = valid(a);
  b = valid(b);
  return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
}

Interval select(Interval cond, Interval a, Interval b) {
  // A NaN condition selects b; a whole cond reaches the hull below.
  if (!cond.isWhole()) {
    if (cond.lo > 0)
      return valid(a);
    if (cond.hi <= 0)
      return valid(b);
  }
  return hull(a, b);
}

// --- Point semantics ----------------------------------------------------

double powi(double x, int n) {
  if (n == 0)
    return 1;
  if (n > 0)
    return powiChain(x, static_cast<std::uint32_t>(n));
  return 1 / powiChain(x, 0u - static_cast<std::uint32_t>(n));
}

} // namespace hbg::runtime
