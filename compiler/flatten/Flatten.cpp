//===- compiler/flatten/Flatten.cpp - Components into one flat model ------===//

#include "hbg/flatten/Flatten.h"

#include "Unroll.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hbg::flatten {

namespace {

/// What a name declared in a model or component is.
enum class Kind { Parameter, Element, Junction, Bond, Signal, Discrete, Instance };

/// What a name is, for messages: "a parameter", "an element", ...
const char *kindNoun(Kind k) {
  switch (k) {
  case Kind::Parameter: return "a parameter";
  case Kind::Element: return "an element";
  case Kind::Junction: return "a junction";
  case Kind::Bond: return "a bond";
  case Kind::Signal: return "a signal";
  case Kind::Discrete: return "a discrete value";
  case Kind::Instance: return "an instance";
  }
  return "a name";
}
const char *const kUndeclared = "not declared there";

/// The names a model or component declares, with where.
struct Scope {
  const ast::Model *decl = nullptr;
  std::unordered_map<std::string, std::pair<Kind, SourceRange>> names;
  std::unordered_map<std::string, const ast::Instance *> instances;
  std::unordered_map<std::string, const ast::Port *> ports;
  /// Parameters and signals, for suggestions.
  std::vector<std::string> values;
  Kind kindOf(const std::string &name, bool &found) const {
    auto it = names.find(name);
    found = it != names.end();
    return found ? it->second.first : Kind::Parameter;
  }
};

/// "not declared there", with the closest of `candidates` to `name` as a
/// suggestion when there is one.
std::string undeclared(const std::string &name, const std::vector<std::string> &candidates) {
  std::string best = closestName(name, candidates);
  return best.empty() ? kUndeclared : std::string(kUndeclared) + "; did you mean `" + best + "`?";
}

std::vector<std::string> instanceNames(const Scope &s) {
  std::vector<std::string> out;
  for (const auto &entry : s.instances)
    out.push_back(entry.first);
  std::sort(out.begin(), out.end()); // the suggestion must not depend on hashing
  return out;
}

std::vector<std::string> split(const std::string &path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos)
      return parts;
    start = dot + 1;
  }
}

/// An instance being expanded: its path prefix (`d1.` inside `d1`, "" in
/// the model), its component's scope, and the instance declarations that
/// lead to it (for the notes of errors inside it).
struct Frame {
  std::string prefix;
  const Scope *scope = nullptr;
  std::vector<const ast::Instance *> chain;
};

class Flattener {
public:
  Flattener(DiagnosticEngine &diags, const Options &opts) : diags_(diags), opts_(opts) {}

  std::unique_ptr<ast::File> run(const ast::File &file,
                                 const std::vector<const ast::File *> &imported);

private:
  const Scope &scopeOf(const ast::Model &m);
  void expand(const ast::Model &m, const Frame &frame,
              std::map<std::string, const ast::Expr *> values, const Frame *valuesFrame);
  /// A copy of `e` with its names resolved in `frame`.
  ast::ExprPtr rewrite(const ast::Expr &e, const Frame &frame);
  /// Resolves the names of one copied node in `frame`.
  void rename(ast::Expr &e, const Frame &frame);
  void rewriteName(ast::Expr &e, const Frame &frame);
  void rewriteMember(ast::Expr &e, const Frame &frame);
  /// The flat name of the element a bond end names, or "" after an error.
  /// `port`, when not null: the port of an instance that `path` ends at
  /// (`r1.n`), and that instance's type, else null.
  std::string resolveEnd(const std::string &path, SourceRange range, const Frame &frame,
                         const ast::Port **port = nullptr, std::string *type = nullptr);
  /// Warns when bond `b` runs against a port's declared direction.
  void checkDirections(const ast::Bond &b, const ast::Port *from, const std::string &fromType,
                       const ast::Port *to, const std::string &toType, const Frame &frame);
  /// The frame of instance `name` inside `frame`; false (no error) when
  /// there is none or its body failed to build (reported there).
  bool enter(const Frame &frame, const std::string &name, Frame &inner);
  /// Reports an error in `frame`, with the notes of its instances. For a
  /// name not declared in `absentIn` (a scope), a note where it is
  /// declared in a branch of an `if` block not taken, if it is.
  void report(DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args,
              const Frame &frame, const Scope *absentIn = nullptr, const std::string &name = {});
  /// The body of `decl` in the frame (its loops unrolled, its `if` blocks
  /// decided and its indices computed with the frame's parameter values
  /// and the bonds around it), or `decl` itself when it has none of them;
  /// an empty body after errors.
  const ast::Model &bodyOf(const ast::Model &decl, const Frame &frame);
  /// Decides `connected(port)` (`g`) in the body of `decl` in `frame`;
  /// false after reporting why it cannot.
  bool connected(const ast::Model &decl, const Frame &frame, const ast::Guard &g, bool &holds);
  /// Whether a bond outside the instance `frame` leads to reaches its
  /// port `port`: a bond in an enclosing body that names it through the
  /// instances between, or a port of an enclosing component that names it
  /// and is itself reached.
  bool reached(const Frame &frame, const std::string &port);
  /// The value of parameter `name` of the component the first `depth`
  /// instances of `chain` lead to (the model's at depth 0), computed when
  /// the model is built: the command line's value, the instance's, or its
  /// default.
  Lookup parameter(const std::vector<const ast::Instance *> &chain, std::size_t depth,
                   const std::string &name, double &out);

