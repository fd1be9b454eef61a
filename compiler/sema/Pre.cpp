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
    if (h.value == value)
      return ctx().ref(h.symbol);
  // Its name is the call as written, whitespace runs made single spaces.
  std::string_view text = sm_.text(e.range.begin.file).substr(e.range.begin.offset, e.range.length);
  Held h;
  for (char c : text) {
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
    if (!space)
      h.name += c;
    else if (!h.name.empty() && h.name.back() != ' ')
      h.name += ' ';
  }
  h.range = e.range;
  h.value = value;
  // Held values come after the parameters in the runtime's parameter array;
  // every parameter exists by now (buildStructure made them).
  h.symbol = ctx().addSymbol(h.name, sym::SymbolKind::Parameter,
                             std::uint32_t(g_.parameters.size() + g_.held.size()));
  g_.held.push_back(std::move(h));
  return ctx().ref(g_.held.back().symbol);
}

} // namespace hbg::sema
