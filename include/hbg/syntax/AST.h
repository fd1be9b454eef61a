//===- hbg/syntax/AST.h - The abstract syntax tree of a .hbg file ---------===//
//
// A tree of unique_ptr nodes, each with a source range, produced by the
// parser and read by sema. No ANTLR type appears here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/Compare.h"
#include "hbg/support/FunctionRef.h"
#include "hbg/support/Source.h"

#include <memory>
#include <string>
#include <vector>

namespace hbg::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Guard;

/// The index expressions of a name's `[...]`, in order. The name's text
/// keeps the brackets with the commas between them and nothing else
/// (`mass[]` for `mass[i]`, `node[,]` for `node[i, j]`); flattening puts
/// in the values (`mass[3]`). Empty when the name has no index.
using Indices = std::vector<ExprPtr>;

/// What an expression node is.
enum class ExprKind {
  Number, ///< `number`
  Name,   ///< `name` (a parameter, a signal, `time`, ...)
  Member, ///< `name.member` (a variable of an element, junction or bond)
  Unary,  ///< `op operands[0]`; op is '-' (or '+')
  Binary, ///< `operands[0] op operands[1]`; op is one of + - * / ^
  Call,   ///< `name(operands...)`
  If,     ///< `if condition then operands[0] else operands[1]`
  Array,  ///< `[operands...]` (an argument of `table`)
  String, ///< `"name"`, its text without the quotes (the file of `table`)
};

/// An expression. Which fields are used depends on `kind`.
struct Expr {
  ExprKind kind;
  SourceRange range;     ///< the whole expression
  double number = 0;     ///< Number
  std::string name;      ///< Name, Member (the base), Call (the callee), String
  SourceRange nameRange; ///< the identifier of Name, Member and Call
  std::string member;    ///< Member (`name` is then a path: `d1.r` in `d1.r.e`)
  SourceRange memberRange;
  Indices indices;       ///< Name, Member: of `name`
  char op = 0;                   ///< Unary, Binary
  std::vector<ExprPtr> operands; ///< Unary (1), Binary (2), Call (arguments), If (2)
  /// If: its condition, a guard whose comparisons have no mark (0).
  std::shared_ptr<Guard> condition;

  Expr() = default;
  Expr(Expr &&) = default;
  Expr &operator=(Expr &&) = default;
  /// Frees the operands with a loop, not recursion: a chain of a million
  /// `+` is a million nodes deep on its left.
  ~Expr();
};

/// `parameter name = value;`
struct Parameter {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
  /// Set by flattening: `for` loops, `if` blocks or indices were computed from it, with
  /// `value` (now that number).
  bool structural = false;
  /// `input u;`: set between steps while the model runs; `value` is its
  /// value until then (0 when the declaration gives none).
  bool input = false;
};

