//===- hbg/runtime/Interval.h - Interval enclosures of guard operations ---===//
//
// The runtime proves that an event guard g(t, x(t)) keeps its sign over a
// step by evaluating g on intervals: enclosures of t and of the states give
// an enclosure of every value g can take. A proof is only worth anything if
// the enclosure is guaranteed, so each function here returns an interval
// holding every value the generated code can compute for operands inside
// its input intervals (the same operations, the same libm calls):
//
// - Bounds are rounded outward. A bound computed in floating point may lie
//   inside the true range, and libm functions are not correctly rounded
//   (nor even monotone to the last ulp), so a value at an interior point
//   can fall past the values at the ends. Arithmetic bounds move one ulp
//   out; libm bounds move kLibmUlps out.
// - An operation that may be undefined (sqrt of a negative number, 0/0,
//   inf - inf, a pole of tan) gives the whole line [-inf, inf]. NaN cannot
//   be enclosed by an interval, and a NaN guard must never be "proven" to
//   keep a sign; the whole line proves nothing. So the whole line also
//   means "may be NaN": an operation that propagates NaN returns the whole
//   line for such an operand, and one that does not (sign, fmin, fmax, a
//   select's condition, pow(x, 0)) takes the NaN case into account.
//
// Signed zeros are not told apart: an interval holding 0 holds -0 too.
//
// Operations on doubles should be spelled std::sin etc. in code that
// includes this header inside namespace hbg::runtime, where these
// overloads hide the global ones.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <limits>

namespace hbg::runtime {

/// The closed interval [lo, hi], lo <= hi, bounds possibly infinite.
/// [-inf, inf] is the whole line, which also stands for a value that may be
/// NaN. An interval with a NaN bound or lo > hi is invalid; operations
/// treat it as the whole line.
struct Interval {
  double lo, hi;

  /// [-inf, inf]: anything, NaN included.
  static Interval whole() {
    return {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  }
  /// [v, v]; the whole line for a NaN v.
  static Interval point(double v) { return std::isnan(v) ? whole() : Interval{v, v}; }
  /// The whole line, or an invalid interval (treated as the whole line).
  bool isWhole() const {
    return !(lo <= hi) || (lo == -std::numeric_limits<double>::infinity() &&
                           hi == std::numeric_limits<double>::infinity());
  }
  /// Whether v is enclosed; NaN is enclosed only by the whole line.
  bool contains(double v) const;
};

/// The smallest interval holding both (the whole line if either is).
Interval hull(Interval a, Interval b);

/// Margin, in ulps, by which bounds computed by libm functions are moved
/// outward. glibc's accuracy tables list errors of at most 2 ulps for sin,
/// cos, tan, exp, exp2, log, tanh and pow in double precision; the value at an
/// interior point and the one at the end bounding it can each be off by
/// that much, in opposite directions.
constexpr int kLibmUlps = 4;

// Unary operations, each enclosing std::<name> (abs: std::fabs; sign: 1
// above zero, -1 below, 0 for zeros and NaN).
/// -a (exact).
Interval neg(Interval a);
/// sin over a; tight: includes -1 or 1 only when a holds an extremum.
Interval sin(Interval a);
/// cos over a; tight like sin.
Interval cos(Interval a);
/// tan over a; the whole line when a may hold a pole.
Interval tan(Interval a);
/// exp over a.
Interval exp(Interval a);
/// exp2 over a (not an op: the JIT computes pow(2^k, y) as exp2(k * y)).
Interval exp2(Interval a);
/// log over a; reaches -inf when a holds 0, the whole line below 0.
Interval log(Interval a);
/// sqrt over a; the whole line when a reaches below 0.
Interval sqrt(Interval a);
/// tanh over a.
Interval tanh(Interval a);
/// |a| (exact).
Interval abs(Interval a);
/// The signs of a: [1, 1] for a > 0, [0, 1] for a >= 0 holding 0, etc.
Interval sign(Interval a);
/// floor of every point: exact at both ends (floor is nondecreasing and
/// rounds nothing).
Interval floor(Interval a);

// Binary operations.
/// a + b.
Interval add(Interval a, Interval b);
/// a - b.
Interval sub(Interval a, Interval b);
/// a * b.
Interval mul(Interval a, Interval b);
/// a / b; the whole line when b holds 0.
Interval div(Interval a, Interval b);
/// x * x for x in a, which (unlike mul(a, a)) is never negative.
Interval square(Interval a);
/// powi(x, n) for x in a: what generated code computes for a constant
/// integer exponent (see the double overload).
Interval powi(Interval a, int n);
/// std::pow(x, y) for x in a, y in b. A negative base is only defined for
/// an integer exponent: the whole line unless b is a single integer.
Interval pow(Interval a, Interval b);
/// std::fmin over a and b (a NaN operand yields the other; exact).
Interval min(Interval a, Interval b);
/// std::fmax over a and b (a NaN operand yields the other; exact).
Interval max(Interval a, Interval b);
/// `cond > 0 ? a : b` (a NaN condition selects b).
Interval select(Interval cond, Interval a, Interval b);

/// x^n as generated code computes it for a constant integer exponent:
/// LLVM expands llvm.powi into repeated squaring (the bits of |n| from the
/// lowest, each set bit multiplying the result by the current square),
/// then takes the reciprocal for n < 0; powi(x, 0) is 1, even for NaN.
double powi(double x, int n);

} // namespace hbg::runtime