  DiagnosticEngine &diags_;
  const Options &opts_;
  const ast::Model *root_ = nullptr;
  /// Unrolled bodies by instance path prefix ("" for the model).
  std::map<std::string, std::unique_ptr<ast::Model>> bodies_;
  std::map<const ast::Model *, bool> hasIndices_;
  ast::Model empty_;
  /// Parameters computed while building, by flat name, and those being
  /// computed (a cycle).
  std::map<std::string, double> structural_;
  std::vector<std::string> computing_;
  std::map<std::string, const ast::Model *> components_;
  std::map<const ast::Model *, Scope> scopes_;
  std::vector<const ast::Model *> stack_; ///< components being expanded
  ast::Model *out_ = nullptr;
  std::vector<ast::InstanceInfo> instances_;
  bool failed_ = false;
  /// The local names of the constitutive law being rewritten (`q` in a C's
  /// `e = ...`): the law's own, never the component's.
  std::vector<std::string> locals_;
};

void Flattener::report(DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args,
                       const Frame &frame, const Scope *absentIn, const std::string &name) {
  failed_ = true;
  diags_.report(kind, range, args);
  if (absentIn)
    for (const ast::AbsentName &a : absentIn->decl->absent)
      if (a.name == name) {
        diags_.note(DiagKind::DeclaredInFalseIf, a.declared, {name});
        break;
      }
  // Innermost first: where the instance holding the error was declared.
  std::string path = frame.prefix.empty() ? "" : frame.prefix.substr(0, frame.prefix.size() - 1);
  for (auto it = frame.chain.rbegin(); it != frame.chain.rend(); ++it) {
    diags_.note(DiagKind::InInstance, (*it)->nameRange, {path, (*it)->type});
    std::size_t dot = path.rfind('.');
    path = dot == std::string::npos ? "" : path.substr(0, dot);
  }
}

