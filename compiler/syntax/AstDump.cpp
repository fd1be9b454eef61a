//===- compiler/syntax/AstDump.cpp - The AST as an indented tree ----------===//
//
// One node per line, children indented by two spaces:
//
//   Model RLC
//     Parameter V
//       Number 1
//     Element C capacitor
//       Arg
//         Name C
//       Initial q0
//         Number 0
//
// Declarations are grouped by kind, in the order the Model keeps them.
//
//===----------------------------------------------------------------------===//

#include "hbg/syntax/AST.h"

#include <charconv>
#include <utility>
#include <vector>

namespace hbg::ast {

namespace {

class Dumper {
public:
  std::string out;

  void line(int depth, const std::string &text) {
    out.append(2 * depth, ' ');
    out += text;
    out += '\n';
  }

  /// Iterative, with its own stack: a chain of `+` is as deep as it is long.
  void expr(int depth, const Expr &root) {
    std::vector<std::pair<int, const Expr *>> pending{{depth, &root}};
    while (!pending.empty()) {
      auto [d, node] = pending.back();
      pending.pop_back();
      const Expr &e = *node;
      switch (e.kind) {
      case ExprKind::Number:
        line(d, "Number " + number(e.number));
        break;
      case ExprKind::Name:
        line(d, "Name " + e.name);
        indices(d + 1, e.indices);
        break;
      case ExprKind::Member:
        line(d, "Member " + e.name + "." + e.member);
        indices(d + 1, e.indices);
        break;
      case ExprKind::Unary:
        line(d, std::string("Unary ") + e.op);
        break;
      case ExprKind::Binary:
        line(d, std::string("Binary ") + e.op);
        break;
      case ExprKind::Call:
        line(d, "Call " + e.name);
        break;
      case ExprKind::Array:
        line(d, "Array");
        break;
      case ExprKind::String:
        line(d, "String \"" + e.name + "\"");
        break;
      case ExprKind::If:
        // The condition here; then and else below, as operands.
        line(d, "If");
        guard(d + 1, *e.condition);
        break;
      }
      for (auto it = e.operands.rbegin(); it != e.operands.rend(); ++it)
        pending.push_back({d + 1, it->get()});
    }
  }

  void guard(int depth, const Guard &g) {
    switch (g.kind) {
    case GuardKind::Compare:
      line(depth, std::string("Compare ") + compareOpText(g.op) +
                      (g.mark ? std::string(" ") + g.mark : std::string()));
      expr(depth + 1, *g.lhs);
      expr(depth + 1, *g.rhs);
      return;
    case GuardKind::And:
      line(depth, "And");
      break;
    case GuardKind::Or:
      line(depth, "Or");
      break;
    case GuardKind::Not:
      line(depth, "Not");
      break;
    case GuardKind::Connected:
      line(depth, "Connected " + g.lhs->name);
      return;
    case GuardKind::Truth:
      line(depth, std::string("Truth") + (g.mark ? std::string(" ") + g.mark : std::string()));
      expr(depth + 1, *g.lhs);
      return;
    }
    for (const GuardPtr &child : g.children)
      guard(depth + 1, *child);
  }

  /// The index expressions of a name (`mass[]`), under it.
  void indices(int depth, const Indices &ix) {
    if (ix.empty())
      return;
    line(depth, "Index");
    for (const ExprPtr &e : ix)
      expr(depth + 1, *e);
  }

  void model(int depth, const Model &m) {
    line(depth, (m.component ? "Component " : "Model ") + m.name);
    body(depth + 1, m);
  }

