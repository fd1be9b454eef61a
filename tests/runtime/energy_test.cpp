//===- tests/runtime/energy_test.cpp - Stored energy from a storage law ---===//
//
// runtime::storedEnergy on hand-written law tapes, against the integrals
// of the laws in closed form.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Energy.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace hbg::runtime;

namespace {

StorageLaw law(StorageLaw::Form form, std::vector<TapeInstr> code) {
  StorageLaw l;
  l.form = form;
  l.law.code = std::move(code);
  l.law.results = {std::uint32_t(l.law.code.size() - 1)};
  REQUIRE(l.law.verify().empty());
  return l;
}

} // namespace

TEST_CASE("a linear law stores x^2 / 2k exactly") {
  // e = q / p[0]: a 1 mF capacitor.
  StorageLaw c = law(StorageLaw::Form::Linear,
                     {{TapeOp::X, 0}, {TapeOp::P, 0}, {TapeOp::Div, 0, 1}});
  std::vector<double> scratch;
  const double p[] = {1e-3};
  for (double q : {0.0, 2e-3, -7e-6, 3.5})
    CHECK(storedEnergy(c, 0, q, p, scratch) == doctest::Approx(q * q / (2 * p[0])).epsilon(1e-15));
  // The same law integrated numerically gives the same value.
  c.form = StorageLaw::Form::Integral;
  CHECK(storedEnergy(c, 0, 2e-3, p, scratch) == doctest::Approx(2e-3).epsilon(1e-14));
}

TEST_CASE("a nonlinear law is integrated from zero") {
  std::vector<double> scratch;
  const double p[] = {0.5};
  // A hardening spring, e = k q^3: E = k q^4 / 4 (quadrature exact to rounding).
  StorageLaw cubic = law(StorageLaw::Form::Integral,
                         {{TapeOp::X, 0},
                          {TapeOp::Const, 0, 0, 0, 3},
                          {TapeOp::Pow, 0, 1},
                          {TapeOp::P, 0},
                          {TapeOp::Mul, 3, 2}});
  for (double q : {2.0, -1.5, 1e-4})
    CHECK(storedEnergy(cubic, 0, q, p, scratch) ==
          doctest::Approx(0.5 * std::pow(q, 4) / 4).epsilon(1e-13));
  // A saturating inductor, f = tanh(p): E = log(cosh(p)).
  StorageLaw sat = law(StorageLaw::Form::Integral, {{TapeOp::X, 0}, {TapeOp::Tanh, 0}});
  for (double x : {0.3, -2.0, 8.0})
    CHECK(storedEnergy(sat, 0, x, p, scratch) ==
          doctest::Approx(std::log(std::cosh(x))).epsilon(1e-12));
  // A gap spring, e = max(q - g, 0): E = (q - g)^2 / 2 past the gap. The
  // kink inside the interval is refined around.
  StorageLaw gap = law(StorageLaw::Form::Integral,
                       {{TapeOp::X, 0},
                        {TapeOp::Const, 0, 0, 0, 0.97},
                        {TapeOp::Sub, 0, 1},
                        {TapeOp::Const, 0, 0, 0, 0},
                        {TapeOp::Max, 2, 3}});
  for (double q : {1.0, 2.0, 0.5})
    CHECK(storedEnergy(gap, 0, q, p, scratch) ==
          doctest::Approx(q > 0.97 ? (q - 0.97) * (q - 0.97) / 2 : 0).epsilon(1e-10));
  // A law that is NaN on the way says so.
  StorageLaw bad = law(StorageLaw::Form::Integral, {{TapeOp::X, 0}, {TapeOp::Log, 0}});
  CHECK(std::isnan(storedEnergy(bad, 0, -1.0, p, scratch)));
}
