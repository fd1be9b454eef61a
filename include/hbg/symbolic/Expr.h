//===- hbg/symbolic/Expr.h - The symbolic expression DAG ------------------===//
//
// Every equation hbg derives lives in one ExprContext: a hash-consed DAG of
// nodes addressed by ExprId. Building a node that already exists returns the
// existing id, so common subexpressions are shared by construction; the
// builders fold constants and drop neutral elements (x + 0, x * 1, x * 0) as
// they go, so what is stored is already simplified.
//
// Nodes are only ever appended, and a node's operands always have smaller
// ids than the node itself: iterating ids in increasing order is a
// topological order, which evaluation and code generation rely on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace hbg::sym {

/// A node of the DAG. Valid ids come from an ExprContext.
struct ExprId {
  std::uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(ExprId a, ExprId b) { return a.index == b.index; }
  friend bool operator!=(ExprId a, ExprId b) { return a.index != b.index; }
  friend bool operator<(ExprId a, ExprId b) { return a.index < b.index; }
};

/// A named leaf of the DAG.
struct SymbolId {
  std::uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(SymbolId a, SymbolId b) { return a.index == b.index; }
  friend bool operator!=(SymbolId a, SymbolId b) { return a.index != b.index; }
};

/// What a symbol stands for when the expression is compiled or evaluated.
enum class SymbolKind : std::uint8_t {
  Time,      ///< the simulation time `t`
  State,     ///< x[slot]
  Parameter, ///< p[slot]
  Variable,  ///< an unknown still to be eliminated (never reaches codegen)
  Algebraic, ///< an algebraic unknown solved at run time: x[slot], after the states
};

/// A symbol: a name for printing, a kind and a slot in its argument array.
struct Symbol {
  std::string name;
  SymbolKind kind;
  std::uint32_t slot;
};

/// The operation of a node: a leaf, or an operation of ExprOps.def on the
/// node's first arity(op) operands.
enum class Op : std::uint8_t {
  // Leaves.
  Const,  ///< value
  Symbol, ///< symbol
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME) ID,
#include "hbg/support/ExprOps.def"
};

/// Number of ops, leaves included: Op's values are 0 to kNumOps - 1.
constexpr std::size_t kNumOps = 2
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME) +1
#include "hbg/support/ExprOps.def"
    ;

/// Number of operands of an op (0 to 3).
int arity(Op op);
/// The source-level name of a function op ("sin", "min", ...), or nullptr.
const char *functionName(Op op);

/// A stored node. Leaves use `value` or `symbol`; others use their first
/// arity(op) operands of `lhs`, `rhs`, `third`.
struct Node {
  Op op = Op::Const;
  ExprId lhs, rhs;   ///< operands (rhs only for binary and ternary ops)
  double value = 0;  ///< Const
  SymbolId symbol;   ///< Symbol
  ExprId third;      ///< Select's value when its condition fails
};

/// Calls `f(ExprId)` on each operand of `n`, in order.
template <typename F> void forEachOperand(const Node &n, F &&f) {
  int k = arity(n.op);
  if (k >= 1)
    f(n.lhs);
  if (k >= 2)
    f(n.rhs);
  if (k >= 3)
    f(n.third);
}

/// The DAG and its symbol table.
class ExprContext {
public:
  ExprContext();

  // --- Symbols -----------------------------------------------------------
  /// Declares a symbol. Names need not be unique; slots index the argument
  /// array of the symbol's kind.
  SymbolId addSymbol(std::string name, SymbolKind kind, std::uint32_t slot);
  const Symbol &symbol(SymbolId id) const { return symbols_[id.index]; }
  std::size_t numSymbols() const { return symbols_.size(); }
  /// The symbol `t` (always present).
  SymbolId timeSymbol() const { return time_; }

  // --- Builders (simplify and hash-cons) --------------------------------
  ExprId constant(double v);
  ExprId ref(SymbolId s);
  ExprId time() { return ref(time_); }
  ExprId neg(ExprId a);
  ExprId add(ExprId a, ExprId b);
  ExprId sub(ExprId a, ExprId b);
  ExprId mul(ExprId a, ExprId b);
  ExprId div(ExprId a, ExprId b);
  ExprId pow(ExprId a, ExprId b);
  ExprId min(ExprId a, ExprId b);
  ExprId max(ExprId a, ExprId b);
  /// `cond > 0 ? a : b`.
  ExprId select(ExprId cond, ExprId a, ExprId b);
  /// Builds a unary function node (Sin ... Sign).
  ExprId unary(Op op, ExprId a);
  /// Builds any node by op (dispatches to the builders above).
  ExprId make(Op op, ExprId a, ExprId b = ExprId(), ExprId c = ExprId());

