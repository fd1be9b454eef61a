//===- runtime/Rosenbrock.cpp - Linearly implicit Rosenbrock 2(3) ----------===//
//
// The L-stable modified Rosenbrock pair of Shampine and Reichelt (the
// method of MATLAB's ode23s): order 2, with an error estimate of order 3,
// for stiff systems. Each step solves three linear systems with one LU
// factorisation of W = I - h d J, where J is the Jacobian of f and d =
// 1 / (2 + sqrt 2); the last stage's f at the new point is the next
// step's first (FSAL). Dense output is the cubic Hermite interpolant of
// the step's ends, order 3, like the fixed-step methods'.
//
// The Jacobian (and df/dt) come from forward differences, one
// right-hand-side call per state: a first stiff method, cheap for the
// small stiff systems it is for; a symbolic Jacobian from the compiler is
// the next step for large ones.
//
//===----------------------------------------------------------------------===//

#include "StepperBase.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hbg::runtime {
namespace {

const double D = 1 / (2 + std::sqrt(2.0));
const double E32 = 6 + std::sqrt(2.0);

/// Step-size controller: the error estimate is O(h^3).
constexpr double Safety = 0.8, MaxGrow = 5;

class RosenbrockStepper final : public AdaptiveStepper {
public:
  RosenbrockStepper(OdeSystem &sys, const IntegratorOptions &opts)
      : AdaptiveStepper(sys, opts, 3, Safety, MaxGrow) {}
  void reset(double t0, const double *x0) override;
  void interpolate(double tau, double *out) const override {
    double h = t_ - tPrev_;
    if (!(h > 0)) {
      std::copy(x_.begin(), x_.end(), out);
      return;
    }
    hermite((tau - tPrev_) / h, h, xPrev_, x_, fPrev_, f_, out);
  }
  void densePolynomial(std::size_t i, double c[5]) const override {
    hermitePolynomial(i, t_ - tPrev_, xPrev_, x_, fPrev_, f_, c);
  }

private:
  double firstStep(double tLimit) override {
    return std::min(1e-6 * std::max(1.0, std::abs(tLimit - t_)), opts_.maxStep);
  }
  /// J = df/dx and T = df/dt at (t_, x_) by forward differences, once per
  /// step: every retry of the step uses them.
  bool beginStep(double h) override;
  double trial(double h, double tNew) override;
  void accept(double tNew) override {
    tPrev_ = t_;
    t_ = tNew;
    xPrev_.swap(x_);
    x_.swap(xNew_);
    fPrev_.swap(f_);
    f_.swap(fNew_);
  }

  std::vector<double> xPrev_, fPrev_, f_, xNew_, fNew_, y_, f1_, scratch_;
  Eigen::MatrixXd jac_;
  Eigen::VectorXd dfdt_, k1_, k2_, k3_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

void RosenbrockStepper::reset(double t0, const double *x0) {
  start(t0, x0, f_);
  xPrev_ = x_;
  fPrev_ = f_;
  xNew_.resize(n_);
  fNew_.resize(n_);
  y_.resize(n_);
  f1_.resize(n_);
  scratch_.resize(n_);
  startAdaptive();
}

bool RosenbrockStepper::beginStep(double h) {
  const double root = std::sqrt(std::numeric_limits<double>::epsilon());
  jac_.resize(Eigen::Index(n_), Eigen::Index(n_));
  y_ = x_;
  for (std::size_t j = 0; j < n_; ++j) {
    // A step of sqrt(eps) relative to the state's scale.
    double scale = std::max({std::abs(x_[j]), nominal_[j], opts_.atol,
                             std::numeric_limits<double>::min() / root});
    double delta = root * scale;
    y_[j] = x_[j] + delta;
    delta = y_[j] - x_[j]; // exactly representable
    if (!eval(t_, y_.data(), scratch_.data()))
      return false;
    for (std::size_t i = 0; i < n_; ++i)
      jac_(Eigen::Index(i), Eigen::Index(j)) = (scratch_[i] - f_[i]) / delta;
    y_[j] = x_[j];
  }
  double dt = root * std::max(std::abs(t_), h);
  if (!eval(t_ + dt, x_.data(), scratch_.data()))
    return false;
  dfdt_.resize(Eigen::Index(n_));
  for (std::size_t i = 0; i < n_; ++i)
    dfdt_(Eigen::Index(i)) = (scratch_[i] - f_[i]) / dt;
  return true;
}

double RosenbrockStepper::trial(double h, double tNew) {
  Eigen::Index n = Eigen::Index(n_);
  Eigen::MatrixXd w = Eigen::MatrixXd::Identity(n, n) - (h * D) * jac_;
  lu_.compute(w);
  Eigen::Map<const Eigen::VectorXd> f0(f_.data(), n);
  // k1 = W \ (F0 + h d T)
  k1_ = lu_.solve(f0 + (h * D) * dfdt_);
  // F1 = f(t + h/2, x + h/2 k1); k2 = W \ (F1 - k1) + k1
  for (std::size_t i = 0; i < n_; ++i)
    y_[i] = x_[i] + 0.5 * h * k1_(Eigen::Index(i));
  if (!eval(t_ + 0.5 * h, y_.data(), f1_.data()))
    return -1;
  Eigen::Map<const Eigen::VectorXd> f1(f1_.data(), n);
  k2_ = lu_.solve(f1 - k1_) + k1_;
  for (std::size_t i = 0; i < n_; ++i)
    xNew_[i] = x_[i] + h * k2_(Eigen::Index(i));
  if (!checkState(tNew, xNew_) || !eval(tNew, xNew_.data(), fNew_.data()))
    return -1;
  // k3 = W \ (F2 - e32 (k2 - F1) - 2 (k1 - F0) + h d T)
  Eigen::Map<const Eigen::VectorXd> f2(fNew_.data(), n);
  k3_ = lu_.solve(f2 - E32 * (k2_ - f1) - 2 * (k1_ - f0) + (h * D) * dfdt_);
  if (!k1_.allFinite() || !k2_.allFinite() || !k3_.allFinite())
    return -1;
  for (std::size_t i = 0; i < n_; ++i) {
    Eigen::Index k = Eigen::Index(i);
    err_[i] = h / 6 * (k1_(k) - 2 * k2_(k) + k3_(k));
  }
  return errorNorm(xNew_);
}

} // namespace

std::unique_ptr<Stepper> makeRosenbrockStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  return std::make_unique<RosenbrockStepper>(sys, opts);
}

} // namespace hbg::runtime
