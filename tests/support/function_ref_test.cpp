//===- tests/support/function_ref_test.cpp - FunctionRef ------------------===//

#include "hbg/support/FunctionRef.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>

namespace {
double twice(hbg::FunctionRef<double(double)> f, double x) { return f(f(x)); }
int square(int v) { return v * v; }
} // namespace

TEST_CASE("function_ref: calls the callable it refers to, captures and all") {
  double a = 1, b = 2, c = 3, d = 4; // more than std::function keeps inline
  auto affine = [&](double x) { return a * x + b + c - d; };
  CHECK(twice(affine, 1.0) == doctest::Approx(3.0));
  a = 2; // a reference: sees the change
  CHECK(twice(affine, 1.0) == doctest::Approx(7.0));

  // Mutable state in the callable is the callable's own.
  int calls = 0;
  auto counting = [calls](double x) mutable {
    ++calls;
    return x + calls;
  };
  CHECK(twice(counting, 0.0) == doctest::Approx(3.0));
  CHECK(twice(counting, 0.0) == doctest::Approx(7.0));

  // Function pointers, std::function, and conversions of the result.
  auto pointer = &square; // a function pointer is a callable object
  hbg::FunctionRef<int(int)> fp = pointer;
  CHECK(fp(7) == 49);
  std::function<double(double)> sf = [](double x) { return -x; };
  CHECK(twice(sf, 5.0) == 5.0);
  hbg::FunctionRef<std::string(const char *)> make = [](const char *s) { return std::string(s); };
  CHECK(make("bond") == "bond");

  // Copies refer to the same callable.
  hbg::FunctionRef<double(double)> r = affine, copy = r;
  CHECK(copy(0.0) == r(0.0));
}
