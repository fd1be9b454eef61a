//===- compiler/syntax/AST.cpp - AST nodes ---------------------------------===//

#include "hbg/syntax/AST.h"

namespace hbg::ast {

Expr::~Expr() {
  // Detach the operands and free them one by one: each freed node's
  // operands were moved out first, so no destructor recurses.
  std::vector<ExprPtr> pending = std::move(operands);
  while (!pending.empty()) {
    ExprPtr e = std::move(pending.back());
    pending.pop_back();
    for (ExprPtr &operand : e->operands)
      pending.push_back(std::move(operand));
    e->operands.clear();
  }
}

namespace {
/// One node's own fields (not its operands, condition or indices).
ExprPtr copyNode(const Expr &e) {
  auto c = std::make_unique<Expr>();
  c->kind = e.kind;
  c->range = e.range;
  c->number = e.number;
  c->name = e.name;
  c->nameRange = e.nameRange;
  c->member = e.member;
  c->memberRange = e.memberRange;
  c->op = e.op;
  return c;
}
} // namespace

ExprPtr copy(const Expr &root, CopyVisitor visit) {
  ExprPtr out = copyNode(root);
  std::vector<std::pair<const Expr *, Expr *>> todo{{&root, out.get()}};
  while (!todo.empty()) {
    auto [from, to] = todo.back();
    todo.pop_back();
    visit(*to, *from);
    if (from->condition)
      to->condition = copy(*from->condition, visit);
    to->operands.reserve(from->operands.size());
    for (const ExprPtr &o : from->operands) {
      to->operands.push_back(copyNode(*o));
      todo.push_back({o.get(), to->operands.back().get()});
    }
  }
  return out;
}

GuardPtr copy(const Guard &g, CopyVisitor visit) {
  auto c = std::make_unique<Guard>();
  c->kind = g.kind;
  c->range = g.range;
  c->op = g.op;
  c->mark = g.mark;
  if (g.lhs)
    c->lhs = copy(*g.lhs, visit);
  if (g.rhs)
    c->rhs = copy(*g.rhs, visit);
  for (const GuardPtr &child : g.children)
    c->children.push_back(copy(*child, visit));
  return c;
}

std::unique_ptr<Fsm> copy(const Fsm &fsm, CopyVisitor visit) {
  auto out = std::make_unique<Fsm>();
  out->states = fsm.states;
  out->range = fsm.range;
  for (const FsmTransition &t : fsm.transitions) {
    FsmTransition c;
    c.from = t.from;
    c.to = t.to;
    c.fromRange = t.fromRange;
    c.toRange = t.toRange;
    c.range = t.range;
    c.guard = copy(*t.guard, visit);
    out->transitions.push_back(std::move(c));
  }
  return out;
}

Element copy(const Element &x, std::string name,
             FunctionRef<ExprPtr(const Expr &value, const std::string &arg)> value) {
  Element e;
  e.kind = x.kind;
  e.kindRange = x.kindRange;
  e.name = std::move(name);
  e.nameRange = x.nameRange;
  e.argsRange = x.argsRange;
  for (const ElementArg &a : x.args)
    e.args.push_back({a.name, a.nameRange, value(*a.value, a.name)});
  for (const InitialValue &iv : x.initials)
    e.initials.push_back({iv.name, iv.nameRange, value(*iv.value, "")});
  return e;
}

Junction copy(const Junction &x, std::string name, CopyVisitor visit) {
  Junction j;
  j.kind = x.kind;
  j.kindRange = x.kindRange;
  j.name = std::move(name);
  j.nameRange = x.nameRange;
  j.switched = x.switched;
  j.switchedRange = x.switchedRange;
  j.dissipative = x.dissipative;
  j.mark = x.mark;
  j.markRange = x.markRange;
  j.pseudo = x.pseudo;
  if (x.fsm)
    j.fsm = copy(*x.fsm, visit);
  return j;
}

} // namespace hbg::ast
