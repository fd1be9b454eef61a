//===- compiler/sema/Analyzer.h - The state of sema's steps -----*- C++ -*-===//
//
// Private to compiler/sema: the Analyzer that builds one model's bond
// graph, whose members are sema's steps, each defined in the file of its
// concept (Sema.cpp lists them), and what those files share.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/sema/Sema.h"
#include "hbg/support/FunctionRef.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace hbg::sema {

/// What a model-level name refers to.
struct NameInfo {
  enum Kind { Parameter, Element, Bond, Signal } kind;
  std::uint32_t index;
  SourceRange range;
};

/// Where an expression is being lowered, which decides what it may use.
struct ExprScope {
  /// Local names of a constitutive law (`q`, `p`, `e`, `f`) and their symbols.
  std::vector<std::pair<std::string, sym::SymbolId>> locals;
  /// The signal being defined, if any (integral() is allowed only there).
  int signal = -1;
  /// What the local names stand for inside `pre(...)`, when that differs
  /// from `locals`: a held value is read off the model's variables at an
  /// event, so an R law's `e` or `f` there is its bond's variable.
  std::vector<std::pair<std::string, sym::SymbolId>> heldLocals;
  /// Inside `pre(...)`, where another `pre` is not allowed.
  bool inPre = false;
};

/// How messages name an element's kind: "R element", "0-junction".
std::string elementNoun(bg::ElementKind k);
/// `if m > 0 then a else b`, with the sign of m a kink when m varies.
sym::ExprId ifPositive(sym::ExprContext &ctx, sym::ExprId m, sym::ExprId a, sym::ExprId b);
/// `if m >= 0 then a else b`.
sym::ExprId ifNotNegative(sym::ExprContext &ctx, sym::ExprId m, sym::ExprId a, sym::ExprId b);

/// Builds the bond graph of one model; run() takes the steps in order.
class Analyzer {
public:
  Analyzer(const SourceManager &sm, DiagnosticEngine &diags) : sm_(sm), diags_(diags) {}

  std::optional<bg::BondGraph> run(const ast::File &file);

private:
  // Names (Sema.cpp).
  /// Declares `name`, a string of the AST, which names_ views.
  void declare(const std::string &name, SourceRange range, NameInfo info);
  /// The names an expression may read: parameters, signals, `time` (the
  /// candidates for a misspelt one).
  std::vector<std::string> valueNames() const;
  void unknownName(const std::string &name, SourceRange range,
                   const std::vector<std::string> &candidates);

  // Elements and bonds (Structure.cpp).
  void buildStructure(const ast::Model &m);
  /// Marks every element bonded to a `pseudo` junction (Element::pseudo).
  void markPseudo();
  /// `discrete x when edge(b) = ...`: the Edge clock of b and the held
  /// values of the pass after an event settles (Sampled.cpp).
  void lowerEdge(const ast::Signal &s, std::size_t index, const ast::Expr &c);
  /// A held value of `kind` with value 0 (Started: 1), unless one exists.
  void addOnce(bg::Held::Kind kind, const char *name, SourceRange range);
  /// Whether `e` names a Boolean signal; reports NotBoolean where not.
  bool isBoolean(const ast::Expr &e);
  void checkBondCounts();

  // Parameters, elements' values and laws, signals, outputs (Values.cpp).
  void lowerParameters(const ast::Model &m);
  void lowerElements(const ast::Model &m);
  void lowerSignalsAndOutputs(const ast::Model &m);
  void checkStorageValues();
  /// `what` names the value in the message, built only for one.
  sym::ExprId lowerConstant(const ast::Expr &e, FunctionRef<std::string()> what);
  bool isConstant(sym::ExprId v, SourceRange range, FunctionRef<std::string()> what);

  // The experiment block (Experiment.cpp).
  void lowerExperiment(const ast::Model &m);
  void checkExperiment();

  // Switched junctions' state machines (StateMachines.cpp).
  void lowerSwitchedJunctions(const ast::Model &m);
  std::optional<bg::Fsm> lowerFsm(const ast::Junction &j);
  bg::Guard lowerGuard(const ast::Guard &g, bool &ok);

  // Expressions (Expressions.cpp).
  sym::ExprId lower(const ast::Expr &e, const ExprScope &scope);
  sym::ExprId lowerName(const ast::Expr &e, const ExprScope &scope);
  sym::ExprId lowerMember(const ast::Expr &e);
  /// `activeState(j.s)` and `stateIndex(j)`.
  sym::ExprId lowerStateCall(const ast::Expr &e);
  sym::ExprId lowerCall(const ast::Expr &e, const ExprScope &scope);
  /// `if cond then yes else no` as selects on the signs of the
  /// comparisons' differences (kinks where they vary).
  sym::ExprId lowerCondition(const ast::Guard &cond, sym::ExprId yes, sym::ExprId no,
                             const ExprScope &scope);

  // Tables (Tables.cpp).
  /// `table(x, [xs], [ys])` and `table("file.csv", x)`.
  sym::ExprId lowerTable(const ast::Expr &e, const ExprScope &scope);
  /// The (x, y) rows of a table file, or false with a diagnostic at `at`.
  bool readTable(const ast::Expr &at, std::vector<double> &xs, std::vector<double> &ys);

  // Held values (Pre.cpp).
  sym::ExprId lowerPre(const ast::Expr &e, const ExprScope &scope);
  /// A held value's slot and symbol (Sampled.cpp).
  sym::SymbolId addHeld(bg::Held::Kind kind, std::string name, SourceRange range);
  /// A discrete value's initial value, clock and update.
  void lowerDiscrete(const ast::Signal &s, bg::Signal &sig);
  /// The source text of `range`, whitespace runs made single spaces.
  std::string sourceText(SourceRange range) const;

  // Dependency cycles (Dependencies.cpp).
  void orderParameters();
  void checkSignalCycles();

  sym::ExprContext &ctx() { return *g_.ctx; }

  const SourceManager &sm_;
  DiagnosticEngine &diags_;
  bg::BondGraph g_;
  /// Model-level names, viewing the AST's strings (which outlive sema).
  std::unordered_map<std::string_view, NameInfo> names_;
  /// The Boolean signals (`signal b = x > 1;`) by name.
  std::unordered_set<std::string> booleans_;
  std::vector<int> signalIntegrals_;    ///< integrals created per signal
  const ast::Model *model_ = nullptr;
  bool flattened_ = false; ///< ast::File::flattened
  /// The symbols of `activeState(j.s)` by (junction, state), and of
  /// `stateIndex(j)` by (junction, UINT32_MAX); their junctions are marked
  /// observed once their state machines are built.
  std::map<std::pair<std::uint32_t, std::uint32_t>, sym::SymbolId> stateSymbols_;
};

} // namespace hbg::sema
