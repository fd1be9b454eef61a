#include "hbg/codegen/CodeGen.h"
#include "hbg/codegen/Tape.h"

#include "Partition.h" // white-box: slicing bounds

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace hbg::sym;
using namespace hbg::codegen;

namespace {

/// Relative comparison at the tolerance the simulator relies on.
bool close(double a, double b, double tol = 1e-10) {
  if (a == b || (std::isnan(a) && std::isnan(b)))
    return true;
  return std::fabs(a - b) <= tol * std::max(1.0, std::max(std::fabs(a), std::fabs(b)));
}

std::size_t countOf(const std::string &text, const std::string &needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// Number of lines of `ir` defining a function whose name starts with `prefix`
/// (O2 may change the calling convention, so only the name is matched).
std::size_t countDefinitions(const std::string &ir, const std::string &prefix) {
  std::size_t n = 0;
  std::istringstream lines(ir);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("define ", 0) == 0 && line.find("@" + prefix) != std::string::npos)
      ++n;
  return n;
}

/// A context with `nx` states and `np` parameters. State i lives in slot
/// nx-1-i (reversed) so that a lowering ignoring slots would be caught.
struct Model {
  ExprContext ctx;
  std::vector<SymbolId> xs, ps;
  std::vector<ExprId> x, p;
  ExprId t;

  Model(int nx, int np) {
    for (int i = 0; i < nx; ++i) {
      xs.push_back(ctx.addSymbol("x" + std::to_string(i), SymbolKind::State, nx - 1 - i));
      x.push_back(ctx.ref(xs.back()));
    }
    for (int i = 0; i < np; ++i) {
      ps.push_back(ctx.addSymbol("p" + std::to_string(i), SymbolKind::Parameter, i));
      p.push_back(ctx.ref(ps.back()));
    }
    t = ctx.time();
  }

  /// Argument arrays in slot order from values in declaration order.
  std::vector<double> stateArray(const std::vector<double> &byIndex) const {
    std::vector<double> a(byIndex.size());
    for (std::size_t i = 0; i < byIndex.size(); ++i)
      a[ctx.symbol(xs[i]).slot] = byIndex[i];
    return a;
  }

  double eval(ExprId e, double tv, const std::vector<double> &xa,
              const std::vector<double> &pa) const {
    return ctx.evaluate(e, [&](SymbolId s) {
      const Symbol &sym = ctx.symbol(s);
      switch (sym.kind) {
      case SymbolKind::Time:
        return tv;
      case SymbolKind::State:
        return xa[sym.slot];
      case SymbolKind::Parameter:
        return pa[sym.slot];
      default:
        return std::numeric_limits<double>::quiet_NaN();
      }
    });
  }
};

std::vector<double> call(CompiledFn fn, double t, const std::vector<double> &xa,
                         const std::vector<double> &pa, std::size_t n) {
  REQUIRE(static_cast<bool>(fn));
  std::vector<double> out(n, std::numeric_limits<double>::quiet_NaN());
  fn(t, xa.data(), pa.data(), out.data());
  return out;
}

CodeGenOptions options(unsigned optLevel, std::size_t maxNodes) {
  CodeGenOptions o;
  o.optLevel = optLevel;
  o.maxNodesPerFunction = maxNodes;
  return o;
}

/// One expression per Op, with the value computed by hand.
struct Case {
  const char *what;
  ExprId expr;
  double expected;
};

} // namespace

