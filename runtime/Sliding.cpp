//===- runtime/Sliding.cpp - Sliding modes of sign laws (Filippov) --------===//

#include "Sliding.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <iterator>
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

namespace hbg::runtime {

FilippovMode::FilippovMode(Mode &a, Mode &b, std::uint32_t comparison, CompareOp op,
                           std::string name, std::size_t numComparisons,
                           std::size_t numOutputs, std::size_t numHeld)
    : a_(a), b_(b), failed_(&a), c_(comparison), op_(op), name_(std::move(name)),
      numComparisons_(numComparisons), numOutputs_(numOutputs), numHeld_(numHeld) {
  std::set_union(a.guardStates().begin(), a.guardStates().end(), b.guardStates().begin(),
                 b.guardStates().end(), std::back_inserter(guardStates_));
  // Comparisons of time only in both modes stay so in their combination;
  // the surface's becomes the exit indicator, which reads the state.
  std::set_intersection(a.timeComparisons().begin(), a.timeComparisons().end(),
                        b.timeComparisons().begin(), b.timeComparisons().end(),
                        std::back_inserter(timeComparisons_));
  timeComparisons_.erase(std::remove(timeComparisons_.begin(), timeComparisons_.end(), c_),
                         timeComparisons_.end());
}

bool FilippovMode::rate(Mode &m, double t, const double *x, double &rate, double &g) {
  std::size_t n = stateSlots().size(), ns = 2 * (numComparisons_ + m.numKinks());
  std::vector<double> &f = &m == &a_ ? fa_ : fb_;
  f.resize(n);
  xp_.resize(n);
  xm_.resize(n);
  sp_.resize(ns);
  sm_.resize(ns);
  failed_ = &m;
  if (!m.rhs(t, x, f.data()))
    return false;
  for (std::size_t i = 0; i < n; ++i) {
    xp_[i] = x[i] + delta_ * f[i];
    xm_[i] = x[i] - delta_ * f[i];
  }
  if (!m.guards(t + delta_, xp_.data(), sp_.data()) ||
      !m.guards(t - delta_, xm_.data(), sm_.data()))
    return false;
  double gp = sp_[2 * c_] - sp_[2 * c_ + 1], gm = sm_[2 * c_] - sm_[2 * c_ + 1];
  rate = (gp - gm) / (2 * delta_);
  g = 0.5 * (gp + gm); // g at (t, x), to O(delta^2)
  return true;
}

bool FilippovMode::rates(double t, const double *x, double &ra, double &rb, double &g) {
  double ga = 0, gb = 0;
  if (!rate(a_, t, x, ra, ga) || !rate(b_, t, x, rb, gb))
    return false;
  g = 0.5 * (ga + gb);
  return true;
}

bool FilippovMode::weight(double t, const double *x, double &w) {
  double ra = 0, rb = 0, g = 0;
  if (!rates(t, x, ra, rb, g))
    return false;
  // (1 - w) ra + w rb = 0.
  w = ra != rb ? ra / (ra - rb) : std::numeric_limits<double>::quiet_NaN();
  return true;
}

template <class F>
bool FilippovMode::combine(double w, std::size_t count, double *out, F f) {
  va_.resize(count);
  vb_.resize(count);
  failed_ = &a_;
  if (!f(a_, va_.data()))
    return false;
  failed_ = &b_;
  if (!f(b_, vb_.data()))
    return false;
  for (std::size_t i = 0; i < count; ++i)
    out[i] = (1 - w) * va_[i] + w * vb_[i];
  return true;
}

bool FilippovMode::rhs(double t, const double *x, double *xdot) {
  double ra = 0, rb = 0, g = 0;
  if (!rates(t, x, ra, rb, g))
    return false;
  // The weight under which g moves back to zero over the relaxation time,
  // so that what the integration's rounding moves it by does not pile up
  // over a long slide. It is not clamped to [0, 1]: a step that crosses
  // the exit integrates the combination's smooth continuation, and is cut
  // at the exit, where the weight reaches the edge; what is physical
  // beyond it is the other mode's flow, which the run goes on with.
  double w = ra != rb ? (ra + g / relax_) / (ra - rb) : 0.5;
  if (!std::isfinite(w))
    w = 0.5;
  std::size_t n = stateSlots().size();
  for (std::size_t i = 0; i < n; ++i)
    xdot[i] = (1 - w) * fa_[i] + w * fb_[i];
  return true;
}

const SparsePattern *FilippovMode::jacobianPattern() {
  if (!patternKnown_) {
    patternKnown_ = true;
    hasPattern_ = a_.jacobianPattern() && b_.jacobianPattern();
    std::size_t n = stateSlots().size();
    dense_.colStart.resize(n + 1);
    for (std::size_t j = 0; j <= n; ++j)
      dense_.colStart[j] = static_cast<std::uint32_t>(j * n);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i)
        dense_.rows.push_back(static_cast<std::uint32_t>(i));
  }
  return hasPattern_ ? &dense_ : nullptr;
}

