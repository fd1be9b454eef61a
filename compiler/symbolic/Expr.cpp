//===- compiler/symbolic/Expr.cpp - The symbolic expression DAG -----------===//

#include "hbg/symbolic/Expr.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace hbg::sym {

int arity(Op op) {
  switch (op) {
  case Op::Const:
  case Op::Symbol:
    return 0;
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME)                                                  \
  case Op::ID:                                                                                     \
    return ARITY;
#include "hbg/support/ExprOps.def"
  }
  return 0;
}

const char *functionName(Op op) {
  switch (op) {
  case Op::Const:
  case Op::Symbol:
    return nullptr;
#define HBG_OP(ID, ARITY, SOURCE_NAME, TAPE_NAME)                                                  \
  case Op::ID:                                                                                     \
    return SOURCE_NAME;
#include "hbg/support/ExprOps.def"
  }
  return nullptr;
}

/// Applies an op to numbers; shared by constant folding and evaluation.
static double apply(Op op, double a, double b, double c = 0) {
  switch (op) {
  case Op::Neg: return -a;
  case Op::Sin: return std::sin(a);
  case Op::Cos: return std::cos(a);
  case Op::Tan: return std::tan(a);
  case Op::Exp: return std::exp(a);
  case Op::Log: return std::log(a);
  case Op::Sqrt: return std::sqrt(a);
  case Op::Tanh: return std::tanh(a);
  case Op::Abs: return std::fabs(a);
  case Op::Sign: return a > 0 ? 1.0 : (a < 0 ? -1.0 : 0.0);
  case Op::Floor: return std::floor(a);
  case Op::Add: return a + b;
  case Op::Sub: return a - b;
  case Op::Mul: return a * b;
  case Op::Div: return a / b;
  case Op::Pow: return std::pow(a, b);
  case Op::Min: return std::fmin(a, b);
  case Op::Max: return std::fmax(a, b);
  case Op::Select: return a > 0 ? b : c;
  case Op::Const:
  case Op::Symbol: break;
  }
  return 0;
}

namespace {

/// Murmur3's 64-bit finaliser: every input bit moves every output bit.
std::uint64_t scramble(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

/// The hash of a node's fields. The table's position comes from the low
/// bits and the slot's tag from the high ones, so both must be mixed.
std::uint64_t hashNode(const Node &n) {
  std::uint64_t bits;
  std::memcpy(&bits, &n.value, sizeof bits);
  std::uint64_t h = scramble(bits ^ static_cast<std::uint64_t>(n.op));
  h = scramble(h ^ (n.lhs.index | static_cast<std::uint64_t>(n.rhs.index) << 32));
  return scramble(h ^ (n.symbol.index | static_cast<std::uint64_t>(n.third.index) << 32));
}

bool sameNode(const Node &a, const Node &b) {
  // Constants compare by bit pattern so that 0.0 and -0.0 stay distinct.
  return a.op == b.op && a.lhs == b.lhs && a.rhs == b.rhs && a.third == b.third &&
         a.symbol == b.symbol && std::memcmp(&a.value, &b.value, sizeof a.value) == 0;
}

} // namespace

/// A node of `op` over the given operands (unused ones stay invalid).
static Node operation(Op op, ExprId a = {}, ExprId b = {}, ExprId c = {}) {
  Node n;
  n.op = op;
  n.lhs = a;
  n.rhs = b;
  n.third = c;
  return n;
}

ExprContext::ExprContext() { time_ = addSymbol("time", SymbolKind::Time, 0); }

SymbolId ExprContext::addSymbol(std::string name, SymbolKind kind, std::uint32_t slot) {
  symbols_.push_back(Symbol{std::move(name), kind, slot});
  return SymbolId{static_cast<std::uint32_t>(symbols_.size() - 1)};
}

void ExprContext::growTable() {
  std::vector<Slot> table(std::max<std::size_t>(1024, 2 * table_.size()));
  std::size_t mask = table.size() - 1;
  for (std::uint32_t id = 0; id < nodes_.size(); ++id) {
    std::uint64_t h = hashNode(nodes_[id]);
    std::size_t i = h & mask;
    while (table[i].node != UINT32_MAX)
      i = (i + 1) & mask;
    table[i] = {id, static_cast<std::uint32_t>(h >> 32)};
  }
  table_ = std::move(table);
}

ExprId ExprContext::intern(const Node &n) {
  if (2 * (nodes_.size() + 1) > table_.size())
    growTable();
  std::uint64_t h = hashNode(n);
  auto tag = static_cast<std::uint32_t>(h >> 32);
  std::size_t mask = table_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    Slot &slot = table_[i];
    if (slot.node == UINT32_MAX) {
      slot = {static_cast<std::uint32_t>(nodes_.size()), tag};
      nodes_.push_back(n);
      ++opCount_[static_cast<std::size_t>(n.op)];
      return ExprId{slot.node};
    }
    if (slot.hash == tag && sameNode(nodes_[slot.node], n))
      return ExprId{slot.node};
  }
}

