//===- compiler/sema/Sema.cpp - AST to checked bond graph -----------------===//
//
// Sema runs in four steps, each needing the previous one's results:
//   1. declare every name (duplicates are errors);
//   2. create elements and bonds, then check bond counts and directions
//      (junction and two-port variables need their bonds);
//   3. lower expressions (parameters, element values and laws, initial
//      values, signals, outputs) into the symbolic DAG;
//   4. check parameter and signal dependencies for cycles.
//
//===----------------------------------------------------------------------===//

#include "hbg/sema/Sema.h"

#include "hbg/support/Graph.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <unordered_map>

namespace hbg::sema {

using namespace hbg::bg;

namespace {

/// What a model-level name refers to.
struct NameInfo {
  enum Kind { Parameter, Element, Bond, Signal } kind;
  std::uint32_t index;
  SourceRange range;
};

/// Kinds by keyword.
const std::map<std::string, ElementKind> kElementKinds = {
    {"Se", ElementKind::Se}, {"Sf", ElementKind::Sf},   {"MSe", ElementKind::MSe},
    {"MSf", ElementKind::MSf}, {"C", ElementKind::C},   {"I", ElementKind::I},
    {"R", ElementKind::R},   {"TF", ElementKind::TF},   {"GY", ElementKind::GY},
    {"MTF", ElementKind::MTF}, {"MGY", ElementKind::MGY},
};

/// Functions callable in expressions that are operations of the DAG, by
/// their name in source (hbg/support/ExprOps.def); each takes as many
/// arguments as its op has operands.
const std::map<std::string, sym::Op> kFunctions = [] {
  std::map<std::string, sym::Op> byName;
  for (std::size_t i = 0; i < sym::kNumOps; ++i)
    if (const char *name = sym::functionName(static_cast<sym::Op>(i)))
      byName.emplace(name, static_cast<sym::Op>(i));
  return byName;
}();

/// Functions built from others when lowered (docs/language.md,
/// "Functions"), by name: their arity and the expression. Their jumps are
/// those of `floor` and of the signs in `if` conditions, which become
/// events (of time alone: time events).
struct DerivedFunction {
  int arity;
  sym::ExprId (*build)(sym::ExprContext &ctx, const sym::ExprId *args);
};

/// `if m > 0 then a else b`, with the sign of m a kink when m varies.
sym::ExprId ifPositive(sym::ExprContext &ctx, sym::ExprId m, sym::ExprId a, sym::ExprId b) {
  return ctx.select(ctx.unary(sym::Op::Sign, m), a, b);
}
/// `if m >= 0 then a else b`.
sym::ExprId ifNotNegative(sym::ExprContext &ctx, sym::ExprId m, sym::ExprId a, sym::ExprId b) {
  return ctx.select(ctx.unary(sym::Op::Sign, ctx.neg(m)), b, a);
}
/// x - y floor(x / y): in [0, y) for y > 0.
sym::ExprId modulo(sym::ExprContext &ctx, sym::ExprId x, sym::ExprId y) {
  return ctx.sub(x, ctx.mul(y, ctx.unary(sym::Op::Floor, ctx.div(x, y))));
}

const std::map<std::string, DerivedFunction> kDerived = {
    {"ceil", {1, [](sym::ExprContext &ctx, const sym::ExprId *a) {
                return ctx.neg(ctx.unary(sym::Op::Floor, ctx.neg(a[0])));
              }}},
    {"mod", {2, [](sym::ExprContext &ctx, const sym::ExprId *a) { return modulo(ctx, a[0], a[1]); }}},
    // 1 from t0 on.
    {"step", {1, [](sym::ExprContext &ctx, const sym::ExprId *a) {
                return ifNotNegative(ctx, ctx.sub(ctx.time(), a[0]), ctx.constant(1), ctx.constant(0));
              }}},
    // 1 over [t0 + k period, t0 + k period + width) for k >= 0.
    {"pulse", {3, [](sym::ExprContext &ctx, const sym::ExprId *a) {
                 sym::ExprId since = ctx.sub(ctx.time(), a[0]);
                 sym::ExprId on = ifPositive(ctx, ctx.sub(a[1], modulo(ctx, since, a[2])),
                                             ctx.constant(1), ctx.constant(0));
                 return ifNotNegative(ctx, since, on, ctx.constant(0));
               }}},
    // Rises from 0 towards 1 over each period, back to 0 at its end.
    {"saw", {1, [](sym::ExprContext &ctx, const sym::ExprId *a) {
               return ctx.div(modulo(ctx, ctx.time(), a[0]), a[0]);
             }}},
    // 1 for the first fraction D of each period 1 / f.
    {"pwm", {2, [](sym::ExprContext &ctx, const sym::ExprId *a) {
               sym::ExprId phase = modulo(ctx, ctx.mul(ctx.time(), a[0]), ctx.constant(1));
               return ifPositive(ctx, ctx.sub(a[1], phase), ctx.constant(1), ctx.constant(0));
             }}},
};

const char *argumentWords(int arity) {
  static const char *words[] = {"no arguments", "one argument", "two arguments",
                                "three arguments"};
  return arity >= 0 && arity <= 3 ? words[arity] : "several arguments";
}

std::string elementNoun(ElementKind k) {
  return isJunction(k) ? std::string(kindName(k)) + "-junction"
                       : std::string(kindName(k)) + " element";
}

/// `noun` with its indefinite article, by how it is read aloud: "an R
/// element", "an MSe element", "a C element", "a 0-junction".
std::string withArticle(const std::string &noun) {
  bool vowelSound = !noun.empty() && std::string("AEFHILMNORSX").find(noun[0]) != std::string::npos;
  return (vowelSound ? "an " : "a ") + noun;
}

/// "no bonds", "one bond", "3 bonds".
std::string bondCount(std::size_t n) {
  return n == 0 ? "no bonds" : n == 1 ? "one bond" : std::to_string(n) + " bonds";
}

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

class Analyzer {
public:
  Analyzer(const SourceManager &sm, DiagnosticEngine &diags) : sm_(sm), diags_(diags) {}

  std::optional<BondGraph> run(const ast::File &file);

private:
  void declare(const std::string &name, SourceRange range, NameInfo info);
  void buildStructure(const ast::Model &m);
  void checkBondCounts();
  void lowerParameters(const ast::Model &m);
  void lowerElements(const ast::Model &m);
  void lowerSignalsAndOutputs(const ast::Model &m);
  void lowerSwitchedJunctions(const ast::Model &m);
  void lowerExperiment(const ast::Model &m);
  void checkExperiment();
  void checkStorageValues();
  std::optional<Fsm> lowerFsm(const ast::Junction &j);
  Guard lowerGuard(const ast::Guard &g, bool &ok);
  void orderParameters();
  void checkSignalCycles();

