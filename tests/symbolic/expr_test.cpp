#include "hbg/symbolic/Expr.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace hbg::sym;

namespace {
struct Fixture {
  ExprContext ctx;
  SymbolId xs = ctx.addSymbol("x", SymbolKind::State, 0);
  SymbolId ks = ctx.addSymbol("k", SymbolKind::Parameter, 0);
  ExprId x = ctx.ref(xs), k = ctx.ref(ks);
  double eval(ExprId e, double xv, double kv, double t = 0) {
    return ctx.evaluate(e, [&](SymbolId s) {
      return s == xs ? xv : s == ks ? kv : t;
    });
  }
};
} // namespace

TEST_CASE_FIXTURE(Fixture, "hash-consing shares equal subexpressions") {
  ExprId a = ctx.mul(k, x);
  ExprId b = ctx.mul(x, k);
  CHECK(a == b);
  std::size_t before = ctx.size();
  ExprId c = ctx.add(ctx.mul(k, x), ctx.constant(1));
  CHECK(ctx.size() == before + 2); // the constant and the sum, nothing else
  CHECK(ctx.countNodes({c, a}) == 5);
}

TEST_CASE_FIXTURE(Fixture, "the store counts its nodes by op, each once") {
  CHECK(ctx.count(Op::Abs) == 0);
  ExprId a = ctx.unary(Op::Abs, x);
  CHECK(ctx.unary(Op::Abs, x) == a); // found, not built again
  CHECK(ctx.count(Op::Abs) == 1);
  ctx.max(x, k);
  CHECK(ctx.count(Op::Max) == 1);
  CHECK(ctx.count(Op::Min) == 0);
  CHECK(ctx.count(Op::Symbol) == 2);
}

TEST_CASE_FIXTURE(Fixture, "neutral elements and constants fold") {
  CHECK(ctx.add(x, ctx.constant(0)) == x);
  CHECK(ctx.mul(ctx.constant(1), x) == x);
  CHECK(ctx.isConst(ctx.mul(ctx.constant(0), x), 0));
  CHECK(ctx.sub(x, x) == ctx.constant(0));
  CHECK(ctx.neg(ctx.neg(x)) == x);
  CHECK(ctx.div(x, ctx.constant(1)) == x);
  CHECK(ctx.pow(x, ctx.constant(1)) == x);
  CHECK(ctx.isConst(ctx.add(ctx.constant(2), ctx.mul(ctx.constant(3), ctx.constant(4))), 14));
  CHECK(ctx.isConst(ctx.unary(Op::Exp, ctx.constant(0)), 1));
  // Division by zero stays symbolic: the run-time error is clearer.
  CHECK_FALSE(ctx.isConst(ctx.div(ctx.constant(1), ctx.constant(0))));
  CHECK(ctx.add(x, ctx.neg(k)) == ctx.sub(x, k));
}

TEST_CASE_FIXTURE(Fixture, "printing uses minimal parentheses") {
  CHECK(ctx.print(ctx.mul(k, ctx.sub(x, ctx.constant(1)))) == "k * (x - 1)");
  CHECK(ctx.print(ctx.sub(x, ctx.sub(k, x))) == "x - (k - x)");
  CHECK(ctx.print(ctx.add(ctx.mul(k, x), ctx.constant(2))) == "2 + k * x");
  CHECK(ctx.print(ctx.div(x, ctx.mul(k, x))) == "x / (k * x)");
  CHECK(ctx.print(ctx.pow(ctx.add(x, k), ctx.constant(2))) == "(k + x)^2");
  CHECK(ctx.print(ctx.unary(Op::Sin, ctx.time())) == "sin(time)");
  CHECK(ctx.print(ctx.neg(ctx.add(x, k))) == "-(k + x)");
  CHECK(ctx.print(ctx.constant(0.1)) == "0.1");
}

TEST_CASE_FIXTURE(Fixture, "evaluation") {
  ExprId e = ctx.add(ctx.mul(k, ctx.unary(Op::Tanh, x)), ctx.max(x, k));
  CHECK(eval(e, 0.5, 2.0) == doctest::Approx(2 * std::tanh(0.5) + 2.0));
  CHECK(eval(ctx.unary(Op::Sign, x), -3, 0) == -1);
  CHECK(eval(ctx.time(), 0, 0, 7.5) == 7.5);
}

