//===- runtime/Tape.cpp - Straight-line guard programs --------------------===//
//
// Two evaluators over the same instructions. The double one mirrors
// compiler/codegen/Lowering.cpp op for op, so that the runtime sees the
// values the JIT computes. The interval one only proves things: each op's
// enclosure (Interval.cpp) is rounded outward and turns every case where
// the double evaluator may produce NaN into the whole line, so a guard is
// never wrongly proven to keep its sign.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Tape.h"

#include "IntervalArith.h"
#include "TapeFunctions.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace hbg::runtime {

namespace {


/// Constant integer exponents up to this magnitude take codegen's powi
/// path. Must match kMaxPowiExponent in compiler/codegen/Lowering.cpp.
constexpr double kMaxPowiExponent = 16;

/// How a Pow is enclosed. Codegen's emitPow picks powi for small constant
/// integer exponents and libm's pow otherwise, called nobuiltin so that no
/// pass rewrites it, so the double evaluator calls powi or std::pow
/// exactly as the compiled code does. The interval
/// evaluators enclose two constant forms through functions equal to pow
/// there, with tighter bounds: sqrt for an exponent of 0.5 (pow's own
/// enclosure is the whole line below 0) and exp2(k y) for a base of 2^k.
/// Each widens its bounds outward (Interval.cpp), which covers pow's own
/// rounding as well.
enum class PowForm {
  Powi, ///< powi(x, k)
  Sqrt, ///< pow(x, 0.5): x == -inf ? inf : fabs(sqrt(x))
  Exp2, ///< pow(2^k, y) for 1 <= |k| <= 62: exp2(y * k)
  Pow,  ///< pow(x, y)
};

/// The form of Pow instruction `in`, and its k.
PowForm powForm(const std::vector<TapeInstr> &code, const TapeInstr &in, double &k) {
  const TapeInstr &base = code[in.a], &exponent = code[in.b];
  if (exponent.op == TapeOp::Const) {
    double c = exponent.value;
    if (std::fabs(c) <= kMaxPowiExponent && c == std::trunc(c)) {
      k = c;
      return PowForm::Powi;
    }
    if (base.op == TapeOp::Const)
      return PowForm::Pow; // folded at compile time with the host's pow
    if (c == 0.5)
      return PowForm::Sqrt;
  }
  if (base.op == TapeOp::Const && base.value > 0) {
    int e = 0;
    if (std::frexp(base.value, &e) == 0.5 && e != 1 && std::abs(e - 1) <= 62) {
      k = e - 1; // base.value is 2^(e - 1)
      return PowForm::Exp2;
    }
  }
  return PowForm::Pow;
}

// Out of line, so that the interpreter and baseline code run the same
// instructions (TapeFunctions.h).
#define HBG_TAPE_FN(NAME, EXPR)                                                                    \
  [[gnu::noinline]] double NAME(double a, [[maybe_unused]] double b, [[maybe_unused]] double c) { \
    return EXPR;                                                                                   \
  }
HBG_TAPE_FN(fnSin, std::sin(a))
HBG_TAPE_FN(fnCos, std::cos(a))
HBG_TAPE_FN(fnTan, std::tan(a))
HBG_TAPE_FN(fnExp, std::exp(a))
HBG_TAPE_FN(fnLog, std::log(a))
HBG_TAPE_FN(fnSqrt, std::sqrt(a))
HBG_TAPE_FN(fnTanh, std::tanh(a))
HBG_TAPE_FN(fnSign, a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0))
HBG_TAPE_FN(fnFloor, std::floor(a))
HBG_TAPE_FN(fnMin, std::fmin(a, b))
HBG_TAPE_FN(fnMax, std::fmax(a, b))
HBG_TAPE_FN(fnSelect, a > 0 ? b : c)
HBG_TAPE_FN(fnPow, std::pow(a, b))
// b is the constant integer exponent (PowForm::Powi).
HBG_TAPE_FN(fnPowi, powi(a, static_cast<int>(b)))
#undef HBG_TAPE_FN

} // namespace

TapeFunction tapeFunction(const std::vector<TapeInstr> &code, const TapeInstr &in) {
  switch (in.op) {
  case TapeOp::Sin: return fnSin;
  case TapeOp::Cos: return fnCos;
  case TapeOp::Tan: return fnTan;
  case TapeOp::Exp: return fnExp;
  case TapeOp::Log: return fnLog;
  case TapeOp::Sqrt: return fnSqrt;
  case TapeOp::Tanh: return fnTanh;
  case TapeOp::Sign: return fnSign;
  case TapeOp::Floor: return fnFloor;
  case TapeOp::Min: return fnMin;
  case TapeOp::Max: return fnMax;
  case TapeOp::Select: return fnSelect;
  case TapeOp::Pow: {
    double k = 0;
    return powForm(code, in, k) == PowForm::Powi ? fnPowi : fnPow;
  }
  case TapeOp::Const:
  case TapeOp::Time:
  case TapeOp::X:
  case TapeOp::P:
  case TapeOp::Neg:
  case TapeOp::Abs:
  case TapeOp::Add:
  case TapeOp::Sub:
  case TapeOp::Mul:
  case TapeOp::Div:
    return nullptr;
  }
  return nullptr;
}

