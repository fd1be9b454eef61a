//===- runtime/Integrate.cpp - Integration with sampled output -------------===//

#include "hbg/runtime/Integrator.h"
#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hbg::runtime {
namespace {

std::string describe(const NonFiniteInfo &bad) {
  if (bad.jacobian && bad.index == static_cast<std::size_t>(-1))
    return std::string(bad.derivative ? "the implicit linear system is singular"
                                      : "the Jacobian could not be evaluated") +
           " at t = " + timeText(bad.t);
  return std::string(bad.jacobian     ? "the Jacobian of the derivative of state "
                     : bad.derivative ? "derivative of state "
                                      : "state ") +
         std::to_string(bad.index) + " is not finite at t = " + timeText(bad.t);
}

} // namespace

IntegrationStatus integrate(OdeSystem &sys, double t0, const std::vector<double> &x0, double tEnd,
                            double dtOut, const IntegratorOptions &opts,
                            const std::function<void(double t, const double *x)> &sample) {
  IntegrationStatus result;
  result.t = t0;
  std::unique_ptr<Stepper> stepper;
  auto counted = [&result, &stepper]() {
    if (stepper) {
      result.acceptedSteps = stepper->acceptedSteps();
      result.rejectedSteps = stepper->rejectedSteps();
      result.rhsCalls = stepper->rhsCalls();
    }
    return result;
  };
  auto fail = [&result, &counted](StepStatus status, std::string message) {
    result.status = status;
    result.message = std::move(message);
    return counted();
  };

  std::size_t n = sys.numStates();
  if (x0.size() != n)
    return fail(StepStatus::Ok, "expected " + std::to_string(n) + " initial values, got " +
                                    std::to_string(x0.size()));
  if (!std::isfinite(t0) || !std::isfinite(tEnd) || tEnd < t0)
    return fail(StepStatus::Ok, "invalid time span [" + timeText(t0) + ", " + timeText(tEnd) + "]");
  if (!(dtOut > 0))
    return fail(StepStatus::Ok, "output interval must be positive");
  bool adaptive = isAdaptive(opts.method);
  if (!(opts.maxStep > 0) || (!adaptive && !(opts.step > 0 && std::isfinite(opts.step))))
    return fail(StepStatus::Ok, "step size must be positive");

  // Caught here so that a bad start is not even sampled.
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x0[i])) {
      result.nonFinite = {i, /*derivative=*/false, t0};
      return fail(StepStatus::NonFinite, describe(result.nonFinite));
    }
  }

  stepper = makeStepper(sys, opts);
  stepper->reset(t0, x0.data());

  OutputGrid grid(t0, tEnd, dtOut);

  std::vector<double> dense(n);
  std::size_t k = 0;
  for (double next = grid.at(0);;) {
    while (next <= stepper->t()) {
      if (next == stepper->t()) {
        sample(next, stepper->x().data());
      } else {
        stepper->interpolate(next, dense.data());
        sample(next, dense.data());
      }
      if (next == tEnd) {
        result.t = tEnd;
        return counted();
      }
      next = grid.at(++k);
    }
    result.t = stepper->t();
    if (stepper->acceptedSteps() + stepper->rejectedSteps() >= opts.maxSteps)
      return fail(StepStatus::Ok, "too many steps (" + std::to_string(opts.maxSteps) +
                                      ") at t = " + timeText(result.t));

    // Fixed steps stop at every sample time; adaptive ones sample by dense
    // output, so output does not shorten their steps.
    StepStatus status = stepper->step(adaptive ? tEnd : next);
    if (status == StepStatus::StepSizeUnderflow)
      return fail(status, "step size underflow at t = " + timeText(stepper->t()));
    if (status == StepStatus::NonFinite) {
      result.nonFinite = stepper->nonFinite();
      return fail(status, describe(result.nonFinite));
    }
  }
}

} // namespace hbg::runtime