const Scope &Flattener::scopeOf(const ast::Model &m) {
  auto [it, fresh] = scopes_.try_emplace(&m);
  Scope &s = it->second;
  if (!fresh)
    return s;
  s.decl = &m;
  // Duplicates are sema's to report on the flat model (a model's own) or
  // here (a component's, once per component rather than per instance).
  auto add = [&](const std::string &name, Kind kind, SourceRange range) {
    auto [at, inserted] = s.names.try_emplace(name, kind, range);
    if (!inserted && m.component) {
      failed_ = true;
      diags_.report(DiagKind::DuplicateName, range, {name});
      diags_.note(DiagKind::PreviousDefinition, at->second.second, {name});
    }
  };
  for (const ast::Parameter &p : m.parameters) {
    add(p.name, Kind::Parameter, p.nameRange);
    s.values.push_back(p.name);
    if (p.input && m.component) {
      failed_ = true;
      diags_.report(DiagKind::InputInComponent, p.nameRange, {m.name});
    }
  }
  for (const ast::Element &e : m.elements)
    add(e.name, Kind::Element, e.nameRange);
  for (const ast::Junction &j : m.junctions) {
    add(j.name, Kind::Junction, j.nameRange);
    if (!j.mark.empty() && !j.pseudo) {
      failed_ = true;
      diags_.report(DiagKind::BadJunctionMark, j.markRange, {j.mark, j.name});
    }
  }
  for (const ast::Bond &b : m.bonds)
    if (!b.name.empty())
      add(b.name, Kind::Bond, b.nameRange);
  for (const ast::Signal &sg : m.signals) {
    add(sg.name, sg.discrete ? Kind::Discrete : Kind::Signal, sg.nameRange);
    s.values.push_back(sg.name);
  }
  for (const ast::Instance &in : m.instances) {
    add(in.name, Kind::Instance, in.nameRange);
    s.instances[in.name] = &in;
  }
  for (const ast::Port &p : m.ports) {
    if (p.direction == ast::Port::Direction::Any && !p.directionText.empty()) {
      failed_ = true;
      diags_.report(DiagKind::BadPortDirection, p.directionRange, {p.directionText, p.name});
    }
    auto [at, inserted] = s.ports.try_emplace(p.name, &p);
    if (!inserted) {
      failed_ = true;
      diags_.report(DiagKind::DuplicateName, p.nameRange, {p.name});
      diags_.note(DiagKind::PreviousDefinition, at->second->nameRange, {p.name});
    }
  }
  return s;
}

bool Flattener::enter(const Frame &frame, const std::string &name, Frame &inner) {
  auto it = frame.scope->instances.find(name);
  if (it == frame.scope->instances.end())
    return false;
  auto c = components_.find(it->second->type);
  if (c == components_.end())
    return false; // reported where the instance is expanded
  inner.prefix = frame.prefix + name + ".";
  inner.chain = frame.chain;
  inner.chain.push_back(it->second);
  const ast::Model &body = bodyOf(*c->second, inner);
  if (&body == &empty_)
    return false; // its body failed to build: reported there
  inner.scope = &scopeOf(body);
  return true;
}

const ast::Model &Flattener::bodyOf(const ast::Model &decl, const Frame &frame) {
  auto known = hasIndices_.find(&decl);
  if (known == hasIndices_.end())
    known = hasIndices_.emplace(&decl, hasIndices(decl)).first;
  if (!known->second)
    return decl;
  auto cached = bodies_.find(frame.prefix);
  if (cached != bodies_.end())
    return cached->second ? *cached->second : empty_;
  std::size_t depth = frame.chain.size();
  std::unique_ptr<ast::Model> body = unroll(
      decl,
      [&](const std::string &name, double &value) {
        return parameter(frame.chain, depth, name, value);
      },
      [&](const ast::Guard &g, bool &holds) { return connected(decl, frame, g, holds); },
      [&](DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args) {
        report(kind, range, args, frame);
      },
      opts_.maxUnrolled);
  if (!body)
    failed_ = true;
  auto &slot = bodies_[frame.prefix];
  slot = std::move(body);
  return slot ? *slot : empty_;
}

bool Flattener::connected(const ast::Model &decl, const Frame &frame, const ast::Guard &g,
                          bool &holds) {
  const std::string &port = g.lhs->name;
  if (!decl.component) {
    report(DiagKind::ConnectedInModel, g.range, {}, frame);
    return false;
  }
  std::vector<std::string> ports;
  for (const ast::Port &p : decl.ports) {
    if (p.name == port) {
      holds = reached(frame, port);
      return true;
    }
    ports.push_back(p.name);
  }
  if (ports.empty())
    report(DiagKind::ConnectedNoPorts, g.lhs->range, {decl.name}, frame);
  else
    report(DiagKind::ConnectedNotPort, g.lhs->range, {decl.name, port, quoteList(ports)}, frame);
  return false;
}