TEST_CASE("every op matches the evaluator and libm") {
  Model m(3, 2);
  ExprContext &c = m.ctx;
  const double tv = 0.4, a = 0.7, b = -1.3, z = 0.0, k = 2.5, q = 0.3;
  std::vector<double> xa = m.stateArray({a, b, z}), pa = {k, q};
  ExprId x0 = m.x[0], x1 = m.x[1], x2 = m.x[2], p0 = m.p[0], p1 = m.p[1];

  std::vector<Case> cases = {
      {"const", c.constant(3.25), 3.25},
      {"time", m.t, tv},
      {"state", x1, b},
      {"parameter", p1, q},
      {"neg", c.neg(x0), -a},
      {"sin", c.unary(Op::Sin, x0), std::sin(a)},
      {"cos", c.unary(Op::Cos, x1), std::cos(b)},
      {"tan", c.unary(Op::Tan, x0), std::tan(a)},
      {"exp", c.unary(Op::Exp, x1), std::exp(b)},
      {"log", c.unary(Op::Log, p0), std::log(k)},
      {"sqrt", c.unary(Op::Sqrt, p0), std::sqrt(k)},
      {"tanh", c.unary(Op::Tanh, x1), std::tanh(b)},
      {"abs", c.unary(Op::Abs, x1), 1.3},
      {"sign<0", c.unary(Op::Sign, x1), -1.0},
      {"sign>0", c.unary(Op::Sign, x0), 1.0},
      {"sign=0", c.unary(Op::Sign, x2), 0.0},
      {"add", c.add(x0, x1), a + b},
      {"sub", c.sub(x0, p0), a - k},
      {"mul", c.mul(x1, p0), b * k},
      {"div", c.div(x1, p0), b / k},
      {"pow general", c.pow(p0, x0), std::pow(k, a)},
      {"pow time", c.pow(p0, m.t), std::pow(k, tv)},
      {"pow 2", c.pow(x1, c.constant(2)), b * b},
      {"pow 3", c.pow(x1, c.constant(3)), b * b * b},
      {"pow -2", c.pow(x1, c.constant(-2)), 1 / (b * b)},
      {"pow 0.5", c.pow(p0, c.constant(0.5)), std::sqrt(k)},
      {"pow 40", c.pow(x1, c.constant(40)), std::pow(b, 40)},
      {"min", c.min(x0, x1), b},
      {"max", c.max(x0, x1), a},
      {"select taken", c.select(x0, p0, p1), k},
      {"select not taken", c.select(x1, p0, p1), q},
      {"select at zero", c.select(x2, p0, p1), q},
      {"nested", c.mul(c.unary(Op::Sin, c.mul(p0, m.t)), c.add(x0, c.unary(Op::Exp, x1))),
       std::sin(k * tv) * (a + std::exp(b))},
  };
  std::vector<ExprId> outputs;
  for (const Case &kase : cases)
    outputs.push_back(kase.expr);

  for (unsigned level : {0u, 2u}) {
    CAPTURE(level);
    CodeGenerator gen(options(level, 2000));
    CompiledModule mod = gen.compile(c, {{"ops", outputs}});
    std::vector<double> out = call(mod.lookup("ops"), tv, xa, pa, outputs.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(cases[i].what);
      CAPTURE(out[i]);
      CHECK(close(out[i], cases[i].expected));
      CHECK(close(out[i], m.eval(cases[i].expr, tv, xa, pa)));
    }
  }
}

TEST_CASE("tapes give the compiled code's bits, quick or optimised, pow's forms included") {
  // Modes run on tapes until LLVM's code replaces them mid-run, so the two
  // must agree to the last bit. Constant forms of pow are where an
  // optimiser could diverge: InstCombine's library-call simplifier
  // rewrites pow(x, 0.5) into sqrt and pow(2^k, y) into exp2(k y), which
  // differ from pow in the last bits (exp2 reads k y rounded); the
  // lowering calls pow nobuiltin, so no pass does, and the tape calls pow.
  Model m(2, 1);
  ExprContext &c = m.ctx;
  ExprId x0 = m.x[0], x1 = m.x[1], p0 = m.p[0];
  std::vector<ExprId> outputs = {
      c.pow(x0, c.constant(0.5)),  c.pow(c.constant(8), x1),     c.pow(c.constant(0.25), x1),
      c.pow(c.constant(1024), x1), c.pow(x0, c.constant(2)),     c.pow(x0, c.constant(-3)),
      c.pow(x0, c.constant(17)),   c.pow(x0, x1),                c.pow(p0, c.constant(1.5)),
      c.unary(Op::Sin, c.mul(x0, x1)), c.div(c.unary(Op::Tanh, x1), c.add(x0, p0)),
      c.select(c.sub(x0, x1), c.min(x0, p0), c.max(x1, p0)),
  };
  std::optional<hbg::runtime::Tape> tape = hbg::codegen::buildTape(c, outputs);
  REQUIRE(tape.has_value());
  // Optimised and quick code (CodeGenOptions::quick) alike, in one JIT
  // session as a mode's two compilations are, and under O2 as well.
  std::shared_ptr<hbg::codegen::JitSession> session = hbg::codegen::JitSession::create();
  for (int variant : {0, 1, 2}) {
    CAPTURE(variant);
    CodeGenOptions opts;
    opts.quick = variant == 1;
    if (variant == 2)
      opts.passes = "default<O2>";
    CodeGenerator gen(opts);
    CompiledModule mod = gen.compile(gen.lower(c, {{"f", outputs}}), session);
    CompiledFn fn = mod.lookup("f");
    std::vector<double> scratch, viaTape(outputs.size());
    std::uint64_t seed = 12345;
    auto uniform = [&](double lo, double hi) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      return lo + (hi - lo) * static_cast<double>(seed >> 11) * 0x1p-53;
    };
    int differing = 0;
    for (int k = 0; k < 2000; ++k) {
      std::vector<double> xa = m.stateArray({uniform(0.01, 50), uniform(-30, 30)});
      std::vector<double> pa = {uniform(0.5, 4)};
      std::vector<double> viaJit = call(fn, 0.0, xa, pa, outputs.size());
      tape->evaluate(0.0, xa.data(), pa.data(), viaTape.data(), scratch);
      for (std::size_t i = 0; i < outputs.size(); ++i)
        if (std::memcmp(&viaJit[i], &viaTape[i], sizeof(double)) != 0 && ++differing <= 5) {
          CAPTURE(i);
          CAPTURE(viaJit[i]);
          CAPTURE(viaTape[i]);
          CHECK(false);
        }
    }
    CHECK(differing == 0);
  }
}

