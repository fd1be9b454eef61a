//===- runtime/BandLu.h - LU of band matrices with partial pivoting -------===//
//
// Internal to hbg_runtime: the stiff method's factorisation for Jacobians
// whose non-zeros lie near the diagonal (a chain, a ladder, a line).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace hbg::runtime {

/// LU with partial pivoting of a band matrix of bandwidths kl (below the
/// diagonal) and ku (above), row by row: entry (i, j) at a[i * w + j - i +
/// kl] for j - i from -kl to ku + kl (pivoting fills kl more above), w =
/// 2 kl + ku + 1. The multipliers stay where their row was when they were
/// made, and the solve applies the row swaps in the same order (the
/// scheme of LAPACK's dgbtrf). Written here rather than called from
/// LAPACK: its band routines make a BLAS call per column, which for the
/// bands of 1 to 5 that chains and ladders have was most of the time.
class BandLu {
public:
  void resize(std::size_t n, std::size_t kl, std::size_t ku) {
    n_ = n, kl_ = kl, ku_ = ku, w_ = 2 * kl + ku + 1;
    a_.assign(n * w_, 0.0);
    pivot_.assign(n, 0);
    inverse_.assign(n, 0.0);
  }
  /// Where entry (i, j) is stored.
  std::size_t at(std::size_t i, std::size_t j) const { return i * w_ + j + kl_ - i; }
  std::vector<double> &values() { return a_; }
  /// Factorises in place; false on a zero or non-finite pivot.
  bool factorise() {
    for (std::size_t k = 0; k < n_; ++k) {
      std::size_t last = std::min(n_ - 1, k + kl_), hi = std::min(n_ - 1, k + ku_ + kl_), p = k;
      double best = std::abs(a_[at(k, k)]);
      for (std::size_t i = k + 1; i <= last; ++i)
        if (std::abs(a_[at(i, k)]) > best)
          best = std::abs(a_[at(i, k)]), p = i;
      if (!(best > 0) || !std::isfinite(best))
        return false;
      pivot_[k] = p;
      if (p != k)
        for (std::size_t j = k; j <= hi; ++j)
          std::swap(a_[at(k, j)], a_[at(p, j)]);
      double inv = 1 / a_[at(k, k)];
      inverse_[k] = inv;
      const double *rowK = &a_[at(k, k)];
      for (std::size_t i = k + 1; i <= last; ++i) {
        double l = a_[at(i, k)] * inv;
        a_[at(i, k)] = l;
        if (l == 0)
          continue;
        double *rowI = &a_[at(i, k)];
        for (std::size_t j = 1; j <= hi - k; ++j)
          rowI[j] -= l * rowK[j];
      }
    }
    return true;
  }
  void solve(double *b) const {
    for (std::size_t k = 0; k < n_; ++k) {
      if (pivot_[k] != k)
        std::swap(b[k], b[pivot_[k]]);
      for (std::size_t i = k + 1, last = std::min(n_ - 1, k + kl_); i <= last; ++i)
        b[i] -= a_[at(i, k)] * b[k];
    }
    for (std::size_t i = n_; i-- > 0;) {
      double sum = b[i];
      const double *row = &a_[at(i, i)];
      for (std::size_t j = 1, hi = std::min(n_ - 1, i + ku_ + kl_); j <= hi - i; ++j)
        sum -= row[j] * b[i + j];
      b[i] = sum * inverse_[i]; // a multiplication: the solve is a chain of latencies
    }
  }

private:
  std::size_t n_ = 0, kl_ = 0, ku_ = 0, w_ = 1;
  std::vector<double> a_, inverse_;
  std::vector<std::size_t> pivot_;
};

} // namespace hbg::runtime
