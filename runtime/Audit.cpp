//===- runtime/Audit.cpp - The energy audit of events ----------------------===//
//
// An ideal junction structure neither stores nor dissipates energy, and no
// resistor can carry an impulse, so when an event's jump removes stored
// energy nothing in the model accounts for it: the loss belongs to the
// idealisation. That is right for a plastic impact and wrong for a diode
// that never conducts, which is why a run says so unless one of the
// junctions that switched is declared `dissipative`.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hbg::runtime {

namespace {
/// `cap` for the state `cap.q`.
std::string elementOf(const std::string &state) {
  std::size_t dot = state.rfind('.');
  return dot == std::string::npos ? state : state.substr(0, dot);
}

std::string joules(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g J", e);
  return buf;
}

/// A jump removes energy when it loses more than this fraction of what
/// the storage holds: well above the rounding of a remap, far below any
/// loss an idealisation causes.
constexpr double kLossFraction = 1e-6;
} // namespace

void Run::energyBefore(Event &ev) {
  ev.energyBefore.assign(X_.size(), 0.0);
  if (!sys_.storedEnergy(t_, X_.data(), ev.energyBefore.data()))
    ev.energyBefore.clear();
}

void Run::auditEnergy(Event &ev) {
  std::size_t n = X_.size();
  if (ev.energyBefore.empty()) {
    ev.storedBefore = ev.storedAfter = ev.removed = std::nan("");
    return;
  }
  if (ev.after == ev.before)
    ev.energyAfter = ev.energyBefore;
  else {
    ev.energyAfter.assign(n, 0.0);
    sys_.storedEnergy(ev.time, ev.after.data(), ev.energyAfter.data());
  }
  // Storage whose energy cannot be computed (NaN) stays out of the sums.
  double scale = 0;
  ev.storedBefore = ev.storedAfter = 0;
  for (std::size_t i = 0; i < n; ++i) {
    peak_[i] = std::max({peak_[i], std::abs(ev.before[i]), std::abs(ev.after[i])});
    if (std::isnan(ev.energyBefore[i]) || std::isnan(ev.energyAfter[i]))
      continue;
    ev.storedBefore += ev.energyBefore[i];
    ev.storedAfter += ev.energyAfter[i];
    scale += std::abs(ev.energyBefore[i]) + std::abs(ev.energyAfter[i]);
  }
  ev.removed = ev.storedBefore - ev.storedAfter;
  if (!(ev.removed > kLossFraction * scale))
    return; // conserved or supplied
  // No junction switched: the jump is dependent storage following a source
  // (or a modulated element) whose value switched branches, a velocity
  // source's step into a mass. The source takes what the storage gives up,
  // as it supplies what it gains.
  if (ev.junctionsSwitched.empty())
    return;
  for (std::uint32_t j : ev.junctionsSwitched)
    if (sw_.junctions()[j].dissipative)
      return;

  // The storage that lost energy, and the junctions that switched. A jump
  // within the integrator's relative tolerance of the largest value the
  // state has had is the residue of locating the event (an inductor's
  // current stopped at its zero crossing), not a loss.
  auto loses = [&](std::size_t i) {
    return ev.energyBefore[i] - ev.energyAfter[i] > kLossFraction * scale &&
           std::abs(ev.after[i] - ev.before[i]) > o_.rtol * peak_[i];
  };
  std::string lost, key, first;
  for (std::size_t i = 0; i < n; ++i)
    if (loses(i)) {
      std::string name = elementOf(sys_.stateNames()[i]);
      if (first.empty())
        first = name;
      lost += (lost.empty() ? "" : ", ") + name + " " + joules(ev.energyBefore[i]) + " -> " +
              joules(ev.energyAfter[i]);
      key += name + ",";
    }
  if (lost.empty())
    return;
  std::string junctions;
  for (std::uint32_t j : ev.junctionsSwitched)
    junctions += (junctions.empty() ? "" : ", ") + sw_.junctions()[j].name;
  const std::string &mode = ev.modes.back();
  key += "|" + mode;

  auto [it, fresh] = findings_.try_emplace(key);
  Finding &f = it->second;
  if (fresh) {
    f.index = r_.warnings.size();
    f.first = ev.time;
    f.before = ev.modes.front();
    f.into = mode;
    f.removed = joules(ev.removed);
    f.stored = joules(ev.storedBefore);
    f.lost = lost;
    f.junctions = junctions.empty() ? std::string() : " (" + junctions + ")";
    f.element = first;
    r_.warnings.push_back(runDiagnostic(DiagKind::RunEnergyVanished, f.first, f.before,
                                        {DiagArg::mode(f.into), f.removed, f.stored, f.lost,
                                         f.junctions, DiagArg::element(f.element)}));
  }
  ++f.count;
  f.last = ev.time;
  if (f.count > 1)
    r_.warnings[f.index] =
        runDiagnostic(DiagKind::RunEnergyVanishedAgain, f.first, f.before,
                      {DiagArg::mode(f.into), f.removed, f.stored, f.lost, f.junctions,
                       std::to_string(f.count - 1) + (f.count > 2 ? " more events" : " more event"),
                       DiagArg::time(f.last), DiagArg::element(f.element)});
}

} // namespace hbg::runtime