namespace {
/// arity() by op, for the evaluators' loops.
constexpr int kArity[kNumTapeOps] = {
    0, 0, 0, 0, // Const, Time, X, P
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME) ARITY,
#include "hbg/support/ExprOps.def"
};
} // namespace

int arity(TapeOp op) {
  auto i = static_cast<std::size_t>(op);
  return i < kNumTapeOps ? kArity[i] : 0;
}

const char *opName(TapeOp op) {
  switch (op) {
  case TapeOp::Const: return "const";
  case TapeOp::Time: return "time";
  case TapeOp::X: return "x";
  case TapeOp::P: return "p";
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME)                                                  \
  case TapeOp::ID:                                                                                 \
    return TAPE_NAME;
#include "hbg/support/ExprOps.def"
  }
  return "?";
}

void Tape::evaluate(double t, const double *x, const double *p, double *out,
                    std::vector<double> &scratch) const {
  scratch.resize(code.size());
  double *v = scratch.data();
  for (std::size_t i = 0; i < code.size(); ++i) {
    const TapeInstr &in = code[i];
    double r = 0;
    switch (in.op) {
    case TapeOp::Const: r = in.value; break;
    case TapeOp::Time: r = t; break;
    case TapeOp::X: r = x[in.a]; break;
    case TapeOp::P: r = p[in.a]; break;
    case TapeOp::Neg: r = -v[in.a]; break;
    case TapeOp::Abs: r = std::fabs(v[in.a]); break;
    case TapeOp::Add: r = v[in.a] + v[in.b]; break;
    case TapeOp::Sub: r = v[in.a] - v[in.b]; break;
    case TapeOp::Mul: r = v[in.a] * v[in.b]; break;
    case TapeOp::Div: r = v[in.a] / v[in.b]; break;
    case TapeOp::Sin: r = fnSin(v[in.a], 0, 0); break;
    case TapeOp::Cos: r = fnCos(v[in.a], 0, 0); break;
    case TapeOp::Tan: r = fnTan(v[in.a], 0, 0); break;
    case TapeOp::Exp: r = fnExp(v[in.a], 0, 0); break;
    case TapeOp::Log: r = fnLog(v[in.a], 0, 0); break;
    case TapeOp::Sqrt: r = fnSqrt(v[in.a], 0, 0); break;
    case TapeOp::Tanh: r = fnTanh(v[in.a], 0, 0); break;
    case TapeOp::Sign: r = fnSign(v[in.a], 0, 0); break;
    case TapeOp::Floor: r = fnFloor(v[in.a], 0, 0); break;
    case TapeOp::Pow: {
      double k = 0;
      r = powForm(code, in, k) == PowForm::Powi ? fnPowi(v[in.a], k, 0) : fnPow(v[in.a], v[in.b], 0);
      break;
    }
    case TapeOp::Min: r = fnMin(v[in.a], v[in.b], 0); break;
    case TapeOp::Max: r = fnMax(v[in.a], v[in.b], 0); break;
    case TapeOp::Select: r = fnSelect(v[in.a], v[in.b], v[in.c]); break;
    }
    v[i] = r;
  }
  for (std::size_t i = 0; i < results.size(); ++i)
    out[i] = v[results[i]];
}