  sym::ExprId lower(const ast::Expr &e, const ExprScope &scope);
  sym::ExprId lowerName(const ast::Expr &e, const ExprScope &scope);
  sym::ExprId lowerMember(const ast::Expr &e);
  /// `activeState(j.s)` and `stateIndex(j)`.
  sym::ExprId lowerStateCall(const ast::Expr &e);
  sym::ExprId lowerCall(const ast::Expr &e, const ExprScope &scope);
  sym::ExprId lowerPre(const ast::Expr &e, const ExprScope &scope);
  /// `table(x, [xs], [ys])` and `table("file.csv", x)`.
  sym::ExprId lowerTable(const ast::Expr &e, const ExprScope &scope);
  /// The (x, y) rows of a table file, or false with a diagnostic at `at`.
  bool readTable(const ast::Expr &at, std::vector<double> &xs, std::vector<double> &ys);
  /// `if cond then yes else no` as selects on the signs of the
  /// comparisons' differences (kinks where they vary).
  sym::ExprId lowerCondition(const ast::Guard &cond, sym::ExprId yes, sym::ExprId no,
                             const ExprScope &scope);
  sym::ExprId lowerConstant(const ast::Expr &e, const std::string &what);
  bool isConstant(sym::ExprId v, SourceRange range, const std::string &what);
  void unknownName(const std::string &name, SourceRange range,
                   const std::vector<std::string> &candidates);

  sym::ExprContext &ctx() { return *g_.ctx; }

