//===- compiler/sema/Pre.cpp - Held values --------------------------------===//
//
// `pre(expr)`: a held value, the expression's value taken at events, which
// the run keeps in a parameter slot after the model's parameters.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <string>
#include <string_view>

namespace hbg::sema {

using namespace hbg::bg;

sym::ExprId Analyzer::lowerPre(const ast::Expr &e, const ExprScope &scope) {
  if (scope.inPre) {
    diags_.report(DiagKind::PreInsidePre, e.nameRange);
    return {};
  }
  if (e.operands.size() != 1) {
    diags_.report(DiagKind::WrongArgumentCount, e.range,
                  {"function", e.name, "one argument", e.operands.size()});
    return {};
  }
  ExprScope inner = scope;
  inner.inPre = true;
  if (!scope.heldLocals.empty())
    inner.locals = scope.heldLocals;
  sym::ExprId value = lower(*e.operands[0], inner);
  if (!value.valid())
    return {};
  // Calls that hold the same expression (the DAG is hash-consed, so equal
  // expressions are one node) share one held value.
  for (const Held &h : g_.held)
    if (h.kind == Held::Kind::Pre && h.value == value)
      return ctx().ref(h.symbol);
  // Its name is the call as written.
  sym::SymbolId symbol = addHeld(Held::Kind::Pre, sourceText(e.range), e.range);
  g_.held.back().value = value;
  return ctx().ref(symbol);
}

} // namespace hbg::sema
