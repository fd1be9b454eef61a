//===- tests/runtime/interval_test.cpp - Interval enclosures and tapes ----===//
//
// The promise of an enclosure is checked by sampling: for every op, random
// boxes of the kinds that break enclosures (around 0, around poles and
// extrema, wide, degenerate, with infinite bounds) and random points in
// them. The point value, computed by the tape's double evaluation as the
// generated code computes it, must lie in the interval the tape's interval
// evaluation gives; a NaN point value only in the whole line. Then
// tightness where a proof depends on it, and tapes written by hand.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Interval.h"
#include "hbg/runtime/Tape.h"

#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace hbg::runtime;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

/// v moved n doubles towards `to`.
double step(double v, int n, double to) {
  for (int i = 0; i < n; ++i)
    v = std::nextafter(v, to);
  return v;
}

/// Whether got lies within `ulps` doubles of want.
bool near(double got, double want, int ulps = 8) {
  return step(want, ulps, -kInf) <= got && got <= step(want, ulps, kInf);
}

std::string text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string text(Interval a) { return "[" + text(a.lo) + ", " + text(a.hi) + "]"; }

/// Whether a is exactly [-inf, inf]: results are never invalid intervals,
/// which Interval::isWhole() would also accept.
bool whole(Interval a) { return a.lo == -kInf && a.hi == kInf; }

/// Random numbers and intervals of the kinds that break enclosures.
class Sampler {
public:
  explicit Sampler(std::uint64_t seed) : rng_(seed) {}

  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  /// A number: small, of any scale, special, next to a multiple of pi/2
  /// (extrema of sin and cos, poles of tan), or an integer.
  double value() {
    static const double specials[] = {0.0,     -0.0,     1.0,     -1.0,     2.0,      -2.0,
                                      0.5,     -0.5,     kPi,     -kPi,     kPi / 2,  -kPi / 2,
                                      DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN, 4.9e-324, 710.0,
                                      -745.0,  1e300,    -1e300,  kInf,     -kInf};
    switch (pick(8)) {
    case 0:
      return uniform(-2, 2);
    case 1:
      return uniform(-20, 20);
    case 2:
      return (pick(2) ? 1 : -1) * std::pow(10.0, uniform(-300, 300));
    case 3:
      return specials[pick(sizeof specials / sizeof *specials)];
    case 4: {
      double at = (pick(81) - 40) * (kPi / 2);
      return pick(2) ? step(at, pick(4), pick(2) ? kInf : -kInf) : at + uniform(-1e-6, 1e-6);
    }
    case 5:
      return pick(11) - 5;
    case 6:
      return (pick(2) ? 1 : -1) * uniform(1e3, 1e8);
    default:
      return uniform(-1e-3, 1e-3);
    }
  }

  /// An interval, lo <= hi.
  Interval interval() {
    switch (pick(8)) {
    case 0:
    case 1: {
      double a = value(), b = value();
      return a <= b ? Interval{a, b} : Interval{b, a};
    }
    case 2: { // a point
      double a = value();
      return std::isinf(a) ? Interval{1, 1} : Interval{a, a};
    }
    case 3: { // a few ulps
      double a = value();
      if (std::isinf(a))
        a = 0;
      return {a, step(a, 1 + pick(8), kInf)};
    }
    case 4: { // around a point, narrow to wide
      double a = value(), w = std::pow(10.0, uniform(-12, 3));
      if (std::isinf(a))
        a = 0;
      return {a - w, a + w};
    }
    case 5: { // straddling 0
      return {-std::pow(10.0, uniform(-5, 3)), std::pow(10.0, uniform(-5, 3))};
    }
    case 6: { // an infinite bound
      double a = value();
      if (std::isinf(a))
        a = 1;
      switch (pick(5)) {
      case 0:
        return {-kInf, a};
      case 1:
        return {a, kInf};
      case 2:
        return Interval::whole();
      case 3:
        return {kInf, kInf};
      default:
        return {-kInf, -kInf};
      }
    }
    default: { // an exponent-like point: an integer or a half
      double a = (pick(41) - 20) * (pick(3) ? 1.0 : 0.5);
      return {a, a};
    }
    }
  }