  const SourceManager &sm_;
  DiagnosticEngine &diags_;
  BondGraph g_;
  std::unordered_map<std::string, NameInfo> names_;
  std::vector<std::string> valueNames_; ///< parameters, signals, `time`
  std::vector<int> signalIntegrals_;    ///< integrals created per signal
  const ast::Model *model_ = nullptr;
  bool flattened_ = false; ///< ast::File::flattened
  /// The symbols of `activeState(j.s)` by (junction, state), and of
  /// `stateIndex(j)` by (junction, UINT32_MAX); their junctions are marked
  /// observed once their state machines are built.
  std::map<std::pair<std::uint32_t, std::uint32_t>, sym::SymbolId> stateSymbols_;
};

void Analyzer::declare(const std::string &name, SourceRange range, NameInfo info) {
  if (name == "time") {
    diags_.report(DiagKind::ReservedName, range, {name});
    return;
  }
  auto [it, inserted] = names_.emplace(name, info);
  if (!inserted) {
    diags_.report(DiagKind::DuplicateName, range, {name});
    diags_.note(DiagKind::PreviousDefinition, it->second.range, {name});
  }
}

std::optional<BondGraph> Analyzer::run(const ast::File &file) {
  if (file.models.empty()) {
    diags_.report(DiagKind::NoModel, {}, {sm_.name(file.fileId)});
    return std::nullopt;
  }
  if (file.models.size() > 1) {
    const ast::Model &second = *file.models[1];
    diags_.report(DiagKind::MultipleModels, second.nameRange, {second.name});
    return std::nullopt;
  }
  const ast::Model &m = *file.models[0];
  model_ = &m;
  flattened_ = file.flattened;
  g_.modelName = m.name;

  // 1. Names. Declaration order across kinds is by source position so that
  // "first defined here" points at the earlier one.
  struct Decl {
    std::string name;
    SourceRange range;
    NameInfo info;
  };
  std::vector<Decl> decls;
  for (std::size_t i = 0; i < m.parameters.size(); ++i)
    decls.push_back({m.parameters[i].name, m.parameters[i].nameRange,
                     {NameInfo::Parameter, std::uint32_t(i), m.parameters[i].nameRange}});
  for (std::size_t i = 0; i < m.elements.size(); ++i)
    decls.push_back({m.elements[i].name, m.elements[i].nameRange,
                     {NameInfo::Element, std::uint32_t(i), m.elements[i].nameRange}});
  for (std::size_t i = 0; i < m.junctions.size(); ++i)
    decls.push_back({m.junctions[i].name, m.junctions[i].nameRange,
                     {NameInfo::Element, std::uint32_t(m.elements.size() + i),
                      m.junctions[i].nameRange}});
  for (std::size_t i = 0; i < m.bonds.size(); ++i)
    if (!m.bonds[i].name.empty())
      decls.push_back({m.bonds[i].name, m.bonds[i].nameRange,
                       {NameInfo::Bond, std::uint32_t(i), m.bonds[i].nameRange}});
  for (std::size_t i = 0; i < m.signals.size(); ++i)
    decls.push_back({m.signals[i].name, m.signals[i].nameRange,
                     {NameInfo::Signal, std::uint32_t(i), m.signals[i].nameRange}});
  std::stable_sort(decls.begin(), decls.end(), [](const Decl &a, const Decl &b) {
    return a.range.begin.offset < b.range.begin.offset;
  });
  for (const Decl &d : decls)
    declare(d.name, d.range, d.info);
  for (const ast::Parameter &p : m.parameters)
    valueNames_.push_back(p.name);
  for (const ast::Signal &s : m.signals)
    valueNames_.push_back(s.name);
  valueNames_.push_back("time");

  // 2. Structure.
  buildStructure(m);
  if (diags_.hasErrors())
    return std::nullopt;
  checkBondCounts();

  // 3. Expressions.
  lowerParameters(m);
  lowerElements(m);
  lowerSignalsAndOutputs(m);
  lowerSwitchedJunctions(m);
  for (const auto &[key, symbol] : stateSymbols_)
    if (g_.elements[key.first].fsm)
      g_.elements[key.first].fsm->observed = true;
  lowerExperiment(m);

  // 4. Dependencies.
  if (!diags_.hasErrors())
    orderParameters();
  if (!diags_.hasErrors())
    checkExperiment();
  if (!diags_.hasErrors())
    checkStorageValues();
  if (!diags_.hasErrors())
    checkSignalCycles();
  if (diags_.hasErrors())
    return std::nullopt;
  std::string problem = g_.verify();
  if (!problem.empty())
    throw InternalError("bond graph verifier: " + problem);
  return std::move(g_);
}

void Analyzer::buildStructure(const ast::Model &m) {
  for (const ast::Parameter &p : m.parameters) {
    Parameter param;
    param.name = p.name;
    param.range = p.nameRange;
    param.structural = p.structural;
    param.input = p.input;
    param.symbol = ctx().addSymbol(p.name, sym::SymbolKind::Parameter,
                                   static_cast<std::uint32_t>(g_.parameters.size()));
    g_.parameters.push_back(std::move(param));
  }
  for (const ast::Element &e : m.elements) {
    ElementId id = g_.addElement(kElementKinds.at(e.kind), e.name, e.nameRange);
    Element &el = g_.elements[id.index];
    if (el.kind == ElementKind::C)
      el.state = g_.addVariable(e.name + ".q", {VariableInfo::State, id.index});
    else if (el.kind == ElementKind::I)
      el.state = g_.addVariable(e.name + ".p", {VariableInfo::State, id.index});
  }
  for (const ast::Junction &j : m.junctions)
    g_.addElement(j.kind == '0' ? ElementKind::Zero : ElementKind::One, j.name, j.nameRange);
  for (const ast::Signal &s : m.signals) {
    Signal sig;
    sig.name = s.name;
    sig.range = s.nameRange;
    sig.symbol = g_.addVariable(s.name, {VariableInfo::Signal, std::uint32_t(g_.signals.size())});
    g_.signals.push_back(std::move(sig));
  }

  // Bonds: both ends must name elements or junctions.
  std::vector<std::string> elementNames;
  for (const Element &e : g_.elements)
    elementNames.push_back(e.name);
  for (const ast::Bond &b : m.bonds) {
    auto resolveEnd = [&](const std::string &name, SourceRange range) -> ElementId {
      auto it = names_.find(name);
      if (it == names_.end()) {
        unknownName(name, range, elementNames);
        return {};
      }
      if (it->second.kind != NameInfo::Element) {
        static const char *nouns[] = {"parameter", "element", "bond", "signal"};
        diags_.report(DiagKind::NotAnElement, range, {name, nouns[it->second.kind]});
        return {};
      }
      return ElementId{it->second.index};
    };
    ElementId from = resolveEnd(b.from, b.fromRange);
    ElementId to = resolveEnd(b.to, b.toRange);
    if (!from.valid() || !to.valid())
      continue;
    if (from == to) {
      diags_.report(DiagKind::BondToItself, b.range, {b.from});
      continue;
    }
    std::string name = b.name;
    if (name.empty()) {
      // Unnamed bonds are b1, b2, ... by position; a declared name wins and
      // the bond takes the next free suffix.
      name = "b" + std::to_string(g_.bonds.size() + 1);
      while (names_.count(name))
        name += "_";
    }
    g_.addBond(from, to, name, b.range);
  }
}

void Analyzer::checkBondCounts() {
  for (std::size_t i = 0; i < g_.elements.size(); ++i) {
    Element &e = g_.elements[i];
    ElementId id{static_cast<std::uint32_t>(i)};
    std::size_t n = e.bonds.size();
    if (isJunction(e.kind)) {
      if (n < 2)
        diags_.report(DiagKind::JunctionTooFewBonds, e.range, {e.name, bondCount(n)});
    } else if (isTwoPort(e.kind)) {
      if (n != 2) {
        diags_.report(DiagKind::TwoPortBondCount, e.range, {kindName(e.kind), e.name, bondCount(n)});
        continue;
      }
      int in = (g_.sign(e.bonds[0], id) > 0) + (g_.sign(e.bonds[1], id) > 0);
      if (in != 1) {
        diags_.report(DiagKind::TwoPortDirection, e.range, {kindName(e.kind), e.name, in, 2 - in});
        continue;
      }
      if (g_.sign(e.bonds[0], id) < 0)
        std::swap(e.bonds[0], e.bonds[1]);
    } else if (n != 1) {
      diags_.report(DiagKind::OnePortBondCount, e.range, {kindName(e.kind), e.name, bondCount(n)});
    }
  }
}

void Analyzer::unknownName(const std::string &name, SourceRange range,
                           const std::vector<std::string> &candidates) {
  std::string best = closestName(name, candidates);
  if (best.empty())
    diags_.report(DiagKind::UnknownName, range, {name});
  else
    diags_.report(DiagKind::UnknownNameSuggest, range, {name, best});
}

/// Reports `what` (at `range`) unless `v` uses parameters and numbers only.
/// Held values are Parameter symbols too, but change at events: one of them
/// makes `v` not constant, with a note saying where and why.
bool Analyzer::isConstant(sym::ExprId v, SourceRange range, const std::string &what) {
  const Held *held = nullptr;
  const Parameter *input = nullptr;
  for (sym::SymbolId s : ctx().symbolsOf(v)) {
    if ((held = g_.heldOf(s)))
      break;
    const sym::Symbol &sym = ctx().symbol(s);
    if (sym.kind == sym::SymbolKind::Parameter && sym.slot < g_.parameters.size() &&
        g_.parameters[sym.slot].input && (input = &g_.parameters[sym.slot]))
      break;
  }
  if (ctx().isParametric(v) && !held && !input)
    return true;
  diags_.report(DiagKind::NotConstant, range, {what});
  if (held)
    diags_.note(DiagKind::HeldChangesAtEvents, held->range, {held->name});
  if (input)
    diags_.note(DiagKind::InputChanges, input->range, {input->name});
  return false;
}

sym::ExprId Analyzer::lowerConstant(const ast::Expr &e, const std::string &what) {
  sym::ExprId v = lower(e, {});
  if (v.valid() && !isConstant(v, e.range, what))
    return {};
  return v;
}

void Analyzer::lowerParameters(const ast::Model &m) {
  for (std::size_t i = 0; i < m.parameters.size(); ++i)
    g_.parameters[i].defaultValue =
        lowerConstant(*m.parameters[i].value, "the default of parameter `" + m.parameters[i].name + "`");
}

namespace {
/// The settings of `experiment { ... }`: the numeric ones, then `method`
/// (a null field).
std::vector<bg::ExperimentSetting> allSettings() {
  std::vector<bg::ExperimentSetting> all = bg::experimentSettings();
  all.push_back({"method", nullptr, false});
  return all;
}
/// runtime::parseMethod's names (sema does not link the runtime; a driver
/// test checks that each of these parses).
const char *const kMethods[] = {"auto", "dopri5", "rosenbrock", "rk4", "euler"};
} // namespace

void Analyzer::lowerExperiment(const ast::Model &m) {
  if (m.experiments.empty())
    return;
  for (std::size_t i = 1; i < m.experiments.size(); ++i) {
    diags_.report(DiagKind::DuplicateExperiment, m.experiments[i].keywordRange, {});
    diags_.note(DiagKind::FirstExperiment, m.experiments[0].keywordRange, {});
  }
  bg::Experiment &x = g_.experiment;
  std::vector<std::string> names;
  const std::vector<bg::ExperimentSetting> settings = allSettings();
  for (const bg::ExperimentSetting &s : settings)
    names.push_back(s.name);
  for (const ast::ExperimentSetting &s : m.experiments[0].settings) {
    const bg::ExperimentSetting *info = nullptr;
    for (const bg::ExperimentSetting &k : settings)
      if (s.name == k.name)
        info = &k;
    if (!info) {
      std::string best = closestName(s.name, names);
      if (best.empty())
        diags_.report(DiagKind::UnknownSetting, s.nameRange, {s.name, quoteList(names)});
      else
        diags_.report(DiagKind::UnknownSettingSuggest, s.nameRange, {s.name, best});
      continue;
    }
    auto given = std::find_if(x.ranges.begin(), x.ranges.end(),
                              [&](const auto &r) { return r.first == s.name; });
    if (given != x.ranges.end()) {
      diags_.report(DiagKind::DuplicateSetting, s.nameRange, {s.name});
      diags_.note(DiagKind::PreviousDefinition, given->second, {s.name});
      continue;
    }
    x.ranges.emplace_back(s.name, s.nameRange);
    if (!info->field) {
      // `method = dopri5`: a name, not a value.
      const ast::Expr &v = *s.value;
      bool known = v.kind == ast::ExprKind::Name &&
                   std::any_of(std::begin(kMethods), std::end(kMethods),
                               [&](const char *k) { return v.name == k; });
      if (!known) {
        std::vector<std::string> methods(std::begin(kMethods), std::end(kMethods));
        diags_.report(DiagKind::UnknownMethod, v.range,
                      {sm_.text(v.range.begin.file).substr(v.range.begin.offset, v.range.length),
                       quoteList(methods)});
        continue;
      }
      x.method = v.name;
      continue;
    }
    x.*(info->field) = lowerConstant(*s.value, "the experiment setting `" + s.name + "`");
  }
}

void Analyzer::checkStorageValues() {
  // A linear C or I of zero capacitance (inertance) has no law for its
  // effort (flow), and a negative one stores negative energy: an error at
  // the parameters' defaults; other values are the run's to use.
  std::vector<double> params;
  for (const Element &e : g_.elements) {
    if (!isStorage(e.kind) || e.law != bg::LawForm::Linear || !e.value.valid())
      continue;
    if (params.empty())
      params = bg::defaultParameterValues(g_);
    double v = ctx().evaluate(e.value, [&](sym::SymbolId s) {
      std::uint32_t slot = ctx().symbol(s).slot;
      return slot < params.size() ? params[slot] : std::nan("");
    });
    if (std::isfinite(v) && !(v > 0))
      diags_.report(DiagKind::StorageNotPositive, e.range,
                    {e.kind == ElementKind::C ? "capacitance" : "inertance", e.name, v});
  }
}

void Analyzer::checkExperiment() {
  // Values at the parameters' defaults; other values are checked when a
  // run evaluates them (Model::experiment).
  const bg::Experiment &x = g_.experiment;
  if (x.ranges.empty())
    return;
  std::vector<double> params = bg::defaultParameterValues(g_);
  auto value = [&](sym::ExprId e) {
    return ctx().evaluate(e, [&](sym::SymbolId s) { return params[ctx().symbol(s).slot]; });
  };
  auto where = [&](const char *name) {
    for (const auto &r : x.ranges)
      if (r.first == name)
        return r.second;
    return SourceRange{};
  };
  for (const bg::ExperimentSetting &s : bg::experimentSettings()) {
    if (!(x.*(s.field)).valid())
      continue;
    double v = value(x.*(s.field));
    if (!std::isfinite(v) || (s.positive && !(v > 0)))
      diags_.report(DiagKind::SettingNotPositive, where(s.name),
                    {s.name, s.positive ? "positive" : "finite", v});
  }
  if (x.tEnd.valid()) {
    double start = x.tStart.valid() ? value(x.tStart) : 0.0, end = value(x.tEnd);
    if (std::isfinite(start) && std::isfinite(end) && !(end > start))
      diags_.report(DiagKind::EndBeforeStart, where("t_end"),
                    {DiagArg::time(end), DiagArg::time(start)});
  }
}

void Analyzer::lowerElements(const ast::Model &m) {
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const ast::Element &a = m.elements[i];
    Element &e = g_.elements[i];
    std::string noun = elementNoun(e.kind);

    if (a.args.size() != 1) {
      diags_.report(DiagKind::WrongArgumentCount, a.argsRange.valid() ? a.argsRange : a.nameRange,
                    {noun, a.name, "one argument", a.args.size()});
      continue;
    }
    const ast::ElementArg &arg = a.args[0];

    // Named arguments are nonlinear laws, allowed on C, I and R only.
    if (!arg.name.empty()) {
      std::string allowed;
      sym::SymbolId local;
      if (e.kind == ElementKind::C && arg.name == "e") {
        e.law = LawForm::EffortLaw;
        local = e.state;
      } else if (e.kind == ElementKind::I && arg.name == "f") {
        e.law = LawForm::FlowLaw;
        local = e.state;
      } else if (e.kind == ElementKind::R && (arg.name == "e" || arg.name == "f")) {
        e.law = arg.name == "e" ? LawForm::EffortLaw : LawForm::FlowLaw;
        local = ctx().addSymbol(a.name + (arg.name == "e" ? ".f" : ".e"),
                                sym::SymbolKind::Variable, 0);
      } else {
        allowed = e.kind == ElementKind::C   ? "a value or `e = ...` of `q`"
                  : e.kind == ElementKind::I ? "a value or `f = ...` of `p`"
                  : e.kind == ElementKind::R ? "a value, `e = ...` of `f` or `f = ...` of `e`"
                                             : "only a value";
        diags_.report(DiagKind::BadLaw, arg.nameRange, {kindName(e.kind), a.name, arg.name, allowed});
        continue;
      }
      e.lawArg = local;
      ExprScope scope;
      std::string localName = e.kind == ElementKind::C   ? "q"
                              : e.kind == ElementKind::I ? "p"
                                                         : (arg.name == "e" ? "f" : "e");
      scope.locals.push_back({localName, local});
      // An R's local stands for its bond's variable (a storage element's
      // is its state, a model variable already).
      if (e.kind == ElementKind::R && e.bonds.size() == 1) {
        const Bond &b = g_.bond(e.bonds[0]);
        scope.heldLocals.push_back({localName, localName == "f" ? b.flow : b.effort});
      }
      e.lawExpr = lower(*arg.value, scope);
    } else if (e.kind == ElementKind::MSe || e.kind == ElementKind::MSf ||
               e.kind == ElementKind::MTF || e.kind == ElementKind::MGY) {
      e.value = lower(*arg.value, {});
    } else {
      sym::ExprId v = lower(*arg.value, {});
      std::string what = "the value of " + noun + " `" + a.name + "`";
      if (v.valid() && !isConstant(v, arg.value->range, what)) {
        if (isSource(e.kind) || isTwoPort(e.kind))
          diags_.note(DiagKind::UseModulatedSource, a.kindRange,
                      {isSource(e.kind)               ? "a source"
                       : e.kind == ElementKind::TF ? "a transformer"
                                                   : "a gyrator",
                       std::string("M") + kindName(e.kind) + " " + a.name + "(...)"});
        v = {};
      }
      e.value = v;
    }

    // Initial values.
    if (!isStorage(e.kind)) {
      if (!a.initials.empty())
        diags_.report(DiagKind::NoInitialValue, a.initials[0].nameRange, {kindName(e.kind), a.name});
      continue;
    }
    std::string expected = e.kind == ElementKind::C ? "q0" : "p0";
    for (const ast::InitialValue &iv : a.initials) {
      if (iv.name == "nominal") {
        if (e.nominal.valid()) {
          diags_.report(DiagKind::DuplicateNominal, iv.nameRange, {a.name});
          continue;
        }
        e.nominal = lowerConstant(*iv.value, "the nominal magnitude of `" + a.name + "`");
        if (e.nominal.valid() && ctx().isConst(e.nominal) &&
            !(std::abs(ctx().node(e.nominal).value) > 0))
          diags_.report(DiagKind::NominalNotPositive, iv.value->range, {a.name});
        continue;
      }
      if (iv.name != expected) {
        diags_.report(DiagKind::BadInitialValue, iv.nameRange,
                      {kindName(e.kind), a.name, iv.name, expected});
        continue;
      }
      if (e.initial.valid()) {
        diags_.report(DiagKind::DuplicateInitialValue, iv.nameRange, {iv.name, a.name});
        continue;
      }
      e.initial = lowerConstant(*iv.value, "the initial value of `" + a.name + "`");
      e.initialRange = iv.nameRange;
    }
    if (!e.initial.valid())
      e.initial = ctx().constant(0);
  }
}

void Analyzer::lowerSignalsAndOutputs(const ast::Model &m) {
  for (std::size_t i = 0; i < m.signals.size(); ++i) {
    ExprScope scope;
    scope.signal = static_cast<int>(i);
    g_.signals[i].value = lower(*m.signals[i].value, scope);
  }
  std::map<std::string, SourceRange> seen;
  for (const ast::Output &o : m.outputs) {
    Output out;
    out.name = o.name.empty() ? o.text : o.name;
    out.range = o.name.empty() ? o.value->range : o.nameRange;
    out.value = lower(*o.value, {});
    if (!seen.emplace(out.name, out.range).second) {
      diags_.report(DiagKind::DuplicateOutput, out.range, {out.name});
      continue;
    }
    g_.outputs.push_back(std::move(out));
  }
}

void Analyzer::lowerSwitchedJunctions(const ast::Model &m) {
  for (std::size_t i = 0; i < m.junctions.size(); ++i) {
    const ast::Junction &j = m.junctions[i];
    if (!j.switched || !j.fsm)
      continue;
    g_.elements[m.elements.size() + i].fsm = lowerFsm(j);
  }
}

std::optional<Fsm> Analyzer::lowerFsm(const ast::Junction &j) {
  const ast::Fsm &a = *j.fsm;
  Fsm fsm;
  fsm.dissipative = j.dissipative;
  bool ok = true;

  // States: unique names, exactly one initial.
  std::map<std::string, std::uint32_t> byName;
  const ast::FsmState *firstInitial = nullptr;
  for (const ast::FsmState &st : a.states) {
    auto [it, inserted] = byName.emplace(st.name, std::uint32_t(fsm.states.size()));
    if (!inserted) {
      diags_.report(DiagKind::DuplicateState, st.nameRange, {j.name, st.name});
      diags_.note(DiagKind::PreviousDefinition, fsm.states[it->second].range, {st.name});
      ok = false;
      continue;
    }
    if (st.initial) {
      if (firstInitial) {
        diags_.report(DiagKind::MultipleInitialStates, st.initialRange,
                      {j.name, firstInitial->name, st.name});
        diags_.note(DiagKind::FirstInitialState, firstInitial->initialRange, {firstInitial->name});
        ok = false;
      } else {
        firstInitial = &st;
        fsm.initial = std::uint32_t(fsm.states.size());
      }
    }
    fsm.states.push_back({st.name, st.on, st.nameRange});
  }
  if (!firstInitial) {
    diags_.report(DiagKind::NoInitialState, j.nameRange, {j.name});
    ok = false;
  }

  // Transitions: known states, not to themselves, guards lowered.
  std::vector<std::string> stateNames;
  for (const FsmState &st : fsm.states)
    stateNames.push_back(st.name);
  auto resolve = [&](const std::string &name, SourceRange range) -> int {
    auto it = byName.find(name);
    if (it != byName.end())
      return int(it->second);
    std::string best = closestName(name, stateNames);
    if (best.empty())
      diags_.report(DiagKind::UnknownState, range, {j.name, name});
    else
      diags_.report(DiagKind::UnknownStateSuggest, range, {j.name, name, best});
    return -1;
  };
  for (const ast::FsmTransition &t : a.transitions) {
    int from = resolve(t.from, t.fromRange);
    int to = resolve(t.to, t.toRange);
    bool guardOk = true;
    Guard guard = lowerGuard(*t.guard, guardOk);
    if (from < 0 || to < 0 || !guardOk) {
      ok = false;
      continue;
    }
    if (from == to) {
      diags_.report(DiagKind::SelfTransition, t.range, {t.from, j.name});
      ok = false;
      continue;
    }
    // Inside an instance or a loop the source's names are not the model's.
    std::string text;
    if (flattened_ && j.name.find_first_of(".[") != std::string::npos)
      text = t.from + " -> " + t.to + " when " + ast::print(*t.guard);
    fsm.transitions.push_back(
        {std::uint32_t(from), std::uint32_t(to), std::move(guard), t.range, std::move(text)});
  }
  if (!ok)
    return std::nullopt;

  // Every state reachable from the initial one.
  std::vector<bool> reached(fsm.states.size(), false);
  std::vector<std::uint32_t> work = {fsm.initial};
  reached[fsm.initial] = true;
  while (!work.empty()) {
    std::uint32_t s = work.back();
    work.pop_back();
    for (const FsmTransition &t : fsm.transitions)
      if (t.from == s && !reached[t.to]) {
        reached[t.to] = true;
        work.push_back(t.to);
      }
  }
  for (std::size_t i = 0; i < fsm.states.size(); ++i)
    if (!reached[i]) {
      diags_.report(DiagKind::UnreachableState, fsm.states[i].range,
                    {fsm.states[i].name, j.name, fsm.states[fsm.initial].name});
      ok = false;
    }
  if (!ok)
    return std::nullopt;
  return fsm;
}

Guard Analyzer::lowerGuard(const ast::Guard &a, bool &ok) {
  Guard g;
  g.range = a.range;
  switch (a.kind) {
  case ast::GuardKind::Compare: {
    g.kind = Guard::Compare;
    g.op = a.op;
    g.mark = a.mark;
    // Guards are read like outputs: any value of the model, no integral.
    g.lhs = lower(*a.lhs, {});
    g.rhs = lower(*a.rhs, {});
    if (!g.lhs.valid() || !g.rhs.valid()) {
      ok = false;
      return g;
    }
    g.value = ctx().sub(g.lhs, g.rhs);
    return g;
  }
  case ast::GuardKind::And: g.kind = Guard::And; break;
  case ast::GuardKind::Or: g.kind = Guard::Or; break;
  case ast::GuardKind::Not: g.kind = Guard::Not; break;
  }
  for (const ast::GuardPtr &child : a.children)
    g.children.push_back(lowerGuard(*child, ok));
  return g;
}

sym::ExprId Analyzer::lower(const ast::Expr &e, const ExprScope &scope) {
  switch (e.kind) {
  case ast::ExprKind::Number:
    return ctx().constant(e.number);
  case ast::ExprKind::Name:
    return lowerName(e, scope);
  case ast::ExprKind::Member:
    return lowerMember(e);
  case ast::ExprKind::Call:
    return lowerCall(e, scope);
  case ast::ExprKind::Array:
    diags_.report(DiagKind::ArrayOutsideTable, e.range);
    return {};
  case ast::ExprKind::String:
    diags_.report(DiagKind::StringOutsideTable, e.range);
    return {};
  case ast::ExprKind::If: {
    sym::ExprId yes = lower(*e.operands[0], scope), no = lower(*e.operands[1], scope);
    sym::ExprId v = lowerCondition(*e.condition, yes, no, scope);
    return yes.valid() && no.valid() ? v : sym::ExprId();
  }
  case ast::ExprKind::Unary: {
    sym::ExprId a = lower(*e.operands[0], scope);
    if (!a.valid())
      return {};
    return e.op == '-' ? ctx().neg(a) : a;
  }
  case ast::ExprKind::Binary: {
    // `a + b - c + ...` is a chain down the left operands as deep as it is
    // long: walk it with a loop, recursing only into the right operands
    // (which parentheses bound, syntax::kMaxNesting).
    std::vector<const ast::Expr *> spine;
    const ast::Expr *left = &e;
    while (left->kind == ast::ExprKind::Binary && left->op != '^') {
      spine.push_back(left);
      left = left->operands[0].get();
    }
    sym::ExprId acc = spine.empty() ? sym::ExprId() : lower(*left, scope);
    if (spine.empty()) { // a power: right-associative, bounded by its parentheses
      sym::ExprId a = lower(*e.operands[0], scope), b = lower(*e.operands[1], scope);
      return a.valid() && b.valid() ? ctx().pow(a, b) : sym::ExprId();
    }
    bool valid = acc.valid();
    for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
      sym::ExprId b = lower(*(*it)->operands[1], scope);
      valid = valid && b.valid();
      if (!valid)
        continue; // lower the rest for their diagnostics
      switch ((*it)->op) {
      case '+': acc = ctx().add(acc, b); break;
      case '-': acc = ctx().sub(acc, b); break;
      case '*': acc = ctx().mul(acc, b); break;
      case '/': acc = ctx().div(acc, b); break;
      default: throw InternalError(std::string("unknown binary operator ") + (*it)->op);
      }
    }
    return valid ? acc : sym::ExprId();
  }
  }
  throw InternalError("unknown expression kind");
}

