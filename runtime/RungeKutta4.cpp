//===- runtime/RungeKutta4.cpp - Classic fourth-order Runge-Kutta ----------===//

#include "StepperBase.h"

namespace hbg::runtime {
namespace {

/// The classic RK4 scheme. Its first stage is the derivative at the end of the
/// previous step, so a step costs four right-hand-side calls, not five.
class RungeKutta4Stepper final : public FixedStepper {
public:
  using FixedStepper::FixedStepper;

  void reset(double t0, const double *x0) override {
    FixedStepper::reset(t0, x0);
    y_.resize(n_);
    k2_.resize(n_);
    k3_.resize(n_);
    k4_.resize(n_);
  }

private:
  bool advance(double tNew) override {
    double h = tNew - t_, tMid = t_ + 0.5 * h;
    for (std::size_t i = 0; i < n_; ++i)
      y_[i] = x_[i] + 0.5 * h * f_[i];
    if (!eval(tMid, y_.data(), k2_.data()))
      return false;
    for (std::size_t i = 0; i < n_; ++i)
      y_[i] = x_[i] + 0.5 * h * k2_[i];
    if (!eval(tMid, y_.data(), k3_.data()))
      return false;
    for (std::size_t i = 0; i < n_; ++i)
      y_[i] = x_[i] + h * k3_[i];
    if (!eval(tNew, y_.data(), k4_.data()))
      return false;
    for (std::size_t i = 0; i < n_; ++i)
      xNew_[i] = x_[i] + h / 6 * (f_[i] + 2 * (k2_[i] + k3_[i]) + k4_[i]);
    return true;
  }

  std::vector<double> y_, k2_, k3_, k4_;
};

} // namespace

std::unique_ptr<Stepper> makeRungeKutta4Stepper(OdeSystem &sys, const IntegratorOptions &opts) {
  return std::make_unique<RungeKutta4Stepper>(sys, opts);
}

} // namespace hbg::runtime
