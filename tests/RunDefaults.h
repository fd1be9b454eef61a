//===- tests/RunDefaults.h - A run at default options ----------------------===//
//
// The tests that check what users meet run models at default options:
// only the span, the output grid and (where the test is about it) the
// method are set.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/hbg.h"

#include <doctest/doctest.h>

/// `model` over [0, tEnd] sampled every `dtOut`, with `method` and every
/// other option at its default; the run must succeed.
inline hbg::Result runAtDefaults(const hbg::Model &model, double tEnd, double dtOut,
                                 hbg::runtime::Method method = hbg::SimulationOptions().method) {
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  opts.dtOut = dtOut;
  opts.method = method;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_MESSAGE(r.ok(), r.error);
  return r;
}
