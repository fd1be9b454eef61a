//===- hbg/runtime/Energy.h - Energy stored in storage elements -----------===//
//
// The energy a C or I holds is the integral of its law over its energy
// variable, from zero: E(q) = integral of e(s) ds over [0, q] for a C,
// E(p) = integral of f(s) ds over [0, p] for an I. A linear law gives
// q^2 / 2c and p^2 / 2m in closed form; any other law is integrated by
// adaptive Gauss-Legendre quadrature on the law's tape. Events compare
// the energy before and after the state jumps (the energy audit).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Tape.h"

#include <cstdint>
#include <vector>

namespace hbg::runtime {

/// One storage element's law, as the energy audit reads it.
struct StorageLaw {
  /// Its energy variable's slot in the full state.
  std::uint32_t slot = 0;
  /// Linear: the law is x / k (k a parameter expression), so E = x law(x) / 2.
  /// Integral: anything else, integrated numerically.
  enum class Form : std::uint8_t { Linear, Integral } form = Form::Integral;
  /// The law's value (effort of a C, flow of an I) with the energy
  /// variable at x[0]: one result.
  Tape law;
};

/// The energy a storage element holds at energy variable `x`, time `t`
/// and parameters `p`: exact for a linear law; otherwise five-point
/// Gauss-Legendre on panels bisected until each agrees with its halves to
/// its share of 1e-12 of the integral (exact for polynomial laws up to
/// degree 9 at once; a kink such as max(q - g, 0) is refined around). NaN
/// when the law is NaN somewhere on the way. `scratch` is reused between
/// calls.
double storedEnergy(const StorageLaw &law, double t, double x, const double *p,
                    std::vector<double> &scratch);

} // namespace hbg::runtime
