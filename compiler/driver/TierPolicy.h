//===- compiler/driver/TierPolicy.h - When LLVM pays back -----------------===//
#pragma once

#include <cstddef>

namespace hbg {

/// The tiers code can be asked for, in order.
constexpr int kQuickTier = 1, kOptimisedTier = 2;

/// What LLVM costs and what its code saves, per tape instruction,
/// measured on the benchmarks' chain of masses (docs/architecture.md,
/// "Tiers"). The decision is a function of these and of counts, so that a
/// run takes the same tiers every time it is run.
struct TierCosts {
  /// One tape instruction interpreted, as baseline code
  /// (runtime/Baseline.h), and the same work in LLVM's quick and
  /// optimised code, in nanoseconds.
  double tapeNs = 7.5, baselineNs = 1.15, quickNs = 0.95, optimisedNs = 0.45;
  /// Compiling, per tape instruction of the whole group of functions.
  double quickCompileNs = 12e3, optimisedCompileNs = 60e3;
  /// Each compilation, and loading LLVM with its JIT (once per process).
  double moduleNs = 1e6, loadNs = 30e6;
};

/// Which tier pays back most for code whose counted evaluation runs
/// `perCall` tape instructions, `size` in all, when `callsAhead` more
/// evaluations are expected: `current` (none pays back), kQuickTier or
/// kOptimisedTier. `current` is the tier already asked for (0 or
/// kQuickTier); `loaded`: LLVM is loaded already; `baseline`: the code
/// runs as baseline code until then (else on its tapes' interpreter).
int chooseTier(const TierCosts &costs, std::size_t perCall, std::size_t size, double callsAhead,
               int current, bool loaded, bool baseline);

} // namespace hbg
