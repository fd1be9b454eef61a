//===- hbg/bondgraph/StateMachine.h - Switched junctions' state machines --===//
//
// The finite state machine of a switched junction: its ON and OFF states,
// and the transitions between them with their guards.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/support/Compare.h"
#include "hbg/support/Source.h"
#include "hbg/symbolic/Expr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hbg::bg {

using hbg::CompareOp;

/// A transition's guard: comparisons combined with and/or/not.
struct Guard {
  enum Kind { Compare, And, Or, Not } kind = Compare;
  SourceRange range;
  /// Compare: `lhs op rhs`, also kept as `value op 0` with value = lhs - rhs.
  CompareOp op = CompareOp::Less;
  sym::ExprId lhs, rhs, value;
  /// Compare: '+' (parameter abstraction: judged on a posteriori values) or
  /// '-' (time-scale abstraction: judged on a priori values).
  char mark = '+';
  std::vector<Guard> children; ///< And, Or (two or more), Not (one)
};

/// A state of a switched junction's finite state machine.
struct FsmState {
  std::string name;
  bool on = false;
  SourceRange range; ///< its name (or `on`/`off` keyword) in the declaration
};

/// A transition between two states (indices into Fsm::states).
struct FsmTransition {
  std::uint32_t from = 0, to = 0;
  Guard guard;
  SourceRange range;
  /// `from -> to when guard` with the model's names, for a transition
  /// written inside a component or a loop (`when (d1.a.e > d1.Vf)+`),
  /// where the source text has the component's; empty otherwise.
  std::string text;
};

/// The finite state machine of a switched junction: ON states behave as the
/// junction, OFF states impose zero effort (0) or zero flow (1) on its bonds.
struct Fsm {
  std::vector<FsmState> states;
  std::uint32_t initial = 0; ///< index into states
  std::vector<FsmTransition> transitions;
  /// `switched dissipative`: its events may remove stored energy (the
  /// energy audit does not warn).
  bool dissipative = false;
  /// Some expression reads which state it is in (`activeState(j.s)`,
  /// `stateIndex(j)`): its modes are told apart by state, not only ON/OFF.
  bool observed = false;
};

} // namespace hbg::bg
