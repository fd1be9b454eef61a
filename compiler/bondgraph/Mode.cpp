//===- compiler/bondgraph/Mode.cpp - Modes of a switched bond graph -------===//

#include "hbg/bondgraph/Mode.h"

#include "hbg/support/Diagnostics.h"

#include <algorithm>
#include <string>

namespace hbg::bg {

bool hasSwitched(const BondGraph &g) {
  for (const Element &e : g.elements)
    if (e.fsm)
      return true;
  return false;
}

Mode initialMode(const BondGraph &g) {
  Mode m;
  m.on.assign(g.elements.size(), true);
  for (std::size_t i = 0; i < g.elements.size(); ++i) {
    const Element &e = g.elements[i];
    if (e.fsm && e.fsm->initial < e.fsm->states.size()) {
      m.on[i] = e.fsm->states[e.fsm->initial].on;
      if (e.fsm->observed) {
        m.state.resize(g.elements.size(), Mode::kNoState);
        m.state[i] = e.fsm->initial;
      }
    }
  }
  return m;
}

std::string modeText(const BondGraph &g, const Mode &m) {
  std::string out;
  for (std::uint32_t i = 0; i < g.elements.size(); ++i)
    if (g.elements[i].fsm) {
      out += out.empty() ? "" : ", ";
      std::uint32_t st = m.stateOf(ElementId{i});
      const std::vector<FsmState> &states = g.elements[i].fsm->states;
      if (st >= states.size()) {
        // Not observed: the one state of the junction's kind, named as
        // the run and the event log name it (`open`, not `off`); `on` or
        // `off` where several states share the kind.
        bool on = m.isOn(ElementId{i});
        std::size_t alike = 0;
        for (std::uint32_t k = 0; k < states.size(); ++k)
          if (states[k].on == on && alike++ == 0)
            st = k;
        if (alike != 1)
          st = Mode::kNoState;
      }
      if (st < states.size())
        out += g.elements[i].name + "=" + states[st].name;
      else
        out += g.elements[i].name + (m.isOn(ElementId{i}) ? "=on" : "=off");
    }
  return out;
}

namespace {
std::string trim(const std::string &s) {
  std::size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}
} // namespace

bool parseMode(const BondGraph &g, const std::string &text, const Mode &base, Mode &out,
               ModeError &err) {
  out = base;
  out.on.resize(g.elements.size(), true);
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    std::string item = trim(text.substr(start, comma == std::string::npos ? std::string::npos
                                                                          : comma - start));
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      err = {ModeError::Syntax, item, "", "", "", {}};
      return false;
    }
    std::string name = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    ElementId found;
    std::vector<std::string> switched;
    for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
      const Element &e = g.elements[i];
      if (e.fsm)
        switched.push_back(e.name);
      if (isJunction(e.kind) && e.name == name)
        found = ElementId{i};
    }
    if (!found.valid()) {
      err = {ModeError::UnknownJunction, item, name, value, closestName(name, switched), {}};
      return false;
    }
    if (!g.element(found).fsm) {
      err = {ModeError::NotSwitched, item, name, value, "", found};
      return false;
    }
    // `on`, `off`, or the name of one of the junction's states.
    const Fsm &fsm = *g.element(found).fsm;
    auto state = std::find_if(fsm.states.begin(), fsm.states.end(),
                              [&](const FsmState &st) { return st.name == value; });
    if (value != "on" && value != "off" && state == fsm.states.end()) {
      err = {ModeError::BadValue, item, name, value, "", found};
      return false;
    }
    if (fsm.observed && state == fsm.states.end())
      // `on` or `off`: the first state of that kind.
      state = std::find_if(fsm.states.begin(), fsm.states.end(),
                           [&](const FsmState &st) { return st.on == (value == "on"); });
    if (fsm.observed && state == fsm.states.end()) {
      err = {ModeError::BadValue, item, name, value, "", found};
      return false;
    }
    out.on[found.index] = state != fsm.states.end() ? state->on : value == "on";
    if (fsm.observed) {
      out.state.resize(g.elements.size(), Mode::kNoState);
      out.state[found.index] = static_cast<std::uint32_t>(state - fsm.states.begin());
    }
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

} // namespace hbg::bg
