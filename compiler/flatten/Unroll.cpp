//===- compiler/flatten/Unroll.cpp - Loops, if blocks, indexed names ------===//

#include "Unroll.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_set>

namespace hbg::flatten {

namespace {

using Vars = std::vector<std::pair<std::string, double>>;

const double *findVar(const Vars &vars, const std::string &name) {
  for (auto it = vars.rbegin(); it != vars.rend(); ++it)
    if (it->first == name)
      return &it->second;
  return nullptr;
}

/// Functions a structural value may call, by name: arity and value.
struct Builtin {
  int arity;
  double (*fn)(double, double);
};
const std::map<std::string, Builtin> kBuiltins = {
    {"floor", {1, [](double a, double) { return std::floor(a); }}},
    {"ceil", {1, [](double a, double) { return std::ceil(a); }}},
    {"abs", {1, [](double a, double) { return std::fabs(a); }}},
    {"sqrt", {1, [](double a, double) { return std::sqrt(a); }}},
    {"exp", {1, [](double a, double) { return std::exp(a); }}},
    {"log", {1, [](double a, double) { return std::log(a); }}},
    {"sin", {1, [](double a, double) { return std::sin(a); }}},
    {"cos", {1, [](double a, double) { return std::cos(a); }}},
    {"min", {2, [](double a, double b) { return std::fmin(a, b); }}},
    {"max", {2, [](double a, double b) { return std::fmax(a, b); }}},
    {"pow", {2, [](double a, double b) { return std::pow(a, b); }}},
    {"mod", {2, [](double a, double b) { return a - b * std::floor(a / b); }}},
};

/// An integer as a name's index prints it: `3`, `-1`.
bool isInteger(double v) { return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15; }

std::string integerText(double v) {
  char buf[32];
  // snprintf's "%.0f" was 40 % of unrolling bench/rc_ladder.hbg: whole
  // numbers, which indices are, print as integers instead (with the sign
  // of -0, as "%.0f" prints it), anything else as before.
  if (isInteger(v)) {
    char *at = buf;
    if (v == 0 && std::signbit(v))
      *at++ = '-';
    at = std::to_chars(at, buf + sizeof buf, static_cast<long long>(v)).ptr;
    return std::string(buf, at);
  }
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

/// A computed value in a message: `2.5`, `inf`.
std::string valueText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

class Unroller {
public:
  Unroller(ParameterFn params, ConnectedFn connected, ReportFn report, std::size_t max)
      : params_(params), connected_(connected), report_(report), max_(max) {}

  /// Copies `from` into `to`; `inside` names the block `from` is the body
  /// of ("a `for` loop", "an `if` block"), null for the model's or
  /// component's own body.
  bool body(const ast::Model &from, ast::Model &to, const char *inside);
  /// The names declared only in branches of `if` blocks not taken.
  std::vector<ast::AbsentName> takeAbsent() { return std::move(absent_); }

private:
  /// `tmpl` with each `[...]` filled from `indices`.
  std::string name(const std::string &tmpl, const ast::Indices &indices);
  /// Loop variables become numbers, indexed names get their values.
  void visit(ast::Expr &copy, const ast::Expr &original);
  ast::ExprPtr clone(const ast::Expr &e);
  bool count(SourceRange at);
  /// Whether condition `g` of an `if` block holds; false after reporting
  /// why it cannot be decided.
  bool decide(const ast::Guard &g, bool &holds);
  /// Reports what a block's body declares that belongs to the whole model
  /// or component (parameters, ports, `experiment`); false when it does.
  bool onlyBlockDeclarations(const ast::Model &body, const char *inside);
  /// Records the names a branch not taken declares (absent_).
  void absent(const ast::Model &branch);

  /// Names declared only in branches not taken, each once.
  std::vector<ast::AbsentName> absent_;
  std::unordered_set<std::string> absentSeen_;
  ParameterFn params_;
  ConnectedFn connected_;
  ReportFn report_;
  std::size_t max_, produced_ = 0;
  Vars vars_;
  bool failed_ = false;
};

std::string Unroller::name(const std::string &tmpl, const ast::Indices &indices) {
  if (indices.empty())
    return tmpl;
  std::string out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    out += tmpl[i];
    if (tmpl[i] != '[')
      continue;
    // `[` then one comma fewer than the group has indices, then `]`.
    for (;; ++i) {
      double v = 0;
      if (k < indices.size()) {
        const ast::Expr &ix = *indices[k++];
        if (!evaluate(ix, vars_, params_, report_, "an index", v)) {
          failed_ = true;
          return "";
        }
        if (!isInteger(v)) {
          report_(DiagKind::NotAnInteger, ix.range, {"an index", valueText(v)});
          failed_ = true;
          return "";
        }
      }
      out += integerText(v);
      if (tmpl[i + 1] == ']')
        break;
      out += ',';
    }
  }
  return out;
}

void Unroller::visit(ast::Expr &c, const ast::Expr &e) {
  if ((e.kind == ast::ExprKind::Name || e.kind == ast::ExprKind::Member) && !e.indices.empty())
    c.name = name(e.name, e.indices);
  else if (e.kind == ast::ExprKind::Name)
    if (const double *v = findVar(vars_, e.name)) {
      c.kind = ast::ExprKind::Number;
      c.number = *v;
      c.name.clear();
    }
}

ast::ExprPtr Unroller::clone(const ast::Expr &e) {
  return ast::copy(e, [this](ast::Expr &c, const ast::Expr &o) { visit(c, o); });
}

bool Unroller::count(SourceRange at) {
  if (++produced_ <= max_)
    return true;
  if (produced_ == max_ + 1)
    report_(DiagKind::LoopTooLarge, at, {std::to_string(max_)});
  failed_ = true;
  return false;
}

bool Unroller::decide(const ast::Guard &g, bool &holds) {
  switch (g.kind) {
  case ast::GuardKind::Compare: {
    if (g.op == CompareOp::Equal) {
      report_(DiagKind::BlockIfEquality, g.range, {});
      return false;
    }
    double lhs = 0, rhs = 0;
    if (!evaluate(*g.lhs, vars_, params_, report_, "an `if` block's condition", lhs) ||
        !evaluate(*g.rhs, vars_, params_, report_, "an `if` block's condition", rhs))
      return false;
    holds = g.op == CompareOp::Less           ? lhs < rhs
            : g.op == CompareOp::LessEqual    ? lhs <= rhs
            : g.op == CompareOp::GreaterEqual ? lhs >= rhs
                                              : lhs > rhs;
    return true;
  }
  case ast::GuardKind::Connected:
    return connected_(g, holds);
  case ast::GuardKind::Truth:
    // A Boolean signal changes as the model runs; a block is decided
    // when it is built.
    report_(DiagKind::BlockIfBoolean, g.range, {});
    return false;
  case ast::GuardKind::Not: {
    // A run of `not`s is a loop: it may be as long as the text. Other
    // nesting takes parentheses, whose depth the parser bounds.
    const ast::Guard *inner = &g;
    bool flip = false;
    for (; inner->kind == ast::GuardKind::Not; inner = inner->children[0].get())
      flip = !flip;
    if (!decide(*inner, holds))
      return false;
    holds = holds != flip;
    return true;
  }
  case ast::GuardKind::And:
  case ast::GuardKind::Or: {
    // Every part is decided, so that an error in one is reported whatever
    // the others' values.
    bool isAnd = g.kind == ast::GuardKind::And;
    holds = isAnd;
    for (const ast::GuardPtr &child : g.children) {
      bool part = false;
      if (!decide(*child, part))
        return false;
      holds = isAnd ? holds && part : holds || part;
    }
    return true;
  }
  }
  return false;
}

bool Unroller::onlyBlockDeclarations(const ast::Model &from, const char *inside) {
  if (!from.parameters.empty())
    report_(DiagKind::NotInLoop, from.parameters[0].nameRange,
            {from.parameters[0].input ? "an input" : "a parameter", inside});
  if (!from.ports.empty())
    report_(DiagKind::NotInLoop, from.ports[0].nameRange, {"a port", inside});
  if (!from.experiments.empty())
    report_(DiagKind::NotInLoop, from.experiments[0].keywordRange, {"`experiment`", inside});
  if (!from.parameters.empty() || !from.ports.empty() || !from.experiments.empty()) {
    failed_ = true;
    return false;
  }
  return true;
}

void Unroller::absent(const ast::Model &branch) {
  // Names with indices are left out: computing them could fail.
  auto add = [&](const std::string &name, const ast::Indices &indices, SourceRange at) {
    if (!name.empty() && indices.empty() && absentSeen_.insert(name).second)
      absent_.push_back({name, at});
  };
  for (const ast::Element &x : branch.elements)
    add(x.name, x.nameIndices, x.nameRange);
  for (const ast::Junction &x : branch.junctions)
    add(x.name, x.nameIndices, x.nameRange);
  for (const ast::Bond &x : branch.bonds)
    add(x.name, x.nameIndices, x.nameRange);
  for (const ast::Signal &x : branch.signals)
    add(x.name, x.nameIndices, x.nameRange);
  for (const ast::Instance &x : branch.instances)
    add(x.name, x.nameIndices, x.nameRange);
  for (const ast::Conditional &c : branch.conditionals)
    for (const ast::Conditional::Branch &b : c.branches)
      absent(*b.body);
}

bool Unroller::body(const ast::Model &from, ast::Model &to, const char *inside) {
  bool top = !inside;
  auto args = [&](const std::vector<ast::ElementArg> &in) {
    std::vector<ast::ElementArg> out;
    for (const ast::ElementArg &a : in)
      out.push_back({a.name, a.nameRange, clone(*a.value)});
    return out;
  };
  if (top) {
    for (const ast::Parameter &p : from.parameters)
      to.parameters.push_back({p.name, p.nameRange, clone(*p.value)});
    for (const ast::Experiment &x : from.experiments) {
      ast::Experiment e;
      e.keywordRange = x.keywordRange;
      for (const ast::ExperimentSetting &st : x.settings)
        e.settings.push_back({st.name, st.nameRange, clone(*st.value)});
      to.experiments.push_back(std::move(e));
    }
    for (const ast::Port &p : from.ports) {
      ast::Port q;
      q.name = p.name;
      q.nameRange = p.nameRange;
      q.target = name(p.target, p.targetIndices);
      q.targetRange = p.targetRange;
      q.direction = p.direction;
      q.directionRange = p.directionRange;
      q.directionText = p.directionText;
      to.ports.push_back(std::move(q));
    }
  } else if (!onlyBlockDeclarations(from, inside)) {
    // A block's body: what has one value for the whole model or component.
    return false;
  }

  // The loops first, each into a model of its own, so that their
  // declarations can take the loop's place among the others.
  std::vector<ast::Model> loops(from.loops.size());
  for (std::size_t l = 0; l < from.loops.size(); ++l) {
    const ast::For &loop = from.loops[l];
    if (findVar(vars_, loop.var)) {
      report_(DiagKind::LoopVariableHides, loop.varRange, {loop.var, "a loop variable"});
      failed_ = true;
      return false;
    }
    double lo = 0, hi = 0, unused = 0;
    bool ok = evaluate(*loop.from, vars_, params_, report_, "a loop's first value", lo) &&
              evaluate(*loop.to, vars_, params_, report_, "a loop's last value", hi);
    if (!ok) {
      failed_ = true;
      return false;
    }
    for (const auto &[value, expr] : {std::pair{lo, loop.from.get()}, std::pair{hi, loop.to.get()}})
      if (!isInteger(value)) {
        report_(DiagKind::NotAnInteger, expr->range, {"a loop bound", valueText(value)});
        failed_ = true;
        return false;
      }
    Lookup same = params_(loop.var, unused);
    if (same != Lookup::NotParameter) {
      report_(DiagKind::LoopVariableHides, loop.varRange,
              {loop.var, same == Lookup::Signal  ? "a signal"
                         : same == Lookup::Input ? "an input"
                                                 : "a parameter"});
      failed_ = true;
      return false;
    }
    // Each pass counts, and the body's own declarations are counted
    // before any is copied, so that a loop too large fails at once.
    const ast::Model &b = *loop.body;
    std::size_t direct = b.elements.size() + b.junctions.size() + b.bonds.size() +
                         b.signals.size() + b.outputs.size() + b.instances.size() + 1;
    double passes = hi >= lo ? hi - lo + 1 : 0;
    if (passes * static_cast<double>(direct) >
        static_cast<double>(max_ - std::min(max_, produced_))) {
      produced_ = max_;
      count(loop.keywordRange);
      return false;
    }
    for (double v = lo; v <= hi; ++v) {
      if (!count(loop.keywordRange))
        return false;
      vars_.push_back({loop.var, v});
      bool fine = body(b, loops[l], "a `for` loop");
      vars_.pop_back();
      if (!fine || failed_)
        return false;
    }
  }

  // The branch each `if` block takes, likewise: the first whose
  // condition holds. Every branch's own declarations are checked, taken
  // or not, so that the error does not come and go with a parameter.
  std::vector<ast::Model> taken(from.conditionals.size());
  for (std::size_t c = 0; c < from.conditionals.size(); ++c) {
    const ast::Conditional &block = from.conditionals[c];
    for (const ast::Conditional::Branch &b : block.branches)
      if (!onlyBlockDeclarations(*b.body, "an `if` block"))
        return false;
    const ast::Conditional::Branch *chosen = nullptr;
    for (const ast::Conditional::Branch &b : block.branches) {
      bool holds = true;
      if (b.condition && !decide(*b.condition, holds)) {
        failed_ = true;
        return false;
      }
      if (!holds)
        continue;
      if (!body(*b.body, taken[c], "an `if` block") || failed_)
        return false;
      chosen = &b;
      break;
    }
    for (const ast::Conditional::Branch &b : block.branches)
      if (&b != chosen)
        absent(*b.body);
  }

  // Loops and `if` blocks in source order, each with what it produced.
  struct Block {
    const std::size_t *before;
    ast::Model *made;
  };
  std::vector<Block> blocks;
  for (std::size_t l = 0, c = 0; l < loops.size() || c < taken.size();) {
    bool loopFirst =
        c == taken.size() ||
        (l < loops.size() && from.loops[l].keywordRange.begin.offset <
                                 from.conditionals[c].branches[0].keywordRange.begin.offset);
    if (loopFirst) {
      blocks.push_back({from.loops[l].before, &loops[l]});
      ++l;
    } else {
      blocks.push_back({from.conditionals[c].before, &taken[c]});
      ++c;
    }
  }

  // Each kind of declaration in source order: a block's where it stood.
  bool ok = true;
  auto merge = [&](auto &out, const auto &own, std::size_t kind, auto field, auto copy) {
    auto place = [&](std::size_t i) {
      for (const Block &block : blocks)
        if (block.before[kind] == i)
          for (auto &item : block.made->*field)
            out.push_back(std::move(item));
    };
    for (std::size_t i = 0; i < own.size() && ok; ++i) {
      place(i);
      ok = copy(own[i]);
    }
    place(own.size());
  };
  merge(to.elements, from.elements, 0, &ast::Model::elements, [&](const ast::Element &x) {
    if (!top && !count(x.nameRange))
      return false;
    to.elements.push_back(ast::copy(x, name(x.name, x.nameIndices),
                                    [&](const ast::Expr &v, const std::string &) { return clone(v); }));
    return true;
  });
  merge(to.junctions, from.junctions, 1, &ast::Model::junctions, [&](const ast::Junction &x) {
    if (!top && !count(x.nameRange))
      return false;
    to.junctions.push_back(ast::copy(x, name(x.name, x.nameIndices),
                                     [this](ast::Expr &c, const ast::Expr &o) { visit(c, o); }));
    return true;
  });
  merge(to.bonds, from.bonds, 2, &ast::Model::bonds, [&](const ast::Bond &x) {
    if (!top && !count(x.range))
      return false;
    ast::Bond b;
    b.name = name(x.name, x.nameIndices);
    b.nameRange = x.nameRange;
    b.from = name(x.from, x.fromIndices);
    b.to = name(x.to, x.toIndices);
    b.fromRange = x.fromRange;
    b.toRange = x.toRange;
    b.range = x.range;
    to.bonds.push_back(std::move(b));
    return true;
  });
  merge(to.signals, from.signals, 3, &ast::Model::signals, [&](const ast::Signal &x) {
    if (!top && !count(x.nameRange))
      return false;
    ast::Signal sg;
    sg.name = name(x.name, x.nameIndices);
    sg.nameRange = x.nameRange;
    sg.value = clone(*x.value);
    sg.discrete = x.discrete;
    sg.boolean = x.boolean;
    sg.keywordRange = x.keywordRange;
    if (x.initial)
      sg.initial = clone(*x.initial);
    if (x.clock)
      sg.clock = clone(*x.clock);
    to.signals.push_back(std::move(sg));
    return true;
  });
  merge(to.outputs, from.outputs, 4, &ast::Model::outputs, [&](const ast::Output &x) {
    if (!top && !count(x.value->range))
      return false;
    ast::Output o;
    o.name = name(x.name, x.nameIndices);
    o.nameRange = x.nameRange;
    o.value = clone(*x.value);
    o.text = x.text;
    if (o.name.empty()) {
      // A bare expression names its column by its text: a variable with
      // its indices' values (`mass[3].v`); another expression in a loop
      // with the loop's values (`2 * x [i = 3]`).
      if (o.value->kind == ast::ExprKind::Name && x.value->kind == ast::ExprKind::Name)
        o.text = o.value->name;
      else if (o.value->kind == ast::ExprKind::Member)
        o.text = o.value->name + "." + o.value->member;
      else if (!vars_.empty()) {
        std::string where;
        for (const auto &[var, value] : vars_)
          where += (where.empty() ? " [" : ", ") + var + " = " + integerText(value);
        o.text = x.text + where + "]";
      }
    }
    to.outputs.push_back(std::move(o));
    return true;
  });
  merge(to.instances, from.instances, 5, &ast::Model::instances, [&](const ast::Instance &x) {
    if (!top && !count(x.nameRange))
      return false;
    ast::Instance in;
    in.type = x.type;
    in.typeRange = x.typeRange;
    in.name = name(x.name, x.nameIndices);
    in.nameRange = x.nameRange;
    in.args = args(x.args);
    in.range = x.range;
    to.instances.push_back(std::move(in));
    return true;
  });
  return ok && !failed_;
}

} // namespace

bool hasIndices(const ast::Model &m) {
  if (!m.loops.empty() || !m.conditionals.empty())
    return true;
  for (const ast::Element &e : m.elements)
    if (!e.nameIndices.empty())
      return true;
  for (const ast::Junction &j : m.junctions)
    if (!j.nameIndices.empty())
      return true;
  for (const ast::Instance &i : m.instances)
    if (!i.nameIndices.empty())
      return true;
  for (const ast::Port &p : m.ports)
    if (!p.targetIndices.empty())
      return true;
  for (const ast::Bond &b : m.bonds)
    if (!b.nameIndices.empty() || !b.fromIndices.empty() || !b.toIndices.empty())
      return true;
  for (const ast::Signal &s : m.signals)
    if (!s.nameIndices.empty())
      return true;
  for (const ast::Output &o : m.outputs)
    if (!o.nameIndices.empty())
      return true;
  // Indexed names inside expressions (`mass[2].v` in an output) need the
  // copy too; they are found while copying, so any expression might: the
  // parser marks files that have any (ast::File::indexed), and only those
  // models are scanned here, so this is cheap where it matters.
  std::vector<const ast::Expr *> todo;
  auto push = [&](const ast::Expr *e) {
    if (e)
      todo.push_back(e);
  };
  for (const ast::Parameter &p : m.parameters)
    push(p.value.get());
  for (const ast::Element &e : m.elements) {
    for (const ast::ElementArg &a : e.args)
      push(a.value.get());
    for (const ast::InitialValue &iv : e.initials)
      push(iv.value.get());
  }
  for (const ast::Signal &s : m.signals) {
    push(s.value.get());
    push(s.initial.get());
    push(s.clock.get());
  }
  for (const ast::Output &o : m.outputs)
    push(o.value.get());
  for (const ast::Instance &i : m.instances)
    for (const ast::ElementArg &a : i.args)
      push(a.value.get());
  std::vector<const ast::Guard *> guards;
  for (const ast::Junction &j : m.junctions)
    if (j.fsm)
      for (const ast::FsmTransition &t : j.fsm->transitions)
        guards.push_back(t.guard.get());
  while (!todo.empty() || !guards.empty()) {
    if (!guards.empty()) {
      const ast::Guard *g = guards.back();
      guards.pop_back();
      push(g->lhs.get());
      push(g->rhs.get());
      for (const ast::GuardPtr &c : g->children)
        guards.push_back(c.get());
      continue;
    }
    const ast::Expr *e = todo.back();
    todo.pop_back();
    if (!e->indices.empty())
      return true;
    if (e->condition)
      guards.push_back(e->condition.get());
    for (const ast::ExprPtr &o : e->operands)
      push(o.get());
  }
  return false;
}

bool evaluate(const ast::Expr &root, const Vars &vars, ParameterFn params, ReportFn report,
              const char *what, double &out) {
  // Post-order with an explicit stack; values of finished operands are
  // kept on `values`.
  std::vector<std::pair<const ast::Expr *, bool>> todo{{&root, false}};
  std::vector<double> values;
  while (!todo.empty()) {
    auto [e, expanded] = todo.back();
    todo.pop_back();
    if (!expanded) {
      switch (e->kind) {
      case ast::ExprKind::Number:
        values.push_back(e->number);
        continue;
      case ast::ExprKind::Name: {
        if (!e->indices.empty()) {
          report(DiagKind::NotStructural, e->range, {what, e->name, "an indexed name"});
          return false;
        }
        if (const double *v = findVar(vars, e->name)) {
          values.push_back(*v);
          continue;
        }
        double v = 0;
        switch (params(e->name, v)) {
        case Lookup::Value:
          values.push_back(v);
          continue;
        case Lookup::Failed:
          return false;
        case Lookup::Signal:
          report(DiagKind::NotStructural, e->nameRange, {what, e->name, "a signal, which changes in time"});
          return false;
        case Lookup::Input:
          report(DiagKind::NotStructural, e->nameRange,
                 {what, e->name, "an input, set while the model runs"});
          return false;
        case Lookup::NotParameter:
          break;
        }
        if (e->name == "pi") {
          values.push_back(3.14159265358979323846);
          continue;
        }
        report(DiagKind::NotStructural, e->nameRange,
               {what, e->name, e->name == "time" ? "the simulation time" : "not a parameter"});
        return false;
      }
      case ast::ExprKind::Unary:
      case ast::ExprKind::Binary:
        break;
      case ast::ExprKind::Call: {
        auto it = kBuiltins.find(e->name);
        if (it == kBuiltins.end() || static_cast<int>(e->operands.size()) != it->second.arity) {
          report(DiagKind::NotStructural, e->nameRange, {what, e->name + "(...)", "not computed when the model is built"});
          return false;
        }
        break;
      }
      default:
        report(DiagKind::NotStructural, e->range,
               {what, e->kind == ast::ExprKind::Member ? e->name + "." + e->member : "this",
                e->kind == ast::ExprKind::Member ? "a variable of the model" : "not computed when the model is built"});
        return false;
      }
      todo.push_back({e, true});
      for (auto it = e->operands.rbegin(); it != e->operands.rend(); ++it)
        todo.push_back({it->get(), false});
      continue;
    }
    std::size_t n = e->operands.size();
    double a = values[values.size() - n], b = n > 1 ? values[values.size() - n + 1] : 0;
    values.resize(values.size() - n);
    double r = 0;
    if (e->kind == ast::ExprKind::Unary)
      r = e->op == '-' ? -a : a;
    else if (e->kind == ast::ExprKind::Binary)
      switch (e->op) {
      case '+': r = a + b; break;
      case '-': r = a - b; break;
      case '*': r = a * b; break;
      case '/': r = a / b; break;
      default: r = std::pow(a, b); break;
      }
    else
      r = kBuiltins.at(e->name).fn(a, b);
    values.push_back(r);
  }
  out = values.back();
  if (!std::isfinite(out)) {
    report(DiagKind::NotAnInteger, root.range, {what, valueText(out)});
    return false;
  }
  return true;
}

std::unique_ptr<ast::Model> unroll(const ast::Model &m, ParameterFn params, ConnectedFn connected,
                                   ReportFn report, std::size_t maxDeclarations) {
  auto out = std::make_unique<ast::Model>();
  out->name = m.name;
  out->nameRange = m.nameRange;
  out->component = m.component;
  out->keywordRange = m.keywordRange;
  out->range = m.range;
  Unroller u(params, connected, report, maxDeclarations);
  if (!u.body(m, *out, nullptr))
    return nullptr;
  out->absent = u.takeAbsent();
  return out;
}

} // namespace hbg::flatten