sym::ExprId Analyzer::lowerName(const ast::Expr &e, const ExprScope &scope) {
  for (const auto &[name, symbol] : scope.locals)
    if (name == e.name)
      return ctx().ref(symbol);
  if (e.name == "time")
    return ctx().time();
  auto it = names_.find(e.name);
  if (it == names_.end() && e.name == "pi")
    return ctx().constant(3.141592653589793); // a declared `pi` comes first
  if (it == names_.end()) {
    std::vector<std::string> candidates = valueNames_;
    for (const auto &[name, symbol] : scope.locals)
      candidates.push_back(name);
    unknownName(e.name, e.nameRange, candidates);
    return {};
  }
  const NameInfo &info = it->second;
  switch (info.kind) {
  case NameInfo::Parameter:
    return ctx().ref(g_.parameters[info.index].symbol);
  case NameInfo::Signal:
    return ctx().ref(g_.signals[info.index].symbol);
  case NameInfo::Element: {
    const Element &el = g_.elements[info.index];
    std::vector<std::string> vars;
    if (el.kind == ElementKind::Zero)
      vars = {e.name + ".e"};
    else if (el.kind == ElementKind::One)
      vars = {e.name + ".f"};
    else if (isTwoPort(el.kind))
      vars = {e.name + ".e1", e.name + ".f1", e.name + ".e2", e.name + ".f2"};
    else {
      vars = {e.name + ".e", e.name + ".f"};
      if (isStorage(el.kind))
        vars.push_back(e.name + (el.kind == ElementKind::C ? ".q" : ".p"));
    }
    diags_.report(DiagKind::NotAValue, e.nameRange,
                  {e.name, withArticle(elementNoun(el.kind)), quoteList(vars)});
    return {};
  }
  case NameInfo::Bond:
    diags_.report(DiagKind::NotAValue, e.nameRange,
                  {e.name, "a bond", quoteList({e.name + ".e", e.name + ".f"})});
    return {};
  }
  return {};
}