  /// A point of a: an end, 0 (either sign), an integer, a random inner
  /// point; NaN too when a is the whole line, which stands for NaN.
  double pointIn(Interval a) {
    if (a.isWhole() && pick(6) == 0)
      return kNaN;
    for (int tries = 0; tries < 8; ++tries) {
      double v = 0;
      switch (pick(7)) {
      case 0:
        v = a.lo;
        break;
      case 1:
        v = a.hi;
        break;
      case 2:
        v = pick(2) ? 0.0 : -0.0;
        break;
      case 3:
        v = std::round(a.lo + uniform(0, 1) * (a.hi - a.lo));
        break;
      case 4:
        v = value();
        break;
      default: {
        double u = uniform(0, 1);
        v = a.lo * (1 - u) + a.hi * u; // no overflow of hi - lo
        break;
      }
      }
      if (a.lo <= v && v <= a.hi)
        return v;
    }
    return a.lo;
  }

private:
  std::mt19937_64 rng_;
};

/// Checks the enclosure promise of `tape` (reading x[0..box.size()) and t
/// = 0) on `boxes` random boxes of `points` points each. `boxOf` draws a
/// box; returns a description of the first failure, or "".
template <typename BoxOf>
std::string checkEnclosures(const Tape &tape, Sampler &s, int boxes, int points, BoxOf boxOf) {
  std::vector<double> scratch, x, out(tape.results.size());
  std::vector<Interval> iscratch, box, iout(tape.results.size());
  const double p[] = {0.5};
  for (int b = 0; b < boxes; ++b) {
    box = boxOf(s);
    x.resize(box.size());
    tape.evaluate(Interval{0, 0}, box.data(), p, iout.data(), iscratch);
    for (std::size_t r = 0; r < iout.size(); ++r)
      if (!(iout[r].lo <= iout[r].hi))
        return "output " + std::to_string(r) + " is the invalid interval " + text(iout[r]);
    for (int k = 0; k < points; ++k) {
      for (std::size_t i = 0; i < box.size(); ++i)
        x[i] = s.pointIn(box[i]);
      tape.evaluate(0.0, x.data(), p, out.data(), scratch);
      for (std::size_t r = 0; r < out.size(); ++r) {
        if (iout[r].contains(out[r]))
          continue;
        std::string why = "output " + std::to_string(r) + " = " + text(out[r]) + " not in " +
                          text(iout[r]) + " at x =";
        for (std::size_t i = 0; i < box.size(); ++i)
          why += " " + text(x[i]) + " in " + text(box[i]);
        return why;
      }
    }
  }
  return "";
}

/// A box of n random intervals.
auto randomBox(std::size_t n) {
  return [n](Sampler &s) {
    std::vector<Interval> box(n);
    for (Interval &a : box)
      a = s.interval();
    return box;
  };
}

Tape unaryTape(TapeOp op) { return {{{TapeOp::X, 0}, {op, 0}}, {1}}; }

Tape binaryTape(TapeOp op) { return {{{TapeOp::X, 0}, {TapeOp::X, 1}, {op, 0, 1}}, {2}}; }

/// x0 ^ c with a constant exponent (codegen's powi path for small integers).
Tape powConstTape(double c) {
  TapeInstr exponent{TapeOp::Const};
  exponent.value = c;
  return {{{TapeOp::X, 0}, exponent, {TapeOp::Pow, 0, 1}}, {2}};
}

/// c ^ x0 with a constant base (LLVM's exp2 form for powers of two).
Tape powConstBaseTape(double c) {
  TapeInstr base{TapeOp::Const};
  base.value = c;
  return {{base, {TapeOp::X, 0}, {TapeOp::Pow, 0, 1}}, {2}};
}

/// The enclosure of op over a single interval a, through a tape.
Interval unaryOf(TapeOp op, Interval a) {
  Tape tape = unaryTape(op);
  Interval r{0, 0};
  std::vector<Interval> scratch;
  tape.evaluate(Interval{0, 0}, &a, nullptr, &r, scratch);
  return r;
}

/// The point value of op at v, through a tape.
double unaryAt(TapeOp op, double v) {
  Tape tape = unaryTape(op);
  double r = 0;
  std::vector<double> scratch;
  tape.evaluate(0.0, &v, nullptr, &r, scratch);
  return r;
}

Interval powConstOf(Interval a, double c) {
  Tape tape = powConstTape(c);
  Interval r{0, 0};
  std::vector<Interval> scratch;
  tape.evaluate(Interval{0, 0}, &a, nullptr, &r, scratch);
  return r;
}

const TapeOp kUnaryOps[] = {TapeOp::Neg,  TapeOp::Sin,  TapeOp::Cos, TapeOp::Tan,
                            TapeOp::Exp,  TapeOp::Log,  TapeOp::Sqrt, TapeOp::Tanh,
                            TapeOp::Abs,  TapeOp::Sign};
