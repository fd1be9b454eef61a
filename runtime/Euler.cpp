//===- runtime/Euler.cpp - Forward Euler -----------------------------------===//

#include "StepperBase.h"

namespace hbg::runtime {
namespace {

/// x_{n+1} = x_n + h f(t_n, x_n): one right-hand-side call per step, which
/// also provides the derivative for the next step and for interpolation.
class EulerStepper final : public FixedStepper {
public:
  using FixedStepper::FixedStepper;

private:
  bool advance(double tNew) override {
    double h = tNew - t_;
    for (std::size_t i = 0; i < n_; ++i)
      xNew_[i] = x_[i] + h * f_[i];
    return true;
  }
};

} // namespace

std::unique_ptr<Stepper> makeEulerStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  return std::make_unique<EulerStepper>(sys, opts);
}

} // namespace hbg::runtime