TEST_CASE("a pass pipeline of LLVM's runs instead of hbg's; a bad one is an error") {
  Model m(1, 1);
  ExprContext &c = m.ctx;
  std::vector<ExprId> outputs = {c.pow(c.constant(8), m.x[0])};
  CodeGenOptions o2;
  o2.passes = "default<O2>";
  // pow is called nobuiltin: even O2's library-call simplifier, which
  // would make pow(8, x) an exp2(3 x), leaves it alone.
  std::string ir = CodeGenerator(o2).emitIR(c, {{"f", outputs}});
  CHECK(ir.find("exp2") == std::string::npos);
  CHECK(ir.find("@pow(") != std::string::npos);
  CHECK(ir.find("nobuiltin") != std::string::npos);
  CodeGenOptions bad;
  bad.passes = "no-such-pass";
  CHECK_THROWS_WITH_AS(CodeGenerator(bad).compile(c, {{"f", outputs}}),
                       doctest::Contains("no-such-pass"), std::runtime_error);
}

TEST_CASE("sign, min and max agree with the evaluator on NaN and signed zero") {
  Model m(2, 0);
  ExprContext &c = m.ctx;
  std::vector<ExprId> outputs = {c.unary(Op::Sign, m.x[0]), c.min(m.x[0], m.x[1]),
                                 c.max(m.x[0], m.x[1]), c.unary(Op::Abs, m.x[0])};
  CompiledModule mod = CodeGenerator().compile(c, {{"f", outputs}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double v : {nan, -0.0, 0.0, -2.0}) {
    CAPTURE(v);
    std::vector<double> xa = m.stateArray({v, 1.5}), pa = {0.0};
    std::vector<double> out = call(mod.lookup("f"), 0, xa, pa, outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      CAPTURE(i);
      CHECK(close(out[i], m.eval(outputs[i], 0, xa, pa)));
    }
  }
}

TEST_CASE("parameters are arguments: new values need no recompilation") {
  Model m(1, 2);
  ExprContext &c = m.ctx;
  ExprId f = c.add(c.mul(c.neg(m.p[0]), m.x[0]), c.mul(m.p[1], c.unary(Op::Sin, m.t)));
  CompiledModule mod = CodeGenerator().compile(c, {{"rhs", {f}}});
  CompiledFn rhs = mod.lookup("rhs");
  std::vector<double> xa = {2.0};
  for (std::vector<double> pa : {std::vector<double>{1.0, 0.0}, {3.0, 0.5}, {-1.0, 2.0}}) {
    double expected = -pa[0] * 2.0 + pa[1] * std::sin(1.5);
    CHECK(close(call(rhs, 1.5, xa, pa, 1)[0], expected));
  }
}

TEST_CASE("emitIR shows one public function per spec and no fast-math") {
  Model m(2, 1);
  ExprContext &c = m.ctx;
  ExprId f0 = c.mul(m.p[0], c.unary(Op::Tan, m.x[0]));
  ExprId f1 = c.pow(m.x[1], c.constant(3));
  std::vector<FunctionSpec> fns = {{"rhs", {f0, f1}}, {"jac", {c.unary(Op::Tanh, m.x[1])}}};

  std::string optimised = CodeGenerator().emitIR(c, fns);
  CHECK(optimised.find("define void @rhs(") != std::string::npos);
  CHECK(optimised.find("define void @jac(") != std::string::npos);
  CHECK(optimised.find("noalias") != std::string::npos);
  CHECK(optimised.find(" fast ") == std::string::npos);
  CHECK(optimised.find("reassoc") == std::string::npos);
  CHECK(optimised.find("target datalayout") != std::string::npos);

  std::string raw = CodeGenerator(options(0, 2000)).emitIR(c, fns);
  CHECK(raw.find("call double @tan(") != std::string::npos);
  CHECK(raw.find("call double @tanh(") != std::string::npos);
  CHECK(raw.find("@llvm.powi.f64.i32") != std::string::npos);
}

TEST_CASE("shared subexpressions are lowered once") {
  Model m(1, 1);
  ExprContext &c = m.ctx;
  ExprId s = c.unary(Op::Sin, c.mul(m.p[0], m.x[0]));
  std::vector<ExprId> outputs = {c.add(s, c.constant(1)), c.mul(s, m.t), c.unary(Op::Exp, s)};
  std::string raw = CodeGenerator(options(0, 2000)).emitIR(c, {{"f", outputs}});
  CHECK(countOf(raw, "call double @llvm.sin.f64(") == 1);
  CHECK(countOf(raw, "load double") == 2); // x0 and p0, once each
}

TEST_CASE("splitting bounds every helper and keeps the results") {
  Model m(5, 2);
  ExprContext &c = m.ctx;
  // A shared chain every output uses, so that slices must recompute it.
  ExprId shared = m.p[1];
  for (int i = 0; i < 10; ++i)
    shared = c.add(c.unary(Op::Cos, shared), c.constant(0.1 * i));
  std::vector<ExprId> outputs;
  for (int i = 0; i < 300; ++i) {
    ExprId term = c.unary(Op::Sin, c.add(c.mul(m.x[i % 5], m.p[0]), c.constant(i)));
    outputs.push_back(
        c.add(c.mul(term, shared), c.div(m.x[(i + 1) % 5], c.add(m.p[1], c.constant(i)))));
  }
  const std::size_t maxNodes = 60;
  REQUIRE(c.countNodes(outputs) > maxNodes);

  std::vector<OutputSlice> slices = partitionOutputs(c, outputs, maxNodes);
  CHECK(slices.size() > 1);
  std::size_t next = 0;
  for (const OutputSlice &s : slices) {
    CHECK(s.begin == next);
    CHECK(s.end > s.begin);
    std::vector<ExprId> part(outputs.begin() + s.begin, outputs.begin() + s.end);
    CHECK(c.countNodes(part) <= maxNodes);
    next = s.end;
  }
  CHECK(next == outputs.size());

  std::vector<FunctionSpec> fns = {{"rhs", outputs}};
  CodeGenerator splitting(options(2, maxNodes)), whole(options(2, 1000000));
  std::string ir = splitting.emitIR(c, fns);
  CHECK(ir.find("define void @rhs(") != std::string::npos);
  CHECK(countDefinitions(ir, "rhs.part") == slices.size());
  CHECK(countDefinitions(ir, "rhs(") == 1);
  CHECK(countOf(ir, "define internal") == slices.size()); // helpers stay private
  CHECK(whole.emitIR(c, fns).find(".part") == std::string::npos);

  CompiledModule a = splitting.compile(c, fns), b = whole.compile(c, fns);
  std::vector<double> xa = m.stateArray({0.1, -0.2, 0.3, 1.4, -2.5}), pa = {1.7, 0.9};
  std::vector<double> split = call(a.lookup("rhs"), 0.0, xa, pa, outputs.size());
  std::vector<double> unsplit = call(b.lookup("rhs"), 0.0, xa, pa, outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    CAPTURE(i);
    CHECK(split[i] == unsplit[i]); // same operations, no fast-math: bit-identical
    CHECK(close(split[i], m.eval(outputs[i], 0.0, xa, pa)));
  }
}

TEST_CASE("an output larger than the bound gets a helper of its own") {
  Model m(1, 0);
  ExprContext &c = m.ctx;
  ExprId big = m.x[0];
  for (int i = 0; i < 50; ++i)
    big = c.add(c.mul(big, c.constant(0.5)), c.constant(i));
  std::vector<ExprId> outputs = {m.x[0], big, c.neg(m.x[0])};
  std::vector<OutputSlice> slices = partitionOutputs(c, outputs, 10);
  REQUIRE(slices.size() == 3);
  CHECK(slices[1].begin == 1);
  CHECK(slices[1].end == 2);

  CompiledModule mod = CodeGenerator(options(2, 10)).compile(c, {{"f", outputs}});
  std::vector<double> xa = {3.0}, pa = {0.0};
  std::vector<double> out = call(mod.lookup("f"), 0, xa, pa, 3);
  CHECK(out[0] == 3.0);
  CHECK(close(out[1], m.eval(big, 0, xa, pa)));
  CHECK(out[2] == -3.0);
}

TEST_CASE("modules are independent: same names, any destruction order") {
  Model m(1, 0);
  ExprContext &c = m.ctx;
  ExprId plusOne = c.add(m.x[0], c.constant(1));
  ExprId timesTen = c.mul(m.x[0], c.constant(10));
  CodeGenerator gen;
  std::vector<double> xa = {2.0}, pa = {0.0};

  auto first = std::make_unique<CompiledModule>(gen.compile(c, {{"f", {plusOne}}}));
  auto second = std::make_unique<CompiledModule>(gen.compile(c, {{"f", {timesTen}}}));
  CHECK(call(first->lookup("f"), 0, xa, pa, 1)[0] == 3.0);
  CHECK(call(second->lookup("f"), 0, xa, pa, 1)[0] == 20.0);
  first.reset(); // the older one goes first...
  CHECK(call(second->lookup("f"), 0, xa, pa, 1)[0] == 20.0);

  auto third = std::make_unique<CompiledModule>(gen.compile(c, {{"f", {plusOne}}}));
  second.reset(); // ...or last
  CHECK(call(third->lookup("f"), 0, xa, pa, 1)[0] == 3.0);

  CompiledModule moved = std::move(*third);
  CHECK_FALSE(static_cast<bool>(third->lookup("f")));
  third.reset();
  CHECK(call(moved.lookup("f"), 0, xa, pa, 1)[0] == 3.0);
  CHECK_FALSE(static_cast<bool>(moved.lookup("g")));
  CHECK_FALSE(static_cast<bool>(CompiledModule().lookup("f")));
}

TEST_CASE("an empty function writes nothing") {
  Model m(1, 0);
  CompiledModule mod = CodeGenerator().compile(m.ctx, {{"nothing", {}}});
  CompiledFn fn = mod.lookup("nothing");
  REQUIRE(static_cast<bool>(fn));
  double x = 1, out = 42;
  fn(0, &x, nullptr, &out);
  CHECK(out == 42);
}

TEST_CASE("internal errors throw std::runtime_error") {
  Model m(1, 0);
  ExprContext &c = m.ctx;
  SymbolId z = c.addSymbol("z", SymbolKind::Variable, 0);
  ExprId bad = c.add(m.x[0], c.ref(z));
  CodeGenerator gen;
  CHECK_THROWS_AS(gen.compile(c, {{"f", {m.x[0], bad}}}), std::runtime_error);
  CHECK_THROWS_AS(gen.emitIR(c, {{"f", {bad}}}), std::runtime_error);
  CHECK_THROWS_AS(gen.compile(c, {{"f", {m.x[0]}}, {"f", {m.x[0]}}}), std::runtime_error);
  CHECK_THROWS_AS(gen.compile(c, {{"f", {ExprId{}}}}), std::runtime_error);
  CHECK_THROWS_AS(gen.compile(c, {{"sin", {m.x[0]}}}), std::runtime_error);
  CHECK_THROWS_AS(gen.compile(c, {{"", {m.x[0]}}}), std::runtime_error);
  // The generator stays usable afterwards.
  CompiledModule mod = gen.compile(c, {{"f", {m.x[0]}}});
  std::vector<double> xa = {5.0}, pa = {0.0};
  CHECK(call(mod.lookup("f"), 0, xa, pa, 1)[0] == 5.0);
}

TEST_CASE("a few thousand outputs compile under the default bound") {
  Model m(50, 10);
  ExprContext &c = m.ctx;
  std::vector<ExprId> outputs;
  for (int i = 0; i < 3000; ++i) {
    ExprId a = m.x[i % 50], b = m.x[(i * 7 + 3) % 50], k = m.p[i % 10];
    outputs.push_back(c.sub(c.mul(k, c.unary(Op::Tanh, c.sub(a, b))),
                            c.div(c.pow(a, c.constant(2)), c.add(k, c.constant(i)))));
  }
  CompiledModule mod = CodeGenerator().compile(c, {{"big", outputs}});
  std::vector<double> xa(50), pa(10);
  for (int i = 0; i < 50; ++i)
    xa[i] = std::sin(i + 1.0);
  for (int i = 0; i < 10; ++i)
    pa[i] = 1.0 + i;
  std::vector<double> out = call(mod.lookup("big"), 0, xa, pa, outputs.size());
  for (std::size_t i = 0; i < outputs.size(); i += 97) {
    CAPTURE(i);
    CHECK(close(out[i], m.eval(outputs[i], 0, xa, pa)));
  }
}
