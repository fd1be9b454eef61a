//===- tests/TaylorExponential.h - Exact solutions of large linear models --===//
//
// Reference solutions of linear models too large for a dense matrix
// exponential (transmission lines of thousands of sections): exp(A dt)
// applied by a Taylor series, with A given as an operator.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <vector>

/// y at 0, dt, 2 dt, ..., steps dt for y' = A y + b, y(0) = 0, where
/// `apply(y, out, s)` writes A y + s b into `out` (s is 1 or 0) and
/// `norm` bounds A's norm; `read(y)` is what is recorded at each time.
/// The coordinates must make A's entries of one size, so that on substeps
/// of 2 / norm every term of the series shrinks.
template <typename Apply, typename Read>
std::vector<double> taylorExponential(int size, double norm, double dt, int steps, Apply apply,
                                      Read read) {
  int sub = static_cast<int>(std::ceil(norm * dt / 2));
  double h = dt / sub;
  std::vector<double> y(size, 0.0), term(size), next(size), out{read(y)};
  for (int s = 0; s < steps; ++s) {
    for (int j = 0; j < sub; ++j) {
      // Term 1 carries the source; later terms are A^k (A y + b) h^k / k!.
      apply(y, term, 1.0);
      for (double &v : term)
        v *= h;
      std::vector<double> sum = y;
      for (int k = 1; k <= 40; ++k) {
        for (int i = 0; i < size; ++i)
          sum[i] += term[i];
        apply(term, next, 0.0);
        for (int i = 0; i < size; ++i)
          term[i] = next[i] * h / (k + 1);
      }
      y.swap(sum);
    }
    out.push_back(read(y));
  }
  return out;
}