sym::ExprId Analyzer::lowerMember(const ast::Expr &e) {
  auto it = names_.find(e.name);
  if (it == names_.end()) {
    std::vector<std::string> candidates;
    for (const auto &[name, info] : names_)
      if (info.kind == NameInfo::Element || info.kind == NameInfo::Bond)
        candidates.push_back(name);
    std::sort(candidates.begin(), candidates.end());
    unknownName(e.name, e.nameRange, candidates);
    return {};
  }
  const NameInfo &info = it->second;
  if (info.kind == NameInfo::Bond) {
    if (e.member == "e" || e.member == "f") {
      // Bonds whose ends failed to resolve were not created (and reported).
      for (const Bond &b : g_.bonds)
        if (b.name == e.name)
          return ctx().ref(e.member == "e" ? b.effort : b.flow);
      return ctx().constant(0);
    }
    diags_.report(DiagKind::UnknownVariable, e.memberRange,
                  {"bond", e.name, e.member, "`e` and `f`"});
    return {};
  }
  if (info.kind != NameInfo::Element) {
    diags_.report(DiagKind::NoVariables, e.range,
                  {info.kind == NameInfo::Parameter ? "parameter" : "signal", e.name, e.member});
    return {};
  }
  const Element &el = g_.elements[info.index];
  std::string noun = elementNoun(el.kind);
  auto bondAt = [&](std::size_t k) -> const Bond * {
    return k < el.bonds.size() ? &g_.bonds[el.bonds[k].index] : nullptr;
  };
  std::vector<std::string> vars;
  const Bond *b = nullptr;
  bool effort = true;
  if (el.kind == ElementKind::Zero) {
    vars = {"e"};
    b = e.member == "e" ? bondAt(0) : nullptr;
  } else if (el.kind == ElementKind::One) {
    vars = {"f"};
    b = e.member == "f" ? bondAt(0) : nullptr;
    effort = false;
  } else if (isTwoPort(el.kind)) {
    vars = {"e1", "f1", "e2", "f2"};
    for (std::size_t k = 0; k < 4; ++k)
      if (e.member == vars[k]) {
        b = bondAt(k / 2);
        effort = k % 2 == 0;
      }
  } else {
    vars = {"e", "f"};
    if (isStorage(el.kind)) {
      std::string state = el.kind == ElementKind::C ? "q" : "p";
      vars.push_back(state);
      if (e.member == state)
        return ctx().ref(el.state);
    }
    if (e.member == "e" || e.member == "f") {
      b = bondAt(0);
      effort = e.member == "e";
    }
  }
  if (!b) {
    bool known = std::find(vars.begin(), vars.end(), e.member) != vars.end();
    if (known) // the element lacks its bonds, which was reported already
      return ctx().constant(0);
    std::vector<std::string> full;
    for (const std::string &v : vars)
      full.push_back(v);
    diags_.report(DiagKind::UnknownVariable, e.memberRange, {noun, e.name, e.member, quoteList(full)});
    return {};
  }
  return ctx().ref(effort ? b->effort : b->flow);
}