void Tape::evaluate(Interval t, const Interval *x, const double *p, Interval *out,
                    std::vector<Interval> &scratch, const std::vector<std::uint32_t> *only) const {
  scratch.resize(code.size());
  Interval *v = scratch.data();
  auto one = [&](std::size_t i) {
    const TapeInstr &in = code[i];
    Interval r{0, 0};
    switch (in.op) {
    case TapeOp::Const: r = Interval::point(in.value); break;
    case TapeOp::Time: r = t.isWhole() ? Interval::whole() : t; break;
    case TapeOp::X: r = x[in.a].isWhole() ? Interval::whole() : x[in.a]; break;
    case TapeOp::P: r = Interval::point(p[in.a]); break;
    case TapeOp::Neg: r = arith::neg(v[in.a]); break;
    case TapeOp::Sin: r = sin(v[in.a]); break;
    case TapeOp::Cos: r = cos(v[in.a]); break;
    case TapeOp::Tan: r = tan(v[in.a]); break;
    case TapeOp::Exp: r = exp(v[in.a]); break;
    case TapeOp::Log: r = log(v[in.a]); break;
    case TapeOp::Sqrt: r = sqrt(v[in.a]); break;
    case TapeOp::Tanh: r = tanh(v[in.a]); break;
    case TapeOp::Abs: r = abs(v[in.a]); break;
    case TapeOp::Sign: r = sign(v[in.a]); break;
    case TapeOp::Floor: r = floor(v[in.a]); break;
    case TapeOp::Add: r = arith::add(v[in.a], v[in.b]); break;
    // The same instruction on both sides is one value, not two
    // independent ones: x - x is 0 and x * x is a square, unless NaN.
    case TapeOp::Sub:
      if (in.a == in.b)
        r = arith::sub(v[in.a], v[in.b]).isWhole() ? Interval::whole() : Interval{0, 0};
      else
        r = arith::sub(v[in.a], v[in.b]);
      break;
    case TapeOp::Mul: r = in.a == in.b ? square(v[in.a]) : arith::mul(v[in.a], v[in.b]); break;
    case TapeOp::Div: r = arith::div(v[in.a], v[in.b]); break;
    case TapeOp::Pow: {
      double k = 0;
      switch (powForm(code, in, k)) {
      case PowForm::Powi: r = powi(v[in.a], static_cast<int>(k)); break;
      case PowForm::Sqrt: r = sqrt(v[in.a]); break; // the whole line below 0, -inf included
      case PowForm::Exp2: r = exp2(arith::mul(v[in.b], Interval{k, k})); break;
      case PowForm::Pow: r = pow(v[in.a], v[in.b]); break;
      }
      break;
    }
    case TapeOp::Min: r = min(v[in.a], v[in.b]); break;
    case TapeOp::Max: r = max(v[in.a], v[in.b]); break;
    case TapeOp::Select: r = select(v[in.a], v[in.b], v[in.c]); break;
    }
    v[i] = r;
  };
  if (only) {
    for (std::uint32_t i : *only)
      one(i);
  } else {
    for (std::size_t i = 0; i < code.size(); ++i)
      one(i);
  }
  for (std::size_t i = 0; out && i < results.size(); ++i)
    out[i] = v[results[i]];
}

