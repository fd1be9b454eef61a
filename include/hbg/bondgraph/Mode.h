//===- hbg/bondgraph/Mode.h - Modes of a switched bond graph --------------===//
//
// A mode is the ON/OFF state of every switched junction, and the FSM
// state of those whose state an expression reads; its text (`j1=on,
// j2=off, clutch=forward`) names it in messages, on the command line and
// in the event log.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace hbg::bg {

/// A mode: the ON/OFF state of every junction, indexed by element. Junctions
/// that are not switched, and every other element, are ON. An empty `on`
/// means everything is ON.
struct Mode {
  static constexpr std::uint32_t kNoState = UINT32_MAX;
  std::vector<bool> on;
  /// By element: the FSM state of each observed junction (Fsm::observed),
  /// kNoState for every other element (and when empty).
  std::vector<std::uint32_t> state;
  bool isOn(ElementId e) const { return e.index >= on.size() || on[e.index]; }
  std::uint32_t stateOf(ElementId e) const {
    return e.index < state.size() ? state[e.index] : kNoState;
  }
  friend bool operator==(const Mode &a, const Mode &b) {
    return a.on == b.on && a.state == b.state;
  }
};

/// True when some junction of `g` is switched.
bool hasSwitched(const BondGraph &g);
/// The mode every switched junction starts in: its initial FSM state's kind
/// (and that state, for observed junctions).
Mode initialMode(const BondGraph &g);
/// The mode as text, switched junctions only, in declaration order:
/// `j1=on, j2=off` ("" when nothing is switched); an observed junction
/// shows its state's name (`clutch=forward`).
std::string modeText(const BondGraph &g, const Mode &m);

/// Why `parseMode` refused its text.
struct ModeError {
  enum Kind {
    Syntax,          ///< an item that is not NAME=VALUE (`text`)
    UnknownJunction, ///< no junction `name` (`suggestion` may be set)
    NotSwitched,     ///< junction `name` (`element`) has no state machine
    BadValue,        ///< `value` for `name` is neither on nor off
  } kind = Syntax;
  std::string text, name, value, suggestion;
  ElementId element;
};

/// Parses `j1=on,j2=off` (spaces allowed around items; a value may also
/// name one of the junction's FSM states, `valve=open`) starting from
/// `base`: junctions not named keep their state in `base`. `on` or `off`
/// for an observed junction means its first state of that kind. Returns false
/// with the first problem in `err`.
bool parseMode(const BondGraph &g, const std::string &text, const Mode &base, Mode &out,
               ModeError &err);

} // namespace hbg::bg