TEST_CASE_FIXTURE(Fixture, "derivatives match finite differences") {
  std::vector<ExprId> fs = {
      ctx.mul(k, ctx.pow(x, ctx.constant(3))),
      ctx.div(ctx.unary(Op::Sin, x), ctx.add(ctx.constant(2), ctx.unary(Op::Cos, x))),
      ctx.unary(Op::Exp, ctx.mul(k, x)),
      ctx.unary(Op::Log, ctx.add(ctx.constant(3), x)),
      ctx.unary(Op::Sqrt, ctx.add(ctx.constant(3), x)),
      ctx.unary(Op::Tanh, x),
      ctx.unary(Op::Tan, x),
      ctx.mul(x, ctx.unary(Op::Abs, x)),
      ctx.pow(ctx.add(ctx.constant(2), x), x),
      ctx.min(ctx.mul(ctx.constant(2), x), ctx.constant(0.3)),
      ctx.max(ctx.mul(ctx.constant(2), x), ctx.constant(0.3)),
  };
  for (double xv : {-0.7, 0.1, 0.4}) {
    for (ExprId f : fs) {
      ExprId df = ctx.derivative(f, xs);
      double h = 1e-6;
      double fd = (eval(f, xv + h, 1.5) - eval(f, xv - h, 1.5)) / (2 * h);
      CHECK(eval(df, xv, 1.5) == doctest::Approx(fd).epsilon(1e-6));
    }
  }
  CHECK(ctx.isConst(ctx.derivative(k, xs), 0));
}

TEST_CASE_FIXTURE(Fixture, "substitution and dependencies") {
  ExprId e = ctx.mul(k, ctx.add(x, ctx.constant(1)));
  CHECK(ctx.dependsOn(e, xs));
  CHECK_FALSE(ctx.isParametric(e));
  ExprId s = ctx.substitute(e, {{xs.index, ctx.constant(2)}});
  CHECK(ctx.isParametric(s));
  CHECK(ctx.print(s) == "3 * k");
  CHECK(eval(s, 0, 2) == 6);
}

TEST_CASE_FIXTURE(Fixture, "select folds, evaluates, prints and differentiates") {
  ExprId s = ctx.select(x, k, ctx.mul(k, x));
  CHECK(ctx.select(ctx.constant(1), x, k) == x);
  CHECK(ctx.select(ctx.constant(0), x, k) == k);
  CHECK(ctx.select(x, k, k) == k);
  CHECK(eval(s, 2, 3) == 3);
  CHECK(eval(s, -2, 3) == -6);
  CHECK(ctx.print(s) == "(x > 0 ? k : k * x)");
  ExprId ds = ctx.derivative(s, xs);
  CHECK(eval(ds, 2, 3) == 0);
  CHECK(eval(ds, -2, 3) == 3);
  ExprId sub = ctx.substitute(s, {{xs.index, ctx.constant(-1)}});
  CHECK(ctx.print(sub) == "-k");
  CHECK(ctx.symbolsOf(s).size() == 2);
}

TEST_CASE_FIXTURE(Fixture, "the rounding magnitude bounds the rounding error of an evaluation") {
  // A difference that is zero in exact arithmetic: its value is a few ulps,
  // its magnitude the size of its terms.
  ExprId gap = ctx.sub(ctx.sub(x, k), ctx.constant(0.1));
  ExprId m = ctx.roundingMagnitude(gap);
  double value = eval(gap, 0.2 + 0.1, 0.2);
  CHECK(std::abs(value) < 1e-16);
  CHECK(eval(m, 0.2 + 0.1, 0.2) == doctest::Approx(0.6));
  // Products multiply magnitudes; a function adds its slope times its
  // argument's magnitude (sin of a large argument loses absolute accuracy).
  CHECK(eval(ctx.roundingMagnitude(ctx.mul(ctx.neg(x), k)), -2, 3) == doctest::Approx(6));
  ExprId wave = ctx.unary(Op::Sin, ctx.mul(k, ctx.time()));
  double t = 1000, w = 2 * M_PI * 50;
  CHECK(eval(ctx.roundingMagnitude(wave), 0, w, t) ==
        doctest::Approx(std::abs(std::sin(w * t)) + std::abs(std::cos(w * t)) * w * t));
  // Never below the value's own size, and never negative.
  for (double xv : {-3.0, -0.5, 0.0, 0.25, 7.0}) {
    ExprId e = ctx.div(ctx.add(x, ctx.unary(Op::Exp, x)), ctx.add(k, ctx.constant(2)));
    CHECK(eval(ctx.roundingMagnitude(e), xv, -1) >= std::abs(eval(e, xv, -1)));
  }
}