  void body(int depth, const Model &m) {
    for (const Port &p : m.ports) {
      line(depth, "Port " + p.name + " = " + p.target);
      indices(depth + 1, p.targetIndices);
    }
    for (const Instance &in : m.instances) {
      line(depth, "Instance " + in.type + " " + in.name);
      indices(depth + 1, in.nameIndices);
      for (const ElementArg &a : in.args) {
        line(depth + 1, "Arg " + a.name);
        expr(depth + 2, *a.value);
      }
    }
    for (const Parameter &p : m.parameters) {
      line(depth, "Parameter " + p.name);
      expr(depth + 1, *p.value);
    }
    for (const Element &e : m.elements) {
      line(depth, "Element " + e.kind + " " + e.name);
      indices(depth + 1, e.nameIndices);
      for (const ElementArg &a : e.args) {
        line(depth + 1, a.name.empty() ? "Arg" : "Arg " + a.name);
        expr(depth + 2, *a.value);
      }
      for (const InitialValue &iv : e.initials) {
        line(depth + 1, "Initial " + iv.name);
        expr(depth + 2, *iv.value);
      }
    }
    for (const Junction &j : m.junctions) {
      line(depth, std::string("Junction ") + j.kind + " " + j.name + (j.pseudo ? " pseudo" : "") +
                      (j.switched ? " switched" : "") + (j.dissipative ? " dissipative" : ""));
      indices(depth + 1, j.nameIndices);
      if (!j.fsm)
        continue;
      for (const FsmState &st : j.fsm->states)
        line(depth + 1, std::string("State ") + (st.on ? "on " : "off ") + st.name +
                            (st.initial ? " initial" : ""));
      for (const FsmTransition &t : j.fsm->transitions) {
        line(depth + 1, "Transition " + t.from + " -> " + t.to);
        guard(depth + 2, *t.guard);
      }
    }
    for (const Bond &b : m.bonds) {
      line(depth, "Bond " + (b.name.empty() ? "" : b.name + ": ") + b.from + " -> " + b.to);
      indices(depth + 1, b.nameIndices);
      indices(depth + 1, b.fromIndices);
      indices(depth + 1, b.toIndices);
    }
    for (const Signal &s : m.signals) {
      line(depth, (s.discrete ? "Discrete " : "Signal ") + s.name);
      indices(depth + 1, s.nameIndices);
      if (s.discrete) {
        if (s.initial)
          expr(depth + 1, *s.initial);
        expr(depth + 1, *s.clock);
      }
      expr(depth + 1, *s.value);
    }
    for (const Output &o : m.outputs) {
      line(depth, "Output " + (o.name.empty() ? "`" + o.text + "`" : o.name));
      indices(depth + 1, o.nameIndices);
      expr(depth + 1, *o.value);
    }
    for (const Experiment &e : m.experiments) {
      line(depth, "Experiment");
      for (const ExperimentSetting &s : e.settings) {
        line(depth + 1, "Setting " + s.name);
        expr(depth + 2, *s.value);
      }
    }
    for (const For &f : m.loops) {
      line(depth, "For " + f.var);
      line(depth + 1, "From");
      expr(depth + 2, *f.from);
      line(depth + 1, "To");
      expr(depth + 2, *f.to);
      body(depth + 1, *f.body);
    }
    for (const Conditional &c : m.conditionals) {
      line(depth, "If");
      for (const Conditional::Branch &b : c.branches) {
        line(depth + 1, b.condition ? "Branch" : "Else");
        if (b.condition)
          guard(depth + 2, *b.condition);
        body(depth + 2, *b.body);
      }
    }
  }

private:
  /// The shortest text that reads back as the same double.
  static std::string number(double v) {
    char buf[32];
    auto result = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, result.ptr);
  }
};

} // namespace

std::string dump(const File &file) {
  Dumper d;
  d.line(0, "File");
  for (const Import &i : file.imports)
    d.line(1, "Import " + (i.isPath ? "\"" + i.name + "\"" : i.name));
  for (const std::unique_ptr<Model> &m : file.models)
    d.model(1, *m);
  return d.out;
}

} // namespace hbg::ast

