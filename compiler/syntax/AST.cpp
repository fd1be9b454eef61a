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

} // namespace hbg::ast
