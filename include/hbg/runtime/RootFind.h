//===- hbg/runtime/RootFind.h - Locating sign changes ---------------------===//
//
// Events are located where a guard's margin changes sign inside a step, on
// the stepper's dense output. The Illinois variant of regula falsi keeps a
// bracket around the sign change and converges superlinearly on smooth
// functions; a bisection step is forced whenever two steps in a row fail
// to halve the bracket, so discontinuous or flat functions still converge
// in about log2((b - a) / tol) evaluations.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <functional>

namespace hbg::runtime {

/// The final bracket of a sign change: f(lo) has the sign of f(a), f(hi)
/// the sign of f(b) (or is zero), and hi - lo <= tol.
struct Bracket {
  double lo, hi;
  double flo, fhi;
  std::size_t evaluations;
};

/// Locates where f changes sign in [a, b], given fa = f(a) and fb = f(b)
/// of opposite signs with fa != 0. An exact zero found inside ends the
/// search with hi at it. When fb == 0 (and no earlier sign change is
/// bracketed) the result is [a, b] shrunk towards b's side like any other
/// sign change: zero counts as b's side.
Bracket locateSignChange(const std::function<double(double)> &f, double a, double fa, double b,
                         double fb, double tol);

} // namespace hbg::runtime