sym::ExprId Analyzer::lowerStateCall(const ast::Expr &e) {
  bool active = e.name == "activeState";
  if (e.operands.size() != 1) {
    diags_.report(DiagKind::WrongArgumentCount, e.range, {"function", e.name, "one argument", e.operands.size()});
    return {};
  }
  const ast::Expr &arg = *e.operands[0];
  if (arg.kind != (active ? ast::ExprKind::Member : ast::ExprKind::Name)) {
    diags_.report(DiagKind::StateArgument, arg.range,
                  {e.name, active ? "a state of a switched junction, `junction.state`"
                                  : "the name of a switched junction"});
    return {};
  }
  // The junction: a name declared as one, with a state machine.
  std::vector<std::string> switched;
  const ast::Junction *junction = nullptr;
  std::uint32_t element = 0;
  for (std::size_t i = 0; i < model_->junctions.size(); ++i) {
    const ast::Junction &j = model_->junctions[i];
    if (j.switched && j.fsm)
      switched.push_back(j.name);
    if (j.name == arg.name) {
      junction = &j;
      element = std::uint32_t(model_->elements.size() + i);
    }
  }
  auto it = names_.find(arg.name);
  if (it == names_.end()) {
    std::sort(switched.begin(), switched.end());
    unknownName(arg.name, arg.nameRange, switched);
    return {};
  }
  if (!junction || !junction->switched || !junction->fsm || it->second.index != element) {
    diags_.report(DiagKind::NotSwitchedJunction, arg.nameRange, {arg.name, e.name});
    return {};
  }
  std::uint32_t state = UINT32_MAX;
  if (active) {
    std::vector<std::string> names;
    for (std::size_t k = 0; k < junction->fsm->states.size(); ++k) {
      names.push_back(junction->fsm->states[k].name);
      if (junction->fsm->states[k].name == arg.member && state == UINT32_MAX)
        state = std::uint32_t(k);
    }
    if (state == UINT32_MAX) {
      std::string best = closestName(arg.member, names);
      if (best.empty())
        diags_.report(DiagKind::UnknownState, arg.memberRange, {arg.name, arg.member});
      else
        diags_.report(DiagKind::UnknownStateSuggest, arg.memberRange, {arg.name, arg.member, best});
      return {};
    }
  }
  auto [slot, inserted] = stateSymbols_.emplace(std::make_pair(element, state), sym::SymbolId{});
  if (inserted) {
    std::string name = active ? "activeState(" + arg.name + "." + arg.member + ")"
                              : "stateIndex(" + arg.name + ")";
    slot->second = g_.addVariable(name, {active ? VariableInfo::ActiveState : VariableInfo::StateIndex,
                                         element, active ? state : 0});
  }
  return ctx().ref(slot->second);
}