const TapeOp kBinaryOps[] = {TapeOp::Add, TapeOp::Sub, TapeOp::Mul, TapeOp::Div,
                             TapeOp::Pow, TapeOp::Min, TapeOp::Max};

constexpr int kBoxes = 4000;
constexpr int kPoints = 16;

} // namespace

// --- Enclosures, by sampling ----------------------------------------------

TEST_CASE("every unary op encloses its point values") {
  Sampler s(1);
  for (TapeOp op : kUnaryOps) {
    INFO(opName(op));
    CHECK(checkEnclosures(unaryTape(op), s, kBoxes, kPoints, randomBox(1)) == "");
  }
}

TEST_CASE("every binary op encloses its point values") {
  Sampler s(2);
  for (TapeOp op : kBinaryOps) {
    INFO(opName(op));
    CHECK(checkEnclosures(binaryTape(op), s, kBoxes, kPoints, randomBox(2)) == "");
  }
}

TEST_CASE("select encloses its point values") {
  Sampler s(3);
  Tape tape{{{TapeOp::X, 0}, {TapeOp::X, 1}, {TapeOp::X, 2}, {TapeOp::Select, 0, 1, 2}}, {3}};
  CHECK(checkEnclosures(tape, s, kBoxes, kPoints, randomBox(3)) == "");
}

TEST_CASE("pow with a constant exponent encloses its point values") {
  // Integers up to 16 take the powi path, others std::pow.
  Sampler s(4);
  const double exponents[] = {0,   1,    -1,   2,    -2,  3,   -3,    4,     5,    7,
                              -7,  8,    15,   16,   -16, 17,  -17,   100,   0.5,  -0.5,
                              1.5, -2.5, 1e-3, 1./3, 1e6, 1e300, -1e300, 2.25, 1e-300};
  for (double c : exponents) {
    INFO("exponent " << text(c));
    CHECK(checkEnclosures(powConstTape(c), s, kBoxes / 4, kPoints, randomBox(1)) == "");
  }
}

TEST_CASE("pow with a constant base encloses its point values") {
  // Powers of two take LLVM's exp2 form, which rounds k * x first.
  Sampler s(9);
  const double bases[] = {2,   4,      8,      0.5, 0.125,         1024,         0x1p62,
                          0x1p63, 0x1p-62, 0x1p-63, 10,  2.718281828459045, 3,  1,
                          0,   -2,     -0.5,   1e300};
  for (double c : bases) {
    INFO("base " << text(c));
    CHECK(checkEnclosures(powConstBaseTape(c), s, kBoxes / 4, kPoints, randomBox(1)) == "");
  }
}

TEST_CASE("pow with a run-time exponent encloses its point values") {
  // Exponents that are points, often integers or halves: std::pow then
  // takes negative bases to integer powers.
  Sampler s(5);
  auto box = [](Sampler &s) {
    Interval e = s.interval();
    if (s.pick(2)) {
      double k = s.pick(41) - 20;
      e = {k, k};
    }
    return std::vector<Interval>{s.interval(), e};
  };
  CHECK(checkEnclosures(binaryTape(TapeOp::Pow), s, kBoxes, kPoints, box) == "");
}

TEST_CASE("an instruction used twice is one value: x * x and x - x") {
  Sampler s(6);
  Tape square{{{TapeOp::X, 0}, {TapeOp::Mul, 0, 0}}, {1}};
  Tape zero{{{TapeOp::X, 0}, {TapeOp::Sub, 0, 0}}, {1}};
  CHECK(checkEnclosures(square, s, kBoxes, kPoints, randomBox(1)) == "");
  CHECK(checkEnclosures(zero, s, kBoxes, kPoints, randomBox(1)) == "");
}

