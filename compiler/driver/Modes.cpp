//===- compiler/driver/Modes.cpp - Switched models and their modes --------===//
//
// A switched model keeps its checked bond graph. Each mode (the ON/OFF
// state of every switched junction) is analysed (causality, equations) and
// JIT-compiled the first time a simulation enters it, then cached, so a
// model with 40 switched junctions compiles only the modes it visits.
//
//===----------------------------------------------------------------------===//

#include "ModelImpl.h"

#include "hbg/causality/Causality.h"
#include "hbg/codegen/Tape.h"

#include <unordered_map>

namespace hbg {

namespace {

/// The cache key of a mode: per element, 0 (OFF) or 1 (ON), or 2 + the
/// FSM state of an observed junction.
std::vector<std::uint32_t> modeKey(const bg::BondGraph &g, const bg::Mode &mode) {
  std::vector<std::uint32_t> key(g.elements.size());
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    std::uint32_t st = mode.stateOf(bg::ElementId{i});
    key[i] = st != bg::Mode::kNoState ? 2 + st : mode.isOn(bg::ElementId{i});
  }
  return key;
}

/// A transition as written, without its `;`: `off -> on when (x2 - x1 <= 0)+`.
std::string sourceText(const SourceManager &sm, SourceRange r) {
  if (!r.valid())
    return "";
  std::string_view text = sm.text(r.begin.file).substr(r.begin.offset, r.length);
  // Whitespace runs (alignment, line breaks) become single spaces.
  std::string out;
  for (char c : text) {
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space && (out.empty() || out.back() == ' '))
      continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && (out.back() == ';' || out.back() == ' '))
    out.pop_back();
  return out;
}

/// A guard for the runtime: comparisons numbered in depth-first order from
/// ops.size(), their operators appended to `ops`.
runtime::GuardNode guardNode(const bg::Guard &g, std::vector<CompareOp> &ops) {
  runtime::GuardNode n;
  switch (g.kind) {
  case bg::Guard::Compare:
    n.kind = runtime::GuardNode::Compare;
    n.comparison = static_cast<std::uint32_t>(ops.size());
    n.op = g.op;
    n.minus = g.mark == '-';
    ops.push_back(g.op);
    return n;
  case bg::Guard::And: n.kind = runtime::GuardNode::And; break;
  case bg::Guard::Or: n.kind = runtime::GuardNode::Or; break;
  case bg::Guard::Not: n.kind = runtime::GuardNode::Not; break;
  }
  for (const bg::Guard &c : g.children)
    n.children.push_back(guardNode(c, ops));
  return n;
}

/// Replaces source `id` by storage that stands in for it: an Se by a C
/// whose effort is its charge plus the source's effort, an Sf by an I
/// whose port flow is its momentum plus the source's flow. At zero
/// charge (momentum) it is the source; forced into derivative causality,
/// its stored quantity is how far the rest of the network pushes it from
/// the source's value. Returns the stand-in's state name.
std::string standIn(bg::BondGraph &g, bg::ElementId id) {
  bg::Element &e = g.elements[id.index];
  sym::ExprContext &ctx = *g.ctx;
  bool effort = e.kind == bg::ElementKind::Se || e.kind == bg::ElementKind::MSe;
  std::string name = e.name + (effort ? ".q" : ".p");
  e.state = g.addVariable(name, {bg::VariableInfo::State, id.index});
  e.lawArg = e.state;
  e.initial = ctx.constant(0);
  // An Sf's value is its bond's flow whatever the bond's direction; an
  // I's law gives its port flow, which is the bond's flow times its sign.
  sym::ExprId value =
      effort || g.sign(e.bonds[0], id) > 0 ? e.value : ctx.neg(e.value);
  e.lawExpr = ctx.add(ctx.ref(e.state), value);
  e.kind = effort ? bg::ElementKind::C : bg::ElementKind::I;
  e.law = effort ? bg::LawForm::EffortLaw : bg::LawForm::FlowLaw;
  return name;
}