ExprId ExprContext::constant(double v) {
  Node n = operation(Op::Const);
  // One zero: -0 would print as `-0` and keep `x - 0`-style shapes apart.
  n.value = v == 0 ? 0.0 : v;
  return intern(n);
}

ExprId ExprContext::ref(SymbolId s) {
  Node n = operation(Op::Symbol);
  n.symbol = s;
  return intern(n);
}

/// Canonical operand order of commutative ops: constants, then parameters,
/// then everything else by id. Sharing needs some fixed order; this one also
/// prints coefficients first ("2 * k * x").
static bool before(const ExprContext &ctx, ExprId a, ExprId b) {
  auto rank = [&ctx](ExprId e) {
    const Node &n = ctx.node(e);
    if (n.op == Op::Const)
      return 0;
    if (n.op == Op::Symbol && ctx.symbol(n.symbol).kind == SymbolKind::Parameter)
      return 1;
    return 2;
  };
  int ra = rank(a), rb = rank(b);
  return ra != rb ? ra < rb : a < b;
}

/// Folds `op` over constant operands when the result is an ordinary number;
/// NaN and infinities stay symbolic so that they surface at run time, where
/// the error can name the time.
static bool foldable(double r) { return std::isfinite(r); }

ExprId ExprContext::neg(ExprId a) {
  const Node &na = node(a);
  if (na.op == Op::Const)
    return constant(-na.value);
  if (na.op == Op::Neg)
    return na.lhs;
  if (na.op == Op::Sub) // -(x - y) = y - x
    return sub(na.rhs, na.lhs);
  return intern(operation(Op::Neg, a));
}

ExprId ExprContext::add(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b) && foldable(node(a).value + node(b).value))
    return constant(node(a).value + node(b).value);
  if (isConst(a, 0))
    return b;
  if (isConst(b, 0))
    return a;
  if (node(b).op == Op::Neg)
    return sub(a, node(b).lhs);
  if (node(a).op == Op::Neg)
    return sub(b, node(a).lhs);
  if (before(*this, b, a))
    std::swap(a, b);
  return intern(operation(Op::Add, a, b));
}

ExprId ExprContext::sub(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b) && foldable(node(a).value - node(b).value))
    return constant(node(a).value - node(b).value);
  if (isConst(b, 0))
    return a;
  if (isConst(a, 0))
    return neg(b);
  if (a == b)
    return constant(0);
  if (node(b).op == Op::Neg)
    return add(a, node(b).lhs);
  return intern(operation(Op::Sub, a, b));
}

