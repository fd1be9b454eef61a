//===- compiler/sema/StateMachines.cpp - Switched junctions' FSMs ---------===//
//
// The state machines of switched junctions: states with unique names and
// one initial state, transitions between known states with their guards
// lowered, and every state reachable from the initial one.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <map>
#include <string>
#include <vector>

namespace hbg::sema {

using namespace hbg::bg;

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
  case ast::GuardKind::Truth: {
    // `(b)+`: (b > 0.5)+ of a Boolean signal b, 0 or 1. b's comparisons
    // are kinks: b jumps at the event that locates its comparison's
    // crossing, and the guard, read with the branch taken there, holds
    // in the same event.
    g.kind = Guard::Compare;
    g.op = CompareOp::Greater;
    g.mark = a.mark;
    g.lhs = isBoolean(*a.lhs) ? lower(*a.lhs, {}) : sym::ExprId();
    g.rhs = ctx().constant(0.5);
    if (!g.lhs.valid()) {
      ok = false;
      return g;
    }
    g.value = ctx().sub(g.lhs, g.rhs);
    return g;
  }
  case ast::GuardKind::And: g.kind = Guard::And; break;
  case ast::GuardKind::Or: g.kind = Guard::Or; break;
  case ast::GuardKind::Not: g.kind = Guard::Not; break;
  case ast::GuardKind::Connected: // `if` blocks only: the parser allows no other
    ok = false;
    return g;
  }
  for (const ast::GuardPtr &child : a.children)
    g.children.push_back(lowerGuard(*child, ok));
  return g;
}

} // namespace hbg::sema