/// Storage element `e`'s law with its energy variable at x[0], for the
/// energy audit (Energy.h); none when the law reads other variables. A
/// pseudo bond graph's storage (a heat capacitor) stores no energy: its
/// law is 0.
std::optional<runtime::StorageLaw> storageLaw(sym::ExprContext &ctx, const bg::Element &e,
                                              std::size_t slot) {
  runtime::StorageLaw law;
  law.slot = std::uint32_t(slot);
  sym::SymbolId x = ctx.addSymbol(ctx.symbol(e.state).name, sym::SymbolKind::State, 0);
  sym::ExprId value;
  if (e.pseudo) {
    law.form = runtime::StorageLaw::Form::Linear;
    value = ctx.constant(0);
  } else if (e.law == bg::LawForm::Linear) {
    law.form = runtime::StorageLaw::Form::Linear;
    value = ctx.div(ctx.ref(x), e.value);
  } else {
    value = ctx.substitute(e.lawExpr, {{e.lawArg.index, ctx.ref(x)}});
  }
  std::optional<runtime::Tape> tape = codegen::buildTape(ctx, {value});
  if (!tape)
    return std::nullopt;
  law.law = std::move(*tape);
  return law;
}

} // namespace

std::shared_ptr<ModeCode> Model::Impl::modeCode(const bg::Mode &mode) const {
  std::vector<std::uint32_t> key = modeKey(*graph, mode);
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto it = cache.find(key);
  if (it != cache.end()) {
    it->second.lastUse = ++uses;
    return it->second.code;
  }
  // Analysing and compiling build into the model's shared expressions.
  std::lock_guard<std::mutex> exprs(graph->ctx->mutex());
  DiagnosticEngine diags(*sources);
  diags.setContext(context);
  std::optional<causality::CausalAssignment> ca = causality::assignCausality(*graph, mode, diags);
  std::shared_ptr<ModeCode> m;
  if (!ca && bg::hasSwitched(*graph))
    m = shortedMode(mode, diags.renderAll());
  if (!m) {
    std::optional<eq::EquationSystem> sys;
    if (ca && !diags.hasErrors())
      sys = eq::buildEquations(*graph, *ca, mode, diags, equationOptions);
    if (!sys || diags.hasErrors())
      throw driver::compileError(diags, *sources);
    m = hbg::compileMode(std::move(*sys), tiers, true, true);
  }
  m->modeName = bg::modeText(*graph, mode);
  placeInState(*m);
  cache[std::move(key)] = {m, ++uses};
  ++analysed;
  evict();
  return m;
}

void Model::Impl::evict() const {
  // A mode that a run holds (its CompiledSystem keeps every mode it
  // entered) stays; so does the initial one. The bound is therefore on
  // the modes no simulation is using, which is what accumulates when many
  // runs of one model visit different modes.
  while (cache.size() > maxCachedModes) {
    auto victim = cache.end();
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (it->second.code.use_count() == 1 && it->second.code != initial &&
          (victim == cache.end() || it->second.lastUse < victim->second.lastUse))
        victim = it;
    if (victim == cache.end())
      return;
    cache.erase(victim);
  }
}