ExprId ExprContext::mul(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b) && foldable(node(a).value * node(b).value))
    return constant(node(a).value * node(b).value);
  if (before(*this, b, a))
    std::swap(a, b);
  if (isConst(a)) {
    double c = node(a).value;
    if (c == 0)
      return a;
    if (c == 1)
      return b;
    if (c == -1)
      return neg(b);
    if (node(b).op == Op::Neg) {
      // Read the operand before constant() may grow (and move) the nodes.
      ExprId inner = node(b).lhs;
      return mul(constant(-c), inner);
    }
  }
  if (node(a).op == Op::Neg && node(b).op == Op::Neg)
    return mul(node(a).lhs, node(b).lhs);
  if (node(a).op == Op::Neg)
    return neg(mul(node(a).lhs, b));
  if (node(b).op == Op::Neg)
    return neg(mul(a, node(b).lhs));
  return intern(operation(Op::Mul, a, b));
}

ExprId ExprContext::div(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b) && foldable(node(a).value / node(b).value))
    return constant(node(a).value / node(b).value);
  if (isConst(b, 1))
    return a;
  if (isConst(b, -1))
    return neg(a);
  if (isConst(a, 0) && !isConst(b, 0))
    return a;
  if (node(a).op == Op::Neg)
    return neg(div(node(a).lhs, b));
  return intern(operation(Op::Div, a, b));
}

ExprId ExprContext::pow(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b) && foldable(std::pow(node(a).value, node(b).value)))
    return constant(std::pow(node(a).value, node(b).value));
  if (isConst(b, 1))
    return a;
  if (isConst(b, 0))
    return constant(1);
  return intern(operation(Op::Pow, a, b));
}

ExprId ExprContext::min(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b))
    return constant(std::fmin(node(a).value, node(b).value));
  if (a == b)
    return a;
  if (b < a)
    std::swap(a, b);
  return intern(operation(Op::Min, a, b));
}

ExprId ExprContext::max(ExprId a, ExprId b) {
  if (isConst(a) && isConst(b))
    return constant(std::fmax(node(a).value, node(b).value));
  if (a == b)
    return a;
  if (b < a)
    std::swap(a, b);
  return intern(operation(Op::Max, a, b));
}

ExprId ExprContext::select(ExprId cond, ExprId a, ExprId b) {
  if (isConst(cond))
    return node(cond).value > 0 ? a : b;
  if (a == b)
    return a;
  return intern(operation(Op::Select, cond, a, b));
}

ExprId ExprContext::unary(Op op, ExprId a) {
  if (op == Op::Neg)
    return neg(a);
  if (isConst(a) && foldable(apply(op, node(a).value, 0)))
    return constant(apply(op, node(a).value, 0));
  if (op == Op::Abs && node(a).op == Op::Abs)
    return a;
  return intern(operation(op, a));
}

ExprId ExprContext::make(Op op, ExprId a, ExprId b, ExprId c) {
  switch (op) {
  case Op::Select: return select(a, b, c);
  case Op::Add: return add(a, b);
  case Op::Sub: return sub(a, b);
  case Op::Mul: return mul(a, b);
  case Op::Div: return div(a, b);
  case Op::Pow: return pow(a, b);
  case Op::Min: return min(a, b);
  case Op::Max: return max(a, b);
  case Op::Neg:
  case Op::Sin:
  case Op::Cos:
  case Op::Tan:
  case Op::Exp:
  case Op::Log:
  case Op::Sqrt:
  case Op::Tanh:
  case Op::Abs:
  case Op::Sign:
  case Op::Floor:
    return unary(op, a);
  case Op::Const:
  case Op::Symbol:
    return a;
  }
  return a;
}