TEST_CASE("random tapes enclose their point values") {
  // Compositions: NaN and infinities from one op must reach the next as
  // the whole line, and enclosures of shared operands stay valid.
  Sampler s(7);
  for (int n = 0; n < 1500; ++n) {
    Tape tape;
    tape.code.push_back({TapeOp::X, 0});
    tape.code.push_back({TapeOp::X, 1});
    tape.code.push_back({TapeOp::P, 0});
    TapeInstr c{TapeOp::Const};
    c.value = s.pick(2) ? s.pick(7) - 3 : s.value();
    tape.code.push_back(c);
    for (int k = 0; k < 8; ++k) {
      auto operand = [&] { return static_cast<std::uint32_t>(s.pick(int(tape.code.size()))); };
      int kind = s.pick(3);
      TapeInstr in{kUnaryOps[0]};
      if (kind == 0)
        in = {kUnaryOps[s.pick(10)], operand()};
      else if (kind == 1)
        in = {kBinaryOps[s.pick(7)], operand(), operand()};
      else
        in = {TapeOp::Select, operand(), operand(), operand()};
      tape.code.push_back(in);
    }
    tape.results = {std::uint32_t(tape.code.size() - 1), std::uint32_t(tape.code.size() - 3)};
    REQUIRE(tape.verify() == "");
    std::string failure = checkEnclosures(tape, s, 8, 8, randomBox(2));
    if (!failure.empty()) {
      std::string listing;
      for (const TapeInstr &in : tape.code)
        listing += std::string(" ") + opName(in.op) + "(" + std::to_string(in.a) + "," +
                   std::to_string(in.b) + "," + std::to_string(in.c) + ")";
      INFO("tape:" << listing);
      CHECK(failure == "");
      break;
    }
  }
}

// --- Tightness ------------------------------------------------------------

TEST_CASE("a point interval gives the point value within a few ulps") {
  Sampler s(8);
  for (int n = 0; n < 20000; ++n) {
    double v = s.pick(2) ? s.uniform(-50, 50) : s.value();
    for (TapeOp op : kUnaryOps) {
      double want = unaryAt(op, v);
      Interval got = unaryOf(op, {v, v});
      INFO(opName(op) << " at " << text(v) << ": " << text(got));
      if (std::isnan(want))
        CHECK(whole(got));
      else
        CHECK((near(got.lo, want) && near(got.hi, want)));
    }
  }
}

TEST_CASE("sin and cos are tight around their extrema") {
  Interval r = sin(Interval{0, kPi});
  CHECK(r.hi == 1);
  CHECK(r.lo <= 0);
  CHECK(r.lo > -1e-300);

  r = cos(Interval{0, kPi});
  CHECK(r.lo == -1);
  CHECK(r.hi == 1);

  r = cos(Interval{-0.5, 0.5});
  CHECK(r.hi == 1);
  CHECK(near(r.lo, std::cos(0.5)));

  // No extremum inside: the values at the ends.
  r = sin(Interval{0.1, 0.2});
  CHECK(near(r.lo, std::sin(0.1)));
  CHECK(near(r.hi, std::sin(0.2)));
  r = cos(Interval{4, 5}); // past the minimum at pi, before 2 pi
  CHECK(near(r.lo, std::cos(4.0)));
  CHECK(near(r.hi, std::cos(5.0)));

  r = sin(Interval{1, 2}); // the maximum at pi/2
  CHECK(r.hi == 1);
  CHECK(near(r.lo, std::sin(1.0)));
  r = sin(Interval{-2, -1}); // the minimum at -pi/2
  CHECK(r.lo == -1);
  CHECK(near(r.hi, std::sin(-1.0)));

  // Far out, over a period, or unbounded.
  CHECK(sin(Interval{1000 * kPi + 1, 1000 * kPi + 2}).hi == 1);
  CHECK(near(sin(Interval{1000 * kPi + 1, 1000 * kPi + 2}).lo, std::sin(1000 * kPi + 1)));
  CHECK(text(sin(Interval{0, 7})) == "[-1, 1]");
  CHECK(text(cos(Interval{1e15, 1e15 + 1})) == "[-1, 1]");
  CHECK(whole(sin(Interval{0, kInf})));
}

TEST_CASE("tan is the whole line exactly when a pole may be inside") {
  Interval r = tan(Interval{-1, 1});
  CHECK(near(r.lo, std::tan(-1.0)));
  CHECK(near(r.hi, std::tan(1.0)));
  r = tan(Interval{2, 4}); // between the poles at pi/2 and 3 pi/2
  CHECK(near(r.lo, std::tan(2.0)));
  CHECK(near(r.hi, std::tan(4.0)));
  CHECK(whole(tan(Interval{1, 2})));
  CHECK(whole(tan(Interval{1.5, 1.6}))); // the one pole at pi/2
  CHECK(whole(tan(Interval{-2, -1})));
  CHECK(whole(tan(Interval{4, 5}))); // 3 pi/2
}

