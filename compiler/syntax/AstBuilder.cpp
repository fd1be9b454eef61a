//===- compiler/syntax/AstBuilder.cpp - Parse tree to AST -----------------===//

#include "AstBuilder.h"

#include <typeinfo>
#include <utility>

namespace hbg::syntax {

namespace {

using P = hbg_antlr::HbgParser;

// The tree holds rule contexts only, no tokens (Parser.cpp), and a child's
// rule is told by its rule index: the generated accessors (`child<P::IndexContext>(ctx, P::RuleIndex)`)
// test each child with dynamic_cast, which compares type names.

/// The first child of `ctx` that is rule `rule`, or null.
template <class T> T *child(antlr4::ParserRuleContext *ctx, std::size_t rule) {
  for (antlr4::tree::ParseTree *c : ctx->children)
    if (static_cast<antlr4::RuleContext *>(c)->getRuleIndex() == rule)
      return static_cast<T *>(c);
  return nullptr;
}

/// The children of `ctx` that are rule `rule`, in order.
template <class T> std::vector<T *> children(antlr4::ParserRuleContext *ctx, std::size_t rule) {
  std::vector<T *> out;
  for (antlr4::tree::ParseTree *c : ctx->children)
    if (static_cast<antlr4::RuleContext *>(c)->getRuleIndex() == rule)
      out.push_back(static_cast<T *>(c));
  return out;
}

/// Whether the labelled alternative `ctx` is `T`.
template <class T> bool is(antlr4::ParserRuleContext *ctx) { return typeid(*ctx) == typeid(T); }

/// The span covering both `a` and `b` (same file, `a` first).
SourceRange join(const SourceRange &a, const SourceRange &b) {
  return {a.begin, b.begin.offset + b.length - a.begin.offset};
}

ast::ExprPtr makeExpr(ast::ExprKind kind, SourceRange range) {
  auto e = std::make_unique<ast::Expr>();
  e->kind = kind;
  e->range = range;
  return e;
}

ast::ExprPtr makeBinary(char op, ast::ExprPtr lhs, ast::ExprPtr rhs) {
  auto e = makeExpr(ast::ExprKind::Binary, join(lhs->range, rhs->range));
  e->op = op;
  e->operands.push_back(std::move(lhs));
  e->operands.push_back(std::move(rhs));
  return e;
}

} // namespace

std::string AstBuilder::text(const antlr4::Token *tok) const {
  return std::string(tokenText(src_.buffer, tok));
}

SourceRange AstBuilder::range(const antlr4::Token *tok) const {
  return tokenRange(src_.fileId, tok);
}

SourceRange AstBuilder::range(antlr4::ParserRuleContext *ctx) const {
  return tokenRange(src_.fileId, ctx->getStart(), ctx->getStop());
}

std::string AstBuilder::normalizedText(antlr4::ParserRuleContext *ctx) const {
  std::string out;
  std::size_t lastStop = 0;
  for (std::size_t i = ctx->getStart()->getTokenIndex(), end = ctx->getStop()->getTokenIndex();
       i <= end; ++i) {
    antlr4::Token *tok = tokens_.get(i);
    if (!out.empty() && tok->getStartIndex() > lastStop + 1)
      out += ' ';
    out += tokenText(src_.buffer, tok);
    lastStop = tok->getStopIndex();
  }
  return out;
}

namespace {
/// Thrown by fail(): the build is abandoned at its first syntax error.
struct Abandoned {};
} // namespace

void AstBuilder::fail(const antlr4::Token *offending, std::initializer_list<size_t> expected) {
  antlr4::misc::IntervalSet set;
  for (size_t t : expected)
    set.add(static_cast<ssize_t>(t));
  error_ = SyntaxError{const_cast<antlr4::Token *>(offending), std::move(set),
                       SyntaxError::Fix::None};
  throw Abandoned{};
}

std::unique_ptr<ast::File> AstBuilder::build(P::FileContext *ctx) {
  try {
    return buildFile(ctx);
  } catch (const Abandoned &) {
    return nullptr;
  }
}

std::unique_ptr<ast::File> AstBuilder::buildFile(P::FileContext *ctx) {
  auto file = std::make_unique<ast::File>();
  file->fileId = src_.fileId;
  // Models and components in source order.
  for (antlr4::tree::ParseTree *c : ctx->children) {
    std::size_t rule = static_cast<antlr4::RuleContext *>(c)->getRuleIndex();
    if (rule == P::RuleImportDecl) {
      auto *i = static_cast<P::ImportDeclContext *>(c);
      ast::Import im;
      if (i->name) {
        im.name = text(i->name->getStart());
        im.range = range(i->name);
      } else {
        std::string quoted = text(i->where);
        im.name = quoted.substr(1, quoted.size() - 2);
        im.isPath = true;
        im.range = range(i->where);
      }
      file->imports.push_back(std::move(im));
    } else if (rule == P::RuleModel || rule == P::RuleComponent) {
      auto *ctx = static_cast<antlr4::ParserRuleContext *>(c);
      // Its declarations built during the parse, if any, then the rest.
      std::unique_ptr<ast::Model> m;
      if (taken_ < begun_.size() && begun_[taken_].first == ctx)
        m = std::move(begun_[taken_++].second);
      else
        m = begin(ctx);
      for (P::DeclarationContext *d : children<P::DeclarationContext>(ctx, P::RuleDeclaration))
        declaration(d, *m);
      if (m->component)
        m->range = range(ctx);
      file->models.push_back(std::move(m));
    }
  }
  file->indexed = indexed_;
  return file;
}

std::unique_ptr<ast::Model> AstBuilder::begin(antlr4::ParserRuleContext *ctx) {
  auto m = std::make_unique<ast::Model>();
  P::IdentContext *name = nullptr;
  if (ctx->getRuleIndex() == P::RuleComponent) {
    auto *component = static_cast<P::ComponentContext *>(ctx);
    name = component->name;
    m->component = true;
    m->keywordRange = range(component->kw);
  } else {
    name = static_cast<P::ModelContext *>(ctx)->name;
  }
  m->name = text(name->getStart());
  m->nameRange = range(name->getStart());
  return m;
}

bool AstBuilder::declarationParsed(P::DeclarationContext *ctx) {
  auto *owner = static_cast<antlr4::ParserRuleContext *>(ctx->parent);
  if (begun_.empty() || begun_.back().first != owner)
    begun_.emplace_back(owner, begin(owner));
  try {
    declaration(ctx, *begun_.back().second);
  } catch (const Abandoned &) {
    return false;
  }
  return true;
}

void AstBuilder::declaration(P::DeclarationContext *ctx, ast::Model &m) {
  // A declaration is one of its alternatives, its one child.
  antlr4::tree::ParseTree *decl = ctx->children[0];
  switch (static_cast<antlr4::RuleContext *>(decl)->getRuleIndex()) {
  case P::RuleParameterDecl:
    m.parameters.push_back(parameter(static_cast<P::ParameterDeclContext *>(decl)));
    break;
  case P::RuleInputDecl:
    m.parameters.push_back(input(static_cast<P::InputDeclContext *>(decl)));
    break;
  case P::RuleElementDecl:
    m.elements.push_back(element(static_cast<P::ElementDeclContext *>(decl)));
    break;
  case P::RuleJunctionDecl:
    m.junctions.push_back(junction(static_cast<P::JunctionDeclContext *>(decl)));
    break;
  case P::RuleBondDecl:
    m.bonds.push_back(bond(static_cast<P::BondDeclContext *>(decl)));
    break;
  case P::RuleSignalDecl:
    m.signals.push_back(signal(static_cast<P::SignalDeclContext *>(decl)));
    break;
  case P::RuleDiscreteDecl:
    m.signals.push_back(discrete(static_cast<P::DiscreteDeclContext *>(decl)));
    break;
  case P::RuleOutputDecl:
    for (P::OutputItemContext *item : children<P::OutputItemContext>(
             static_cast<P::OutputDeclContext *>(decl), P::RuleOutputItem))
      m.outputs.push_back(output(item));
    break;
  case P::RuleExperimentDecl:
    m.experiments.push_back(experiment(static_cast<P::ExperimentDeclContext *>(decl)));
    break;
  case P::RulePortDecl:
    for (P::PortItemContext *item : static_cast<P::PortDeclContext *>(decl)->items) {
      ast::Port port;
      port.name = text(item->name->getStart());
      port.nameRange = range(item->name->getStart());
      port.target = path(item->target, port.targetIndices);
      port.targetRange = range(item->target);
      if (item->dir && item->dir->getStart()->getType() == P::IN) {
        port.direction = ast::Port::Direction::In;
        port.directionRange = range(item->dir->getStart());
      } else if (item->dir) {
        port.directionRange = range(item->dir->getStart());
        port.directionText = text(item->dir->getStart());
        if (port.directionText == "out")
          port.direction = ast::Port::Direction::Out;
      }
      m.ports.push_back(std::move(port));
    }
    break;
  case P::RuleInstanceDecl:
    m.instances.push_back(instance(static_cast<P::InstanceDeclContext *>(decl)));
    break;
  case P::RuleForDecl:
    m.loops.push_back(loop(static_cast<P::ForDeclContext *>(decl)));
    placeAt(m, m.loops.back().before);
    break;
  case P::RuleIfDecl:
    m.conditionals.push_back(conditional(static_cast<P::IfDeclContext *>(decl)));
    placeAt(m, m.conditionals.back().before);
    break;
  default:
    break;
  }
}

void AstBuilder::placeAt(const ast::Model &m, std::size_t *at) {
  at[0] = m.elements.size(), at[1] = m.junctions.size(), at[2] = m.bonds.size();
  at[3] = m.signals.size(), at[4] = m.outputs.size(), at[5] = m.instances.size();
}

ast::Conditional AstBuilder::conditional(P::IfDeclContext *ctx) {
  indexed_ = true;
  ast::Conditional c;
  auto branch = [&](antlr4::Token *kw, P::ConditionContext *cond,
                    antlr4::ParserRuleContext *declarations) {
    ast::Conditional::Branch b;
    b.keywordRange = range(kw);
    if (cond) {
      connectedAllowed_ = true;
      b.condition = condition(cond);
      connectedAllowed_ = false;
    }
    b.body = std::make_unique<ast::Model>();
    for (P::DeclarationContext *d :
         children<P::DeclarationContext>(declarations, P::RuleDeclaration))
      declaration(d, *b.body);
    c.branches.push_back(std::move(b));
  };
  branch(ctx->kw, ctx->cond, ctx);
  for (P::ElseBranchContext *e : ctx->branches) {
    // A plain `else` is the last branch: nothing could ever take another.
    if (!c.branches.back().condition)
      fail(e->kw, {});
    branch(e->ifKw ? e->ifKw : e->kw, e->cond, e);
  }
  return c;
}

ast::For AstBuilder::loop(P::ForDeclContext *ctx) {
  indexed_ = true;
  ast::For f;
  f.var = text(ctx->var->getStart());
  f.varRange = range(ctx->var->getStart());
  f.keywordRange = range(ctx->kw);
  f.from = expr(ctx->from);
  f.to = expr(ctx->to);
  f.body = std::make_unique<ast::Model>();
  for (P::DeclarationContext *d : children<P::DeclarationContext>(ctx, P::RuleDeclaration))
    declaration(d, *f.body);
  return f;
}

std::string AstBuilder::indexed(P::IdentContext *name, P::IndexContext *index,
                                ast::Indices &indices) {
  std::string out = text(name->getStart());
  if (!index)
    return out;
  indexed_ = true;
  out += "[";
  for (std::size_t k = 0; k < index->items.size(); ++k) {
    out += k ? "," : "";
    indices.push_back(expr(index->items[k]));
  }
  return out + "]";
}

ast::Experiment AstBuilder::experiment(P::ExperimentDeclContext *ctx) {
  ast::Experiment e;
  e.keywordRange = range(ctx->kw);
  for (P::ExperimentSettingContext *s : children<P::ExperimentSettingContext>(ctx, P::RuleExperimentSetting)) {
    ast::ExperimentSetting setting;
    setting.name = text(s->name->getStart());
    setting.nameRange = range(s->name->getStart());
    setting.value = expr(s->value);
    e.settings.push_back(std::move(setting));
  }
  return e;
}

ast::Parameter AstBuilder::parameter(P::ParameterDeclContext *ctx) {
  ast::Parameter p;
  p.name = text(ctx->name->getStart());
  p.nameRange = range(ctx->name->getStart());
  p.value = expr(ctx->value);
  return p;
}

ast::Parameter AstBuilder::input(P::InputDeclContext *ctx) {
  ast::Parameter p;
  p.name = text(ctx->name->getStart());
  p.nameRange = range(ctx->name->getStart());
  p.input = true;
  if (ctx->value) {
    p.value = expr(ctx->value);
  } else {
    p.value = std::make_unique<ast::Expr>();
    p.value->kind = ast::ExprKind::Number;
    p.value->number = 0;
    p.value->range = p.nameRange;
  }
  return p;
}

ast::Element AstBuilder::element(P::ElementDeclContext *ctx) {
  ast::Element e;
  e.kind = text(ctx->kind->getStart());
  e.kindRange = range(ctx->kind->getStart());
  e.name = indexed(ctx->name, child<P::IndexContext>(ctx, P::RuleIndex), e.nameIndices);
  e.nameRange = child<P::IndexContext>(ctx, P::RuleIndex) ? join(range(ctx->name->getStart()), range(child<P::IndexContext>(ctx, P::RuleIndex)))
                             : range(ctx->name->getStart());
  e.argsRange = tokenRange(src_.fileId, ctx->lparen, ctx->rparen);
  for (P::ElementArgContext *a : children<P::ElementArgContext>(ctx, P::RuleElementArg)) {
    ast::ElementArg arg;
    if (a->assign) {
      P::IndexContext *index = nullptr;
      P::IdentContext *name = bareName(a->first, &index);
      if (!name || index)
        fail(a->assign, {P::COMMA, P::RPAREN});
      arg.name = text(name->getStart());
      arg.nameRange = range(name->getStart());
    }
    arg.value = expr(a->assign ? a->value : a->first);
    e.args.push_back(std::move(arg));
  }
  if (auto *block = child<P::InitialBlockContext>(ctx, P::RuleInitialBlock)) {
    for (P::InitialValueContext *iv : children<P::InitialValueContext>(block, P::RuleInitialValue)) {
      ast::InitialValue init;
      init.name = text(iv->name->getStart());
      init.nameRange = range(iv->name->getStart());
      init.value = expr(iv->value);
      e.initials.push_back(std::move(init));
    }
  }
  return e;
}

ast::Junction AstBuilder::junction(P::JunctionDeclContext *ctx) {
  ast::Junction j;
  j.kind = ctx->kind->getType() == P::ZERO ? '0' : '1';
  j.kindRange = range(ctx->kind);
  j.name = indexed(ctx->name, child<P::IndexContext>(ctx, P::RuleIndex), j.nameIndices);
  j.nameRange = child<P::IndexContext>(ctx, P::RuleIndex) ? join(range(ctx->name->getStart()), range(child<P::IndexContext>(ctx, P::RuleIndex)))
                             : range(ctx->name->getStart());
  if (ctx->mark) {
    j.mark = text(ctx->mark);
    j.markRange = range(ctx->mark);
    j.pseudo = j.mark == "pseudo";
  }
  if (ctx->switched) {
    j.switched = true;
    j.switchedRange = range(ctx->switched);
    j.dissipative = ctx->dissipative != nullptr;
    j.fsm = fsm(child<P::FsmBlockContext>(ctx, P::RuleFsmBlock));
  }
  return j;
}

std::unique_ptr<ast::Fsm> AstBuilder::fsm(P::FsmBlockContext *ctx) {
  auto f = std::make_unique<ast::Fsm>();
  f->range = tokenRange(src_.fileId, ctx->lbrace, ctx->rbrace);
  for (P::FsmItemContext *item : children<P::FsmItemContext>(ctx, P::RuleFsmItem)) {
    if (auto *d = child<P::StateTailContext>(item, P::RuleStateTail)) {
      ast::FsmState st;
      st.on = item->kind->getType() == P::ON;
      // `off initial;` is an unnamed initial state, not a state `initial`.
      const antlr4::Token *initial = d->initial;
      P::IdentContext *name = d->name;
      if (name && !initial && name->getStart()->getType() == P::INITIAL) {
        initial = name->getStart();
        name = nullptr;
      }
      if (name) {
        st.name = text(name->getStart());
        st.nameRange = range(name->getStart());
      } else {
        st.name = st.on ? "on" : "off";
        st.nameRange = range(item->kind);
      }
      if (initial) {
        st.initial = true;
        st.initialRange = range(initial);
      }
      st.range = range(item);
      f->states.push_back(std::move(st));
    } else {
      auto *tail = child<P::TransitionTailContext>(item, P::RuleTransitionTail);
      const antlr4::Token *from = item->kind ? item->kind : item->from->getStart();
      ast::FsmTransition t;
      t.from = text(from);
      t.fromRange = range(from);
      t.to = text(tail->to->getStart());
      t.toRange = range(tail->to->getStart());
      t.guard = guard(child<P::GuardContext>(tail, P::RuleGuard));
      t.range = range(item);
      f->transitions.push_back(std::move(t));
    }
  }
  return f;
}

namespace {
ast::CompareOp compareOp(const std::string &op) {
  return op == "<"    ? ast::CompareOp::Less
         : op == "<=" ? ast::CompareOp::LessEqual
         : op == "="  ? ast::CompareOp::Equal
         : op == ">=" ? ast::CompareOp::GreaterEqual
                      : ast::CompareOp::Greater;
}

/// `not operand`, from the `not` token on.
ast::GuardPtr makeNot(SourceRange notRange, ast::GuardPtr operand) {
  auto g = std::make_unique<ast::Guard>();
  g->kind = ast::GuardKind::Not;
  g->range = join(notRange, operand->range);
  g->children.push_back(std::move(operand));
  return g;
}

/// A guard of `kind` over `children`, or the one child alone.
ast::GuardPtr makeGuardList(ast::GuardKind kind, std::vector<ast::GuardPtr> children) {
  if (children.size() == 1)
    return std::move(children[0]);
  auto g = std::make_unique<ast::Guard>();
  g->kind = kind;
  g->range = join(children.front()->range, children.back()->range);
  g->children = std::move(children);
  return g;
}
} // namespace

ast::GuardPtr AstBuilder::guard(P::GuardContext *ctx) {
  std::vector<ast::GuardPtr> children;
  for (P::GuardAndContext *c : ctx->operands)
    children.push_back(guardAnd(c));
  return makeGuardList(ast::GuardKind::Or, std::move(children));
}

ast::GuardPtr AstBuilder::guardAnd(P::GuardAndContext *ctx) {
  std::vector<ast::GuardPtr> children;
  for (P::GuardNotContext *c : ctx->operands)
    children.push_back(guardNot(c));
  return makeGuardList(ast::GuardKind::And, std::move(children));
}

ast::GuardPtr AstBuilder::guardNot(P::GuardNotContext *ctx) {
  if (!ctx->op)
    return guardAtom(child<P::GuardAtomContext>(ctx, P::RuleGuardAtom));
  return makeNot(range(ctx->op), guardNot(ctx->operand));
}

ast::GuardPtr AstBuilder::guardAtom(P::GuardAtomContext *ctx) {
  if (is<P::CompareGuardContext>(ctx)) {
    auto *c = static_cast<P::CompareGuardContext *>(ctx);
    if (!c->cmp) {
      // `(b)+`: a Boolean signal's name, alone.
      ast::GuardPtr g = truth(c->lhs);
      if (!g)
        fail(tokens_.get(c->lhs->getStop()->getTokenIndex() + 1),
             {P::LT, P::LE, P::ASSIGN, P::GE, P::GT});
      g->range = tokenRange(src_.fileId, c->lparen, c->mark);
      g->mark = text(c->mark)[0];
      return g;
    }
    auto g = std::make_unique<ast::Guard>();
    g->kind = ast::GuardKind::Compare;
    g->range = tokenRange(src_.fileId, c->lparen, c->mark);
    g->op = compareOp(text(c->cmp->getStart()));
    g->lhs = expr(c->lhs);
    g->rhs = expr(c->rhs);
    g->mark = text(c->mark)[0];
    return g;
  }
  auto *p = static_cast<P::ParenGuardContext *>(ctx);
  // Like parenthesised expressions: no node, but the range spans them.
  ast::GuardPtr inner = guard(p->inner);
  inner->range = tokenRange(src_.fileId, p->lparen, p->rparen);
  return inner;
}

ast::GuardPtr AstBuilder::condition(P::ConditionContext *ctx) {
  std::vector<ast::GuardPtr> children;
  for (P::ConditionAndContext *c : ctx->operands)
    children.push_back(conditionAnd(c));
  return makeGuardList(ast::GuardKind::Or, std::move(children));
}

ast::GuardPtr AstBuilder::conditionAnd(P::ConditionAndContext *ctx) {
  std::vector<ast::GuardPtr> children;
  for (P::ConditionNotContext *c : ctx->operands)
    children.push_back(conditionNot(c));
  return makeGuardList(ast::GuardKind::And, std::move(children));
}

ast::GuardPtr AstBuilder::conditionNot(P::ConditionNotContext *ctx) {
  if (!ctx->op)
    return conditionAtom(child<P::ConditionAtomContext>(ctx, P::RuleConditionAtom));
  return makeNot(range(ctx->op), conditionNot(ctx->operand));
}

ast::GuardPtr AstBuilder::truth(P::ExprContext *ctx) {
  if (ctx->operands.size() != 1)
    return nullptr;
  P::SignedOperandContext *op = ctx->operands[0];
  if (op->kw || !op->signs.empty() || !is<P::NameExprContext>(op->base) ||
      static_cast<P::NameExprContext *>(op->base)->call)
    return nullptr;
  auto g = std::make_unique<ast::Guard>();
  g->kind = ast::GuardKind::Truth;
  g->range = range(ctx);
  g->lhs = expr(ctx);
  g->mark = 0;
  return g;
}

ast::GuardPtr AstBuilder::connected(P::ExprContext *ctx) {
  // A name alone is a Boolean signal (Sema checks that it is one).
  if (ast::GuardPtr g = truth(ctx))
    return g;
  // What follows the expression is where a comparison was wanted.
  antlr4::Token *after = tokens_.get(ctx->getStop()->getTokenIndex() + 1);
  std::initializer_list<size_t> comparison = {P::LT, P::LE, P::ASSIGN, P::GE, P::GT};
  if (!connectedAllowed_)
    fail(after, comparison);
  // `connected(port)`, perhaps in parentheses.
  P::PrimaryContext *base = nullptr;
  for (P::ExprContext *e = ctx;;) {
    if (e->operands.size() != 1 || e->operands[0]->kw || !e->operands[0]->signs.empty())
      fail(after, comparison);
    base = e->operands[0]->base;
    if (!is<P::ParenExprContext>(base))
      break;
    e = static_cast<P::ParenExprContext *>(base)->inner;
  }
  auto *call = is<P::NameExprContext>(base) ? static_cast<P::NameExprContext *>(base) : nullptr;
  if (!call || !call->call || text(call->head->getStart()) != "connected")
    fail(after, comparison);
  if (call->args.empty())
    fail(call->rparen, {P::IDENT});
  // A name alone: what follows its first token, if that is a name, is
  // where `)` was wanted.
  P::ExprContext *arg = call->args[0];
  P::SignedOperandContext *first = arg->operands[0];
  if (first->kw || !first->signs.empty() || !is<P::NameExprContext>(first->base))
    fail(arg->getStart(), {P::IDENT});
  P::IndexContext *index = nullptr;
  P::IdentContext *port = bareName(arg, &index);
  if (!port || index)
    fail(tokens_.get(arg->getStart()->getTokenIndex() + 1), {P::RPAREN});
  if (call->args.size() > 1)
    fail(tokens_.get(call->args[0]->getStop()->getTokenIndex() + 1), {P::RPAREN});
  auto g = std::make_unique<ast::Guard>();
  g->kind = ast::GuardKind::Connected;
  g->range = range(call);
  g->lhs = makeExpr(ast::ExprKind::Name, range(port->getStart()));
  g->lhs->name = text(port->getStart());
  g->lhs->nameRange = g->lhs->range;
  return g;
}

ast::GuardPtr AstBuilder::conditionAtom(P::ConditionAtomContext *ctx) {
  if (is<P::CompareConditionContext>(ctx)) {
    auto *c = static_cast<P::CompareConditionContext *>(ctx);
    if (!c->cmp)
      return connected(c->lhs);
    auto g = std::make_unique<ast::Guard>();
    g->kind = ast::GuardKind::Compare;
    g->range = range(ctx);
    g->op = compareOp(text(c->cmp->getStart()));
    g->lhs = expr(c->lhs);
    g->rhs = expr(c->rhs);
    g->mark = 0;
    return g;
  }
  auto *p = static_cast<P::ParenConditionContext *>(ctx);
  ast::GuardPtr inner = condition(p->inner);
  inner->range = tokenRange(src_.fileId, p->lparen, p->rparen);
  return inner;
}

std::string AstBuilder::path(P::PathContext *ctx, ast::Indices &indices) {
  std::string out;
  for (P::PathPartContext *part : ctx->parts)
    out += (out.empty() ? "" : ".") + indexed(part->name, child<P::IndexContext>(part, P::RuleIndex), indices);
  return out;
}

ast::Bond AstBuilder::bond(P::BondDeclContext *ctx) {
  ast::Bond b;
  P::PathContext *from = ctx->first;
  if (ctx->second) {
    b.name = path(ctx->first, b.nameIndices);
    b.nameRange = range(ctx->first);
    from = ctx->second;
  }
  b.from = path(from, b.fromIndices);
  b.fromRange = range(from);
  b.to = path(ctx->to, b.toIndices);
  b.toRange = range(ctx->to);
  b.range = range(ctx);
  return b;
}

ast::Instance AstBuilder::instance(P::InstanceDeclContext *ctx) {
  ast::Instance in;
  in.type = text(ctx->type);
  in.typeRange = range(ctx->type);
  in.name = indexed(ctx->name, child<P::IndexContext>(ctx, P::RuleIndex), in.nameIndices);
  in.nameRange = child<P::IndexContext>(ctx, P::RuleIndex) ? join(range(ctx->name->getStart()), range(child<P::IndexContext>(ctx, P::RuleIndex)))
                              : range(ctx->name->getStart());
  for (P::InstanceArgContext *a : ctx->args) {
    ast::ElementArg arg;
    arg.name = text(a->name->getStart());
    arg.nameRange = range(a->name->getStart());
    arg.value = expr(a->value);
    in.args.push_back(std::move(arg));
  }
  in.range = range(ctx);
  return in;
}

ast::Signal AstBuilder::signal(P::SignalDeclContext *ctx) {
  ast::Signal s;
  s.name = indexed(ctx->name, child<P::IndexContext>(ctx, P::RuleIndex), s.nameIndices);
  s.nameRange = child<P::IndexContext>(ctx, P::RuleIndex) ? join(range(ctx->name->getStart()), range(child<P::IndexContext>(ctx, P::RuleIndex)))
                             : range(ctx->name->getStart());
  // One expression alone is a plain signal; anything else a condition,
  // whose signal is `if condition then 1 else 0`.
  P::ConditionContext *c = ctx->value;
  if (c->operands.size() == 1 && c->operands[0]->operands.size() == 1 &&
      !c->operands[0]->operands[0]->op) {
    P::ConditionAtomContext *atom = child<P::ConditionAtomContext>(c->operands[0]->operands[0],
                                                                    P::RuleConditionAtom);
    if (is<P::CompareConditionContext>(atom) && !static_cast<P::CompareConditionContext *>(atom)->cmp) {
      s.value = expr(static_cast<P::CompareConditionContext *>(atom)->lhs);
      return s;
    }
  }
  s.boolean = true;
  auto e = makeExpr(ast::ExprKind::If, range(c));
  e->nameRange = range(c);
  bool allowed = std::exchange(connectedAllowed_, false);
  e->condition = condition(c);
  connectedAllowed_ = allowed;
  auto one = makeExpr(ast::ExprKind::Number, range(c));
  one->number = 1;
  auto zero = makeExpr(ast::ExprKind::Number, range(c));
  e->operands.push_back(std::move(one));
  e->operands.push_back(std::move(zero));
  s.value = std::move(e);
  return s;
}

ast::Signal AstBuilder::discrete(P::DiscreteDeclContext *ctx) {
  ast::Signal s;
  P::IndexContext *index = child<P::IndexContext>(ctx, P::RuleIndex);
  s.name = indexed(ctx->name, index, s.nameIndices);
  s.nameRange = index ? join(range(ctx->name->getStart()), range(index))
                      : range(ctx->name->getStart());
  s.discrete = true;
  s.keywordRange = range(ctx->kw);
  if (ctx->initial)
    s.initial = expr(ctx->initial);
  s.clock = expr(ctx->clock);
  s.value = expr(ctx->value);
  return s;
}

ast::Output AstBuilder::output(P::OutputItemContext *ctx) {
  ast::Output o;
  P::ExprContext *value = ctx->first;
  if (ctx->assign) {
    P::IndexContext *index = nullptr;
    P::IdentContext *name = bareName(ctx->first, &index);
    if (!name)
      fail(ctx->assign, {P::COMMA, P::SEMI});
    o.name = indexed(name, index, o.nameIndices);
    o.nameRange = index ? join(range(name->getStart()), range(index)) : range(name->getStart());
    value = ctx->value;
  }
  o.value = expr(value);
  o.text = normalizedText(value);
  return o;
}

// --- Expressions -------------------------------------------------------------

struct AstBuilder::OperandList {
  const std::vector<P::SignedOperandContext *> &operands;
  const std::vector<antlr4::Token *> &ops;
  std::size_t next = 0; ///< the next operand; ops[next - 1] follows the last one taken

