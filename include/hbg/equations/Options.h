//===- hbg/equations/Options.h - Settings of the equations stage ----------===//
//
// Part of the embedding API (CompilerOptions::equations): kept apart from
// Equations.h, which is internal to the compiler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace hbg::eq {

/// Linear loops with more tearing variables than this are solved at run
/// time, by a sparse LU factorised once per parameter set, rather than by
/// a generated solution whose size (and compile time) grows as the cube of
/// the loop's. Chosen by measurement (docs/performance.md, linear loops).
inline constexpr std::size_t kRunTimeLoopMin = 8;

/// How the equations stage solves what it finds.
struct EquationOptions {
  /// Linear loops with more tearing variables than this are solved at run
  /// time (0: every linear loop, as the differential test checks).
  std::size_t runTimeLoopMin = kRunTimeLoopMin;
};

} // namespace hbg::eq