std::shared_ptr<ModeCode> Model::Impl::shortedMode(const bg::Mode &mode, std::string why) const {
  // Sources joined through ON junctions alone (an Se across an ON path to
  // another Se or to an OFF 0-junction): the mode would carry an unbounded
  // flow between them, so it can only be passed through. Conflicting
  // sources are replaced by stand-in storage elements, one at a time, each
  // the first by name whose stand-in the rest of the network drives (so
  // the choice does not depend on declaration order), until the mode is
  // causal; the stand-ins' jumps are the short circuit's impulses, which
  // the guards see (runtime::Run::judgeImpulses).
  while (!why.empty() && why.back() == '\n')
    why.pop_back();
  std::vector<bg::ElementId> sources;
  for (std::uint32_t i = 0; i < graph->elements.size(); ++i)
    if (bg::isSource(graph->elements[i].kind) && graph->elements[i].bonds.size() == 1)
      sources.push_back(bg::ElementId{i});
  std::sort(sources.begin(), sources.end(), [&](bg::ElementId a, bg::ElementId b) {
    return graph->element(a).name < graph->element(b).name;
  });
  // Ideal conductors in parallel with no source between them (two closed
  // switches): each ON switched junction gets a source of zero across it
  // (an Se on a 1-junction, an Sf on a 0-junction), after the model's own
  // sources. Where one stands in, its junction carries no flow.
  bg::BondGraph g = *graph;
  std::vector<bg::ElementId> across;
  for (std::uint32_t i = 0; i < graph->elements.size(); ++i) {
    const bg::Element &j = graph->elements[i];
    if (!bg::isJunction(j.kind) || !j.fsm || !mode.isOn(bg::ElementId{i}))
      continue;
    bool one = j.kind == bg::ElementKind::One;
    bg::ElementId s = g.addElement(one ? bg::ElementKind::Se : bg::ElementKind::Sf,
                                   j.name + ".across", j.range);
    g.elements[s.index].value = g.ctx->constant(0);
    g.addBond(bg::ElementId{i}, s);
    across.push_back(s);
  }
  std::sort(across.begin(), across.end(), [&](bg::ElementId a, bg::ElementId b) {
    return g.element(a).name < g.element(b).name;
  });
  sources.insert(sources.end(), across.begin(), across.end());
  std::vector<std::string> names;
  auto driven = [](const causality::CausalAssignment &ca, bg::ElementId e) {
    return std::any_of(ca.derivative.begin(), ca.derivative.end(),
                       [&](const causality::DerivativeStorage &d) { return d.element == e; });
  };
  for (std::size_t round = 0; round < sources.size(); ++round) {
    // The first source by name whose stand-in makes the mode causal, with
    // the stand-in driven by the rest of the network.
    for (bg::ElementId s : sources) {
      if (!bg::isSource(g.element(s).kind))
        continue; // replaced already
      bg::BondGraph trial = g;
      std::string name = standIn(trial, s);
      DiagnosticEngine diags(*this->sources);
      std::optional<causality::CausalAssignment> ca = causality::assignCausality(trial, mode, diags);
      // Every stand-in must be driven, and the equations must close (a
      // stand-in outside the short circuit leaves it a singular loop).
      if (!ca || std::any_of(sources.begin(), sources.end(), [&](bg::ElementId r) {
            return !bg::isSource(trial.element(r).kind) && !driven(*ca, r);
          }))
        continue;
      std::optional<eq::EquationSystem> sys =
          eq::buildEquations(trial, *ca, mode, diags, equationOptions);
      if (!sys || diags.hasErrors())
        continue;
      names.push_back(std::move(name));
      std::shared_ptr<ModeCode> m = hbg::compileMode(std::move(*sys), tiers, true, true);
      m->shortCircuit = std::move(why);
      m->standIns = std::move(names);
      return m;
    }
    // No single stand-in resolves it (three or more sources in one short
    // circuit): replace the source the conflict names, and try again.
    DiagnosticEngine diags(*this->sources);
    bg::ElementId source;
    if (causality::assignCausality(g, mode, diags, &source) || !source.valid() ||
        !bg::isSource(g.element(source).kind))
      return nullptr;
    names.push_back(standIn(g, source));
  }
  return nullptr;
}

void Model::Impl::placeInState(ModeCode &m) const {
  for (const eq::State &s : m.equations.states)
    m.stateSlots.push_back(stateIndex.at(s.name));
  for (const eq::DependentState &d : m.equations.dependent)
    m.dependentSlots.push_back(
        std::find(m.standIns.begin(), m.standIns.end(), d.name) != m.standIns.end()
            ? runtime::kNoSlot
            : stateIndex.at(d.name));
}

std::size_t Model::Impl::modesCompiled() const {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return switched ? analysed : 1;
}

