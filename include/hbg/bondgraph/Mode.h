//===- hbg/bondgraph/Mode.h - Modes of a switched bond graph --------------===//
//
// A mode is the ON/OFF state of every switched junction; its text
// (`j1=on, j2=off`) names it in messages, on the command line and in the
// event log.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"

#include <string>
#include <vector>

namespace hbg::bg {

/// A mode: the ON/OFF state of every junction, indexed by element. Junctions
/// that are not switched, and every other element, are ON. An empty `on`
/// means everything is ON.
struct Mode {
  std::vector<bool> on;
  bool isOn(ElementId e) const { return e.index >= on.size() || on[e.index]; }
  friend bool operator==(const Mode &a, const Mode &b) { return a.on == b.on; }
};

/// True when some junction of `g` is switched.
bool hasSwitched(const BondGraph &g);
/// The mode every switched junction starts in: its initial FSM state's kind.
Mode initialMode(const BondGraph &g);
/// The mode as text, switched junctions only, in declaration order:
/// `j1=on, j2=off` ("" when nothing is switched).
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
/// `base`: junctions not named keep their state in `base`. Returns false
/// with the first problem in `err`.
bool parseMode(const BondGraph &g, const std::string &text, const Mode &base, Mode &out,
               ModeError &err);

} // namespace hbg::bg
