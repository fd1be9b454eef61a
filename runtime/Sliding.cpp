//===- runtime/Sliding.cpp - Sliding modes of sign laws (Filippov) --------===//

#include "Sliding.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hbg::runtime {

bool SlidingMode::sliding(std::size_t k) const {
  return std::find(kinks_.begin(), kinks_.end(), k) != kinks_.end();
}

void SlidingMode::start(std::size_t k) {
  if (!sliding(k))
    kinks_.push_back(k);
}

void SlidingMode::stop(std::size_t k) {
  kinks_.erase(std::remove(kinks_.begin(), kinks_.end(), k), kinks_.end());
}

double SlidingMode::branch(std::size_t k) const {
  return sliding(k) ? std::numeric_limits<double>::quiet_NaN() : inner_.branch(k);
}

bool SlidingMode::rates(double t, const double *x, std::vector<double> &rate) {
  std::size_t n = stateSlots().size(), nk = numKinks();
  f_.resize(n);
  xp_.resize(n);
  xm_.resize(n);
  cp_.resize(nk);
  cm_.resize(nk);
  if (!inner_.rhs(t, x, f_.data()))
    return false;
  // Central differences along the flow: exact, up to rounding, for an
  // argument affine in the state and time (a relative velocity), and of
  // second order otherwise.
  for (std::size_t i = 0; i < n; ++i) {
    xp_[i] = x[i] + delta_ * f_[i];
    xm_[i] = x[i] - delta_ * f_[i];
  }
  if (!inner_.kinkArguments(t + delta_, xp_.data(), cp_.data()) ||
      !inner_.kinkArguments(t - delta_, xm_.data(), cm_.data()))
    return false;
  rate.resize(kinks_.size());
  held_.resize(kinks_.size());
  for (std::size_t j = 0; j < kinks_.size(); ++j) {
    rate[j] = (cp_[kinks_[j]] - cm_[kinks_[j]]) / (2 * delta_);
    held_[j] = 0.5 * (cp_[kinks_[j]] + cm_[kinks_[j]]); // c at (t, x), to O(delta^2)
  }
  return true;
}

void SlidingMode::solve(double t, const double *x) {
  std::size_t s = kinks_.size();
  equivalent_.resize(numKinks(), 0.0);
  if (s == 0)
    return;
  // rate(b) = r0 + M b: column j from branch j at 1, the others at 0.
  for (std::size_t k : kinks_)
    inner_.setBranch(k, 0);
  bool ok = rates(t, x, r0_);
  matrix_.assign(s * s, 0.0);
  for (std::size_t j = 0; ok && j < s; ++j) {
    inner_.setBranch(kinks_[j], 1);
    ok = rates(t, x, r1_);
    inner_.setBranch(kinks_[j], 0);
    for (std::size_t i = 0; ok && i < s; ++i)
      matrix_[i * s + j] = r1_[i] - r0_[i];
  }
  // A failed evaluation leaves the branches at 0: the evaluation that
  // follows fails the same way and reports it.
  if (!ok)
    return;
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> M(
      matrix_.data(), Eigen::Index(s), Eigen::Index(s));
  Eigen::Map<const Eigen::VectorXd> r0(r0_.data(), Eigen::Index(s));
  // The rates that bring each argument back to zero over the relaxation
  // time: what the integration's rounding moves it by does not pile up
  // over a long stick (a body that drifts off its belt's speed would
  // leave its stick on the wrong side).
  Eigen::VectorXd target(static_cast<Eigen::Index>(s));
  for (std::size_t j = 0; j < s; ++j)
    target(Eigen::Index(j)) = -held_[j] / relax_;
  Eigen::FullPivLU<Eigen::MatrixXd> lu(M);
  Eigen::VectorXd b, held;
  if (lu.isInvertible()) {
    b = lu.solve(target - r0);
    held = lu.solve(-r0);
  }
  if (!lu.isInvertible()) {
    // The surfaces are not independent (three bodies stuck to each other
    // in a ring): holding the others holds the last one too, which then
    // takes no part (branch 0).
    std::size_t last = kinks_.back();
    kinks_.pop_back();
    inner_.setBranch(last, 0);
    solve(t, x);
    return;
  }
  for (std::size_t j = 0; j < s; ++j) {
    inner_.setBranch(kinks_[j], b(Eigen::Index(j)));
    equivalent_[kinks_[j]] = held(Eigen::Index(j));
  }
}

bool SlidingMode::rhs(double t, const double *x, double *xdot) {
  solve(t, x);
  return inner_.rhs(t, x, xdot);
}

void SlidingMode::useEquivalent() {
  for (std::size_t k : kinks_)
    inner_.setBranch(k, equivalent_[k]);
}

bool SlidingMode::outputs(double t, const double *x, double *y) {
  // What the model records, and what its guards judge, is the force the
  // law carries to hold its argument still, without the correction of
  // rounding the integration needs.
  solve(t, x);
  useEquivalent();
  return inner_.outputs(t, x, y);
}

bool SlidingMode::guards(double t, const double *x, double *sides) {
  solve(t, x);
  useEquivalent();
  if (!inner_.guards(t, x, sides))
    return false;
  // Reached (lhs <= rhs) where the branch leaves [-1, 1]: the force the
  // law must carry has left its set.
  for (std::size_t k : kinks_) {
    std::size_t c = numComparisons_ + k;
    sides[2 * c] = 1 - std::abs(equivalent_[k]);
    sides[2 * c + 1] = 0;
  }
  return true;
}

bool SlidingMode::held(double t, const double *x, double *values) {
  solve(t, x);
  return inner_.held(t, x, values);
}

bool SlidingMode::dependent(double t, const double *x, double *d) {
  solve(t, x);
  return inner_.dependent(t, x, d);
}

bool SlidingMode::dependentJacobian(double t, const double *x, double *jac) {
  solve(t, x);
  return inner_.dependentJacobian(t, x, jac);
}

bool SlidingMode::impulse(double t, const double *x, double *b) {
  solve(t, x);
  return inner_.impulse(t, x, b);
}

bool SlidingMode::guardImpulses(double t, const double *x, double *out) {
  solve(t, x);
  return inner_.guardImpulses(t, x, out);
}

} // namespace hbg::runtime
