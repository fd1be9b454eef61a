//===- compiler/driver/CompiledSystem.cpp - A Model as the runtime sees it ===//

#include "CompiledSystem.h"

#include <cmath>

#include <chrono>
#include <numeric>

namespace hbg {

/// A mode's JIT-compiled functions behind the runtime's interface.
class CompiledSystem::CompiledMode : public runtime::Mode {
public:
  /// `p`: the parameters and held values; the mode's kink branches follow
  /// them in its own copy.
  /// `compileSeconds`: where the time compiling the Jacobian is added.
  CompiledMode(std::shared_ptr<ModeCode> code, const std::vector<double> &p, bool switched,
               double &compileSeconds)
      : code_(std::move(code)), p_(p.size() + code_->equations.kinks.size(), 0.0),
        e_(*code_, p_.data()), compileSeconds_(compileSeconds) {
    setParameters(p);
    if (code_->guardTape)
      varying_ = code_->guardTape->varying();
    const eq::EquationSystem &eqs = code_->equations;
    if (switched) {
      name_ = code_->modeName;
      stateSlots_ = code_->stateSlots;
      dependentSlots_ = code_->dependentSlots;
    } else {
      stateSlots_.resize(eqs.states.size());
      std::iota(stateSlots_.begin(), stateSlots_.end(), 0u);
    }
  }

  const std::string &name() const override { return name_; }
  const std::vector<std::uint32_t> &stateSlots() const override { return stateSlots_; }
  const std::vector<std::uint32_t> &dependentSlots() const override { return dependentSlots_; }
  const std::string &shortCircuit() const override { return code_->shortCircuit; }
  const std::string &stateName(std::size_t i) const override {
    return code_->equations.states[i].name;
  }
  bool rhs(double t, const double *x, double *xdot) override { return e_.rhs(t, x, xdot); }
  const runtime::SparsePattern *jacobianPattern() override {
    auto start = std::chrono::steady_clock::now();
    const JacobianCode &jc = code_->jacobianCode();
    compileSeconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return &jc.pattern;
  }
  bool jacobian(double t, const double *x, double *values, double *dfdt) override {
    return e_.jacobian(t, x, values, dfdt);
  }
  bool outputs(double t, const double *x, double *y) override { return e_.outputs(t, x, y); }
  bool guards(double t, const double *x, double *sides) override {
    return e_.call(code_->guards, t, x, sides);
  }
  // The tape's instructions of parameters alone are evaluated once per
  // change of p_ (parameters, held values, branches) and kept in the
  // scratch arrays; each call evaluates the varying ones.
  bool encloseGuards(runtime::Interval t, const runtime::Interval *x,
                     runtime::Interval *out) override {
    if (!code_->guardTape)
      return false;
    code_->guardTape->evaluate(t, x, p_.data(), out, scratch_, valuesKept_ ? &varying_ : nullptr);
    valuesKept_ = true;
    return true;
  }
  bool encloseGuardSlopes(runtime::Interval t, const runtime::Interval *x,
                          const runtime::Interval *xdot, runtime::Interval *out,
                          runtime::Interval *outDot) override {
    if (!code_->guardTape)
      return false;
    bool kept = valuesKept_ && slopesKept_;
    code_->guardTape->evaluateSlope(t, x, xdot, p_.data(), out, outDot, scratch_, slopes_,
                                    kept ? &varying_ : nullptr);
    valuesKept_ = slopesKept_ = true;
    return true;
  }
  const std::vector<std::uint32_t> &guardStates() const override { return code_->guardStates; }
  const std::vector<std::uint32_t> &timeComparisons() const override {
    return code_->timeComparisons;
  }
  bool held(double t, const double *x, double *values) override {
    return e_.call(code_->held, t, x, values);
  }
  bool dependent(double t, const double *x, double *d) override {
    return e_.call(code_->dependent, t, x, d);
  }
  bool dependentJacobian(double t, const double *x, double *jac) override {
    if (code_->equations.unknowns.empty())
      return e_.call(code_->dependentJacobian, t, x, jac);
    // Dependent storage defined through Newton-solved loops (nonlinear
    // laws): the symbolic derivative would miss the loops' dependence on
    // the states, so difference it (central, step ~ cbrt(eps)).
    std::size_t n = stateSlots_.size(), nd = dependentSlots_.size();
    std::vector<double> xp(x, x + n), dp(nd), dm(nd);
    for (std::size_t i = 0; i < n; ++i) {
      double h = 6e-6 * std::max(1.0, std::abs(x[i]));
      xp[i] = x[i] + h;
      if (!dependent(t, xp.data(), dp.data()))
        return false;
      xp[i] = x[i] - h;
      if (!dependent(t, xp.data(), dm.data()))
        return false;
      xp[i] = x[i];
      for (std::size_t k = 0; k < nd; ++k)
        jac[k * n + i] = (dp[k] - dm[k]) / (2 * h);
    }
    return true;
  }
  bool impulse(double t, const double *x, double *b) override {
    return e_.call(code_->impulse, t, x, b);
  }
  bool guardImpulses(double t, const double *x, double *out) override {
    return code_->guardImpulse && e_.call(code_->guardImpulse, t, x, out);
  }
  const std::string &failure() const override { return e_.failure(); }

