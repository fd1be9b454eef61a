//===- hbg/runtime/Quadrature.h - Gauss-Legendre nodes and weights --------===//
//
// The figures of a run's outputs and powers are integrals over its steps'
// dense output: five points a step, exact for polynomials up to degree 9,
// so to the order of every integrator's interpolant.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace hbg::runtime {

/// Five-point Gauss-Legendre nodes and weights on [-1, 1].
inline constexpr double kGaussNodes[5] = {-0.9061798459386640, -0.5384693101056831, 0.0,
                                          0.5384693101056831, 0.9061798459386640};
inline constexpr double kGaussWeights[5] = {0.2369268850561891, 0.4786286704993665,
                                            0.5688888888888889, 0.4786286704993665,
                                            0.2369268850561891};

} // namespace hbg::runtime