TEST_CASE("powers straddling 0") {
  Interval r = powConstOf({-1, 2}, 2);
  CHECK(r.lo == 0);
  CHECK(near(r.hi, 4, 2));
  r = powConstOf({-3, 2}, 4);
  CHECK(r.lo == 0);
  CHECK(near(r.hi, 81, 2));
  r = powConstOf({-1, 2}, 3);
  CHECK(near(r.lo, -1, 2));
  CHECK(near(r.hi, 8, 2));
  r = powConstOf({-1, 2}, -2);
  CHECK(near(r.lo, 0.25, 2));
  CHECK(r.hi == kInf);
  CHECK(whole(powConstOf({-1, 2}, -1)));
  r = powConstOf({-4, -2}, -1);
  CHECK(near(r.lo, -0.5, 2));
  CHECK(near(r.hi, -0.25, 2));
  CHECK(text(powConstOf(Interval::whole(), 0)) == "[1, 1]"); // powi(NaN, 0) is 1

  r = powConstOf({0, 4}, 0.5);
  CHECK(r.lo == 0);
  CHECK(near(r.hi, 2));
  CHECK(whole(powConstOf({-1, 4}, 0.5)));
  r = powConstOf({-2, 3}, 17); // std::pow, odd integer
  CHECK(near(r.lo, std::pow(-2.0, 17)));
  CHECK(near(r.hi, std::pow(3.0, 17)));
  r = powConstOf({-2, 3}, 18);
  CHECK(r.lo == 0);
  CHECK(near(r.hi, std::pow(3.0, 18)));
}

TEST_CASE("pow with an interval exponent") {
  Interval r = pow(Interval{0.5, 2}, Interval{-1, 1});
  CHECK(near(r.lo, 0.5));
  CHECK(near(r.hi, 2));
  r = pow(Interval{-2, -2}, Interval{3, 3});
  CHECK(near(r.lo, -8));
  CHECK(near(r.hi, -8));
  CHECK(whole(pow(Interval{-2, -1}, Interval{2, 3}))); // pow(-1.5, 2.5) is NaN
  // pow(-0, -1) is -inf and pow(+0, -1) is inf.
  CHECK(whole(pow(Interval{0, 1}, Interval{-1, -1})));
  CHECK(pow(Interval{0, 1}, Interval{-3, -0.5}).lo == -kInf);
  // pow(x, 0) and pow(1, y) are 1 for NaN too.
  CHECK(text(pow(Interval::whole(), Interval{0, 0})) == "[1, 1]");
  CHECK(text(pow(Interval{1, 1}, Interval::whole())) == "[1, 1]");
  CHECK(whole(pow(Interval{2, 3}, Interval::whole())));
}

TEST_CASE("domains: the whole line where the point value may be NaN") {
  CHECK(whole(log(Interval{-1, 1})));
  Interval r = log(Interval{0, 1});
  CHECK(r.lo == -kInf);
  CHECK(near(r.hi, 0));
  CHECK(whole(sqrt(Interval{-1, 4})));
  CHECK(whole(sqrt(Interval{-1e-300, 4})));
  r = sqrt(Interval{0, 4});
  CHECK(r.lo == 0);
  CHECK(near(r.hi, 2, 1));
  r = exp(Interval{-kInf, 0});
  CHECK(r.lo == 0);
  CHECK(near(r.hi, 1));
  CHECK(whole(exp(Interval::whole()))); // may be NaN

  CHECK(whole(div(Interval{1, 2}, Interval{-1, 1})));
  CHECK(whole(div(Interval{1, 2}, Interval{0, 1})));
  r = div(Interval{1, 2}, Interval{2, 4});
  CHECK(near(r.lo, 0.25, 1));
  CHECK(near(r.hi, 1, 1));
  CHECK(whole(div(Interval{1, kInf}, Interval{1, kInf}))); // inf / inf
  CHECK(whole(mul(Interval{0, 0}, Interval{1, kInf})));     // 0 * inf
  CHECK(whole(add(Interval{kInf, kInf}, Interval{-kInf, 0})));
  CHECK(whole(sub(Interval{0, kInf}, Interval{0, kInf})));
  r = add(Interval{1, kInf}, Interval{1, 2});
  CHECK(r.hi == kInf);
  CHECK(near(r.lo, 2, 1));

  // Invalid intervals count as the whole line.
  CHECK(Interval{kNaN, 1}.isWhole());
  CHECK(Interval{2, 1}.isWhole());
  CHECK(whole(sin(Interval{kNaN, 1})));
  CHECK(text(min(Interval{kNaN, 1}, Interval{1, 2})) == "[-inf, 2]");
  CHECK(text(select(Interval{2, 1}, Interval{1, 2}, Interval{5, 6})) == "[1, 6]");
  CHECK(whole(Interval::point(kNaN)));
  CHECK(Interval::whole().contains(kNaN));
  CHECK_FALSE(Interval{-kInf, 0}.contains(kNaN));
}