bool Flattener::reached(const Frame &frame, const std::string &port) {
  // Each enclosing body has been built before the instance's (its
  // instances are found in it), so bodyOf only looks it up.
  std::string path = port;
  for (std::size_t depth = frame.chain.size(); depth-- > 0;) {
    path = frame.chain[depth]->name + "." + path;
    Frame outer;
    outer.chain.assign(frame.chain.begin(), frame.chain.begin() + depth);
    for (const ast::Instance *in : outer.chain)
      outer.prefix += in->name + ".";
    const ast::Model *decl = root_;
    if (depth > 0) {
      auto c = components_.find(frame.chain[depth - 1]->type);
      if (c == components_.end())
        return false;
      decl = c->second;
    }
    const ast::Model &body = bodyOf(*decl, outer);
    for (const ast::Bond &b : body.bonds)
      if (b.from == path || b.to == path)
        return true;
    for (const ast::Port &p : body.ports)
      if (p.target == path && depth > 0 && reached(outer, p.name))
        return true;
  }
  return false;
}

Lookup Flattener::parameter(const std::vector<const ast::Instance *> &chain, std::size_t depth,
                            const std::string &name, double &out) {
  const ast::Model *decl = root_;
  if (depth > 0) {
    auto c = components_.find(chain[depth - 1]->type);
    decl = c == components_.end() ? nullptr : c->second;
  }
  if (!decl)
    return Lookup::NotParameter;
  const ast::Parameter *param = nullptr;
  for (const ast::Parameter &p : decl->parameters)
    if (p.name == name)
      param = &p;
  if (param && param->input)
    return Lookup::Input;
  if (!param) {
    for (const ast::Signal &s : decl->signals)
      if (s.name == name)
        return Lookup::Signal;
    return Lookup::NotParameter;
  }
  Frame frame;
  for (std::size_t k = 0; k < depth; ++k) {
    frame.prefix += chain[k]->name + ".";
    frame.chain.push_back(chain[k]);
  }
  std::string key = frame.prefix + name;
  auto known = structural_.find(key);
  if (known != structural_.end()) {
    out = known->second;
    return Lookup::Value;
  }
  auto cycle = std::find(computing_.begin(), computing_.end(), key);
  if (cycle != computing_.end()) {
    std::string path;
    for (auto it = cycle; it != computing_.end(); ++it)
      path += "`" + *it + "` -> ";
    report(DiagKind::ParameterCycle, param->nameRange, {key, path + "`" + key + "`"}, frame);
    return Lookup::Failed;
  }
  computing_.push_back(key);
  // The command line's value, else the instance's, else the default.
  auto reportIn = [&](std::size_t d) {
    return [this, &chain, d](DiagKind kind, SourceRange range, std::initializer_list<DiagArg> args) {
      Frame f;
      for (std::size_t k = 0; k < d; ++k) {
        f.prefix += chain[k]->name + ".";
        f.chain.push_back(chain[k]);
      }
      report(kind, range, args, f);
    };
  };
  bool ok = true;
  auto given = opts_.parameters.find(key);
  const ast::ElementArg *arg = nullptr;
  if (depth > 0)
    for (const ast::ElementArg &a : chain[depth - 1]->args)
      if (a.name == name)
        arg = &a;
  if (given != opts_.parameters.end()) {
    out = given->second;
  } else if (arg) {
    auto rep = reportIn(depth - 1);
    ok = evaluate(*arg->value, {},
                  [&](const std::string &n, double &v) { return parameter(chain, depth - 1, n, v); },
                  rep, ("the value of `" + key + "`").c_str(), out);
  } else {
    auto rep = reportIn(depth);
    ok = evaluate(*param->value, {},
                  [&](const std::string &n, double &v) { return parameter(chain, depth, n, v); },
                  rep, ("the value of `" + key + "`").c_str(), out);
  }
  computing_.pop_back();
  if (!ok)
    return Lookup::Failed;
  structural_[key] = out;
  return Lookup::Value;
}

