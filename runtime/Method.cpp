//===- runtime/Method.cpp - Method names and the stepper factory -----------===//

#include "StepperBase.h"

namespace hbg::runtime {

bool parseMethod(const std::string &name, Method &out) {
  for (Method m : {Method::Euler, Method::RK4, Method::DormandPrince, Method::Rosenbrock}) {
    if (name == methodName(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

const char *methodName(Method m) {
  switch (m) {
  case Method::Euler:
    return "euler";
  case Method::RK4:
    return "rk4";
  case Method::DormandPrince:
    return "dopri5";
  case Method::Rosenbrock:
    return "rosenbrock";
  }
  return "unknown";
}

std::unique_ptr<Stepper> makeStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  switch (opts.method) {
  case Method::Euler:
    return makeEulerStepper(sys, opts);
  case Method::RK4:
    return makeRungeKutta4Stepper(sys, opts);
  case Method::Rosenbrock:
    return makeRosenbrockStepper(sys, opts);
  case Method::DormandPrince:
    break;
  }
  return makeDormandPrinceStepper(sys, opts);
}

} // namespace hbg::runtime
