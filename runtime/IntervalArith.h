//===- runtime/IntervalArith.h - Interval arithmetic, inline ---*- C++ -*-===//
//
// Internal to hbg_runtime: the arithmetic of Interval.cpp that the tape's
// interval evaluators run for nearly every instruction, as inline
// functions so that those loops inline them. Interval.cpp's add, sub,
// mul, div and neg are these, so both give the same bounds bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Interval.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hbg::runtime::arith {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The next double above v (+inf and NaN stay), as std::nextafter(v, inf)
/// but without its call: enclosures round every bound, so this is hot.
inline double nextUp(double v) {
  if (!(v < kInf))
    return v;
  if (v == 0)
    return std::numeric_limits<double>::denorm_min();
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits = v > 0 ? bits + 1 : bits - 1; // the magnitude's bits are monotone
  std::memcpy(&v, &bits, sizeof bits);
  return v;
}

/// v moved `ulps` doubles towards -inf (-inf stays, NaN stays NaN).
inline double down(double v, int ulps = 1) {
  for (int i = 0; i < ulps; ++i)
    v = -nextUp(-v);
  return v;
}

/// v moved `ulps` doubles towards +inf.
inline double up(double v, int ulps = 1) {
  for (int i = 0; i < ulps; ++i)
    v = nextUp(v);
  return v;
}

/// [lo, hi]; the whole line if a bound came out NaN, so that an undefined
/// case no check above caught still cannot prove anything.
inline Interval make(double lo, double hi) {
  if (std::isnan(lo) || std::isnan(hi))
    return Interval::whole();
  return {lo, hi};
}

inline bool holdsZero(Interval a) { return a.lo <= 0 && 0 <= a.hi; }

inline bool unbounded(Interval a) { return a.lo == -kInf || a.hi == kInf; }

/// The least and the greatest of the values at the corners of a box, as
/// NaN bounds if one is NaN (std::min would silently drop it).
inline Interval corners(double c0, double c1, double c2, double c3) {
  if (std::isnan(c0) || std::isnan(c1) || std::isnan(c2) || std::isnan(c3))
    return {std::nan(""), std::nan("")};
  return {std::min({c0, c1, c2, c3}), std::max({c0, c1, c2, c3})};
}

inline Interval neg(Interval a) {
  if (a.isWhole())
    return Interval::whole();
  return {-a.hi, -a.lo};
}

inline Interval add(Interval a, Interval b) {
  if (a.isWhole() || b.isWhole())
    return Interval::whole();
  if ((a.hi == kInf && b.lo == -kInf) || (a.lo == -kInf && b.hi == kInf))
    return Interval::whole(); // inf + -inf
  return make(down(a.lo + b.lo), up(a.hi + b.hi));
}

inline Interval sub(Interval a, Interval b) {
  if (a.isWhole() || b.isWhole())
    return Interval::whole();
  if ((a.hi == kInf && b.hi == kInf) || (a.lo == -kInf && b.lo == -kInf))
    return Interval::whole(); // inf - inf
  return make(down(a.lo - b.hi), up(a.hi - b.lo));
}

inline Interval mul(Interval a, Interval b) {
  if (a.isWhole() || b.isWhole())
    return Interval::whole();
  if ((holdsZero(a) && unbounded(b)) || (holdsZero(b) && unbounded(a)))
    return Interval::whole(); // 0 * inf
  Interval c = corners(a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi);
  return make(down(c.lo), up(c.hi));
}

inline Interval div(Interval a, Interval b) {
  if (a.isWhole() || b.isWhole())
    return Interval::whole();
  if (holdsZero(b) || (unbounded(a) && unbounded(b)))
    return Interval::whole(); // x / 0, 0 / 0, inf / inf
  // b keeps one sign, so a / b is monotone in each operand.
  Interval c = corners(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi);
  return make(down(c.lo), up(c.hi));
}

} // namespace hbg::runtime::arith