void Tape::evaluateSlope(Interval t, const Interval *x, const Interval *xdot, const double *p,
                         Interval *out, Interval *outDot, std::vector<Interval> &scratch,
                         std::vector<Interval> &slopes,
                         const std::vector<std::uint32_t> *only, bool valuesCurrent) const {
  // Values as evaluate() encloses them, then derivatives by the chain rule
  // on the same instructions (forward mode, one direction: time).
  if (!valuesCurrent)
    evaluate(t, x, p, nullptr, scratch, only);
  slopes.resize(code.size());
  const Interval *v = scratch.data();
  Interval *d = slopes.data();
  const Interval kZero{0, 0}, kWhole = Interval::whole();
  std::size_t count = only ? only->size() : code.size();
  for (std::size_t j = 0; j < count; ++j) {
    std::size_t i = only ? (*only)[j] : j;
    const TapeInstr &in = code[i];
    Interval r = v[i], da = kZero, db = kZero, dr = kWhole;
    int n = kArity[static_cast<std::size_t>(in.op)];
    if (n >= 1)
      da = d[in.a];
    if (n >= 2)
      db = d[in.b];
    switch (in.op) {
    case TapeOp::Const:
    case TapeOp::P: dr = kZero; break;
    case TapeOp::Time: dr = Interval{1, 1}; break;
    case TapeOp::X: dr = xdot[in.a]; break;
    case TapeOp::Neg: dr = arith::neg(da); break;
    case TapeOp::Sin: dr = arith::mul(cos(v[in.a]), da); break;
    case TapeOp::Cos: dr = arith::neg(arith::mul(sin(v[in.a]), da)); break;
    case TapeOp::Tan: dr = arith::mul(arith::add(Interval{1, 1}, square(r)), da); break;
    case TapeOp::Exp: dr = arith::mul(r, da); break;
    case TapeOp::Log: dr = arith::div(da, v[in.a]); break;
    case TapeOp::Sqrt: dr = arith::div(da, arith::mul(Interval{2, 2}, r)); break;
    case TapeOp::Tanh: dr = arith::mul(arith::sub(Interval{1, 1}, square(r)), da); break;
    case TapeOp::Abs:
      dr = v[in.a].lo > 0 ? da : v[in.a].hi < 0 ? arith::neg(da) : hull(da, arith::neg(da));
      break;
    case TapeOp::Sign: dr = v[in.a].lo > 0 || v[in.a].hi < 0 ? kZero : kWhole; break;
    case TapeOp::Floor: // constant between jumps; a jump inside proves nothing
      dr = !r.isWhole() && r.lo == r.hi ? kZero : kWhole;
      break;
    case TapeOp::Add: dr = arith::add(da, db); break;
    case TapeOp::Sub: dr = in.a == in.b ? kZero : arith::sub(da, db); break;
    case TapeOp::Mul:
      dr = in.a == in.b ? arith::mul(Interval{2, 2}, arith::mul(v[in.a], da))
                        : arith::add(arith::mul(da, v[in.b]), arith::mul(v[in.a], db));
      break;
    case TapeOp::Div: dr = arith::div(arith::sub(da, arith::mul(r, db)), v[in.b]); break;
    case TapeOp::Pow: {
      double k = 0;
      switch (powForm(code, in, k)) {
      case PowForm::Powi:
        dr = k == 0 ? kZero
                    : arith::mul(arith::mul(Interval{k, k}, powi(v[in.a], static_cast<int>(k) - 1)),
                                 da);
        break;
      case PowForm::Sqrt: dr = arith::div(da, arith::mul(Interval{2, 2}, r)); break;
      case PowForm::Exp2: { // d exp2(k y) = exp2(k y) ln 2 k dy
        const Interval ln2{0.6931471805599452, 0.6931471805599454};
        dr = arith::mul(arith::mul(r, arith::mul(ln2, Interval{k, k})), db);
        break;
      }
      case PowForm::Pow:
        dr = arith::mul(r, arith::add(arith::mul(db, log(v[in.a])),
                                      arith::div(arith::mul(v[in.b], da), v[in.a])));
        break;
      }
      break;
    }
    case TapeOp::Min:
    case TapeOp::Max: {
      bool aSide = in.op == TapeOp::Min ? v[in.a].hi < v[in.b].lo : v[in.a].lo > v[in.b].hi;
      bool bSide = in.op == TapeOp::Min ? v[in.b].hi < v[in.a].lo : v[in.b].lo > v[in.a].hi;
      dr = aSide ? da : bSide ? db : hull(da, db);
      break;
    }
    case TapeOp::Select:
      dr = v[in.a].lo > 0 ? db : v[in.a].hi <= 0 ? d[in.c] : kWhole;
      break;
    }
    if (r.isWhole())
      dr = kWhole;
    d[i] = dr;
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    out[i] = v[results[i]];
    outDot[i] = d[results[i]];
  }
}

std::vector<std::uint32_t> Tape::varying() const {
  std::vector<std::uint32_t> out;
  std::vector<bool> depends(code.size(), false);
  for (std::size_t i = 0; i < code.size(); ++i) {
    const TapeInstr &in = code[i];
    int n = arity(in.op);
    depends[i] = in.op == TapeOp::Time || in.op == TapeOp::X || (n >= 1 && depends[in.a]) ||
                 (n >= 2 && depends[in.b]) || (n >= 3 && depends[in.c]);
    if (depends[i])
      out.push_back(static_cast<std::uint32_t>(i));
  }
  return out;
}

std::vector<std::uint32_t> Tape::xRead() const {
  std::vector<std::uint32_t> read;
  for (const TapeInstr &in : code)
    if (in.op == TapeOp::X)
      read.push_back(in.a);
  std::sort(read.begin(), read.end());
  read.erase(std::unique(read.begin(), read.end()), read.end());
  return read;
}

bool Tape::readsX() const {
  return std::any_of(code.begin(), code.end(),
                     [](const TapeInstr &in) { return in.op == TapeOp::X; });
}

std::string Tape::verify() const {
  for (std::size_t i = 0; i < code.size(); ++i) {
    const TapeInstr &in = code[i];
    std::string where = "instruction " + std::to_string(i);
    if (static_cast<std::size_t>(in.op) >= kNumTapeOps)
      return where + " has an unknown op (" + std::to_string(static_cast<int>(in.op)) + ")";
    const std::uint32_t operands[] = {in.a, in.b, in.c};
    for (int k = 0; k < arity(in.op); ++k)
      if (operands[k] >= i)
        return where + " (" + opName(in.op) + ") reads instruction " +
               std::to_string(operands[k]) + ", which does not precede it";
  }
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i] >= code.size())
      return "result " + std::to_string(i) + " is instruction " + std::to_string(results[i]) +
             ", past the end of the tape (" + std::to_string(code.size()) + " instructions)";
  return "";
}

} // namespace hbg::runtime