  /// The operator after the last operand taken, or 0 at the end.
  char op(const AstBuilder &b) const {
    return next - 1 < ops.size() ? b.text(ops[next - 1])[0] : 0;
  }
};

ast::ExprPtr AstBuilder::expr(P::ExprContext *ctx) {
  OperandList list{ctx->operands, ctx->ops};
  return sum(list);
}

ast::ExprPtr AstBuilder::expr(P::ElseExprContext *ctx) {
  OperandList list{ctx->operands, ctx->ops};
  return sum(list);
}

ast::ExprPtr AstBuilder::sum(OperandList &list) {
  ast::ExprPtr lhs = product(list);
  for (char op = list.op(*this); op == '+' || op == '-'; op = list.op(*this))
    lhs = makeBinary(op, std::move(lhs), product(list));
  return lhs;
}

ast::ExprPtr AstBuilder::product(OperandList &list) {
  ast::ExprPtr lhs = signedPower(list);
  for (char op = list.op(*this); op == '*' || op == '/'; op = list.op(*this))
    lhs = makeBinary(op, std::move(lhs), signedPower(list));
  return lhs;
}

// An operand, raised to the power after it if `^` follows (whose exponent
// is again signed and may be raised in turn: `^` to the right), then
// signed: `-a^b` is `-(a^b)`.
ast::ExprPtr AstBuilder::signedPower(OperandList &list) {
  P::SignedOperandContext *ctx = list.operands[list.next++];
  ast::ExprPtr e = operand(ctx);
  if (list.op(*this) == '^')
    e = makeBinary('^', std::move(e), signedPower(list));
  for (auto sign = ctx->signs.rbegin(); sign != ctx->signs.rend(); ++sign) {
    auto u = makeExpr(ast::ExprKind::Unary, join(range(*sign), e->range));
    u->op = text(*sign)[0];
    u->operands.push_back(std::move(e));
    e = std::move(u);
  }
  return e;
}

ast::ExprPtr AstBuilder::operand(P::SignedOperandContext *ctx) {
  if (!ctx->kw)
    return primary(ctx->base);
  auto e = makeExpr(ast::ExprKind::If, tokenRange(src_.fileId, ctx->kw, ctx->getStop()));
  e->nameRange = range(ctx->kw);
  // An expression's value changes in time: its condition is never
  // `connected`, even inside the condition of an `if` block.
  bool allowed = std::exchange(connectedAllowed_, false);
  e->condition = condition(ctx->cond);
  connectedAllowed_ = allowed;
  e->operands.push_back(expr(ctx->yes));
  e->operands.push_back(expr(ctx->no));
  return e;
}

AstBuilder::P::IdentContext *AstBuilder::bareName(P::ExprContext *ctx, P::IndexContext **index) {
  if (ctx->operands.size() != 1)
    return nullptr;
  P::SignedOperandContext *op = ctx->operands[0];
  if (op->kw || !op->signs.empty() || !is<P::NameExprContext>(op->base))
    return nullptr;
  auto *n = static_cast<P::NameExprContext *>(op->base);
  if (n->call || !n->parts.empty())
    return nullptr;
  *index = child<P::IndexContext>(n, P::RuleIndex);
  return n->head;
}

ast::ExprPtr AstBuilder::primary(P::PrimaryContext *ctx) {
  if (is<P::NumberExprContext>(ctx)) {
    auto *n = static_cast<P::NumberExprContext *>(ctx);
    auto e = makeExpr(ast::ExprKind::Number, range(n->number));
    // A number out of range is reported by Parser.cpp, which then drops
    // the AST.
    parseNumber(text(n->number), e->number);
    return e;
  }
  if (is<P::NameExprContext>(ctx)) {
    auto *n = static_cast<P::NameExprContext *>(ctx);
    if (n->call) {
      auto e = makeExpr(ast::ExprKind::Call, range(ctx));
      e->name = text(n->head->getStart());
      e->nameRange = range(n->head->getStart());
      for (P::ExprContext *arg : n->args)
        e->operands.push_back(expr(arg));
      return e;
    }
    P::IndexContext *index = child<P::IndexContext>(n, P::RuleIndex);
    if (n->parts.empty()) {
      auto e = makeExpr(ast::ExprKind::Name, range(ctx));
      e->name = indexed(n->head, index, e->indices);
      e->nameRange = e->range;
      return e;
    }
    // `a.b[i].c`: the instance `a.b[i]`, its member `c`, which has no index.
    P::PathPartContext *member = n->parts.back();
    if (P::IndexContext *memberIndex = child<P::IndexContext>(member, P::RuleIndex))
      fail(tokens_.get(memberIndex->getStop()->getTokenIndex() + 1), {P::DOT});
    auto e = makeExpr(ast::ExprKind::Member, range(ctx));
    e->name = indexed(n->head, index, e->indices);
    e->nameRange = tokenRange(src_.fileId, n->head->getStart(), index ? index->getStop() : n->head->getStop());
    for (std::size_t i = 0; i + 1 < n->parts.size(); ++i) {
      P::PathPartContext *part = n->parts[i];
      e->name += "." + indexed(part->name, child<P::IndexContext>(part, P::RuleIndex), e->indices);
      e->nameRange = join(e->nameRange, range(part));
    }
    e->member = text(member->name->getStart());
    e->memberRange = range(member->name->getStart());
    return e;
  }
  if (is<P::ArrayExprContext>(ctx)) {
    auto *a = static_cast<P::ArrayExprContext *>(ctx);
    auto e = makeExpr(ast::ExprKind::Array, range(ctx));
    for (P::ExprContext *item : a->items)
      e->operands.push_back(expr(item));
    return e;
  }
  if (is<P::StringExprContext>(ctx)) {
    auto *s = static_cast<P::StringExprContext *>(ctx);
    auto e = makeExpr(ast::ExprKind::String, range(s->str));
    std::string quoted = text(s->str);
    e->name = quoted.substr(1, quoted.size() - 2);
    return e;
  }
  auto *p = static_cast<P::ParenExprContext *>(ctx);
  // Parentheses make no node, but the expression they enclose now spans
  // them, so a diagnostic about `(a + b)` underlines what was written.
  ast::ExprPtr inner = expr(p->inner);
  inner->range = tokenRange(src_.fileId, p->lparen, p->rparen);
  return inner;
}

} // namespace hbg::syntax
