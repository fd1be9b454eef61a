//===- hbg/runtime/EventLocator.h - The first event inside a step ----------===//
//
// After every accepted step, the comparisons of the transitions enabled in
// the current FSM states are examined along the stepper's dense output;
// the first time at which some enabled guard holds is the event, and the
// caller cuts the step there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/System.h"

#include <cstdint>
#include <vector>

namespace hbg::runtime {

class EventLocator {
public:
  /// The first event in the stepper's last step [tPrev, t] of `mode`, in
  /// FSM states `q` whose transitions read comparisons `enabled`; `sidesA`
  /// and `sidesB` are the comparison sides at the step's start and end.
  /// Returns NaN when there is none; otherwise its time, with the state
  /// there in `xEvent`. Throws RunError when the guards cannot be evaluated.
  double locate(const Stepper &s, Mode &mode, const Switching &sw,
                const std::vector<std::uint32_t> &q, const std::vector<std::uint32_t> &enabled,
                const std::vector<double> &sidesA, const std::vector<double> &sidesB,
                std::vector<double> &xEvent);

private:
  /// Buffers kept between calls: this runs after every step.
  std::vector<double> times_, x_, buffer_;
  std::vector<std::vector<double>> sides_;
};

} // namespace hbg::runtime