sym::ExprId Analyzer::lowerCall(const ast::Expr &e, const ExprScope &scope) {
  auto argCountError = [&](const char *expected) {
    diags_.report(DiagKind::WrongArgumentCount, e.range,
                  {"function", e.name, expected, e.operands.size()});
  };
  // Checks that there are `arity` arguments and lowers them into `args`;
  // false when one of them failed (and was reported).
  auto lowerArguments = [&](int arity, sym::ExprId *args) {
    if (static_cast<int>(e.operands.size()) != arity) {
      argCountError(argumentWords(arity));
      return false;
    }
    bool ok = true;
    for (int k = 0; k < arity; ++k)
      ok = (args[k] = lower(*e.operands[k], scope)).valid() && ok;
    return ok;
  };
  if (e.name == "pre")
    return lowerPre(e, scope);
  if (e.name == "activeState" || e.name == "stateIndex")
    return lowerStateCall(e);
  if (e.name == "table")
    return lowerTable(e, scope);
  if (e.name == "integral") {
    if (scope.signal < 0) {
      diags_.report(DiagKind::IntegralOutsideSignal, e.nameRange);
      return {};
    }
    if (e.operands.size() != 1) {
      argCountError("one argument");
      return {};
    }
    sym::ExprId input = lower(*e.operands[0], scope);
    if (!input.valid())
      return {};
    const Signal &sig = g_.signals[scope.signal];
    if (signalIntegrals_.size() < g_.signals.size())
      signalIntegrals_.resize(g_.signals.size(), 0);
    int k = ++signalIntegrals_[scope.signal];
    Integrator integ;
    integ.name = sig.name + ".integral" + (k > 1 ? std::to_string(k) : "");
    integ.range = e.range;
    integ.input = input;
    integ.state = g_.addVariable(integ.name, {VariableInfo::Integrator,
                                              std::uint32_t(g_.integrators.size())});
    g_.integrators.push_back(integ);
    return ctx().ref(integ.state);
  }
  auto derived = kDerived.find(e.name);
  if (derived != kDerived.end()) {
    const DerivedFunction &fn = derived->second;
    sym::ExprId args[3];
    return lowerArguments(fn.arity, args) ? fn.build(ctx(), args) : sym::ExprId();
  }
  auto it = kFunctions.find(e.name);
  if (it == kFunctions.end()) {
    std::vector<std::string> candidates;
    for (const auto &[name, info] : kFunctions)
      candidates.push_back(name);
    for (const auto &[name, info] : kDerived)
      candidates.push_back(name);
    candidates.push_back("table");
    candidates.push_back("integral");
    candidates.push_back("pre");
    candidates.push_back("activeState");
    candidates.push_back("stateIndex");
    std::string best = closestName(e.name, candidates);
    if (best.empty())
      diags_.report(DiagKind::UnknownFunction, e.nameRange, {e.name});
    else
      diags_.report(DiagKind::UnknownFunctionSuggest, e.nameRange, {e.name, best});
    return {};
  }
  sym::Op op = it->second;
  sym::ExprId args[3];
  return lowerArguments(sym::arity(op), args) ? ctx().make(op, args[0], args[1], args[2])
                                              : sym::ExprId();
}

sym::ExprId Analyzer::lowerCondition(const ast::Guard &cond, sym::ExprId yes, sym::ExprId no,
                                     const ExprScope &scope) {
  switch (cond.kind) {
  case ast::GuardKind::Compare: {
    sym::ExprId lhs = lower(*cond.lhs, scope), rhs = lower(*cond.rhs, scope);
    if (cond.op == CompareOp::Equal) {
      diags_.report(DiagKind::IfEquality, cond.range);
      return {};
    }
    if (!lhs.valid() || !rhs.valid() || !yes.valid() || !no.valid())
      return {};
    switch (cond.op) {
    case CompareOp::Greater: return ifPositive(ctx(), ctx().sub(lhs, rhs), yes, no);
    case CompareOp::Less: return ifPositive(ctx(), ctx().sub(rhs, lhs), yes, no);
    case CompareOp::GreaterEqual: return ifNotNegative(ctx(), ctx().sub(lhs, rhs), yes, no);
    default: return ifNotNegative(ctx(), ctx().sub(rhs, lhs), yes, no);
    }
  }
  case ast::GuardKind::Not:
    return lowerCondition(*cond.children[0], no, yes, scope);
  case ast::GuardKind::And: {
    // a and b and c: if a then (if b and c then yes else no) else no.
    sym::ExprId v = yes;
    for (auto it = cond.children.rbegin(); it != cond.children.rend(); ++it)
      v = lowerCondition(**it, v, no, scope);
    return v;
  }
  case ast::GuardKind::Or: {
    sym::ExprId v = no;
    for (auto it = cond.children.rbegin(); it != cond.children.rend(); ++it)
      v = lowerCondition(**it, yes, v, scope);
    return v;
  }
  }
  return {};
}

bool Analyzer::readTable(const ast::Expr &at, std::vector<double> &xs, std::vector<double> &ys) {
  // Relative to the directory of the model's file.
  std::filesystem::path path(at.name);
  if (path.is_relative())
    path = std::filesystem::path(sm_.name(at.range.begin.file)).parent_path() / path;
  std::string text, why;
  if (!readFile(path.string(), text, why)) {
    diags_.report(DiagKind::CannotOpenFile, at.range, {path.string(), why});
    return false;
  }
  // Lines of two numbers separated by a comma; blank lines, lines from
  // `#`, and a first line that does not start with a number (a header)
  // are skipped.
  std::size_t lineNo = 0, start = 0;
  bool first = true;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    std::size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#')
      continue;
    double v[2];
    std::size_t fields = 0;
    const char *p = line.c_str();
    bool ok = true;
    for (;;) {
      char *stop = nullptr;
      double value = std::strtod(p, &stop);
      if (stop == p) {
        ok = false;
        break;
      }
      if (fields < 2)
        v[fields] = value;
      ++fields;
      p = stop;
      while (*p == ' ' || *p == '\t')
        ++p;
      if (*p == '\0')
        break;
      if (*p != ',') {
        ok = false;
        break;
      }
      ++p;
    }
    bool header = first && !ok && fields == 0;
    first = false;
    if (header)
      continue;
    if (!ok || fields != 2 || !std::isfinite(v[0]) || !std::isfinite(v[1])) {
      diags_.report(DiagKind::TableFileLine, at.range, {path.string(), lineNo});
      return false;
    }
    xs.push_back(v[0]);
    ys.push_back(v[1]);
  }
  return true;
}

