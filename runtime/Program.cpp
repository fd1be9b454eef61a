//===- runtime/Program.cpp - A compiled mode as plain data -----------------===//

#include "hbg/runtime/Program.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace hbg::runtime {

Evaluator::Evaluator(const ModeProgram &m, const double *p)
    : m_(m), p_(p), n_(m.stateNames.size()), u_(m.numUnknowns),
      xz_(u_ ? n_ + u_ : 0, 0.0), warm_(u_, 0.0),
      loops_(u_ ? std::make_unique<LoopSolver>(m.loopPattern,
                                                         m.linearLoops)
                : nullptr) {}

bool Evaluator::solve(double t, const double *x) {
  if (u_ == 0)
    return true;
  std::copy(x, x + n_, xz_.begin());
  start_.assign(warm_.begin(), warm_.end());
  NewtonResult r;
  if (m_.linearLoops) {
    // r(z) = J z + r(0), J and r(0) evaluated once at (t, x).
    const SparsePattern &pattern = m_.loopPattern;
    r0_.resize(u_);
    j0_.resize(pattern.nonZeros());
    m_.residual(t, xz_.data(), p_, r0_.data(), distinct_, tape_);
    m_.jacobian(t, xz_.data(), p_, j0_.data(), distinct_, tape_);
    r = loops_->solveLinear(j0_.data(), r0_.data(), start_.data(), newton_);
  } else {
    auto residual = [&](const double *z, double *res) {
      std::copy(z, z + u_, xz_.begin() + n_);
      m_.residual(t, xz_.data(), p_, res, distinct_, tape_);
    };
    auto jacobian = [&](const double *z, double *values) {
      std::copy(z, z + u_, xz_.begin() + n_);
      loopJacobian(t, values);
    };
    r = loops_->solve(residual, jacobian, start_.data(), newton_);
  }
  if (!r.ok()) {
    failure_ = {describe(r), m_.nonlinearLoops, t};
    return false;
  }
  std::copy(start_.begin(), start_.end(), warm_.begin());
  std::copy(start_.begin(), start_.end(), xz_.begin() + n_);
  return true;
}

void ScatteredFn::operator()(double t, const double *x, const double *p, double *out,
                             std::vector<double> &scratch, std::vector<double> &tape) const {
  if (of.empty()) {
    fn(t, x, p, out, tape);
    return;
  }
  scratch.resize(distinct);
  fn(t, x, p, scratch.data(), tape);
  for (std::size_t k = 0; k < of.size(); ++k)
    out[k] = scratch[of[k]];
}

bool Evaluator::call(const ModeFn &f, double t, const double *x, double *out) {
  if (u_ == 0) { // no loop to solve: the states are all f reads
    f(t, x, p_, out, tape_);
    return true;
  }
  if (!solve(t, x))
    return false;
  f(t, xz_.data(), p_, out, tape_);
  return true;
}

bool Evaluator::jacobian(double t, const double *x, double *values, double *dfdt) {
  const JacobianProgram &jc = m_.jacobianProgram();
  raw_.resize(jc.numOutputs);
  jc.used(t);
  if (!call(jc.fn, t, x, raw_.data()))
    return false;
  std::size_t nnz = jc.pattern.nonZeros(), nfx = jc.fxAt.size();
  std::fill(values, values + nnz, 0.0);
  for (std::size_t e = 0; e < nfx; ++e)
    values[jc.fxAt[e]] += raw_[e];
  std::copy(raw_.begin() + std::ptrdiff_t(nfx), raw_.begin() + std::ptrdiff_t(nfx + n_), dfdt);
  if (u_ == 0 || jc.fz.empty())
    return true;
  // Through the loops: dz/dx = -R^-1 rx and dz/dt = -R^-1 drdt, with R =
  // dr/dz at the solved point, restricted to the columns rx reads.
  const double *fz = raw_.data() + nfx + n_, *rx = fz + jc.fz.size(),
               *drdt = rx + jc.rx.size();
  loopJacobian_.resize(m_.loopPattern.nonZeros());
  loopJacobian(t, loopJacobian_.data());
  std::size_t nc = jc.columns.size();
  dz_.assign(u_ * (nc + 1), 0.0); // column-major: u_ rows, one column per x_j read, then t
  for (std::size_t e = 0; e < jc.rx.size(); ++e) {
    auto c = std::lower_bound(jc.columns.begin(), jc.columns.end(), jc.rx[e].second);
    dz_[std::size_t(c - jc.columns.begin()) * u_ + jc.rx[e].first] = -rx[e];
  }
  for (std::size_t k = 0; k < u_; ++k)
    dz_[nc * u_ + k] = -drdt[k];
  bool regular = loops_->factorize(loopJacobian_.data());
  if (regular)
    loops_->solveInPlace(dz_.data(), nc + 1);
  if (!regular || !std::all_of(dz_.begin(), dz_.end(), [](double v) { return std::isfinite(v); })) {
    failure_ = {"the loop's Jacobian is singular", m_.nonlinearLoops, t};
    return false;
  }
  auto dz = [&](std::size_t k, std::size_t c) { return dz_[c * u_ + k]; };
  for (std::size_t e = 0; e < jc.fz.size(); ++e) {
    auto [row, k] = jc.fz[e];
    for (std::size_t c = 0; c < nc; ++c)
      values[jc.fzAt[e * nc + c]] += fz[e] * dz(k, c);
    dfdt[row] += fz[e] * dz(k, nc);
  }
  return true;
}