std::string Flattener::resolveEnd(const std::string &path, SourceRange range,
                                  const Frame &frame, const ast::Port **endPort,
                                  std::string *type) {
  std::vector<std::string> parts = split(path);
  Frame at = frame;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    Frame inner;
    if (!enter(at, parts[i], inner)) {
      bool found = false;
      Kind k = at.scope->kindOf(parts[i], found);
      if (found && k == Kind::Instance)
        return ""; // its component is unknown: reported with the instance
      report(DiagKind::NotAnInstance, range,
             {parts[i], found ? kindNoun(k) : undeclared(parts[i], instanceNames(*at.scope))},
             frame, found ? nullptr : at.scope, parts[i]);
      return "";
    }
    if (i + 2 == parts.size()) {
      // The last part is a port of that instance.
      const std::string &port = parts[i + 1];
      auto p = inner.scope->ports.find(port);
      if (p == inner.scope->ports.end()) {
        std::vector<std::string> names;
        for (const ast::Port &q : inner.scope->decl->ports)
          names.push_back(q.name);
        const std::string &type = inner.chain.back()->type;
        if (names.empty())
          report(DiagKind::NoPorts, range, {parts[i], type}, frame);
        else
          report(DiagKind::UnknownPort, range, {parts[i], type, port, quoteList(names)}, frame);
        return "";
      }
      if (endPort) {
        *endPort = p->second;
        *type = inner.chain.back()->type;
      }
      return resolveEnd(p->second->target, p->second->targetRange, inner);
    }
    at = std::move(inner);
  }
  bool found = false;
  Kind k = at.scope->kindOf(parts.back(), found);
  if (parts.size() == 1 && (!found || (k != Kind::Element && k != Kind::Junction))) {
    if (found && k == Kind::Instance) {
      report(DiagKind::InstanceNotAnEnd, range, {path}, frame);
      return "";
    }
    if (frame.prefix.empty())
      return path; // the model's own: sema reports what is wrong
    report(DiagKind::NotAnEnd, range, {path, found ? kindNoun(k) : kUndeclared}, frame,
           found ? nullptr : at.scope, path);
    return "";
  }
  return at.prefix + parts.back();
}

void Flattener::checkDirections(const ast::Bond &b, const ast::Port *from,
                                const std::string &fromType, const ast::Port *to,
                                const std::string &toType, const Frame &frame) {
  using Direction = ast::Port::Direction;
  // A bond drawn from a port takes power out of its component; one drawn
  // to a port brings power in.
  auto check = [&](const ast::Port *port, const std::string &type, const std::string &end,
                   SourceRange range, Direction against) {
    if (!port || port->direction != against)
      return;
    std::string instance = end.substr(0, end.rfind('.'));
    bool out = against == Direction::Out;
    diags_.report(DiagKind::BondAgainstPort, range,
                  {b.from + " -> " + b.to, port->name, instance, type,
                   out ? "leaves" : "enters", b.to + " -> " + b.from});
    diags_.note(DiagKind::PortDirectionHere, port->directionRange,
                {port->name, out ? "out" : "in"});
    std::string path = frame.prefix.empty() ? "" : frame.prefix.substr(0, frame.prefix.size() - 1);
    for (auto it = frame.chain.rbegin(); it != frame.chain.rend(); ++it) {
      diags_.note(DiagKind::InInstance, (*it)->nameRange, {path, (*it)->type});
      std::size_t dot = path.rfind('.');
      path = dot == std::string::npos ? "" : path.substr(0, dot);
    }
  };
  check(from, fromType, b.from, b.fromRange, Direction::In);
  check(to, toType, b.to, b.toRange, Direction::Out);
}

void Flattener::rewriteName(ast::Expr &e, const Frame &frame) {
  if (std::find(locals_.begin(), locals_.end(), e.name) != locals_.end())
    return;
  bool found = false;
  Kind k = frame.scope->kindOf(e.name, found);
  if (found) {
    if (k == Kind::Instance) {
      report(DiagKind::InstanceNotAValue, e.range, {e.name, frame.scope->instances.at(e.name)->type},
             frame);
      return;
    }
    e.name = frame.prefix + e.name;
    return;
  }
  // Time, pi, and the model's own unknown names (sema reports those).
  if (frame.prefix.empty() || e.name == "time" || e.name == "pi")
    return;
  std::string best = closestName(e.name, frame.scope->values);
  if (best.empty())
    report(DiagKind::UnknownName, e.nameRange, {e.name}, frame, frame.scope, e.name);
  else
    report(DiagKind::UnknownNameSuggest, e.nameRange, {e.name, best}, frame, frame.scope, e.name);
}