sym::ExprId Analyzer::lowerTable(const ast::Expr &e, const ExprScope &scope) {
  std::vector<double> xs;
  std::vector<sym::ExprId> ys;
  const ast::Expr *input = nullptr;
  SourceRange where; // the breakpoints, for errors about them
  if (e.operands.size() == 3 && e.operands[1]->kind == ast::ExprKind::Array &&
      e.operands[2]->kind == ast::ExprKind::Array) {
    input = e.operands[0].get();
    const ast::Expr &ax = *e.operands[1], &ay = *e.operands[2];
    where = ax.range;
    if (ax.operands.size() != ay.operands.size()) {
      diags_.report(DiagKind::TableSizes, ay.range, {ax.operands.size(), ay.operands.size()});
      return {};
    }
    bool ok = true;
    for (const ast::ExprPtr &item : ax.operands) {
      sym::ExprId v = lower(*item, {});
      if (!v.valid()) {
        ok = false;
      } else if (!ctx().isConst(v)) {
        diags_.report(DiagKind::TableBreakpoint, item->range);
        ok = false;
      } else {
        xs.push_back(ctx().node(v).value);
      }
    }
    for (const ast::ExprPtr &item : ay.operands) {
      sym::ExprId v = lowerConstant(*item, "a value of `table`");
      ok = ok && v.valid();
      ys.push_back(v);
    }
    if (!ok)
      return {};
  } else if (e.operands.size() == 2 && e.operands[0]->kind == ast::ExprKind::String) {
    input = e.operands[1].get();
    where = e.operands[0]->range;
    std::vector<double> values;
    if (!readTable(*e.operands[0], xs, values))
      return {};
    for (double v : values)
      ys.push_back(ctx().constant(v));
  } else {
    diags_.report(DiagKind::TableArguments, e.range);
    return {};
  }
  if (xs.size() < 2) {
    diags_.report(DiagKind::TableTooShort, where, {xs.size()});
    return {};
  }
  for (std::size_t i = 1; i < xs.size(); ++i)
    if (!(xs[i] > xs[i - 1])) {
      diags_.report(DiagKind::TableNotIncreasing, where, {xs[i], xs[i - 1], i + 1});
      return {};
    }
  sym::ExprId x = lower(*input, scope);
  if (!x.valid())
    return {};
  // From the right: beyond the last breakpoint its value; before it, the
  // segment it ends, unless x is beyond that segment's start; ... ; below
  // the first breakpoint its value. Each comparison of a varying x with a
  // breakpoint is a kink, so the slope's jumps are events.
  sym::ExprContext &c = ctx();
  std::size_t n = xs.size();
  sym::ExprId v = ys[n - 1];
  for (std::size_t i = n - 1; i-- > 0;) {
    sym::ExprId slope =
        c.div(c.sub(ys[i + 1], ys[i]), c.constant(xs[i + 1] - xs[i]));
    sym::ExprId segment = c.add(ys[i], c.mul(slope, c.sub(x, c.constant(xs[i]))));
    v = ifNotNegative(c, c.sub(x, c.constant(xs[i + 1])), v, segment);
  }
  return ifNotNegative(c, c.sub(x, c.constant(xs[0])), v, ys[0]);
}

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

/// Symbols of kind `kind` that `root` refers to, in id order.
std::vector<sym::SymbolId> symbolsIn(const sym::ExprContext &ctx, sym::ExprId root,
                                     sym::SymbolKind kind) {
  std::vector<sym::SymbolId> out;
  if (!root.valid())
    return out;
  for (sym::SymbolId s : ctx.symbolsOf(root))
    if (ctx.symbol(s).kind == kind)
      out.push_back(s);
  return out;
}

/// A cycle of the dependency graph over `n` nodes (support::findCycle).
std::vector<std::uint32_t> findCycle(std::size_t n,
                                     const std::function<std::vector<std::uint32_t>(std::uint32_t)> &deps) {
  std::vector<std::vector<std::uint32_t>> adjacency(n);
  for (std::uint32_t v = 0; v < n; ++v)
    adjacency[v] = deps(v);
  return support::findCycle(adjacency);
}

void Analyzer::orderParameters() {
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t i = 0; i < g_.parameters.size(); ++i)
    bySymbol[g_.parameters[i].symbol.index] = i;
  auto deps = [&](std::uint32_t i) {
    std::vector<std::uint32_t> out;
    for (sym::SymbolId s : symbolsIn(ctx(), g_.parameters[i].defaultValue, sym::SymbolKind::Parameter))
      out.push_back(bySymbol.at(s.index));
    return out;
  };
  std::vector<std::uint32_t> cycle = findCycle(g_.parameters.size(), deps);
  if (!cycle.empty()) {
    std::string path;
    for (std::size_t k = 0; k < cycle.size(); ++k)
      path += (k ? " -> " : "") + ("`" + g_.parameters[cycle[k]].name + "`");
    const Parameter &p = g_.parameters[cycle[0]];
    diags_.report(DiagKind::ParameterCycle, p.range, {p.name, path});
  }
  // Slots stay in declaration order; Simulation evaluates defaults in
  // dependency order, which it derives from the same DAG.
}

void Analyzer::checkSignalCycles() {
  std::unordered_map<std::uint32_t, std::uint32_t> bySymbol;
  for (std::uint32_t i = 0; i < g_.signals.size(); ++i)
    bySymbol[g_.signals[i].symbol.index] = i;
  // Integrators break cycles: a signal may depend on its own integral.
  auto deps = [&](std::uint32_t i) {
    std::vector<std::uint32_t> out;
    for (sym::SymbolId s : symbolsIn(ctx(), g_.signals[i].value, sym::SymbolKind::Variable)) {
      auto it = bySymbol.find(s.index);
      if (it != bySymbol.end())
        out.push_back(it->second);
    }
    return out;
  };
  std::vector<std::uint32_t> cycle = findCycle(g_.signals.size(), deps);
  if (cycle.empty())
    return;
  std::string path;
  for (std::size_t k = 0; k < cycle.size(); ++k)
    path += (k ? " -> " : "") + ("`" + g_.signals[cycle[k]].name + "`");
  const Signal &s = g_.signals[cycle[0]];
  diags_.report(DiagKind::SignalCycle, s.range, {s.name, path});
}

} // namespace

std::optional<BondGraph> analyze(const ast::File &file, const SourceManager &sm,
                                 DiagnosticEngine &diags) {
  Analyzer a(sm, diags);
  return a.run(file);
}

} // namespace hbg::sema
