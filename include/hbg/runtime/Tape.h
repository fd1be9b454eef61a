//===- hbg/runtime/Tape.h - Straight-line guard programs ------------------===//
//
// The compiler translates a guard's expression DAG into a tape: a
// straight-line program whose instructions are the DAG's nodes in
// topological order. The runtime evaluates a tape without the compiler,
// on doubles (with exactly the point semantics of the generated code, so
// the values agree with the JIT's) and on intervals, where the result
// encloses every value the guard can take over a box of times and states
// and so can prove that the guard keeps its sign.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Interval.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hbg::runtime {

/// The operation of a tape instruction: the ops of the expression DAG
/// (hbg/support/ExprOps.def), with symbols split by the array they read.
/// Unary ops read instruction a, binary ones a and b, Select a, b and c.
/// Pow computes a^b as the JIT does: powi for a Const integer b of
/// magnitude <= 16 (codegen), and the forms LLVM rewrites llvm.pow into:
/// sqrt for a Const b of 0.5, exp2(b * k) for a Const a of 2^k; else
/// std::pow. The values are stored in model images (runtime/Image.cpp).
enum class TapeOp : std::uint8_t {
  // Leaves.
  Const, ///< value
  Time,  ///< t
  X,     ///< x[a]
  P,     ///< p[a]
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME) ID,
#include "hbg/support/ExprOps.def"
};

/// Number of ops, leaves included: TapeOp's values are 0 to
/// kNumTapeOps - 1.
constexpr std::size_t kNumTapeOps = 4
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME) +1
#include "hbg/support/ExprOps.def"
    ;

/// Number of earlier instructions an op reads (0 to 3).
int arity(TapeOp op);
/// The op's lowercase name ("mul"), or "?" for a value outside the enum.
const char *opName(TapeOp op);

/// One instruction. Leaves use `a` (X, P) or `value` (Const); other ops
/// read the results of instructions a, b, c (their first arity(op)), which
/// precede this one.
struct TapeInstr {
  TapeOp op;
  std::uint32_t a = 0, b = 0, c = 0;
  double value = 0;
};

/// A straight-line program computing out[i] = value of instruction
/// results[i]. (A class with public data, as System.h declares it.)
class Tape {
public:
  /// The instructions; operands come before the instructions reading them.
  std::vector<TapeInstr> code;
  /// The instructions whose values are the outputs, in output order.
  std::vector<std::uint32_t> results;

  /// Evaluates on doubles as the generated code does: the same operations
  /// and libm calls, so the outputs equal the JIT's bit for bit (given the
  /// same libm). The tape must be valid (verify()). `scratch` holds one
  /// value per instruction; nothing is allocated once it has that size.
  void evaluate(double t, const double *x, const double *p, double *out,
                std::vector<double> &scratch) const;
  /// Evaluates on intervals: out[i] encloses every value evaluate() can
  /// give for t and x inside the given intervals (the whole line when a
  /// value may be NaN). Parameters are exact. `out` may be null (the
  /// values stay in `scratch`, one per instruction). With `only` (the
  /// instructions of varying()), the others are taken as `scratch` holds
  /// them from an earlier call with the same p: they depend on p alone.
  void evaluate(Interval t, const Interval *x, const double *p, Interval *out,
                std::vector<Interval> &scratch,
                const std::vector<std::uint32_t> *only = nullptr) const;

  /// Evaluates on intervals with the time derivative along a trajectory:
  /// for t in `t`, x in `x` and dx/dt in `xdot`, out[i] encloses the value
  /// as evaluate() does and outDot[i] the derivative d/dt of output i,
  /// or the whole line where it may not exist (a jump of sign or select,
  /// a kink of abs, min or max inside the box widens it to the hull of
  /// its sides' derivatives).
  /// `only` as for evaluate(), `slopes` also kept from an earlier call.
  /// `valuesCurrent`: `scratch` already holds the values of this t, x and
  /// p (from evaluate() on the same box), which are then not evaluated
  /// again.
  void evaluateSlope(Interval t, const Interval *x, const Interval *xdot, const double *p,
                     Interval *out, Interval *outDot, std::vector<Interval> &scratch,
                     std::vector<Interval> &slopes,
                     const std::vector<std::uint32_t> *only = nullptr,
                     bool valuesCurrent = false) const;

  /// The instructions that read t or x, directly or through others,
  /// increasing: the rest depend on p alone.
  std::vector<std::uint32_t> varying() const;

  /// The distinct indices of x the tape reads, increasing.
  std::vector<std::uint32_t> xRead() const;
  /// Whether the tape reads x at all (if not, it depends on t and p only).
  bool readsX() const;

  /// The first problem found ("instruction 3 (mul) reads instruction 5,
  /// which does not precede it"), or an empty string for a valid tape:
  /// known ops, operands before their instruction, results in range.
  std::string verify() const;
};

} // namespace hbg::runtime
