//===- runtime/Setup.cpp - What a model computes before a run -------------===//

#include "hbg/runtime/Setup.h"

#include "hbg/runtime/System.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace hbg::runtime {

const char *settingName(Setting s) {
  switch (s) {
#define HBG_SETTING(Id, name, field, positive)                                                    \
  case Setting::Id:                                                                                \
    return name;
#include "hbg/runtime/ExperimentSettings.def"
  case Setting::Count: break;
  }
  return "?";
}

bool settingPositive(Setting s) {
  switch (s) {
#define HBG_SETTING(Id, name, field, positive)                                                    \
  case Setting::Id:                                                                                \
    return positive;
#include "hbg/runtime/ExperimentSettings.def"
  case Setting::Count: break;
  }
  return false;
}

std::optional<double> &ExperimentValues::operator[](Setting s) {
  switch (s) {
#define HBG_SETTING(Id, name, field, positive)                                                    \
  case Setting::Id:                                                                                \
    return field;
#include "hbg/runtime/ExperimentSettings.def"
  case Setting::Count: break;
  }
  throw std::out_of_range("no experiment setting " + std::to_string(static_cast<int>(s)));
}

SimulateOptions ExperimentValues::apply(SimulateOptions o) const {
#define HBG_SETTING(Id, name, field, positive)                                                    \
  if (field)                                                                                       \
    o.field = *field;
#include "hbg/runtime/ExperimentSettings.def"
  if (method)
    o.method = *method;
  return o;
}

std::vector<double> SetupProgram::parameters(const std::map<std::string, double> &overrides) const {
  std::vector<double> p(names.size(), 0.0), scratch;
  for (std::uint32_t i : order) {
    auto it = overrides.find(names[i]);
    if (it != overrides.end())
      p[i] = it->second;
    else
      defaults[i].evaluate(0, nullptr, p.data(), &p[i], scratch);
  }
  return p;
}

std::vector<double> SetupProgram::initialState(const std::vector<double> &p) const {
  std::vector<double> x(initial.results.size()), scratch;
  initial.evaluate(0, nullptr, p.data(), x.data(), scratch);
  return x;
}

std::vector<double> SetupProgram::nominalState(const std::vector<double> &p) const {
  std::vector<double> x(nominal.results.size()), scratch;
  nominal.evaluate(0, nullptr, p.data(), x.data(), scratch);
  for (double &v : x)
    v = std::isfinite(v) ? std::abs(v) : 0.0;
  return x;
}

ExperimentValues SetupProgram::experimentValues(const std::vector<double> &p,
                                                const std::string &model) const {
  ExperimentValues out;
  out.method = method;
  std::vector<double> v(experiment.results.size()), scratch;
  experiment.evaluate(0, nullptr, p.data(), v.data(), scratch);
  for (int k = 0; k < static_cast<int>(Setting::Count) && k < static_cast<int>(v.size()); ++k) {
    if (k >= static_cast<int>(given.size()) || !given[k])
      continue;
    Setting s = static_cast<Setting>(k);
    bool positive = settingPositive(s);
    if (!std::isfinite(v[k]) || (positive && !(v[k] > 0)))
      throw std::invalid_argument("experiment setting `" + std::string(settingName(s)) +
                                  "` of model `" + model + "` must be " +
                                  (positive ? "positive" : "finite") +
                                  "; with the parameters given it is " + timeText(v[k]));
    out[s] = v[k];
  }
  const std::optional<double> &t0 = out[Setting::TStart], &t1 = out[Setting::TEnd];
  if (t1 && !(*t1 > t0.value_or(0.0)))
    throw std::invalid_argument("`t_end` of model `" + model + "` must be after `t_start`; " +
                                "with the parameters given they are " + timeText(*t1) + " and " +
                                timeText(t0.value_or(0.0)));
  return out;
}

} // namespace hbg::runtime