namespace {
/// Whether any of the outputs [first, first + count) of `tape` reads t or
/// x; `varying` is tape.varying().
bool varies(const Tape &tape, const std::vector<std::uint32_t> &varying, std::size_t first,
            std::size_t count) {
  for (std::size_t k = first; k < first + count && k < tape.results.size(); ++k)
    if (std::binary_search(varying.begin(), varying.end(), tape.results[k]))
      return true;
  return false;
}
} // namespace

JacobianConstancy jacobianConstancy(const ModeProgram &m, const JacobianProgram &jc) {
  const Tape &tape = jc.fn.tape;
  // Without its tapes (a program read from an image built without them)
  // nothing can be told, and nothing is constant.
  if (tape.results.size() != jc.numOutputs)
    return {};
  std::vector<std::uint32_t> varying = tape.varying();
  std::size_t n = m.stateNames.size(), nfx = jc.fxAt.size(), nfz = jc.fz.size(), nrx = jc.rx.size();
  std::size_t ndrdt = jc.numOutputs - std::min(jc.numOutputs, nfx + n + nfz + nrx);
  // Evaluator::jacobian goes through the loops only where fz reads one.
  bool loops = m.numUnknowns > 0 && nfz > 0, loopsVary = false;
  if (loops) {
    const Tape &r = m.jacobian.fn.tape;
    loopsVary = r.results.empty() || varies(tape, varying, nfx + n, nfz + nrx) ||
                varies(r, r.varying(), 0, r.results.size());
  }
  JacobianConstancy c;
  c.dfdx = !varies(tape, varying, 0, nfx) && !loopsVary;
  c.dfdt = !varies(tape, varying, nfx, n) && !loopsVary &&
           !(loops && varies(tape, varying, nfx + n + nfz + nrx, ndrdt));
  return c;
}

ProgramMode::ProgramMode(std::shared_ptr<const ModeProgram> program, const std::vector<double> &p,
                         bool switched, double &jacobianSeconds)
    : program_(std::move(program)), p_(p.size() + program_->kinkInfo.size(), 0.0),
      e_(*program_, p_.data()), jacobianSeconds_(jacobianSeconds) {
  setParameters(p);
  if (program_->guardTape) {
    varying_ = program_->guardTape->varying();
    xRead_ = program_->guardTape->xRead();
  }
  if (switched) {
    name_ = program_->modeName;
    stateSlots_ = program_->stateSlots;
    dependentSlots_ = program_->dependentSlots;
  } else {
    stateSlots_.resize(program_->stateNames.size());
    std::iota(stateSlots_.begin(), stateSlots_.end(), 0u);
  }
}

const SparsePattern *ProgramMode::jacobianPattern() {
  auto start = std::chrono::steady_clock::now();
  const JacobianProgram &jp = program_->jacobianProgram();
  jacobianSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return &jp.pattern;
}

// The tape's instructions of parameters alone are evaluated once per
// change of p_ (parameters, held values, branches) and kept in the scratch
// arrays; each call evaluates the varying ones.
bool ProgramMode::encloseGuards(Interval t, const Interval *x, Interval *out) {
  if (!program_->guardTape)
    return false;
  program_->guardTape->evaluate(t, x, p_.data(), out, scratch_, valuesKept_ ? &varying_ : nullptr);
  valuesKept_ = true;
  noteValues(t, x);
  return true;
}