TEST_CASE("exact ops: neg, abs, sign, min, max, select, mul") {
  CHECK(text(neg(Interval{-1, 2})) == "[-2, 1]");
  CHECK(text(abs(Interval{-3, 2})) == "[0, 3]");
  CHECK(text(abs(Interval{-3, -2})) == "[2, 3]");
  CHECK(text(sign(Interval{0, 0})) == "[0, 0]");
  CHECK(text(sign(Interval{1, 2})) == "[1, 1]");
  CHECK(text(sign(Interval{-2, -1})) == "[-1, -1]");
  CHECK(text(sign(Interval{0, 1})) == "[0, 1]");
  CHECK(text(sign(Interval{-1, 0})) == "[-1, 0]");
  CHECK(text(sign(Interval{-1, 1})) == "[-1, 1]");
  CHECK(text(sign(Interval::whole())) == "[-1, 1]");

  CHECK(text(min(Interval{1, 4}, Interval{2, 3})) == "[1, 3]");
  CHECK(text(max(Interval{1, 4}, Interval{2, 3})) == "[2, 4]");
  // fmin(NaN, y) is y: a whole operand does not make the result whole.
  CHECK(text(min(Interval::whole(), Interval{1, 2})) == "[-inf, 2]");
  CHECK(text(max(Interval::whole(), Interval{1, 2})) == "[1, inf]");

  Interval a{1, 2}, b{5, 6};
  CHECK(text(select(Interval{1, 2}, a, b)) == "[1, 2]");
  CHECK(text(select(Interval{-1, 0}, a, b)) == "[5, 6]");
  CHECK(text(select(Interval{-1, 1}, a, b)) == "[1, 6]");
  CHECK(text(select(Interval::whole(), a, b)) == "[1, 6]"); // NaN selects b

  Interval r = mul(Interval{-1, 2}, Interval{-1, 2});
  CHECK(near(r.lo, -2, 1));
  CHECK(near(r.hi, 4, 1));
  r = square(Interval{-1, 2});
  CHECK(r.lo == 0);
  CHECK(near(r.hi, 4, 1));
  CHECK(text(hull(Interval{1, 2}, Interval{4, 5})) == "[1, 5]");
}

// --- Tapes ----------------------------------------------------------------

namespace {

/// x0 * sin(t) - p0.
Tape guardTape() {
  return {{{TapeOp::X, 0},
           {TapeOp::Time},
           {TapeOp::Sin, 1},
           {TapeOp::Mul, 0, 2},
           {TapeOp::P, 0},
           {TapeOp::Sub, 3, 4}},
          {5}};
}

} // namespace

TEST_CASE("a guard tape on doubles and on intervals") {
  Tape tape = guardTape();
  REQUIRE(tape.verify() == "");
  const double p[] = {3};

  std::vector<double> scratch;
  const double x[] = {1.5};
  double out = 0;
  tape.evaluate(0.25, x, p, &out, scratch);
  CHECK(out == 1.5 * std::sin(0.25) - 3); // the same operations, bit for bit

  // Over t in [0, 0.5] and x0 in [1, 2] the guard stays below zero.
  std::vector<Interval> iscratch;
  const Interval ix[] = {{1, 2}};
  Interval iout;
  tape.evaluate(Interval{0, 0.5}, ix, p, &iout, iscratch);
  CHECK(iout.lo <= -3);
  CHECK(near(iout.lo, -3));
  CHECK(near(iout.hi, 2 * std::sin(0.5) - 3));
  CHECK(iout.hi < 0);

  // With t up to 2 it may reach sin = 1, and 2 * 1 - 3 is still negative;
  // with x0 up to 4 it may not be.
  tape.evaluate(Interval{0, 2}, ix, p, &iout, iscratch);
  CHECK(near(iout.hi, -1));
  const Interval wide[] = {{1, 4}};
  tape.evaluate(Interval{0, 2}, wide, p, &iout, iscratch);
  CHECK(iout.lo < 0);
  CHECK(iout.hi > 0);
}

TEST_CASE("evaluation reuses its scratch") {
  Tape tape = guardTape();
  const double p[] = {3}, x[] = {1.5};
  std::vector<double> scratch;
  double out;
  tape.evaluate(0.25, x, p, &out, scratch);
  const double *data = scratch.data();
  tape.evaluate(0.5, x, p, &out, scratch);
  CHECK(scratch.data() == data);
  CHECK(scratch.size() == tape.code.size());

  std::vector<Interval> iscratch;
  const Interval ix[] = {{1, 2}};
  Interval iout;
  tape.evaluate(Interval{0, 1}, ix, p, &iout, iscratch);
  const Interval *idata = iscratch.data();
  tape.evaluate(Interval{1, 2}, ix, p, &iout, iscratch);
  CHECK(iscratch.data() == idata);
}

