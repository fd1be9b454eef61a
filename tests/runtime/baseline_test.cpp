// Baseline code (runtime/Baseline.h) against the tape's interpreter: every
// op, on values where IEEE arithmetic and libm are easiest to get subtly
// wrong (NaN, signed zeros, infinities, subnormals), must give the same
// bits, since a run switches between them and LLVM's code mid-way.

#include "hbg/runtime/Baseline.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using hbg::runtime::BaselineCode;
using hbg::runtime::Tape;
using hbg::runtime::TapeInstr;
using hbg::runtime::TapeOp;

namespace {

TapeInstr leaf(TapeOp op, std::uint32_t a = 0, double value = 0) {
  TapeInstr in;
  in.op = op;
  in.a = a;
  in.value = value;
  return in;
}

TapeInstr node(TapeOp op, std::uint32_t a, std::uint32_t b = 0, std::uint32_t c = 0) {
  TapeInstr in;
  in.op = op;
  in.a = a;
  in.b = b;
  in.c = c;
  return in;
}

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// A tape reading x0, x1, p0 and t (instructions 0 to 3) and the
/// constants 0.5, 2, -3 and 8 (4 to 7), with every op on them as outputs.
Tape everyOp() {
  Tape t;
  t.code = {leaf(TapeOp::X, 0),         leaf(TapeOp::X, 1),        leaf(TapeOp::P, 0),
            leaf(TapeOp::Time),         leaf(TapeOp::Const, 0, 0.5), leaf(TapeOp::Const, 0, 2),
            leaf(TapeOp::Const, 0, -3), leaf(TapeOp::Const, 0, 8)};
  auto add = [&](TapeInstr in) {
    t.code.push_back(in);
    t.results.push_back(static_cast<std::uint32_t>(t.code.size() - 1));
  };
  for (TapeOp op : {TapeOp::Neg, TapeOp::Sin, TapeOp::Cos, TapeOp::Tan, TapeOp::Exp, TapeOp::Log,
                    TapeOp::Sqrt, TapeOp::Tanh, TapeOp::Abs, TapeOp::Sign, TapeOp::Floor}) {
    add(node(op, 0));
    add(node(op, 3));
  }
  for (TapeOp op : {TapeOp::Add, TapeOp::Sub, TapeOp::Mul, TapeOp::Div, TapeOp::Min, TapeOp::Max,
                    TapeOp::Pow}) {
    add(node(op, 0, 1));
    add(node(op, 1, 0));
    add(node(op, 2, 0));
    add(node(op, 0, 0));
  }
  // Pow's constant forms: powi, sqrt, exp2 of a power of two, and pow.
  for (std::uint32_t e : {4u, 5u, 6u})
    add(node(TapeOp::Pow, 0, e));
  add(node(TapeOp::Pow, 7, 1));
  add(node(TapeOp::Select, 0, 1, 2));
  add(node(TapeOp::Select, 1, 3, 0));
  // A chain, so that operands come from xmm0 as well as from memory.
  add(node(TapeOp::Mul, static_cast<std::uint32_t>(t.code.size() - 1), 2));
  add(node(TapeOp::Sub, static_cast<std::uint32_t>(t.code.size() - 1), 0));
  return t;
}

} // namespace

TEST_CASE("baseline code gives the interpreter's bits on every op") {
  Tape tape = everyOp();
  REQUIRE(tape.verify().empty());
  std::shared_ptr<const BaselineCode> code = BaselineCode::translate({&tape});
#if defined(__x86_64__) && defined(__linux__)
  REQUIRE(code.get() != nullptr);
#else
  if (!code)
    return; // the interpreter runs instead
#endif
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> values = {0.0,  -0.0, 1.0,  -1.5, 0.3, 7.25, -2.0, 1e300,
                                      -1e-310, tiny, inf, -inf, nan, -nan};
  std::size_t n = tape.results.size();
  std::vector<double> viaTape(n), viaCode(n), scratch,
      slots(BaselineCode::valuesNeeded(tape));
  int differing = 0;
  for (double a : values)
    for (double b : values)
      for (double p : {0.5, -2.0, nan})
        for (double t : {0.0, -0.0, 2.5}) {
          double x[2] = {a, b};
          tape.evaluate(t, x, &p, viaTape.data(), scratch);
          code->entry(0)(x, &p, viaCode.data(), slots.data(), t);
          for (std::size_t i = 0; i < n; ++i)
            if (!same(viaTape[i], viaCode[i]) && ++differing <= 5) {
              CAPTURE(i);
              CAPTURE(viaTape[i]);
              CAPTURE(viaCode[i]);
              CAPTURE(p);
              CAPTURE(a);
              CAPTURE(b);
              CAPTURE(t);
              CHECK(false);
            }
        }
  CHECK(differing == 0);
}

TEST_CASE("several tapes in one mapping, and empty ones") {
  Tape empty, sum;
  sum.code = {leaf(TapeOp::X, 0), leaf(TapeOp::P, 1), node(TapeOp::Add, 0, 1)};
  sum.results = {2, 0, 2};
  std::shared_ptr<const BaselineCode> code = BaselineCode::translate({&empty, &sum, &empty});
  if (!code)
    return;
  double x = 1.25, p[2] = {0, 0.5}, out[3] = {0, 0, 0};
  std::vector<double> slots(BaselineCode::valuesNeeded(sum));
  code->entry(0)(&x, p, out, slots.data(), 0);
  CHECK(out[0] == 0); // writes nothing
  code->entry(1)(&x, p, out, slots.data(), 0);
  CHECK(out[0] == 1.75);
  CHECK(out[1] == 1.25);
  CHECK(out[2] == 1.75);
}

TEST_CASE("a tape that is not valid is not translated") {
  Tape bad;
  bad.code = {node(TapeOp::Add, 1, 2)}; // reads instructions after it
  bad.results = {0};
  CHECK_FALSE(static_cast<bool>(BaselineCode::translate({&bad})));
}