bool FilippovMode::jacobian(double t, const double *x, double *values, double *dfdt) {
  if (!jacobianPattern())
    return false;
  std::size_t n = stateSlots().size();
  double ra = 0, rb = 0, g = 0;
  if (!rates(t, x, ra, rb, g) || !(ra != rb))
    return false;
  // The modes' Jacobians, dense (column-major, as the pattern), and df/dt.
  auto dense = [&](Mode &m, std::vector<double> &jac, std::vector<double> &dt) {
    const SparsePattern &p = *m.jacobianPattern();
    std::vector<double> &v = va_;
    v.resize(p.nonZeros());
    dt.resize(n);
    failed_ = &m;
    if (!m.jacobian(t, x, v.data(), dt.data()))
      return false;
    jac.assign(n * n, 0.0);
    for (std::size_t j = 0; j < n; ++j)
      for (std::uint32_t k = p.colStart[j]; k < p.colStart[j + 1]; ++k)
        jac[j * n + p.rows[k]] = v[k];
    return true;
  };
  if (!dense(a_, ja_, dta_) || !dense(b_, jb_, dtb_))
    return false;
  // grad(g) and dg/dt by differences of the guards (exact for g affine),
  // over the states the guards read.
  std::size_t ns = 2 * numComparisons_;
  sp_.resize(ns);
  sm_.resize(ns);
  failed_ = &a_;
  if (!a_.guards(t, x, sm_.data()))
    return false;
  double g0 = sm_[2 * c_] - sm_[2 * c_ + 1];
  grad_.assign(n, 0.0);
  xp_.assign(x, x + n);
  const std::vector<std::uint32_t> &slots = stateSlots();
  for (std::uint32_t slot : guardStates_) {
    auto at = std::find(slots.begin(), slots.end(), slot);
    if (at == slots.end())
      continue;
    std::size_t i = std::size_t(at - slots.begin());
    double h = 1e-7 * std::max(1.0, std::abs(x[i]));
    xp_[i] = x[i] + h;
    h = xp_[i] - x[i];
    if (!a_.guards(t, xp_.data(), sp_.data()))
      return false;
    grad_[i] = (sp_[2 * c_] - sp_[2 * c_ + 1] - g0) / h;
    xp_[i] = x[i];
  }
  double dt = 1e-7 * std::max(1.0, std::abs(t));
  if (!a_.guards(t + dt, x, sp_.data()))
    return false;
  double gt = (sp_[2 * c_] - sp_[2 * c_ + 1] - g0) / dt;
  // w = (ra + g / relax) / (ra - rb), as rhs(): its gradient and its rate
  // in t, from those of ra = grad(g) . fA + g_t and rb.
  double num = ra + g / relax_, den = ra - rb, w = num / den;
  for (std::size_t j = 0; j < n; ++j) {
    double dra = 0, drb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      dra += grad_[i] * ja_[j * n + i];
      drb += grad_[i] * jb_[j * n + i];
    }
    double dw = ((dra + grad_[j] / relax_) - w * (dra - drb)) / den;
    for (std::size_t i = 0; i < n; ++i)
      values[j * n + i] = (1 - w) * ja_[j * n + i] + w * jb_[j * n + i] + (fb_[i] - fa_[i]) * dw;
  }
  if (dfdt) {
    double dra = 0, drb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      dra += grad_[i] * dta_[i];
      drb += grad_[i] * dtb_[i];
    }
    double dw = ((dra + gt / relax_) - w * (dra - drb)) / den;
    for (std::size_t i = 0; i < n; ++i)
      dfdt[i] = (1 - w) * dta_[i] + w * dtb_[i] + (fb_[i] - fa_[i]) * dw;
  }
  return true;
}

bool FilippovMode::outputs(double t, const double *x, double *y) {
  double w = 0;
  if (!weight(t, x, w))
    return false;
  w = std::clamp(std::isfinite(w) ? w : 0.5, 0.0, 1.0);
  return combine(w, numOutputs_, y, [&](Mode &m, double *v) { return m.outputs(t, x, v); });
}

bool FilippovMode::guards(double t, const double *x, double *sides) {
  double w = 0;
  if (!weight(t, x, w))
    return false;
  double inside = std::isfinite(w) ? std::min(w, 1 - w) : -1.0;
  if (!std::isfinite(w))
    w = 0.5;
  std::size_t nc = numComparisons_;
  if (!combine(w, 2 * nc, sides, [&](Mode &m, double *v) { return m.guards(t, x, v); }))
    return false;
  // The exit (lhs <= rhs): the weight (NaN: neither mode drives g) has
  // left [0, 1], or a guard's other conditions stopped holding.
  if (blocked(sides))
    inside = -1;
  sides[2 * nc] = inside;
  sides[2 * nc + 1] = 0;
  // The surface's own comparison sits on its threshold: held unreached,
  // so that the junction does not switch back on it.
  bool less = op_ == CompareOp::Less || op_ == CompareOp::LessEqual;
  sides[2 * c_] = less ? 1.0 : 0.0;
  sides[2 * c_ + 1] = less ? 0.0 : 1.0;
  return true;
}

Mode *FilippovMode::blocked(const double *sides) const {
  if (!sw_)
    return nullptr;
  if (!sw_->holds(*back_, sides, sides, &backOn_))
    return &b_;
  if (!sw_->holds(*forward_, sides, sides, &forwardOn_))
    return &a_;
  return nullptr;
}

bool FilippovMode::held(double t, const double *x, double *values) {
  double w = 0;
  if (!weight(t, x, w))
    return false;
  w = std::clamp(std::isfinite(w) ? w : 0.5, 0.0, 1.0);
  return combine(w, numHeld_, values, [&](Mode &m, double *v) { return m.held(t, x, v); });
}

} // namespace hbg::runtime