/// One argument of an element: positional (`name` empty) or named (`e = ...`).
struct ElementArg {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

/// `name = value;` inside an element's braces: an initial value.
struct InitialValue {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

/// `KIND name(args) { initial values }` with KIND one of
/// Se Sf MSe MSf C I R TF GY MTF MGY.
struct Element {
  std::string kind;
  SourceRange kindRange;
  std::string name;
  SourceRange nameRange;
  Indices nameIndices;
  std::vector<ElementArg> args;
  SourceRange argsRange; ///< from `(` to `)`
  std::vector<InitialValue> initials;
};

using hbg::CompareOp;

/// What a guard node is.
enum class GuardKind {
  Compare, ///< `(lhs op rhs)+` or `(lhs op rhs)-`
  And,     ///< `children[0] and children[1] and ...` (two or more)
  Or,      ///< `children[0] or children[1] or ...` (two or more)
  Not,     ///< `not children[0]`
  /// `connected(port)` in the condition of an `if` block of declarations
  /// (never in an expression's): `lhs` is the port's name, a Name.
  Connected,
  /// `b`, a name alone (`lhs`): a Boolean signal, which holds where it is 1
  /// (`if b then ...`, `not b and c`, `(b)+` in a guard). Sema checks
  /// that it names one.
  Truth,
};

struct Guard;
using GuardPtr = std::unique_ptr<Guard>;

/// A transition's guard. Which fields are used depends on `kind`.
struct Guard {
  GuardKind kind;
  SourceRange range; ///< the whole guard (a comparison: from `(` to its mark)
  CompareOp op = CompareOp::Less; ///< Compare
  ExprPtr lhs, rhs;               ///< Compare
  /// Compare: '+' (parameter abstraction, judged on a posteriori values) or
  /// '-' (time-scale abstraction, judged on a priori values).
  char mark = '+';
  std::vector<GuardPtr> children; ///< And, Or (two or more), Not (one)
};

/// `on;`, `off initial;`, `on closed;`: a state of a switched junction.
/// Unnamed states are called `on` or `off`.
struct FsmState {
  bool on = false;
  std::string name;
  SourceRange nameRange; ///< the name, or the `on`/`off` keyword when unnamed
  bool initial = false;
  SourceRange initialRange; ///< the `initial` keyword, when given
  SourceRange range;        ///< the whole declaration
};

/// `from -> to when guard;`
struct FsmTransition {
  std::string from, to;
  SourceRange fromRange, toRange;
  GuardPtr guard;
  SourceRange range; ///< the whole declaration
};

/// The `{ ... }` of a switched junction.
struct Fsm {
  std::vector<FsmState> states;
  std::vector<FsmTransition> transitions;
  SourceRange range; ///< from `{` to `}`
};

/// `0 name;` or `1 name;`, or `0 name switched { fsm }`.
struct Junction {
  char kind; ///< '0' or '1'
  SourceRange kindRange;
  std::string name;
  SourceRange nameRange;
  Indices nameIndices;
  bool switched = false;
  SourceRange switchedRange; ///< the `switched` keyword
  bool dissipative = false;  ///< `switched dissipative`
  std::unique_ptr<Fsm> fsm;  ///< set exactly when `switched`
  /// `0 node pseudo;`: the word after the name, if any (Flatten reports
  /// anything but `pseudo`), and whether it is `pseudo`.
  std::string mark;
  SourceRange markRange;
  bool pseudo = false;
};

/// `bond from -> to;` or `bond name: from -> to;` (power flows from -> to).
/// The ends are paths: `d1.a` is port `a` of instance `d1`.
struct Bond {
  std::string name; ///< empty when unnamed
  SourceRange nameRange;
  std::string from, to;
  SourceRange fromRange, toRange;
  Indices nameIndices, fromIndices, toIndices;
  SourceRange range; ///< the whole declaration
};

/// `signal name = value;`, or `discrete name(initial) when clock = value;`:
/// a discrete value, which `value` updates at each tick of `clock`.
struct Signal {
  std::string name;
  SourceRange nameRange;
  Indices nameIndices;
  ExprPtr value;
  bool discrete = false;
  /// `signal b = x > 1 and not c;`: a Boolean signal, whose value is `if
  /// condition then 1 else 0`.
  bool boolean = false;
  ExprPtr initial;           ///< discrete: the value before the first tick (null: 0)
  ExprPtr clock;             ///< discrete: `sample(period)` or `sample(period, start)`
  SourceRange keywordRange;  ///< discrete: `discrete`
};

/// One item of `output a, b = expr, ...;`: `name` is empty for a bare
/// expression, whose printed text then names the column.
struct Output {
  std::string name;
  SourceRange nameRange;
  Indices nameIndices;
  ExprPtr value;
  std::string text; ///< the expression's source text
};

/// `name = value;` inside `experiment { ... }`: a default of the run.
struct ExperimentSetting {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

/// `experiment { settings }`
struct Experiment {
  SourceRange keywordRange; ///< the `experiment` keyword
  std::vector<ExperimentSetting> settings;
};

/// `port a = target;`: a port of a component, the element `target` names
/// (a path through nested instances: `inner.j`).
struct Port {
  std::string name;
  SourceRange nameRange;
  std::string target; ///< the path, segments joined by `.`
  SourceRange targetRange;
  Indices targetIndices;
  /// `port p = j in`: power enters the component through the port (a bond
  /// outside points at it); `out`: power leaves (a bond points away).
  enum class Direction { Any, In, Out } direction = Direction::Any;
  SourceRange directionRange;
  /// The word written after the target when it is not `in` (flattening
  /// reports one that is not `out` either).
  std::string directionText;
};

/// `Type name(param = value, ...);`: an instance of a component.
struct Instance {
  std::string type;
  SourceRange typeRange;
  std::string name;
  SourceRange nameRange;
  Indices nameIndices;
  std::vector<ElementArg> args; ///< parameter overrides, each named
  SourceRange range;            ///< the whole declaration
};

struct Model;

/// `for var in from:to { body }`.
struct For {
  std::string var;
  SourceRange varRange;
  SourceRange keywordRange; ///< `for`
  ExprPtr from, to;
  /// The declarations inside, kept as a model's are (parameters, ports and
  /// `experiment` are not allowed there).
  std::unique_ptr<Model> body;
  /// Where the loop stands among the declarations around it: how many
  /// elements, junctions, bonds, signals, outputs and instances come
  /// before it (unrolled, its own take that place: output columns keep
  /// the order of the source).
  std::size_t before[6] = {0, 0, 0, 0, 0, 0};
};

/// `if c1 { ... } else if c2 { ... } else { ... }`: the declarations of
/// the first branch whose condition holds, decided when the model is
/// built; those of the others do not exist.
struct Conditional {
  /// One branch; a list, so that a chain of `else if` nests nothing.
  struct Branch {
    SourceRange keywordRange; ///< `if`, or the `else` of a plain `else`
    /// Comparisons without marks (0), and GuardKind::Connected; null for
    /// a plain `else`, which is last.
    GuardPtr condition;
    /// Its declarations, kept as a model's are (parameters, ports and
    /// `experiment` are not allowed there).
    std::unique_ptr<Model> body;
  };
  std::vector<Branch> branches;
  /// Where the block stands among the declarations around it, as For's.
  std::size_t before[6] = {0, 0, 0, 0, 0, 0};
};

/// A name declared in a branch of an `if` block that was not taken: it
/// does not exist, and a use of it is told why.
struct AbsentName {
  std::string name;
  SourceRange declared; ///< its name in the declaration
};

/// `model name { ... }`, or `component name { ... }`.
struct Model {
  std::string name;
  SourceRange nameRange;
  std::vector<Parameter> parameters;
  std::vector<Element> elements;
  std::vector<Junction> junctions;
  std::vector<Bond> bonds;
  std::vector<Signal> signals;
  std::vector<Output> outputs;
  /// Every `experiment` block, in order (sema allows one).
  std::vector<Experiment> experiments;
  /// A component (declared `component`), not a model.
  bool component = false;
  SourceRange keywordRange; ///< `component`
  std::vector<Port> ports;
  std::vector<Instance> instances;
  std::vector<For> loops;
  std::vector<Conditional> conditionals;
  /// Set by flattening: names declared only in branches of `if` blocks
  /// that were not taken (without indices), for the note on an unknown
  /// name.
  std::vector<AbsentName> absent;
  /// A component: its whole declaration, `component` to `}`.
  SourceRange range;
};

/// An instance of a component in a flattened model, for messages about
/// lines inside the component: which instance, of what, declared where.
struct InstanceInfo {
  std::string path; ///< `outer.inner`
  std::string type;
  SourceRange declared; ///< the instance's name in its declaration
  SourceRange body;     ///< the component's declaration (Model::range)
};

/// `import name;` or `import "path";`.
struct Import {
  std::string name; ///< the library name, or the path as written
  bool isPath = false;
  SourceRange range; ///< the name or the string
};

/// A parsed file.
struct File {
  std::uint32_t fileId = 0;
  std::vector<Import> imports;
  std::vector<std::unique_ptr<Model>> models; ///< models and components, in order
  /// Some name has an index or some body a `for` loop or an `if` block.
  bool indexed = false;
  /// Set by flattening: every instance expanded, outer ones first.
  std::vector<InstanceInfo> instances;
  /// Made by flattening: names inside instances and loops differ from
  /// the source text's.
  bool flattened = false;
};

/// Called on each node of a copy, with the node it copies, once its own
/// fields are copied (before its operands are): flattening and loop
/// unrolling rename names there.
using CopyVisitor = FunctionRef<void(Expr &copy, const Expr &original)>;

/// Deep copies (without recursion along operand chains, which may be a
/// million deep). Index expressions are not copied: `visit` computes them
/// into the name.
ExprPtr copy(const Expr &e, CopyVisitor visit);
GuardPtr copy(const Guard &g, CopyVisitor visit);
/// A switched junction's state machine, its guards copied with `visit`.
std::unique_ptr<Fsm> copy(const Fsm &fsm, CopyVisitor visit);
/// A declaration under the name `name` (its index expressions dropped):
/// an element's argument values and initial values are what `value`
/// makes of them (given the argument's name, "" for an initial value); a
/// junction's guards are copied with `visit`.
Element copy(const Element &x, std::string name,
             FunctionRef<ExprPtr(const Expr &value, const std::string &arg)> value);
Junction copy(const Junction &x, std::string name, CopyVisitor visit);

/// An expression or guard as source text, parenthesised where it must be:
/// `2 * (a.e - b)`, `(x <= 0)+ and not (v > 0)-`.
std::string print(const Expr &e);
std::string print(const Guard &g);

/// Prints the AST as an indented tree (`hbgc run --emit=ast`).
std::string dump(const File &file);

} // namespace hbg::ast