bool ProgramMode::encloseGuardSlopes(Interval t, const Interval *x, const Interval *xdot,
                                     Interval *out, Interval *outDot) {
  if (!program_->guardTape)
    return false;
  bool kept = valuesKept_ && slopesKept_;
  // The values are a function of t, the boxes read and p_ alone: those of
  // the same inputs are the same bits, and only the slopes are computed.
  bool current = valuesKept_ && valuesFor(t, x);
  program_->guardTape->evaluateSlope(t, x, xdot, p_.data(), out, outDot, scratch_, slopes_,
                                     kept ? &varying_ : nullptr, current);
  valuesKept_ = slopesKept_ = true;
  noteValues(t, x);
  return true;
}

bool ProgramMode::valuesFor(Interval t, const Interval *x) const {
  auto same = [](const Interval &a, const Interval &b) {
    return std::memcmp(&a, &b, sizeof(Interval)) == 0;
  };
  if (!valuesBoxSet_ || !same(valuesBox_[0], t))
    return false;
  for (std::size_t k = 0; k < xRead_.size(); ++k)
    if (!same(valuesBox_[k + 1], x[xRead_[k]]))
      return false;
  return true;
}

void ProgramMode::noteValues(Interval t, const Interval *x) {
  valuesBox_.resize(xRead_.size() + 1);
  valuesBox_[0] = t;
  for (std::size_t k = 0; k < xRead_.size(); ++k)
    valuesBox_[k + 1] = x[xRead_[k]];
  valuesBoxSet_ = true;
}

bool ProgramMode::dependentJacobian(double t, const double *x, double *jac) {
  if (program_->numUnknowns == 0)
    return e_.call(program_->dependentJacobian, t, x, jac);
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

void ProgramMode::setParameters(const std::vector<double> &p) {
  // Held values often come back unchanged from an event (and every mode
  // of the run hears of every change): only other bits make the guard
  // tape's values of parameters alone stale.
  if (p.empty() || std::memcmp(p.data(), p_.data(), p.size() * sizeof(double)) == 0)
    return;
  std::copy(p.begin(), p.end(), p_.begin());
  valuesKept_ = slopesKept_ = valuesBoxSet_ = false;
}

ProgramSystem::ProgramSystem(std::vector<double> params, std::size_t numHeld, bool switched,
                             const std::vector<std::optional<StorageLaw>> *laws)
    : p_(std::move(params)), np_(p_.size()), switched_(switched), laws_(laws) {
  p_.resize(np_ + numHeld, 0.0);
}

ProgramSystem::~ProgramSystem() = default;

void ProgramSystem::setHeld(const double *values) {
  std::copy(values, values + numHeld(), p_.begin() + static_cast<std::ptrdiff_t>(np_));
  for (auto &[program, mode] : modes_)
    mode->setParameters(p_);
}

void ProgramSystem::setParameter(std::size_t slot, double value) {
  p_[slot] = value;
  for (auto &[program, mode] : modes_)
    mode->setParameters(p_);
}

Mode *ProgramSystem::mode(const std::vector<std::uint32_t> &q, std::string &why) {
  std::shared_ptr<const ModeProgram> program = this->program(q, why);
  if (!program)
    return nullptr;
  std::unique_ptr<ProgramMode> &m = modes_[program.get()];
  if (!m)
    m = std::make_unique<ProgramMode>(std::move(program), p_, switched_, compileSeconds);
  return m.get();
}

bool ProgramSystem::storedEnergy(double t, const double *X, double *energy) {
  if (!switched_ || !laws_)
    return false;
  // Integrators hold no energy; storage whose law has no tape (it reads
  // more than its own state and parameters) cannot say.
  std::fill(energy, energy + stateNames().size(), 0.0);
  for (std::size_t i = 0; i < laws_->size(); ++i) {
    const std::optional<StorageLaw> &law = (*laws_)[i];
    energy[i] = law ? runtime::storedEnergy(*law, t, X[i], p_.data(), energyScratch_) : std::nan("");
  }
  return true;
}

} // namespace hbg::runtime