void Flattener::rewriteMember(ast::Expr &e, const Frame &frame) {
  // `base.member` with base a path: walk the instances it names; what is
  // left is an element's variable (`r.e`) or an instance's parameter or
  // signal (`d1.Vf`, a Name once flat).
  std::vector<std::string> parts = split(e.name);
  Frame at = frame;
  std::size_t i = 0;
  for (; i < parts.size(); ++i) {
    Frame inner;
    if (!enter(at, parts[i], inner))
      break;
    at = std::move(inner);
  }
  if (i == parts.size()) {
    // Every part an instance: the member is a name inside the last one.
    bool found = false;
    Kind k = at.scope->kindOf(e.member, found);
    if (found && (k == Kind::Parameter || k == Kind::Signal || k == Kind::Discrete)) {
      e.kind = ast::ExprKind::Name;
      e.name = at.prefix + e.member;
      e.nameRange = e.range;
      e.member.clear();
      return;
    }
    report(DiagKind::NotInInstance, e.memberRange,
           {e.member, at.prefix.substr(0, at.prefix.size() - 1), at.chain.back()->type,
            found ? kindNoun(k) : undeclared(e.member, at.scope->values)},
           frame, found ? nullptr : at.scope, e.member);
    return;
  }
  if (i + 1 != parts.size()) {
    bool found = false;
    Kind k = at.scope->kindOf(parts[i], found);
    if (!(found && k == Kind::Instance))
      report(DiagKind::NotAnInstance, e.nameRange,
             {parts[i], found ? kindNoun(k) : undeclared(parts[i], instanceNames(*at.scope))},
             frame, found ? nullptr : at.scope, parts[i]);
    return;
  }
  // One part left, in the innermost scope: an element, junction or bond of
  // it, or something sema explains (a parameter has no variables).
  bool found = false;
  at.scope->kindOf(parts[i], found);
  if (!found && !at.prefix.empty()) {
    report(DiagKind::UnknownName, e.nameRange, {parts[i]}, frame, at.scope, parts[i]);
    return;
  }
  e.name = at.prefix + parts[i];
}

void Flattener::rename(ast::Expr &e, const Frame &frame) {
  if (e.kind == ast::ExprKind::Name)
    rewriteName(e, frame);
  else if (e.kind == ast::ExprKind::Member)
    rewriteMember(e, frame);
}

ast::ExprPtr Flattener::rewrite(const ast::Expr &root, const Frame &frame) {
  return ast::copy(root, [&](ast::Expr &e, const ast::Expr &) { rename(e, frame); });
}