TEST_CASE("several results, in order") {
  // out = {x1 - x0, x0, 2}
  TapeInstr two{TapeOp::Const};
  two.value = 2;
  Tape tape{{{TapeOp::X, 0}, {TapeOp::X, 1}, {TapeOp::Sub, 1, 0}, two}, {2, 0, 3}};
  REQUIRE(tape.verify() == "");
  const double x[] = {1, 5};
  double out[3];
  std::vector<double> scratch;
  tape.evaluate(0.0, x, nullptr, out, scratch);
  CHECK(out[0] == 4);
  CHECK(out[1] == 1);
  CHECK(out[2] == 2);
}

TEST_CASE("point semantics follow the generated code") {
  std::vector<double> scratch;
  auto at = [&](const Tape &tape, double x0, double x1 = 0, double x2 = 0) {
    const double x[] = {x0, x1, x2};
    double out;
    tape.evaluate(0.0, x, nullptr, &out, scratch);
    return out;
  };
  // Small constant integer exponents: powi's chain of squares.
  const double v = 1.1;
  CHECK(at(powConstTape(2), v) == v * v);
  CHECK(at(powConstTape(3), v) == v * (v * v));
  CHECK(at(powConstTape(5), v) == v * ((v * v) * (v * v)));
  CHECK(at(powConstTape(-2), v) == 1 / (v * v));
  CHECK(at(powConstTape(0), kNaN) == 1);
  CHECK(powi(v, 6) == (v * v) * ((v * v) * (v * v)));
  // The forms LLVM rewrites pow into: sqrt for the exponent 0.5, exp2 for
  // a power of two as the base.
  CHECK(at(powConstTape(0.5), v) == std::sqrt(v));
  CHECK(at(powConstTape(0.5), -kInf) == kInf);
  CHECK(std::signbit(at(powConstTape(0.5), -0.0)) == false);
  CHECK(at(powConstBaseTape(8), v) == std::exp2(v * 3));
  CHECK(at(powConstBaseTape(0.25), v) == std::exp2(v * -2));
  CHECK(at(powConstBaseTape(0x1p63), v) == std::pow(0x1p63, v)); // 2^63 is not rewritten
  CHECK(at(powConstBaseTape(10), v) == std::pow(10.0, v));
  // Other constants and run-time exponents: std::pow.
  CHECK(at(powConstTape(0.5), v) == std::pow(v, 0.5));
  CHECK(at(powConstTape(17), v) == std::pow(v, 17.0));
  CHECK(at(binaryTape(TapeOp::Pow), v, 3) == std::pow(v, 3.0));
  CHECK(at(binaryTape(TapeOp::Pow), -2, 3) == -8);
  CHECK(std::isnan(at(binaryTape(TapeOp::Pow), -2, 0.5)));

  CHECK(at(unaryTape(TapeOp::Sign), kNaN) == 0);
  CHECK(at(unaryTape(TapeOp::Sign), -0.0) == 0);
  CHECK(at(unaryTape(TapeOp::Sign), -3) == -1);
  CHECK(at(binaryTape(TapeOp::Min), kNaN, 1) == 1);
  CHECK(at(binaryTape(TapeOp::Max), 1, kNaN) == 1);
  Tape select{{{TapeOp::X, 0}, {TapeOp::X, 1}, {TapeOp::X, 2}, {TapeOp::Select, 0, 1, 2}}, {3}};
  CHECK(at(select, 1, 10, 20) == 10);
  CHECK(at(select, 0, 10, 20) == 20);
  CHECK(at(select, kNaN, 10, 20) == 20);
}

TEST_CASE("xRead and readsX") {
  Tape tape{{{TapeOp::X, 3}, {TapeOp::X, 1}, {TapeOp::Add, 0, 1}, {TapeOp::X, 3}}, {2}};
  CHECK(tape.xRead() == std::vector<std::uint32_t>{1, 3});
  CHECK(tape.readsX());
  Tape clock{{{TapeOp::Time}, {TapeOp::P, 0}, {TapeOp::Sub, 0, 1}}, {2}};
  CHECK(clock.xRead().empty());
  CHECK_FALSE(clock.readsX());
  CHECK_FALSE(Tape{}.readsX());
}