Model driver::compileSwitched(const Compiler &compiler, std::shared_ptr<SourceManager> sources,
                              bg::BondGraph graph, eq::EquationSystem initial,
                              DiagnosticEngine::ContextFn context) {
  const CompilerOptions &opts_ = compiler.options();
  auto impl = std::make_shared<Model::Impl>();
  impl->switched = true;
  impl->equationOptions = opts_.equations;
  impl->sources = std::move(sources);
  impl->context = std::move(context);
  impl->graph = std::make_shared<bg::BondGraph>(std::move(graph));
  const bg::BondGraph &g = *impl->graph;
  sym::ExprContext &ctx = *g.ctx;

  // The full state: every storage element, whether a mode makes it
  // dependent or not, then every integrator.
  eq::StateNominals nominals = eq::stateNominals(g);
  for (std::size_t k = 0; k < g.elements.size(); ++k) {
    const bg::Element &e = g.elements[k];
    if (bg::isStorage(e.kind)) {
      impl->stateNames.push_back(ctx.symbol(e.state).name);
      impl->initialValues.push_back(e.initial);
      impl->nominalValues.push_back(nominals.storage[k]);
      impl->storageLaws.push_back(storageLaw(ctx, e, impl->storageLaws.size()));
    }
  }
  for (std::size_t i = 0; i < g.integrators.size(); ++i) {
    impl->stateNames.push_back(g.integrators[i].name);
    impl->initialValues.push_back(ctx.constant(0));
    impl->nominalValues.push_back(nominals.integrators[i]);
  }
  for (std::uint32_t i = 0; i < impl->stateNames.size(); ++i)
    impl->stateIndex[impl->stateNames[i]] = i;
  for (const eq::Output &o : initial.outputs)
    impl->outputNames.push_back(o.name);
  impl->nameParameters(initial);
  impl->namePowers(initial);

  // Comparisons are numbered by element, transition and depth-first order
  // (the order of eq::guardComparisons and of each mode's guard function).
  std::vector<runtime::Junction> junctions;
  std::vector<CompareOp> ops;
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    const bg::Element &e = g.elements[i];
    if (!e.fsm)
      continue;
    runtime::Junction j;
    j.name = e.name;
    for (const bg::FsmState &s : e.fsm->states)
      j.stateNames.push_back(s.name);
    j.initial = e.fsm->initial;
    j.dissipative = e.fsm->dissipative;
    for (const bg::FsmTransition &t : e.fsm->transitions)
      j.transitions.push_back(
          {t.from, t.to, guardNode(t.guard, ops),
           t.text.empty() ? sourceText(*impl->sources, t.range) : t.text});
    junctions.push_back(std::move(j));
    impl->junctionElements.push_back(i);
  }
  impl->switching = runtime::Switching(std::move(junctions), std::move(ops));

  // Modes run on tapes until hot, and are then compiled in the
  // background; all of them at once when asked to compile every mode.
  Tiering tiering = opts_.compileAllModes && opts_.tiering == Tiering::Tiered ? Tiering::Jit
                                                                              : opts_.tiering;
  impl->tiers = std::make_shared<CodeTiers>(opts_.codegen, tiering, opts_.hotCalls,
                                            opts_.quickTierMin, opts_.jitQuickMin);

  // The initial mode from the equations already built; the others later.
  bg::Mode mode = bg::initialMode(g);
  impl->initial = compileMode(std::move(initial), impl->tiers, true, false);
  impl->initial->modeName = bg::modeText(g, mode);
  impl->placeInState(*impl->initial);
  impl->cache[modeKey(g, mode)] = {impl->initial, 0};
  impl->analysed = 1;
  impl->maxCachedModes = std::max<std::size_t>(1, opts_.maxCachedModes);
  impl->buildSetup();

  if (opts_.compileAllModes && impl->junctionElements.size() <= opts_.maxEagerJunctions) {
    // Every combination of ON and OFF, and of the states of observed
    // junctions; modes that cannot be analysed (causal conflicts) are left
    // to report themselves if a simulation ever enters them.
    std::size_t k = impl->junctionElements.size();
    std::vector<std::uint32_t> radix(k), digit(k, 0);
    for (std::size_t j = 0; j < k; ++j) {
      const bg::Fsm &fsm = *g.elements[impl->junctionElements[j]].fsm;
      radix[j] = fsm.observed ? static_cast<std::uint32_t>(fsm.states.size()) : 2;
    }
    while (true) {
      bg::Mode m = mode;
      m.on.resize(g.elements.size(), true);
      for (std::size_t j = 0; j < k; ++j) {
        std::uint32_t e = impl->junctionElements[j];
        const bg::Fsm &fsm = *g.elements[e].fsm;
        if (fsm.observed) {
          m.state[e] = digit[j];
          m.on[e] = fsm.states[digit[j]].on;
        } else {
          m.on[e] = digit[j] == 1;
        }
      }
      try {
        impl->modeCode(m);
      } catch (const CompileError &) {
      }
      std::size_t j = 0;
      while (j < k && ++digit[j] == radix[j])
        digit[j++] = 0;
      if (j == k)
        break;
    }
  }
  return Model(std::move(impl));
}

} // namespace hbg
