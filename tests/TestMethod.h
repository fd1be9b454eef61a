//===- tests/TestMethod.h - The method the example tests run with ---------===//
//
// The example tests check every example against its closed form with the
// method HBG_TEST_METHOD names (`auto`, the default, when unset); ctest
// runs them once per method that must pass them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

inline hbg::runtime::Method testMethod() {
  const char *name = std::getenv("HBG_TEST_METHOD");
  hbg::runtime::Method m = hbg::runtime::Method::Auto;
  if (name && !hbg::runtime::parseMethod(name, m))
    throw std::invalid_argument(std::string("HBG_TEST_METHOD: unknown method ") + name);
  return m;
}

/// The methods a switched or sliding model must pass with at default
/// options: auto, dopri5 and rosenbrock.
inline const std::vector<hbg::runtime::Method> kEveryMethod = {
    hbg::runtime::Method::Auto, hbg::runtime::Method::DormandPrince,
    hbg::runtime::Method::Rosenbrock};