  std::size_t numKinks() const override { return code_->equations.kinks.size(); }
  bool kinkFloor(std::size_t k) const override { return code_->equations.kinks[k].floor; }
  const std::string &kinkText(std::size_t k) const override {
    return code_->equations.kinks[k].text;
  }
  bool kinkArguments(double t, const double *x, double *c) override {
    return e_.call(code_->kinks, t, x, c);
  }
  double branch(std::size_t k) const override { return p_[firstBranch() + k]; }
  void setBranch(std::size_t k, double b) override {
    p_[firstBranch() + k] = b;
    valuesKept_ = slopesKept_ = false;
  }

  /// Parameters and held values, as the system holds them.
  void setParameters(const std::vector<double> &p) {
    std::copy(p.begin(), p.end(), p_.begin());
    valuesKept_ = slopesKept_ = false;
  }

private:
  std::size_t firstBranch() const { return p_.size() - numKinks(); }

  std::shared_ptr<ModeCode> code_;
  /// Parameters, held values, kink branches.
  std::vector<double> p_;
  Evaluator e_;
  double &compileSeconds_;
  std::vector<runtime::Interval> scratch_, slopes_;
  /// The guard tape's instructions that read time or states, and whether
  /// the others' values and slopes in scratch_ and slopes_ are current.
  std::vector<std::uint32_t> varying_;
  bool valuesKept_ = false, slopesKept_ = false;
  std::string name_;
  std::vector<std::uint32_t> stateSlots_, dependentSlots_;
};

CompiledSystem::CompiledSystem(const Model &model, std::vector<double> params)
    : model_(model), m_(*model.impl()), p_(std::move(params)), np_(p_.size()) {
  p_.resize(np_ + m_.initial->equations.numHeld, 0.0);
}

CompiledSystem::~CompiledSystem() {
  // The run's modes are free for the cache to drop once it lets go.
  modes_.clear();
  if (m_.switched) {
    std::lock_guard<std::mutex> lock(m_.cacheMutex);
    m_.evict();
  }
}

void CompiledSystem::setHeld(const double *values) {
  std::copy(values, values + numHeld(), p_.begin() + static_cast<std::ptrdiff_t>(np_));
  for (auto &[code, mode] : modes_)
    mode->setParameters(p_);
}

void CompiledSystem::setParameter(std::size_t slot, double value) {
  p_[slot] = value;
  for (auto &[code, mode] : modes_)
    mode->setParameters(p_);
}

runtime::Mode *CompiledSystem::mode(const std::vector<std::uint32_t> &q, std::string &why) {
  std::shared_ptr<ModeCode> code = m_.initial;
  if (m_.switched) {
    bg::Mode mode = bg::initialMode(*m_.graph);
    mode.on.resize(m_.graph->elements.size(), true);
    for (std::size_t j = 0; j < q.size(); ++j) {
      std::uint32_t element = m_.junctionElements[j];
      const bg::Fsm &fsm = *m_.graph->elements[element].fsm;
      mode.on[element] = fsm.states[q[j]].on;
      if (fsm.observed)
        mode.state[element] = q[j];
    }
    std::size_t before = m_.modesCompiled();
    auto start = std::chrono::steady_clock::now();
    try {
      code = m_.modeCode(mode);
    } catch (const CompileError &e) {
      why = e.what();
      return nullptr;
    }
    if (m_.modesCompiled() != before) {
      compileSeconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ++modesCompiled;
    }
  }
  std::unique_ptr<CompiledMode> &m = modes_[code.get()];
  if (!m)
    m = std::make_unique<CompiledMode>(code, p_, m_.switched, compileSeconds);
  return m.get();
}

bool CompiledSystem::storedEnergy(double t, const double *X, double *energy) {
  if (!m_.switched)
    return false;
  // Integrators hold no energy; storage whose law has no tape (it reads
  // more than its own state and parameters) cannot say.
  std::fill(energy, energy + m_.stateNames.size(), 0.0);
  for (std::size_t i = 0; i < m_.storageLaws.size(); ++i) {
    const std::optional<runtime::StorageLaw> &law = m_.storageLaws[i];
    energy[i] = law ? runtime::storedEnergy(*law, t, X[i], p_.data(), energyScratch_)
                    : std::nan("");
  }
  return true;
}

} // namespace hbg
