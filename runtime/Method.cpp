//===- runtime/Method.cpp - Method names and the stepper factory -----------===//

#include "StepperBase.h"

namespace hbg::runtime {

bool parseMethod(const std::string &name, Method &out) {
  for (Method m : {Method::Euler, Method::RK4, Method::DormandPrince, Method::Rosenbrock,
                   Method::Auto}) {
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
  case Method::Auto:
    return "auto";
  }
  return "unknown";
}

void recordSpan(std::vector<MethodSpan> &spans, Method method, double from, double to) {
  if (spans.empty() || spans.back().method != method)
    spans.push_back({method, from, to, 0});
  spans.back().to = to;
  ++spans.back().steps;
}

std::unique_ptr<Stepper> makeStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  std::unique_ptr<Stepper> s;
  switch (opts.method) {
  case Method::Euler: s = makeEulerStepper(sys, opts); break;
  case Method::RK4: s = makeRungeKutta4Stepper(sys, opts); break;
  case Method::Rosenbrock: s = makeRosenbrockStepper(sys, opts); break;
  case Method::Auto: return makeAutoStepper(sys, opts);
  case Method::DormandPrince: s = makeDormandPrinceStepper(sys, opts); break;
  }
  if (!s)
    s = makeDormandPrinceStepper(sys, opts);
  s->method_ = opts.method == Method::Auto ? Method::DormandPrince : opts.method;
  return s;
}

} // namespace hbg::runtime
