//===- compiler/sema/Experiment.cpp - The experiment block ----------------===//
//
// `experiment { ... }`: each setting lowered (a constant expression, or for
// `method` an integrator's name), and the values checked at the parameters'
// defaults once those are known to have no cycle.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

namespace hbg::sema {

using namespace hbg::bg;

namespace {

/// The settings of `experiment { ... }`: the numeric ones, then `method`
/// (a null field).
std::vector<bg::ExperimentSetting> allSettings() {
  std::vector<bg::ExperimentSetting> all = bg::experimentSettings();
  all.push_back({"method", nullptr, false});
  return all;
}
/// runtime::parseMethod's names (sema does not link the runtime; a driver
/// test checks that each of these parses).
const char *const kMethods[] = {"auto", "dopri5", "rosenbrock", "rk4", "euler"};

} // namespace

void Analyzer::lowerExperiment(const ast::Model &m) {
  if (m.experiments.empty())
    return;
  for (std::size_t i = 1; i < m.experiments.size(); ++i) {
    diags_.report(DiagKind::DuplicateExperiment, m.experiments[i].keywordRange, {});
    diags_.note(DiagKind::FirstExperiment, m.experiments[0].keywordRange, {});
  }
  bg::Experiment &x = g_.experiment;
  std::vector<std::string> names;
  const std::vector<bg::ExperimentSetting> settings = allSettings();
  for (const bg::ExperimentSetting &s : settings)
    names.push_back(s.name);
  for (const ast::ExperimentSetting &s : m.experiments[0].settings) {
    const bg::ExperimentSetting *info = nullptr;
    for (const bg::ExperimentSetting &k : settings)
      if (s.name == k.name)
        info = &k;
    if (!info) {
      std::string best = closestName(s.name, names);
      if (best.empty())
        diags_.report(DiagKind::UnknownSetting, s.nameRange, {s.name, quoteList(names)});
      else
        diags_.report(DiagKind::UnknownSettingSuggest, s.nameRange, {s.name, best});
      continue;
    }
    auto given = std::find_if(x.ranges.begin(), x.ranges.end(),
                              [&](const auto &r) { return r.first == s.name; });
    if (given != x.ranges.end()) {
      diags_.report(DiagKind::DuplicateSetting, s.nameRange, {s.name});
      diags_.note(DiagKind::PreviousDefinition, given->second, {s.name});
      continue;
    }
    x.ranges.emplace_back(s.name, s.nameRange);
    if (!info->field) {
      // `method = dopri5`: a name, not a value.
      const ast::Expr &v = *s.value;
      bool known = v.kind == ast::ExprKind::Name &&
                   std::any_of(std::begin(kMethods), std::end(kMethods),
                               [&](const char *k) { return v.name == k; });
      if (!known) {
        std::vector<std::string> methods(std::begin(kMethods), std::end(kMethods));
        diags_.report(DiagKind::UnknownMethod, v.range,
                      {sm_.text(v.range.begin.file).substr(v.range.begin.offset, v.range.length),
                       quoteList(methods)});
        continue;
      }
      x.method = v.name;
      continue;
    }
    x.*(info->field) =
        lowerConstant(*s.value, [&] { return "the experiment setting `" + s.name + "`"; });
  }
}

void Analyzer::checkExperiment() {
  // Values at the parameters' defaults; other values are checked when a
  // run evaluates them (Model::experiment).
  const bg::Experiment &x = g_.experiment;
  if (x.ranges.empty())
    return;
  std::vector<double> params = bg::defaultParameterValues(g_);
  auto value = [&](sym::ExprId e) {
    return ctx().evaluate(e, [&](sym::SymbolId s) { return params[ctx().symbol(s).slot]; });
  };
  auto where = [&](const char *name) {
    for (const auto &r : x.ranges)
      if (r.first == name)
        return r.second;
    return SourceRange{};
  };
  for (const bg::ExperimentSetting &s : bg::experimentSettings()) {
    if (!(x.*(s.field)).valid())
      continue;
    double v = value(x.*(s.field));
    if (!std::isfinite(v) || (s.positive && !(v > 0)))
      diags_.report(DiagKind::SettingNotPositive, where(s.name),
                    {s.name, s.positive ? "positive" : "finite", v});
  }
  if (x.tEnd.valid()) {
    double start = x.tStart.valid() ? value(x.tStart) : 0.0, end = value(x.tEnd);
    if (std::isfinite(start) && std::isfinite(end) && !(end > start))
      diags_.report(DiagKind::EndBeforeStart, where("t_end"),
                    {DiagArg::time(end), DiagArg::time(start)});
  }
}

} // namespace hbg::sema