TEST_CASE("varying instructions, and evaluation of them alone") {
  // sin(t * (2 p0)) * x0 - cos(p1): 2 p0 and cos(p1) depend on p alone.
  TapeInstr two{TapeOp::Const};
  two.value = 2;
  Tape tape{{{TapeOp::P, 0},
             two,
             {TapeOp::Mul, 0, 1},
             {TapeOp::Time},
             {TapeOp::Mul, 3, 2},
             {TapeOp::Sin, 4},
             {TapeOp::X, 0},
             {TapeOp::Mul, 5, 6},
             {TapeOp::P, 1},
             {TapeOp::Cos, 8},
             {TapeOp::Sub, 7, 9}},
            {10, 9}};
  REQUIRE(tape.verify() == "");
  const std::vector<std::uint32_t> varying = tape.varying();
  CHECK(varying == std::vector<std::uint32_t>{3, 4, 5, 6, 7, 10});
  CHECK(Tape{{{TapeOp::P, 0}, {TapeOp::Cos, 0}}, {1}}.varying().empty());

  // After a full evaluation, the varying instructions alone give the
  // same enclosures and slopes as a full one, box after box.
  const double p[] = {1.5, 0.3};
  std::vector<Interval> full, part, fullSlopes, partSlopes;
  Interval outFull[2], outPart[2], dFull[2], dPart[2];
  const Interval x0[] = {{1, 2}}, xdot0[] = {{-1, 1}};
  tape.evaluateSlope(Interval{0, 0.1}, x0, xdot0, p, outPart, dPart, part, partSlopes);
  for (double a : {0.2, 0.7, 1.3, 2.9}) {
    const Interval x[] = {{a, a + 0.5}}, xdot[] = {{-a, 2 * a}};
    Interval t{a, a + 0.25};
    tape.evaluateSlope(t, x, xdot, p, outFull, dFull, full, fullSlopes);
    tape.evaluateSlope(t, x, xdot, p, outPart, dPart, part, partSlopes, &varying);
    for (int i = 0; i < 2; ++i) {
      CHECK(outPart[i].lo == outFull[i].lo);
      CHECK(outPart[i].hi == outFull[i].hi);
      CHECK(dPart[i].lo == dFull[i].lo);
      CHECK(dPart[i].hi == dFull[i].hi);
    }
    tape.evaluate(t, x, p, outFull, full);
    tape.evaluate(t, x, p, outPart, part, &varying);
    CHECK(outPart[0].lo == outFull[0].lo);
    CHECK(outPart[0].hi == outFull[0].hi);
  }
  // The cos(p1) result is kept, not recomputed: a changed p1 shows only
  // after a full evaluation.
  const double q[] = {1.5, 2.0};
  tape.evaluate(Interval{0, 1}, x0, q, outPart, part, &varying);
  CHECK(outPart[1].lo <= std::cos(0.3));
  CHECK(outPart[1].hi >= std::cos(0.3));
  tape.evaluate(Interval{0, 1}, x0, q, outPart, part);
  CHECK(outPart[1].hi < 0);
}

TEST_CASE("verify") {
  CHECK(guardTape().verify() == "");
  CHECK(Tape{}.verify() == "");

  Tape forward{{{TapeOp::X, 0}, {TapeOp::Mul, 0, 2}, {TapeOp::Time}}, {1}};
  CHECK(forward.verify() == "instruction 1 (mul) reads instruction 2, which does not precede it");
  Tape self{{{TapeOp::Sin, 0}}, {0}};
  CHECK(self.verify() == "instruction 0 (sin) reads instruction 0, which does not precede it");
  Tape third{{{TapeOp::X, 0}, {TapeOp::X, 1}, {TapeOp::Select, 0, 1, 5}}, {2}};
  CHECK(third.verify() == "instruction 2 (select) reads instruction 5, which does not precede it");
  // Operands past an op's arity are not read, so not checked.
  Tape unused{{{TapeOp::X, 0}, {TapeOp::Neg, 0, 9, 9}}, {1}};
  CHECK(unused.verify() == "");

  Tape result{{{TapeOp::X, 0}, {TapeOp::Neg, 0}}, {1, 2}};
  CHECK(result.verify() == "result 1 is instruction 2, past the end of the tape (2 instructions)");
  Tape unknown{{{TapeOp::X, 0}, {static_cast<TapeOp>(200), 0}}, {1}};
  CHECK(unknown.verify() == "instruction 1 has an unknown op (200)");
}