std::vector<std::uint32_t> ExprContext::reach(const std::vector<ExprId> &roots) const {
  if (stamp_.size() < nodes_.size())
    stamp_.resize(nodes_.size(), 0);
  if (++epoch_ == 0) { // wrapped around: clear the stale marks once
    std::fill(stamp_.begin(), stamp_.end(), 0);
    epoch_ = 1;
  }
  // Most walks visit a few nodes, and most of their cost was growing these
  // vectors from nothing: the stack is kept from walk to walk (one per
  // thread, as a background compilation walks too), and the result starts
  // with room for a small expression.
  thread_local std::vector<std::uint32_t> stack;
  stack.clear();
  std::vector<std::uint32_t> out;
  out.reserve(16);
  auto visit = [&](ExprId e) {
    if (e.valid() && stamp_[e.index] != epoch_) {
      stamp_[e.index] = epoch_;
      stack.push_back(e.index);
    }
  };
  for (ExprId r : roots)
    visit(r);
  while (!stack.empty()) {
    std::uint32_t i = stack.back();
    stack.pop_back();
    out.push_back(i);
    forEachOperand(nodes_[i], visit);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

/// Values for the nodes of a reach() list, which is sorted: a node's value
/// sits at its position in the list, found by binary search. The walks
/// below visit small expressions of a large store, where a hash map per
/// walk cost more than the walk.
template <class T> class OverReach {
public:
  explicit OverReach(std::vector<std::uint32_t> ids) : ids_(std::move(ids)), values_(ids_.size()) {}
  const std::vector<std::uint32_t> &ids() const { return ids_; }
  T &operator[](std::size_t position) { return values_[position]; }
  T &at(ExprId e) {
    return values_[static_cast<std::size_t>(
        std::lower_bound(ids_.begin(), ids_.end(), e.index) - ids_.begin())];
  }

private:
  std::vector<std::uint32_t> ids_;
  std::vector<T> values_;
};

} // namespace

bool ExprContext::isParametric(ExprId id) const {
  for (std::uint32_t i : reach({id}))
    if (nodes_[i].op == Op::Symbol && symbols_[nodes_[i].symbol.index].kind != SymbolKind::Parameter)
      return false;
  return true;
}

bool ExprContext::dependsOn(ExprId id, SymbolId s) const {
  for (std::uint32_t i : reach({id}))
    if (nodes_[i].op == Op::Symbol && nodes_[i].symbol == s)
      return true;
  return false;
}

std::vector<SymbolId> ExprContext::symbolsOf(ExprId root) const {
  std::vector<SymbolId> out;
  for (std::uint32_t i : reach({root}))
    if (nodes_[i].op == Op::Symbol)
      out.push_back(nodes_[i].symbol);
  return out;
}

std::size_t ExprContext::countNodes(const std::vector<ExprId> &roots) const {
  return reach(roots).size();
}

ExprId ExprContext::substitute(ExprId id,
                               const std::unordered_map<std::uint32_t, ExprId> &bySymbol) {
  substitute(std::vector<ExprId *>{&id}, bySymbol);
  return id;
}

void ExprContext::substitute(const std::vector<ExprId *> &roots,
                             const std::unordered_map<std::uint32_t, ExprId> &bySymbol) {
  if (bySymbol.empty() || roots.empty())
    return;
  std::vector<ExprId> from;
  for (ExprId *r : roots)
    from.push_back(*r);
  OverReach<ExprId> image(reach(from));
  auto at = [&image](ExprId e) { return image.at(e); };
  for (std::size_t p = 0; p < image.ids().size(); ++p) {
    std::uint32_t i = image.ids()[p];
    Node n = nodes_[i]; // copy: building may grow nodes_
    if (n.op == Op::Symbol) {
      auto it = bySymbol.find(n.symbol.index);
      image[p] = it == bySymbol.end() ? ExprId{i} : it->second;
    } else if (n.op == Op::Const) {
      image[p] = ExprId{i};
    } else {
      int k = arity(n.op);
      ExprId a = at(n.lhs), b = k >= 2 ? at(n.rhs) : ExprId(), c = k >= 3 ? at(n.third) : ExprId();
      // Unchanged operands: the node itself, without hashing it again.
      bool same = a == n.lhs && (k < 2 || b == n.rhs) && (k < 3 || c == n.third);
      image[p] = same ? ExprId{i} : make(n.op, a, b, c);
    }
  }
  for (ExprId *r : roots)
    *r = image.at(*r);
}

ExprId ExprContext::derivative(ExprId id, SymbolId s) {
  OverReach<ExprId> d(reach({id}));
  for (std::size_t p = 0; p < d.ids().size(); ++p) {
    std::uint32_t i = d.ids()[p];
    Node n = nodes_[i];
    ExprId x{i};
    ExprId a = n.lhs, b = n.rhs;
    ExprId da = arity(n.op) >= 1 ? d.at(a) : ExprId();
    ExprId db = arity(n.op) >= 2 ? d.at(b) : ExprId();
    ExprId r;
    switch (n.op) {
    case Op::Const: r = constant(0); break;
    case Op::Symbol: r = constant(n.symbol == s ? 1 : 0); break;
    case Op::Neg: r = neg(da); break;
    case Op::Add: r = add(da, db); break;
    case Op::Sub: r = sub(da, db); break;
    case Op::Mul: r = add(mul(da, b), mul(a, db)); break;
    case Op::Div: // a constant denominator keeps the quotient rule out of the result
      r = isConst(db, 0) ? div(da, b) : div(sub(mul(da, b), mul(a, db)), mul(b, b));
      break;
    case Op::Pow:
      if (isConst(db, 0)) // d(a^c) = c a^(c-1) da
        r = mul(mul(b, pow(a, sub(b, constant(1)))), da);
      else // d(a^b) = a^b (db ln a + b da / a)
        r = mul(x, add(mul(db, unary(Op::Log, a)), div(mul(b, da), a)));
      break;
    case Op::Sin: r = mul(unary(Op::Cos, a), da); break;
    case Op::Cos: r = neg(mul(unary(Op::Sin, a), da)); break;
    case Op::Tan: r = mul(add(constant(1), mul(x, x)), da); break;
    case Op::Exp: r = mul(x, da); break;
    case Op::Log: r = div(da, a); break;
    case Op::Sqrt: r = div(da, mul(constant(2), x)); break;
    case Op::Tanh: r = mul(sub(constant(1), mul(x, x)), da); break;
    case Op::Abs: r = mul(unary(Op::Sign, a), da); break;
    case Op::Sign:
    case Op::Floor: r = constant(0); break; // between its jumps
    case Op::Select: r = select(a, db, d.at(n.third)); break;
    case Op::Min: // piecewise: the derivative of the smaller operand
    case Op::Max: {
      ExprId pick = n.op == Op::Min ? sub(b, a) : sub(a, b);
      // (1 + sign(pick)) / 2 selects a; ties take the mean of both slopes.
      ExprId wa = mul(constant(0.5), add(constant(1), unary(Op::Sign, pick)));
      r = add(mul(wa, da), mul(sub(constant(1), wa), db));
      break;
    }
    }
    d[p] = r;
  }
  return d.at(id);
}

ExprId ExprContext::roundingMagnitude(ExprId id) {
  OverReach<ExprId> m(reach({id}));
  for (std::size_t p = 0; p < m.ids().size(); ++p) {
    std::uint32_t i = m.ids()[p];
    Node n = nodes_[i];
    ExprId x{i};
    ExprId a = n.lhs, b = n.rhs;
    ExprId ma = arity(n.op) >= 1 ? m.at(a) : ExprId();
    ExprId mb = arity(n.op) >= 2 ? m.at(b) : ExprId();
    // |f(a)| + |slope| M(a): the value's own size, and the rounding of a
    // carried through f to first order.
    auto through = [&](ExprId slope) {
      return add(unary(Op::Abs, x), mul(unary(Op::Abs, slope), ma));
    };
    ExprId r;
    switch (n.op) {
    case Op::Const: r = constant(std::abs(n.value)); break;
    case Op::Symbol: r = unary(Op::Abs, x); break;
    case Op::Neg:
    case Op::Abs: r = ma; break;
    case Op::Sign: r = constant(1); break; // a factor of magnitude one
    case Op::Floor: r = add(ma, constant(1)); break; // within 1 of its operand
    case Op::Add:
    case Op::Sub: r = add(ma, mb); break;
    case Op::Mul: r = mul(ma, mb); break;
    case Op::Div: // a quotient rounds relative to itself: M(a) / |b|
      r = div(ma, unary(Op::Abs, b));
      break;
    case Op::Pow: // the base's rounding only
      r = through(mul(b, pow(a, sub(b, constant(1)))));
      break;
    case Op::Sin: r = through(unary(Op::Cos, a)); break;
    case Op::Cos: r = through(unary(Op::Sin, a)); break;
    case Op::Tan: r = through(add(constant(1), mul(x, x))); break;
    case Op::Exp: r = through(x); break;
    case Op::Log: r = through(div(constant(1), a)); break;
    case Op::Sqrt: r = through(div(constant(0.5), x)); break;
    case Op::Tanh: r = through(sub(constant(1), mul(x, x))); break;
    case Op::Select: r = select(a, mb, m.at(n.third)); break;
    case Op::Min:
    case Op::Max: r = max(ma, mb); break;
    }
    m[p] = r;
  }
  return m.at(id);
}

double ExprContext::evaluate(ExprId id, const std::function<double(SymbolId)> &valueOf) const {
  OverReach<double> val(reach({id}));
  for (std::size_t p = 0; p < val.ids().size(); ++p) {
    const Node &n = nodes_[val.ids()[p]];
    if (n.op == Op::Const)
      val[p] = n.value;
    else if (n.op == Op::Symbol)
      val[p] = valueOf(n.symbol);
    else {
      int k = arity(n.op);
      val[p] = apply(n.op, val.at(n.lhs), k >= 2 ? val.at(n.rhs) : 0.0,
                     k >= 3 ? val.at(n.third) : 0.0);
    }
  }
  return val.at(id);
}

namespace {
/// Binding strength for printing: higher binds tighter.
int precedence(Op op) {
  switch (op) {
  case Op::Add:
  case Op::Sub: return 1;
  case Op::Mul:
  case Op::Div: return 2;
  case Op::Neg: return 3;
  case Op::Pow: return 4;
  default: return 5;
  }
}

std::string formatNumber(double v) {
  // The shortest text that reads back to the same double.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}
} // namespace

std::string ExprContext::print(ExprId id) const {
  std::unordered_map<std::uint32_t, std::string> text;
  auto wrap = [&](ExprId child, int parentPrec, bool rightSide) {
    const Node &c = node(child);
    int p = c.op == Op::Const && c.value < 0 ? 3 : precedence(c.op);
    bool paren = p < parentPrec || (rightSide && p == parentPrec && parentPrec < 5);
    return paren ? "(" + text[child.index] + ")" : text[child.index];
  };
  for (std::uint32_t i : reach({id})) {
    const Node &n = nodes_[i];
    int p = precedence(n.op);
    switch (n.op) {
    case Op::Const: text[i] = formatNumber(n.value); break;
    case Op::Symbol: text[i] = symbols_[n.symbol.index].name; break;
    case Op::Neg: text[i] = "-" + wrap(n.lhs, p + 1, false); break;
    case Op::Add: text[i] = wrap(n.lhs, p, false) + " + " + wrap(n.rhs, p, true); break;
    case Op::Sub: text[i] = wrap(n.lhs, p, false) + " - " + wrap(n.rhs, p, true); break;
    case Op::Mul: text[i] = wrap(n.lhs, p, false) + " * " + wrap(n.rhs, p, true); break;
    case Op::Div: text[i] = wrap(n.lhs, p, false) + " / " + wrap(n.rhs, p, true); break;
    case Op::Pow: text[i] = wrap(n.lhs, p + 1, false) + "^" + wrap(n.rhs, p, false); break;
    case Op::Min:
    case Op::Max:
      text[i] = std::string(functionName(n.op)) + "(" + text[n.lhs.index] + ", " +
                text[n.rhs.index] + ")";
      break;
    case Op::Select:
      text[i] = "(" + text[n.lhs.index] + " > 0 ? " + text[n.rhs.index] + " : " +
                text[n.third.index] + ")";
      break;
    default:
      text[i] = std::string(functionName(n.op)) + "(" + text[n.lhs.index] + ")";
      break;
    }
  }
  return text[id.index];
}

} // namespace hbg::sym