  // --- Inspection --------------------------------------------------------
  const Node &node(ExprId id) const { return nodes_[id.index]; }
  std::size_t size() const { return nodes_.size(); }
  /// Nodes of `op` in the store (counted as they are built).
  std::size_t count(Op op) const { return opCount_[static_cast<std::size_t>(op)]; }
  bool isConst(ExprId id) const { return node(id).op == Op::Const; }
  bool isConst(ExprId id, double v) const { return isConst(id) && node(id).value == v; }
  /// True when the expression refers to no symbol other than parameters.
  bool isParametric(ExprId id) const;
  /// True when `id` refers to symbol `s`.
  bool dependsOn(ExprId id, SymbolId s) const;
  /// Number of distinct nodes reachable from `roots` (the DAG's size).
  std::size_t countNodes(const std::vector<ExprId> &roots) const;
  /// The distinct symbols `root` refers to, in id order.
  std::vector<SymbolId> symbolsOf(ExprId root) const;
  /// The ids of the nodes reachable from `roots`, increasing (so operands
  /// come before their users). Costs the number of nodes visited, not the
  /// DAG's size: the equations stage walks many small expressions of a
  /// large DAG.
  std::vector<std::uint32_t> reach(const std::vector<ExprId> &roots) const;

  // --- Transformations ---------------------------------------------------
  /// Replaces symbols by expressions (symbols not in the map stay).
  ExprId substitute(ExprId id, const std::unordered_map<std::uint32_t, ExprId> &bySymbol);
  /// The same for many roots at once, in place: each node they share is
  /// rebuilt once, so the cost is the size of their union, not the sum of
  /// their sizes.
  void substitute(const std::vector<ExprId *> &roots,
                  const std::unordered_map<std::uint32_t, ExprId> &bySymbol);
  /// The symbolic partial derivative d id / d s.
  ExprId derivative(ExprId id, SymbolId s);
  /// The size of the numbers whose rounding forms `id`: the value
  /// evaluated with every operand at its magnitude (|a| + |b| for a sum or
  /// a difference, a product of magnitudes, |f(a)| + |f'(a)| M(a) for a
  /// function), so that a difference of large terms that is zero in exact
  /// arithmetic has a large magnitude while its value is tiny. Its
  /// rounding error is a few ulps of it. Non-negative.
  ExprId roundingMagnitude(ExprId id);

  // --- Evaluation and printing -------------------------------------------
  /// Evaluates with `valueOf(symbol)` supplying leaf values.
  double evaluate(ExprId id, const std::function<double(SymbolId)> &valueOf) const;
  /// Infix text with minimal parentheses, symbols by name: "k * (x1 - x2)".
  std::string print(ExprId id) const;

  // --- Sharing between threads ------------------------------------------
  /// Every member, reading ones included (they keep visit marks), must be
  /// called by one thread at a time. A compiled model shares its context
  /// between the threads that simulate it and takes this lock around every
  /// use (parameter defaults, a mode or Jacobian compiled on first use).
  std::mutex &mutex() const { return mutex_; }

private:
  ExprId intern(const Node &n);
  /// Visit marks for reach(): a node is marked when its stamp equals epoch_.
  mutable std::vector<std::uint32_t> stamp_;
  mutable std::uint32_t epoch_ = 0;
  mutable std::mutex mutex_;
  /// Doubles the hash-consing table and places every node again.
  void growTable();
  /// One slot of the hash-consing table: a node's id and its hash's upper
  /// half, which tells most nodes apart without reading them.
  struct Slot {
    std::uint32_t node = UINT32_MAX;
    std::uint32_t hash = 0;
  };
  std::vector<Node> nodes_;
  std::vector<Symbol> symbols_;
  /// Open addressing with linear probing over a power-of-two size, at
  /// most half full: a node is found in the store without a map node per
  /// entry or a copy of it.
  std::vector<Slot> table_;
  std::array<std::size_t, kNumOps> opCount_{};
  SymbolId time_;
};

} // namespace hbg::sym
