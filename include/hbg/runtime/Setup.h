//===- hbg/runtime/Setup.h - What a model computes before a run -----------===//
//
// Parameter defaults (which may read other parameters), initial values,
// nominal magnitudes and the `experiment` block's settings are
// expressions of the parameters, computed once per run. The compiler
// turns them into tapes, evaluated with the generated code's arithmetic,
// so that a run through the JIT and one through a simulator built ahead
// of time (which has no compiler) start from the same values, bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/Simulate.h"
#include "hbg/runtime/Tape.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hbg::runtime {

/// The numeric settings an `experiment { ... }` block may give, in the
/// order of SetupProgram::experiment's results (ExperimentSettings.def).
enum class Setting : std::uint8_t {
#define HBG_SETTING(Id, name, field, positive) Id,
#include "hbg/runtime/ExperimentSettings.def"
  Count
};

/// The settings' names as written in an experiment block (`t_end`).
const char *settingName(Setting s);
/// Whether a setting must be positive (times need only be finite).
bool settingPositive(Setting s);

/// What a model's `experiment { ... }` block sets (docs/language.md), or
/// a command line: each setting it gives, nothing for the others. The
/// embedding API calls it hbg::Experiment.
struct ExperimentValues {
#define HBG_SETTING(Id, name, field, positive) std::optional<double> field;
#include "hbg/runtime/ExperimentSettings.def"
  std::optional<Method> method;

  std::optional<double> &operator[](Setting s);
  const std::optional<double> &operator[](Setting s) const {
    return const_cast<ExperimentValues &>(*this)[s];
  }
  /// `base` with every setting given here in place of its own: the one
  /// merge of run settings. A run's settings are the defaults, then the
  /// model's block over them, then the command line's over those.
  SimulateOptions apply(SimulateOptions base = {}) const;
};

struct SetupProgram {
  /// By parameter slot: its name, its default (a tape with one result,
  /// reading the parameters before it in `order`), and whether it is an
  /// input.
  std::vector<std::string> names;
  std::vector<Tape> defaults;
  std::vector<bool> inputs;
  /// The slots in an order in which every default reads only earlier ones.
  std::vector<std::uint32_t> order;
  /// The full state's initial values, and its nominal magnitudes (0 where
  /// the model gives none).
  Tape initial, nominal;
  /// The settings the experiment block gives (`given`), as results of one
  /// tape in Setting order (0 for the others), and its method if any.
  Tape experiment;
  std::vector<bool> given;
  std::optional<Method> method;

  /// The parameter array: `overrides` by name, the defaults otherwise.
  std::vector<double> parameters(const std::map<std::string, double> &overrides) const;
  std::vector<double> initialState(const std::vector<double> &p) const;
  /// |nominal|, 0 where it is not finite.
  std::vector<double> nominalState(const std::vector<double> &p) const;
  /// The experiment block's settings at `p`. Throws std::invalid_argument
  /// naming the setting and `model` when one is not finite, not positive
  /// where it must be, or t_end is not after t_start.
  ExperimentValues experimentValues(const std::vector<double> &p, const std::string &model) const;
};

} // namespace hbg::runtime
