//===- compiler/syntax/AstBuilder.h - Parse tree to AST ---------*- C++ -*-===//
//
// Internal to hbg_syntax: the one place that reads ANTLR parse-tree contexts.
// It runs only on a tree that parsed without error and whose numbers are in
// range. The grammar accepts a little more than the language where that
// lets one token decide (Hbg.g4: elementArg, outputItem, a member's last
// part); the builder finds the rest and gives it as the syntax error the
// parser would have reported there (error()). The tree holds rule contexts
// only: tokens are read from the contexts' labels and from the token stream.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ErrorStrategy.h"
#include "Tokens.h"

#include "hbg/syntax/AST.h"

#include "HbgParser.h"

#include <TokenStream.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace hbg::syntax {

/// Builds the AST of one file from its parse tree.
class AstBuilder {
public:
  AstBuilder(SourceText src, antlr4::TokenStream &tokens) : src_(src), tokens_(tokens) {}

  /// The file's AST, or null after a syntax error (error()).
  std::unique_ptr<ast::File> build(hbg_antlr::HbgParser::FileContext *file);

  /// The first syntax error the grammar left to the builder, if any.
  const std::optional<SyntaxError> &error() const { return error_; }

  /// Builds a declaration of a model or component as soon as it is parsed,
  /// so that its context can be released before the next is parsed;
  /// build() then takes the declarations built so. False after a syntax
  /// error (error()).
  bool declarationParsed(hbg_antlr::HbgParser::DeclarationContext *ctx);

private:
  using P = hbg_antlr::HbgParser;

  std::unique_ptr<ast::File> buildFile(P::FileContext *ctx);

  /// A model or component (`ctx`) without its declarations.
  std::unique_ptr<ast::Model> begin(antlr4::ParserRuleContext *ctx);
  void declaration(P::DeclarationContext *ctx, ast::Model &model);
  ast::Parameter parameter(P::ParameterDeclContext *ctx);
  ast::Parameter input(P::InputDeclContext *ctx);
  ast::Element element(P::ElementDeclContext *ctx);
  ast::Junction junction(P::JunctionDeclContext *ctx);
  std::unique_ptr<ast::Fsm> fsm(P::FsmBlockContext *ctx);
  ast::GuardPtr guard(P::GuardContext *ctx);
  ast::GuardPtr guardAnd(P::GuardAndContext *ctx);
  ast::GuardPtr guardNot(P::GuardNotContext *ctx);
  ast::GuardPtr guardAtom(P::GuardAtomContext *ctx);
  ast::GuardPtr condition(P::ConditionContext *ctx);
  ast::GuardPtr conditionAnd(P::ConditionAndContext *ctx);
  ast::GuardPtr conditionNot(P::ConditionNotContext *ctx);
  ast::GuardPtr conditionAtom(P::ConditionAtomContext *ctx);
  /// `connected(port)`, the comparison without an operator that `ctx` is
  /// in the condition of an `if` block; a syntax error anywhere else.
  ast::GuardPtr connected(P::ExprContext *ctx);
  /// `b`, a name alone where a condition stands: a GuardKind::Truth; null
  /// for any other expression.
  ast::GuardPtr truth(P::ExprContext *ctx);
  ast::Bond bond(P::BondDeclContext *ctx);
  ast::Instance instance(P::InstanceDeclContext *ctx);
  /// `a.b.c` as one string, `mass[].a` with its index expressions appended
  /// to `indices`.
  std::string path(P::PathContext *ctx, ast::Indices &indices);
  /// `name` or `name[]` (ast::Indices), its index expressions appended.
  std::string indexed(P::IdentContext *name, P::IndexContext *index, ast::Indices &indices);
  ast::For loop(P::ForDeclContext *ctx);
  ast::Conditional conditional(P::IfDeclContext *ctx);
  /// Records in `at` how many of each kind of declaration `m` has so far
  /// (For::before).
  static void placeAt(const ast::Model &m, std::size_t *at);
  ast::Signal signal(P::SignalDeclContext *ctx);
  ast::Signal discrete(P::DiscreteDeclContext *ctx);
  ast::Output output(P::OutputItemContext *ctx);
  ast::Experiment experiment(P::ExperimentDeclContext *ctx);

  ast::ExprPtr expr(P::ExprContext *ctx);
  ast::ExprPtr expr(P::ElseExprContext *ctx);
  /// An expression's list of operands and operators, folded by precedence.
  struct OperandList;
  ast::ExprPtr sum(OperandList &list);
  ast::ExprPtr product(OperandList &list);
  ast::ExprPtr signedPower(OperandList &list);
  ast::ExprPtr operand(P::SignedOperandContext *ctx);
  ast::ExprPtr primary(P::PrimaryContext *ctx);
  /// The name alone that `ctx` is, `name` or (with `index`) `name[i]`, or
  /// null when it is anything else.
  P::IdentContext *bareName(P::ExprContext *ctx, P::IndexContext **index);

  /// Records a syntax error at `offending`, where one of `expected` was
  /// wanted, and abandons the build.
  [[noreturn]] void fail(const antlr4::Token *offending, std::initializer_list<size_t> expected);

  std::string text(const antlr4::Token *tok) const;
  SourceRange range(const antlr4::Token *tok) const;
  SourceRange range(antlr4::ParserRuleContext *ctx) const;
  /// The expression's tokens, one space wherever the source had a gap.
  std::string normalizedText(antlr4::ParserRuleContext *ctx) const;

  SourceText src_;
  antlr4::TokenStream &tokens_;
  bool indexed_ = false; ///< a name with an index, a loop or an `if` block was built
  /// Building the condition of an `if` block, where `connected(port)` may stand.
  bool connectedAllowed_ = false;
  std::optional<SyntaxError> error_;
  /// The models and components whose declarations were built during the
  /// parse, in order, and how many of them build() has taken.
  std::vector<std::pair<antlr4::ParserRuleContext *, std::unique_ptr<ast::Model>>> begun_;
  std::size_t taken_ = 0;
};

} // namespace hbg::syntax
