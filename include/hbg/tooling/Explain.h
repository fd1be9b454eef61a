//===- hbg/tooling/Explain.h - Causality and equations for people ---------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"
#include "hbg/causality/Causality.h"
#include "hbg/equations/Equations.h"

#include <string>

namespace hbg::driver {

/// Causality and equations as an engineer reads them (`hbgc explain`), with
/// a `mode:` line when the model has switched junctions.
std::string explain(const bg::BondGraph &g, const causality::CausalAssignment &ca,
                    const eq::EquationSystem &sys);

} // namespace hbg::driver
