//===- runtime/Losses.cpp - Mean powers and losses over a window ----------===//

#include "hbg/runtime/Losses.h"

#include "hbg/runtime/Periodic.h"
#include "hbg/runtime/Quadrature.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hbg::runtime {

const std::vector<std::uint32_t> &System::integralStates() const {
  static const std::vector<std::uint32_t> none;
  return none;
}

const std::vector<std::pair<std::string, std::uint32_t>> &System::discretes() const {
  static const std::vector<std::pair<std::string, std::uint32_t>> none;
  return none;
}

const std::vector<PowerElement> &System::powerElements() const {
  static const std::vector<PowerElement> none;
  return none;
}

double PowerFigures::delivered() const {
  double sum = 0;
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i].kind != "R")
      sum += mean[i];
  return sum;
}

double PowerFigures::dissipated() const {
  double sum = 0;
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i].kind == "R")
      sum += mean[i];
  return sum;
}

double PowerFigures::sumOf(const std::vector<std::size_t> &at) const {
  double sum = 0;
  for (std::size_t i : at)
    sum += mean[i];
  return sum;
}

double PowerFigures::efficiency(const std::string &out, const std::string &in,
                                std::string &error) const {
  std::vector<std::size_t> outAt = findElements(elements, out, error);
  if (outAt.empty())
    return std::numeric_limits<double>::quiet_NaN();
  std::vector<std::size_t> inAt = findElements(elements, in, error);
  if (inAt.empty())
    return std::numeric_limits<double>::quiet_NaN();
  return sumOf(outAt) / sumOf(inAt);
}

PowerMeter::PowerMeter(const System &system, double t0, double t1)
    : t0_(t0), t1_(t1), elements_(system.powerElements()), energy_(elements_.size(), 0.0) {}

void PowerMeter::step(Mode &m, const Stepper &s, double ta, double tb) {
  settle(m);
  double a = std::max(ta, t0_), b = std::min(tb, t1_);
  if (!(b > a) || elements_.empty())
    return;
  std::size_t np = elements_.size();
  values_.resize(np * (1 + m.dependentSlots().size()));
  xs_.resize(m.stateSlots().size());
  for (int k = 0; k < 5; ++k) {
    double tau = 0.5 * (a + b) + 0.5 * (b - a) * kGaussNodes[k];
    if (tau == s.t())
      std::copy(s.x().begin(), s.x().end(), xs_.begin());
    else
      s.interpolate(tau, xs_.data());
    call(m.powers(tau, xs_.data(), values_.data()), m, "powers");
    double w = 0.5 * (b - a) * kGaussWeights[k];
    for (std::size_t i = 0; i < np; ++i)
      energy_[i] += w * values_[i];
  }
}

void PowerMeter::event(const Event &e) {
  if (!(e.time >= t0_ && e.time < t1_))
    return;
  ++events_;
  if (std::isnan(e.removed))
    audited_ = false;
  else
    removed_ += e.removed;
  if (!elements_.empty())
    pending_.push_back(e);
}

void PowerMeter::settle(Mode &m) {
  // The jump into `m` moved its dependent storage from where the state
  // before had it to where `m` puts it; each source's work through the
  // jump is its work per unit jump times that, summed.
  std::size_t np = elements_.size(), nd = m.dependentSlots().size();
  for (const Event &e : pending_) {
    if (nd == 0 || e.before.empty() || e.after.empty())
      continue;
    const std::vector<std::uint32_t> &slots = m.stateSlots();
    xs_.resize(slots.size());
    for (std::size_t i = 0; i < slots.size(); ++i)
      xs_[i] = e.after[slots[i]];
    values_.resize(np * (1 + nd));
    call(m.powers(e.time, xs_.data(), values_.data()), m, "powers");
    for (std::size_t k = 0; k < nd; ++k) {
      std::uint32_t slot = m.dependentSlots()[k];
      if (slot == kNoSlot)
        continue;
      double jump = e.after[slot] - e.before[slot];
      for (std::size_t p = 0; p < np; ++p) {
        energy_[p] += values_[np + p * nd + k] * jump;
        work_ += values_[np + p * nd + k] * jump;
      }
    }
  }
  pending_.clear();
}

void PowerMeter::attach(SimulateOptions &o, RunTrace &trace) {
  trace.onStep = [this, &trace](Mode &m, const Stepper &s, double ta, double tb) {
    step(m, s, ta, tb);
    // The run appends a segment per stretch in a mode and reads only the
    // last: a transient of any length keeps one.
    if (trace.segments.size() > 1)
      trace.segments.erase(trace.segments.begin(), trace.segments.end() - 1);
    trace.jumps.clear();
    trace.order.clear();
  };
  o.trace = &trace;
  o.onEvent = [this, before = std::move(o.onEvent)](const Event &e) {
    if (before)
      before(e);
    event(e);
  };
}

PowerFigures PowerMeter::figures() const {
  PowerFigures f;
  f.t0 = t0_;
  f.t1 = t1_;
  f.elements = elements_;
  double length = t1_ - t0_;
  for (double e : energy_)
    f.mean.push_back(e / length);
  f.events = events_;
  f.removed = removed_;
  f.sourceWork = work_;
  f.eventLoss = (work_ + removed_) / length;
  f.audited = audited_;
  return f;
}

std::vector<std::size_t> findElements(const std::vector<PowerElement> &elements,
                                      const std::string &list, std::string &error) {
  std::vector<std::size_t> found;
  std::vector<std::string> names;
  for (const PowerElement &e : elements)
    names.push_back(e.path);
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    start = comma + 1;
    auto at = std::find(names.begin(), names.end(), name);
    if (at != names.end()) {
      found.push_back(std::size_t(at - names.begin()));
      continue;
    }
    // The names that share the unknown one's instance path, or its last
    // part, and the closest by spelling.
    std::vector<std::string> close;
    std::string best = closestName(name, names);
    if (!best.empty())
      close.push_back(best);
    std::size_t dot = name.rfind('.');
    std::string head = dot == std::string::npos ? name : name.substr(0, dot + 1);
    std::string tail = dot == std::string::npos ? name : name.substr(dot);
    for (const std::string &n : names)
      if (n != best && (n.compare(0, head.size(), head) == 0 ||
                        (n.size() >= tail.size() &&
                         n.compare(n.size() - tail.size(), tail.size(), tail) == 0)))
        close.push_back(n);
    error = name.empty() ? "an empty element name" : "no R element or source `" + name + "`";
    const char *intro = "; close names: `";
    if (close.empty()) {
      close = names;
      intro = "; the model's R elements and sources: `";
    }
    std::size_t more = close.size() > 8 ? close.size() - 8 : 0;
    close.resize(close.size() - more);
    for (std::size_t i = 0; i < close.size(); ++i)
      error += (i ? ", `" : intro) + close[i] + "`";
    if (more)
      error += " and " + std::to_string(more) + " more";
    return {};
  }
  return found;
}

} // namespace hbg::runtime
