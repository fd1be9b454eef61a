//===- tests/runtime/rootfind_test.cpp - Locating sign changes -----------===//
//
// Every result is checked against the promises of locateSignChange
// (bracket within tol, each end on its side, the evaluation budget) by
// `locate`; the cases add what each function shows.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/RootFind.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

using namespace hbg::runtime;

namespace {

/// The bound the budget promises: ceil(log2((b - a) / tol)) + 3.
std::size_t bound(double a, double b, double tol) {
  return static_cast<std::size_t>(std::ceil(std::log2((b - a) / tol))) + 3;
}

/// Locates the sign change of f in [a, b] with the events' tolerance
/// (1e-12 of the interval unless given), checks everything the result
/// promises, and returns it.
Bracket locate(const std::function<double(double)> &f, double a, double b, double tol = 0) {
  if (tol == 0)
    tol = 1e-12 * (b - a);
  double fa = f(a), fb = f(b);
  std::size_t calls = 0;
  auto counted = [&](double x) {
    ++calls;
    return f(x);
  };
  Bracket br = locateSignChange(counted, a, fa, b, fb, tol);
  CHECK(br.evaluations == calls);
  CHECK(br.evaluations <= bound(a, b, tol));
  CHECK(a <= br.lo);
  CHECK(br.lo <= br.hi);
  CHECK(br.hi <= b);
  if (br.lo == br.hi && br.flo == 0) {
    CHECK(br.fhi == 0);
    CHECK(f(br.lo) == 0);
    return br;
  }
  // Within tol, or as close as doubles get.
  CHECK((br.hi - br.lo <= tol || br.hi == std::nextafter(br.lo, b)));
  CHECK(br.flo == f(br.lo));
  CHECK(br.fhi == f(br.hi));
  CHECK((br.flo < 0) == (fa < 0)); // lo on a's side, hi on b's
  CHECK((br.fhi < 0) == (fb < 0));
  CHECK(br.flo != 0);
  CHECK(br.fhi != 0);
  return br;
}

} // namespace

TEST_CASE("rootfind: polynomial roots to tolerance") {
  const double sqrt2 = std::sqrt(2.0);
  Bracket br = locate([](double x) { return x * x - 2; }, 0, 2);
  CHECK(br.lo <= sqrt2);
  CHECK(br.hi >= sqrt2);
  CHECK(br.hi - sqrt2 <= 2e-12);

  // Wallis's cubic x^3 - 2x - 5.
  const double wallis = 2.0945514815423265;
  br = locate([](double x) { return (x * x - 2) * x - 5; }, 2, 3);
  CHECK(std::fabs(br.hi - wallis) <= 1e-12);

  // Decreasing through the root: a's side is positive.
  br = locate([](double x) { return 1 - x * x; }, 0.25, 3);
  CHECK(br.flo > 0);
  CHECK(br.fhi < 0);
  CHECK(std::fabs(br.hi - 1) <= 3e-12);
}

TEST_CASE("rootfind: transcendental roots to tolerance") {
  const double pi = 3.14159265358979323846;
  Bracket br = locate([](double x) { return std::sin(x); }, 3, 4);
  CHECK(std::fabs(br.hi - pi) <= 1e-12);
  br = locate([](double x) { return std::cos(x) - x; }, 0, 1);
  CHECK(std::fabs(br.hi - 0.7390851332151607) <= 1e-12);
  br = locate([](double x) { return std::exp(x) - 10; }, 0, 10);
  CHECK(std::fabs(br.hi - std::log(10.0)) <= 1e-11);
  // An event time far from zero: the absolute tolerance is below the
  // spacing of the doubles there, so the bracket ends at neighbours.
  br = locate([](double t) { return std::tanh(t - 1e6 - 3e-4); }, 1e6, 1e6 + 1e-3);
  CHECK(br.hi == std::nextafter(br.lo, 2e6));
}

TEST_CASE("rootfind: hi is always on b's side") {
  // Lines and curves through roots all over [0, 1], both orientations; the
  // root itself on b's side or not depending on rounding.
  for (int k = 1; k < 50; ++k) {
    double r = k / 50.0 + 1e-3 * std::sin(k);
    for (double s : {1.0, -1.0}) {
      CAPTURE(r);
      CAPTURE(s);
      Bracket br = locate([=](double x) { return s * (x - r); }, 0, 1);
      CHECK(s * br.fhi >= 0);
      br = locate([=](double x) { return s * std::expm1(3 * (x - r)); }, 0, 1);
      CHECK(s * br.fhi >= 0);
      CHECK(std::fabs(br.hi - r) <= 2e-12);
    }
  }
}