namespace hbg::ast {

namespace {

/// How tightly an expression binds: 1 `+ -`, 2 `* /`, 3 unary, 4 `^`,
/// 5 everything that needs no parentheses; `if` binds loosest (0).
int precedence(const Expr &e) {
  switch (e.kind) {
  case ExprKind::Binary:
    return e.op == '+' || e.op == '-' ? 1 : e.op == '^' ? 4 : 2;
  case ExprKind::Unary:
    return 3;
  case ExprKind::If:
    return 0;
  default:
    return 5;
  }
}

std::string numberText(double v) {
  char buf[32];
  auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

void print(const Guard &g, std::string &out, bool group);

/// Recursive on purpose: it prints guards of transitions, whose nesting
/// the parser has bounded (kMaxNesting).
void print(const Expr &e, std::string &out) {
  auto operand = [&](const Expr &o, bool paren) {
    if (paren)
      out += '(';
    print(o, out);
    if (paren)
      out += ')';
  };
  switch (e.kind) {
  case ExprKind::Number: out += numberText(e.number); break;
  case ExprKind::Name: out += e.name; break;
  case ExprKind::Member: out += e.name + "." + e.member; break;
  case ExprKind::String: out += "\"" + e.name + "\""; break;
  case ExprKind::Unary:
    out += e.op;
    operand(*e.operands[0], precedence(*e.operands[0]) < 3);
    break;
  case ExprKind::Binary: {
    int p = precedence(e);
    // Left-associative but `^`: a right operand of equal binding needs
    // parentheses (`a - (b - c)`), a left one of `^` too.
    bool right = e.op == '^';
    operand(*e.operands[0], precedence(*e.operands[0]) < p || (right && precedence(*e.operands[0]) == p));
    out += e.op == '^' ? "^" : std::string(" ") + e.op + " ";
    operand(*e.operands[1], precedence(*e.operands[1]) < p || (!right && precedence(*e.operands[1]) == p));
    break;
  }
  case ExprKind::Call:
  case ExprKind::Array:
    out += e.kind == ExprKind::Call ? e.name + "(" : "[";
    for (std::size_t i = 0; i < e.operands.size(); ++i) {
      out += i ? ", " : "";
      print(*e.operands[i], out);
    }
    out += e.kind == ExprKind::Call ? ")" : "]";
    break;
  case ExprKind::If:
    out += "if ";
    print(*e.condition, out, false);
    out += " then ";
    print(*e.operands[0], out);
    out += " else ";
    print(*e.operands[1], out);
    break;
  }
}

void print(const Guard &g, std::string &out, bool group) {
  switch (g.kind) {
  case GuardKind::Compare:
    // Guards' comparisons are parenthesised and marked; an `if`'s are not.
    out += g.mark ? "(" : "";
    print(*g.lhs, out);
    out += std::string(" ") + compareOpText(g.op) + " ";
    print(*g.rhs, out);
    if (g.mark)
      out += std::string(")") + g.mark;
    return;
  case GuardKind::Connected:
    out += "connected(" + g.lhs->name + ")";
    return;
  case GuardKind::Truth:
    out += g.mark ? "(" : "";
    print(*g.lhs, out);
    if (g.mark)
      out += std::string(")") + g.mark;
    return;
  case GuardKind::Not:
    out += "not ";
    print(*g.children[0], out, true);
    return;
  case GuardKind::And:
  case GuardKind::Or:
    out += group ? "(" : "";
    for (std::size_t i = 0; i < g.children.size(); ++i) {
      out += i ? (g.kind == GuardKind::And ? " and " : " or ") : "";
      // `and` binds tighter than `or`: only an `or` inside an `and` needs
      // parentheses.
      print(*g.children[i], out, g.kind == GuardKind::And && g.children[i]->kind == GuardKind::Or);
    }
    out += group ? ")" : "";
    return;
  }
}

} // namespace

std::string print(const Expr &e) {
  std::string out;
  print(e, out);
  return out;
}

std::string print(const Guard &g) {
  std::string out;
  print(g, out, false);
  return out;
}

} // namespace hbg::ast