void Flattener::expand(const ast::Model &m, const Frame &frame,
                       std::map<std::string, const ast::Expr *> values, const Frame *valuesFrame) {
  ast::Model &out = *out_;
  const std::string &p = frame.prefix;
  // A value the instance declaration gives replaces the declaration's own
  // (it is written in the scope around the instance).
  auto value = [&](const std::string &name, const ast::Expr &own) {
    auto it = values.find(name);
    return it != values.end() ? rewrite(*it->second, *valuesFrame) : rewrite(own, frame);
  };
  for (const ast::AbsentName &x : m.absent)
    out.absent.push_back({p + x.name, x.declared});
  for (const ast::Parameter &x : m.parameters) {
    out.parameters.push_back({p + x.name, x.nameRange, value(x.name, *x.value)});
    out.parameters.back().input = x.input;
  }
  for (const ast::Element &x : m.elements)
    out.elements.push_back(ast::copy(x, p + x.name, [&](const ast::Expr &v, const std::string &arg) {
      // A law's variable, as sema reads it: q in C(e = ...), p in
      // I(f = ...), f in R(e = ...), e in R(f = ...).
      const char *local = x.kind == "C" && arg == "e"   ? "q"
                          : x.kind == "I" && arg == "f" ? "p"
                          : x.kind == "R" && arg == "e" ? "f"
                          : x.kind == "R" && arg == "f" ? "e"
                                                        : nullptr;
      if (local)
        locals_.assign(1, local);
      ast::ExprPtr copied = rewrite(v, frame);
      locals_.clear();
      return copied;
    }));
  for (const ast::Junction &x : m.junctions)
    out.junctions.push_back(
        ast::copy(x, p + x.name, [&](ast::Expr &e, const ast::Expr &) { rename(e, frame); }));
  for (const ast::Bond &x : m.bonds) {
    ast::Bond b;
    if (!x.name.empty() && x.name.find('.') != std::string::npos) {
      report(DiagKind::PathAsName, x.nameRange, {x.name}, frame);
      continue;
    }
    b.name = x.name.empty() ? "" : p + x.name;
    b.nameRange = x.nameRange;
    const ast::Port *fromPort = nullptr, *toPort = nullptr;
    std::string fromType, toType;
    b.from = resolveEnd(x.from, x.fromRange, frame, &fromPort, &fromType);
    b.to = resolveEnd(x.to, x.toRange, frame, &toPort, &toType);
    checkDirections(x, fromPort, fromType, toPort, toType, frame);
    b.fromRange = x.fromRange;
    b.toRange = x.toRange;
    b.range = x.range;
    if (!b.from.empty() && !b.to.empty())
      out.bonds.push_back(std::move(b));
  }
  for (const ast::Signal &x : m.signals) {
    ast::Signal sg{p + x.name, x.nameRange, {}, value(x.name, *x.value)};
    sg.boolean = x.boolean;
    if (x.discrete) {
      sg.discrete = true;
      sg.keywordRange = x.keywordRange;
      sg.value = rewrite(*x.value, frame);
      sg.clock = rewrite(*x.clock, frame);
      if (x.initial)
        sg.initial = rewrite(*x.initial, frame);
    }
    out.signals.push_back(std::move(sg));
  }
  for (const ast::Output &x : m.outputs)
    out.outputs.push_back(
        {x.name.empty() ? "" : p + x.name, x.nameRange, {}, rewrite(*x.value, frame),
         x.name.empty() && !p.empty() ? p + x.text : x.text});
  if (!p.empty()) {
    if (!m.experiments.empty())
      report(DiagKind::ExperimentInComponent, m.experiments[0].keywordRange, {m.name}, frame);
  } else {
    for (const ast::Experiment &x : m.experiments) {
      ast::Experiment e;
      e.keywordRange = x.keywordRange;
      for (const ast::ExperimentSetting &s : x.settings)
        e.settings.push_back({s.name, s.nameRange, rewrite(*s.value, frame)});
      out.experiments.push_back(std::move(e));
    }
    if (!m.ports.empty())
      report(DiagKind::PortsInModel, m.ports[0].nameRange, {}, frame);
  }
  // Instances, each expanded in its component's scope.
  for (const ast::Instance &in : m.instances) {
    auto c = components_.find(in.type);
    if (c == components_.end()) {
      std::vector<std::string> names;
      for (const auto &[name, decl] : components_)
        names.push_back(name);
      std::string best = closestName(in.type, names);
      if (best.empty())
        report(DiagKind::UnknownComponent, in.typeRange, {in.type}, frame);
      else
        report(DiagKind::UnknownComponentSuggest, in.typeRange, {in.type, best}, frame);
      continue;
    }
    const ast::Model &comp = *c->second;
    if (std::find(stack_.begin(), stack_.end(), &comp) != stack_.end()) {
      std::string cycle;
      auto from = std::find(stack_.begin(), stack_.end(), &comp);
      for (auto it = from; it != stack_.end(); ++it)
        cycle += "`" + (*it)->name + "` -> ";
      cycle += "`" + comp.name + "`";
      report(DiagKind::ComponentCycle, in.typeRange, {comp.name, cycle}, frame);
      continue;
    }
    Frame inner;
    inner.prefix = p + in.name + ".";
    inner.chain = frame.chain;
    inner.chain.push_back(&in);
    const ast::Model &body = bodyOf(comp, inner);
    inner.scope = &scopeOf(body);
    instances_.push_back({p + in.name, comp.name, in.nameRange, comp.range});
    std::map<std::string, const ast::Expr *> given;
    for (const ast::ElementArg &a : in.args) {
      bool found = false;
      Kind k = inner.scope->kindOf(a.name, found);
      if (found && k == Kind::Discrete) {
        report(DiagKind::DiscreteGiven, a.nameRange, {comp.name, a.name}, frame);
        continue;
      }
      if (!found || (k != Kind::Parameter && k != Kind::Signal)) {
        std::string best = closestName(a.name, inner.scope->values);
        if (best.empty())
          report(DiagKind::UnknownInstanceArgument, a.nameRange, {comp.name, a.name}, frame);
        else
          report(DiagKind::UnknownInstanceArgumentSuggest, a.nameRange, {comp.name, a.name, best},
                 frame);
        continue;
      }
      if (!given.emplace(a.name, a.value.get()).second)
        report(DiagKind::DuplicateInstanceArgument, a.nameRange, {a.name}, frame);
    }
    stack_.push_back(&comp);
    expand(body, inner, std::move(given), &frame);
    stack_.pop_back();
  }
}