TEST_CASE("rootfind: a jump without a zero is bracketed within tol") {
  const double c = 0.3;
  for (double s : {1.0, -1.0}) {
    CAPTURE(s);
    auto step = [=](double x) { return s * (x < c ? -1.0 - x : 2.0 + x); };
    Bracket br = locate(step, 0, 1);
    CHECK(br.lo < c);
    CHECK(br.hi >= c);
    // Lopsided values: the secant keeps landing on one side of the jump.
    auto lopsided = [=](double x) { return s * (x < c ? -1e-9 : 1e6); };
    br = locate(lopsided, 0, 1);
    CHECK(br.lo < c);
    CHECK(br.hi >= c);
  }
}

TEST_CASE("rootfind: flat and steep roots converge within the budget") {
  const double r = 0.3141592653589793;
  // Multiple roots make regula falsi linear and slow; the safeguards hold
  // the count to the budget (checked by locate) however flat.
  for (int power : {3, 5, 9, 15}) {
    CAPTURE(power);
    Bracket br = locate([=](double x) { return std::pow(x - r, power); }, 0, 1);
    CHECK(br.evaluations <= 43);
    CHECK(br.hi >= r);
    CHECK(br.lo <= r);
    // The root at 0, near one end of the interval.
    br = locate([=](double x) { return std::pow(x, power); }, -0.1, 2.9);
    CHECK(br.evaluations <= 43);
    CHECK(br.hi - br.lo <= 3e-12);
  }
  // Steep: the cube root (infinite slope at the root), and an arctangent
  // that is all but a jump.
  Bracket br = locate([=](double x) { return std::cbrt(x - r); }, 0, 1);
  CHECK(br.evaluations <= 43);
  br = locate([=](double x) { return std::atan(1e9 * (x - r)); }, 0, 1);
  CHECK(br.evaluations <= 43);
}

TEST_CASE("rootfind: exact zeros at the ends and inside") {
  auto line = [](double x) { return x - 0.5; };
  std::size_t calls = 0;
  auto counted = [&](double x) {
    ++calls;
    return line(x);
  };
  Bracket br = locateSignChange(counted, -1, -1.5, 0.5, 0.0, 1e-12);
  CHECK(br.lo == 0.5);
  CHECK(br.hi == 0.5);
  CHECK(br.fhi == 0);
  CHECK(br.evaluations == 0);
  br = locateSignChange(counted, 0.5, 0.0, 2, 1.5, 1e-12);
  CHECK(br.lo == 0.5);
  CHECK(br.hi == 0.5);
  CHECK(br.evaluations == 0);
  CHECK(calls == 0);
  // Inside: the secant of a line lands on its zero at once.
  br = locate(line, 0, 1);
  CHECK(br.lo == 0.5);
  CHECK(br.hi == 0.5);
  CHECK(br.evaluations == 1);
}

TEST_CASE("rootfind: a linear function's zero is found exactly, and hi stays there") {
  // The events' margin of a guard on time, with zero moved to b's side.
  auto margin = [](double t) {
    double m = t - 0.3;
    return m == 0 ? std::numeric_limits<double>::denorm_min() : m;
  };
  Bracket br = locate(margin, 0.2, 0.35);
  CHECK(br.hi == 0.3);
  CHECK(br.lo < 0.3);
  CHECK(br.evaluations <= 6);
}

TEST_CASE("rootfind: smooth functions take far fewer evaluations than bisection") {
  // Bisection needs 40 for a tolerance of 1e-12 of the interval.
  struct Case {
    const char *name;
    std::function<double(double)> f;
    double a, b;
  };
  for (const Case &c : {Case{"x^2 - 2", [](double x) { return x * x - 2; }, 0, 2},
                        Case{"cos x - x", [](double x) { return std::cos(x) - x; }, 0, 1},
                        Case{"exp x - 10", [](double x) { return std::exp(x) - 10; }, 0, 10},
                        Case{"ball", [](double t) { return 1 + 2 * t - 4.905 * t * t; }, 0.5, 1}}) {
    std::string name = c.name;
    CAPTURE(name);
    Bracket br = locate(c.f, c.a, c.b);
    CHECK(br.evaluations <= 16);
  }
}
