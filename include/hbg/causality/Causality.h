//===- hbg/causality/Causality.h - Sequential causality assignment --------===//
//
// SCAP (the sequential causality assignment procedure): sources first, then
// storage elements in their preferred integral causality, propagating each
// choice through junctions, TF and GY; R elements still free afterwards are
// given a causality by choice (their wave closes an algebraic loop). Storage
// whose causality propagation forces the other way is in derivative
// causality.
//
// The result records, per bond, which end sets the effort, and for every
// choice and every derivative storage element the causal path that led to
// it, so that later stages (and error messages) can name the elements.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"
#include "hbg/bondgraph/Mode.h"
#include "hbg/support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace hbg::causality {

/// Which end of a bond sets its effort (the causal stroke sits at the other).
enum class EffortFrom : std::uint8_t { Unassigned, Tail, Head };

/// Causality found for one bond and why.
struct BondCausality {
  EffortFrom effort = EffortFrom::Unassigned;
  /// The element whose assignment started the propagation that set this bond.
  bg::ElementId origin;
  /// The bond whose assignment forced this one (invalid for the origin's own bond).
  bg::BondId via;
};

/// An R element given its causality by choice, and the wave it started.
struct Choice {
  bg::ElementId element; ///< invalid when a junction structure was left free
  bg::BondId bond;
  /// Elements on the causal path from the choice to the next R it forced
  /// (or every element the wave reached when it forced no other R).
  std::vector<bg::ElementId> path;
};

/// A storage element forced into derivative causality.
struct DerivativeStorage {
  bg::ElementId element;
  /// Elements on the causal path from the origin that forced it to it.
  std::vector<bg::ElementId> path;
};

/// The causality of every bond.
struct CausalAssignment {
  /// The mode this causality holds in: an OFF 0-junction sets the effort of
  /// every bond it has, an OFF 1-junction the flow of every bond it has.
  bg::Mode mode;
  std::vector<BondCausality> bonds;
  std::vector<Choice> choices;
  std::vector<DerivativeStorage> derivative;
  /// ON junctions cut off by OFF junctions, indexed by element: a 0-junction
  /// every bond of which ends at an OFF 1-junction (so no element sets its
  /// effort), or a 1-junction every bond of which ends at an OFF 0-junction.
  /// They are treated as OFF: their undetermined effort (flow) is 0.
  std::vector<bool> isolated;

  /// True when junction `e` imposes zero on its bonds: OFF in `mode`, or
  /// isolated.
  bool imposesZero(bg::ElementId e) const {
    return !mode.isOn(e) || (e.index < isolated.size() && isolated[e.index]);
  }
  /// True when element `e` sets the effort of bond `b` (so it receives the flow).
  bool setsEffort(const bg::BondGraph &g, bg::BondId b, bg::ElementId e) const;
  /// Checks that every bond is causal and every junction, TF and GY obeys its
  /// rule. Returns "" or the first violation.
  std::string verify(const bg::BondGraph &g) const;
  /// One line per bond and per storage element (`--emit=causality`).
  std::string dump(const bg::BondGraph &g) const;
};

/// Runs SCAP in `mode`. OFF junctions are fixed like sources: an OFF
/// 0-junction imposes zero effort on all its bonds, an OFF 1-junction zero
/// flow. Causal conflicts (two sources or OFF junctions imposing one
/// variable) are reported to `diags` naming both and, when the graph has
/// switched junctions, the mode; the result is then empty.
/// When the conflict is a source's (its fixed causality contradicts what
/// another source or an OFF junction already imposed), `source`, if given,
/// is set to that source.
std::optional<CausalAssignment> assignCausality(const bg::BondGraph &g, const bg::Mode &mode,
                                                DiagnosticEngine &diags,
                                                bg::ElementId *source = nullptr);
/// assignCausality in the initial mode (every junction ON unless switched).
std::optional<CausalAssignment> assignCausality(const bg::BondGraph &g, DiagnosticEngine &diags);

} // namespace hbg::causality