std::unique_ptr<ast::File> Flattener::run(const ast::File &file,
                                          const std::vector<const ast::File *> &imported) {
  const ast::Model *model = nullptr;
  auto declare = [&](const ast::Model &m) {
    auto [it, inserted] = components_.emplace(m.name, &m);
    if (!inserted) {
      failed_ = true;
      diags_.report(DiagKind::DuplicateName, m.nameRange, {m.name});
      diags_.note(DiagKind::PreviousDefinition, it->second->nameRange, {m.name});
    }
  };
  for (const ast::File *f : imported)
    for (const std::unique_ptr<ast::Model> &m : f->models)
      if (m->component) // a model there is the importer's error to report
        declare(*m);
  for (const std::unique_ptr<ast::Model> &m : file.models) {
    if (!m->component) {
      if (!model)
        model = m.get();
      continue;
    }
    declare(*m);
  }
  auto flat = std::make_unique<ast::File>();
  flat->fileId = file.fileId;
  flat->flattened = true;
  // Sema reports a file without a model, or with several.
  for (const std::unique_ptr<ast::Model> &m : file.models) {
    if (m->component)
      continue;
    auto out = std::make_unique<ast::Model>();
    out->name = m->name;
    out->nameRange = m->nameRange;
    out_ = out.get();
    Frame top;
    if (m.get() == model) {
      root_ = model;
      const ast::Model &body = bodyOf(*m, top);
      top.scope = &scopeOf(body);
      expand(body, top, {}, nullptr);
      // Parameters that loops and indices were computed from keep the
      // value they were built with.
      for (ast::Parameter &param : out->parameters) {
        auto it = structural_.find(param.name);
        if (it == structural_.end())
          continue;
        SourceRange at = param.value->range;
        param.value = std::make_unique<ast::Expr>();
        param.value->kind = ast::ExprKind::Number;
        param.value->range = at;
        param.value->number = it->second;
        param.structural = true;
      }
    } else {
      top.scope = &scopeOf(*m);
    }
    flat->models.push_back(std::move(out));
    flat->instances = std::move(instances_);
    instances_.clear();
  }
  // The components' own declarations are checked in every instance; a
  // component never instantiated is still checked for what flattening
  // sees (its names), not for its bond graph.
  for (const auto &[name, comp] : components_)
    if (!hasIndices(*comp)) // else checked in each instance, once built
      scopeOf(*comp);
  if (failed_)
    return nullptr;
  return flat;
}

} // namespace

bool needed(const ast::File &file) {
  if (!file.imports.empty() || file.indexed)
    return true;
  for (const std::unique_ptr<ast::Model> &m : file.models)
    if (m->component || !m->instances.empty() || !m->ports.empty())
      return true;
  return false;
}

std::unique_ptr<ast::File> flatten(const ast::File &file,
                                   const std::vector<const ast::File *> &imported,
                                   DiagnosticEngine &diags, const Options &opts) {
  return Flattener(diags, opts).run(file, imported);
}

} // namespace hbg::flatten
