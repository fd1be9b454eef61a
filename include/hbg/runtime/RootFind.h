//===- hbg/runtime/RootFind.h - Locating sign changes ---------------------===//
//
// Events are located where a guard's margin changes sign inside a step, on
// the stepper's dense output. The Illinois variant of regula falsi keeps a
// bracket around the sign change and converges superlinearly on smooth
// functions; each trial point is nudged towards the middle by a step
// shrinking with the square of the bracket (after ITP) so that the bracket
// closes from both sides. Two safeguards bound the work on functions where
// it does not converge fast (jumps, roots of high multiplicity): a
// bisection whenever two Illinois steps in a row fail to halve the
// bracket, and a budget that keeps every trial point close enough to the
// middle for the bracket to reach the tolerance within
// ceil(log2((b - a) / tol)) + 3 evaluations, a few more than bisection.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/FunctionRef.h"

#include <cstddef>

namespace hbg::runtime {

/// Where f changes sign in [a, b]: the final bracket [lo, hi] with
/// hi - lo <= tol, f(lo) on the side of f(a) (same strict sign), f(hi) on
/// the side of f(b) (same strict sign); or an exact zero, lo == hi with
/// flo == fhi == 0. `evaluations` counts the calls of f.
struct Bracket {
  double lo, hi;
  double flo, fhi;
  std::size_t evaluations;
};

/// Locates a sign change of f in [a, b] (a < b), given fa = f(a) and
/// fb = f(b) of opposite strict signs. The Illinois method narrows the
/// bracket until hi - lo <= tol, or until lo and hi are neighbouring
/// doubles (a tolerance below the resolution of the numbers is not an
/// error); it stops early at an exact zero of f, returned as [x, x]. At
/// most ceil(log2((b - a) / tol)) + 3 evaluations are made when tol is a
/// few times the spacing of the doubles in [a, b] or more (a smaller tol
/// costs at most a few bisections more, down to neighbouring doubles).
///
/// An endpoint that is already an exact zero is returned at once, without
/// evaluating f: fb == 0 gives [b, b] and otherwise fa == 0 gives [a, a].
/// A NaN value of f counts as b's side. fa and fb of the same strict sign
/// break the precondition; [a, b] is then returned unchanged.
Bracket locateSignChange(FunctionRef<double(double)> f, double a, double fa, double b,
                         double fb, double tol);

} // namespace hbg::runtime
