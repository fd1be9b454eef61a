//===- hbg/tooling/Dot.h - The bond graph as Graphviz draws it -------------===//
//
// `hbgc dot`: the bond graph in Graphviz's DOT language, drawn as engineers
// draw bond graphs: each element by its kind and name (`C:cap`, `1:loop`),
// each bond a half-arrow in the direction of positive power with its causal
// stroke at the end whose element receives the effort.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"
#include "hbg/causality/Causality.h"
#include "hbg/syntax/AST.h"

#include <string>
#include <vector>

namespace hbg::driver {

/// DOT for `g` with causality `ca` (in the mode `ca.mode`): switched
/// junctions boxed, with the state they are in (OFF dashed, with their
/// bonds); storage in derivative causality in red; the elements and bonds
/// of each algebraic loop (a causality choice) in a colour of its own;
/// the instances of components (`instances`, by path) as nested clusters.
/// A legend at the bottom names the mode, the derivative storage and
/// each loop's path.
std::string dot(const bg::BondGraph &g, const causality::CausalAssignment &ca,
                const std::vector<ast::InstanceInfo> &instances);

} // namespace hbg::driver
