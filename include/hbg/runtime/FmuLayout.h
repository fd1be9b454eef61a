//===- hbg/runtime/FmuLayout.h - An FMU's variables and value references -===//
//
// One numbering of an hbg FMU's variables, a contract between the FMU's
// functions (tools/fmu/Fmu.cpp) and the modelDescription.xml that `hbgc
// build --fmu` writes (compiler/tooling/FmuExport.cpp): time, the
// parameter array by slot, the full state, its derivatives, the outputs,
// the discrete values (sampled control: discrete states), the event
// indicators.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Image.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace hbg::fmi {

enum class Kind { None, Time, Parameter, State, Derivative, Output, Discrete, Indicator };

struct Variable {
  Kind kind = Kind::None;
  std::size_t index = 0;
};

struct Layout {
  std::size_t parameters = 0, states = 0, outputs = 0, discretes = 0, indicators = 0;
  std::vector<std::string> names;

  Layout() = default;
  /// Event indicators: every guard comparison of the model, then as many
  /// as the mode with the most kinks has (runtime::SteppedRun::indicators),
  /// and at least one after the comparisons of a switched model: the exit
  /// of a junction sliding on a guard surface, watched as the one kink of
  /// the combination (runtime FilippovMode).
  explicit Layout(const runtime::ModelImage &image)
      : parameters(image.setup.names.size()), states(image.stateNames.size()),
        outputs(image.outputNames.size()), discretes(image.discretes.size()),
        indicators(image.switching.numComparisons()) {
    std::size_t kinks = 0;
    for (const auto &p : image.programs)
      kinks = std::max(kinks, p->kinkInfo.size());
    bool switched = !image.switching.junctions().empty();
    indicators += std::max<std::size_t>(kinks, switched ? 1 : 0);
    names.push_back("time");
    for (const std::string &n : image.setup.names)
      names.push_back(n);
    for (const std::string &n : image.stateNames)
      names.push_back(n);
    for (const std::string &n : image.stateNames)
      names.push_back("der(" + n + ")");
    // An output may be named like a state (`output cap.q;`): names are
    // unique in an FMU.
    for (const std::string &n : image.outputNames)
      names.push_back(std::find(names.begin(), names.end(), n) == names.end() ? n
                                                                              : n + " (output)");
    for (const auto &[n, slot] : image.discretes)
      names.push_back(std::find(names.begin(), names.end(), n) == names.end() ? n
                                                                              : n + " (discrete)");
    for (std::size_t k = 0; k < indicators; ++k)
      names.push_back("hbg.indicator[" + std::to_string(k + 1) + "]");
  }

  /// The first value reference of each kind.
  std::uint32_t first(Kind kind) const {
    std::size_t at = 0;
    for (auto [k, n] : {std::pair{Kind::Time, std::size_t(1)}, std::pair{Kind::Parameter, parameters},
                        std::pair{Kind::State, states}, std::pair{Kind::Derivative, states},
                        std::pair{Kind::Output, outputs}, std::pair{Kind::Discrete, discretes},
                        std::pair{Kind::Indicator, indicators}}) {
      if (k == kind)
        return static_cast<std::uint32_t>(at);
      at += n;
    }
    return static_cast<std::uint32_t>(at);
  }
  std::uint32_t vr(Kind kind, std::size_t index) const {
    return first(kind) + static_cast<std::uint32_t>(index);
  }
  Variable of(std::uint32_t vr) const {
    Variable v;
    for (Kind k : {Kind::Indicator, Kind::Discrete, Kind::Output, Kind::Derivative, Kind::State,
                   Kind::Parameter, Kind::Time})
      if (vr >= first(k)) {
        v.kind = vr < names.size() ? k : Kind::None;
        v.index = vr - first(k);
        return v;
      }
    return v;
  }
  std::string name(std::uint32_t vr) const {
    return vr < names.size() ? names[vr] : "#" + std::to_string(vr);
  }
};

/// The instantiation token of an FMU whose image hashes to `hash`.
inline std::string instantiationToken(std::uint64_t hash) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "{hbg-%016llx}", static_cast<unsigned long long>(hash));
  return buf;
}

/// FNV-1a of `n` bytes.
inline std::uint64_t imageHash(const unsigned char *bytes, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t k = 0; k < n; ++k) {
    h ^= bytes[k];
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace hbg::fmi
