//===- runtime/TapeFunctions.h - Ops both tape tiers call -----------------===//
//
// The ops a tape computes by calling a function rather than with one
// arithmetic instruction: libm's functions, sign, floor, min, max, select
// and pow's two double forms. The interpreter (Tape.cpp) and baseline
// code (Baseline.cpp) both call these, never inlined, so that they give
// the same bits even where the compiler may choose between equivalent
// forms (fmin and fmax are commutative to it, though not on signed zeros).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Tape.h"

namespace hbg::runtime {

/// An op's function of its operands (unused ones ignored).
using TapeFunction = double (*)(double, double, double);

/// The function computing instruction `in` of `code`; null for the ops
/// computed inline (leaves, +, -, *, /, negation, fabs).
TapeFunction tapeFunction(const std::vector<TapeInstr> &code, const TapeInstr &in);

} // namespace hbg::runtime
