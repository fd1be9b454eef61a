//===- runtime/Periodic.cpp - Periodic steady state by shooting -----------===//

#include "hbg/runtime/Periodic.h"

#include "hbg/runtime/Quadrature.h"
#include "hbg/runtime/Remap.h"

#include "PeriodMap.h"

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace hbg::runtime {

namespace periodic {

/// Restores what the evaluation of a mode reads besides its arguments: its
/// kinks' branches and the values `pre` holds.
void setContext(System &sys, Mode &m, const std::vector<double> &branches,
                const std::vector<double> &held) {
  for (std::size_t k = 0; k < branches.size() && k < m.numKinks(); ++k)
    m.setBranch(k, branches[k]);
  if (!held.empty() && held.size() == sys.numHeld())
    sys.setHeld(held.data());
}

std::vector<double> gather(const Mode &m, const std::vector<double> &X) {
  std::vector<double> x;
  for (std::uint32_t s : m.stateSlots())
    x.push_back(X[s]);
  return x;
}

/// df/dx of mode `m` at (t, x), dense: from its Jacobian where it has one,
/// by central differences otherwise.
Matrix jacobianOf(Mode &m, double t, const std::vector<double> &x) {
  std::size_t n = x.size();
  Matrix J = Matrix::Zero(Eigen::Index(n), Eigen::Index(n));
  if (n == 0)
    return J;
  if (const SparsePattern *p = m.jacobianPattern()) {
    std::vector<double> values(p->nonZeros()), dfdt(n);
    if (m.jacobian(t, x.data(), values.data(), dfdt.data())) {
      for (std::size_t c = 0; c < n; ++c)
        for (std::uint32_t k = p->colStart[c]; k < p->colStart[c + 1]; ++k)
          J(p->rows[k], Eigen::Index(c)) = values[k];
      return J;
    }
  }
  std::vector<double> xp = x, fp(n), fm(n);
  for (std::size_t c = 0; c < n; ++c) {
    double h = 1e-6 * std::max(1e-6, std::abs(x[c]));
    xp[c] = x[c] + h;
    call(m.rhs(t, xp.data(), fp.data()), m, "derivatives");
    xp[c] = x[c] - h;
    call(m.rhs(t, xp.data(), fm.data()), m, "derivatives");
    xp[c] = x[c];
    for (std::size_t r = 0; r < n; ++r)
      J(Eigen::Index(r), Eigen::Index(c)) = (fp[r] - fm[r]) / (2 * h);
  }
  return J;
}

/// The variational equations of a mode along its own trajectory: the
/// state and, column by column, d x(t) / d x(t0).
class Variational final : public OdeSystem {
public:
  explicit Variational(Mode &m) : m_(m), n_(m.stateSlots().size()) {}
  std::size_t numStates() const override { return n_ * (n_ + 1); }
  void rhs(double t, const double *z, double *dz) override {
    std::vector<double> x(z, z + n_);
    call(m_.rhs(t, z, dz), m_, "derivatives");
    Matrix J = jacobianOf(m_, t, x);
    Eigen::Map<const Matrix> Phi(z + n_, Eigen::Index(n_), Eigen::Index(n_));
    Eigen::Map<Matrix> dPhi(dz + n_, Eigen::Index(n_), Eigen::Index(n_));
    dPhi.noalias() = J * Phi;
  }

private:
  Mode &m_;
  std::size_t n_;
};

/// d x(t1) / d x(t0) of mode `m` from x0: exp(J h) where the mode's
/// Jacobian is constant, the variational equations integrated otherwise
/// (at a tolerance far below the run's).
Matrix transition(Mode &m, double t0, double t1, const std::vector<double> &x0,
                  std::vector<double> &x1) {
  std::size_t n = x0.size();
  double h = t1 - t0;
  Matrix J = jacobianOf(m, t0, x0);
  bool constant = m.jacobianPattern() && m.jacobianConstancy().dfdx;
  if (constant) {
    x1.clear(); // not computed
    return (J * h).exp();
  }
  Variational var(m);
  std::vector<double> z(n * (n + 1), 0.0);
  std::copy(x0.begin(), x0.end(), z.begin());
  for (std::size_t i = 0; i < n; ++i)
    z[n + i * n + i] = 1;
  IntegratorOptions io;
  io.method = Method::DormandPrince;
  io.rtol = 1e-11;
  std::unique_ptr<Stepper> stepper = makeStepper(var, io);
  stepper->reset(t0, z.data());
  std::vector<double> nominal(z.size(), 0.0);
  for (std::size_t i = 0; i < n; ++i)
    nominal[i] = std::abs(x0[i]);
  for (std::size_t i = n; i < z.size(); ++i)
    nominal[i] = 1;
  stepper->setNominal(nominal.data());
  while (stepper->t() < t1) {
    StepStatus st = stepper->step(t1);
    if (st != StepStatus::Ok)
      throw RunError(DiagKind::RunStepTooSmall, stepper->t(), m.name());
  }
  const std::vector<double> &zEnd = stepper->x();
  x1.assign(zEnd.begin(), zEnd.begin() + std::ptrdiff_t(n));
  return Eigen::Map<const Matrix>(zEnd.data() + n, Eigen::Index(n), Eigen::Index(n));
}

/// The full state's derivatives in mode `m` at (t, X): the independent
/// states' from the mode, dependent storage's by the chain rule, the rest
/// still.
Vector fullDerivative(Mode &m, double t, const std::vector<double> &X, double timeScale) {
  Vector dX = Vector::Zero(Eigen::Index(X.size()));
  std::vector<double> x = gather(m, X);
  std::size_t n = x.size();
  std::vector<double> xdot(n);
  call(m.rhs(t, x.data(), xdot.data()), m, "derivatives");
  for (std::size_t i = 0; i < n; ++i)
    dX[m.stateSlots()[i]] = xdot[i];
  std::size_t nd = m.dependentSlots().size();
  if (nd == 0)
    return dX;
  std::vector<double> jac(nd * n), dp(nd), dm(nd);
  call(m.dependentJacobian(t, x.data(), jac.data()), m, "dependent storage");
  double h = 1e-6 * timeScale;
  call(m.dependent(t + h, x.data(), dp.data()), m, "dependent storage");
  call(m.dependent(t - h, x.data(), dm.data()), m, "dependent storage");
  for (std::size_t k = 0; k < nd; ++k) {
    std::uint32_t s = m.dependentSlots()[k];
    if (s == kNoSlot)
      continue;
    double v = (dp[k] - dm[k]) / (2 * h);
    for (std::size_t i = 0; i < n; ++i)
      v += jac[k * n + i] * xdot[i];
    dX[s] = v;
  }
  return dX;
}

/// A segment's d X(t1) / d X(t0) over the full state.
Matrix segmentMatrix(System &sys, const RunTrace::Segment &seg) {
  Mode &m = *seg.mode;
  std::size_t N = seg.X0.size();
  setContext(sys, m, seg.branches, seg.held);
  std::vector<double> x0 = gather(m, seg.X0), x1;
  std::size_t n = x0.size();
  Matrix Phi = n ? transition(m, seg.t0, seg.t1, x0, x1) : Matrix();
  if (x1.empty() && n) {
    // exp(J h) gives no end state: the mode is linear, so its dependent
    // storage's Jacobian does not depend on where it is evaluated.
    x1 = x0;
  }
  Matrix G = Matrix::Zero(Eigen::Index(N), Eigen::Index(N));
  std::vector<char> moves(N, 0);
  const std::vector<std::uint32_t> &S = m.stateSlots();
  for (std::size_t i = 0; i < n; ++i) {
    moves[S[i]] = 1;
    for (std::size_t j = 0; j < n; ++j)
      G(S[i], S[j]) = Phi(Eigen::Index(i), Eigen::Index(j));
  }
  const std::vector<std::uint32_t> &D = m.dependentSlots();
  if (!D.empty()) {
    std::vector<double> jac(D.size() * n);
    call(m.dependentJacobian(seg.t1, x1.data(), jac.data()), m, "dependent storage");
    for (std::size_t k = 0; k < D.size(); ++k) {
      if (D[k] == kNoSlot)
        continue;
      moves[D[k]] = 1;
      for (std::size_t j = 0; j < n; ++j) {
        double v = 0;
        for (std::size_t i = 0; i < n; ++i)
          v += jac[k * n + i] * Phi(Eigen::Index(i), Eigen::Index(j));
        G(D[k], S[j]) = v;
      }
    }
  }
  for (std::size_t s = 0; s < N; ++s)
    if (!moves[s])
      G(Eigen::Index(s), Eigen::Index(s)) = 1; // storage no mode equation reaches keeps its value
  return G;
}

/// An event's jump replayed at (t, X): the values `pre` holds from the
/// mode it starts in, then each remap into the real modes it entered.
std::vector<double> replay(System &sys, const RunTrace::Jump &j, double t, std::vector<double> X,
                           RemapWorkspace &work) {
  Mode &from = *j.from;
  for (std::size_t k = 0; k < j.fromBranches.size(); ++k)
    from.setBranch(k, j.fromBranches[k]);
  if (sys.numHeld() > 0) {
    std::vector<double> x = gather(from, X), held(sys.numHeld());
    call(from.held(t, x.data(), held.data()), from, "held values");
    sys.setHeld(held.data());
  }
  for (const RunTrace::Entry &e : j.entries) {
    Mode &m = *e.mode;
    for (std::size_t k = 0; k < e.branches.size(); ++k)
      m.setBranch(k, e.branches[k]);
    if (!e.remapped)
      continue;
    std::vector<double> x = gather(m, X), d;
    for (std::uint32_t s : m.dependentSlots())
      d.push_back(s == kNoSlot ? 0.0 : X[s]);
    remapExact(m, m.name(), t, x, d, work);
    for (std::size_t i = 0; i < x.size(); ++i)
      X[m.stateSlots()[i]] = x[i];
    for (std::size_t k = 0; k < d.size(); ++k)
      if (m.dependentSlots()[k] != kNoSlot)
        X[m.dependentSlots()[k]] = d[k];
  }
  return X;
}

/// The comparison of `j` that reached its threshold at the event (of
/// the model's, then the kinks of the mode it started from): false when
/// none sits there (an event at the start of a run, or of kinks alone
/// chosen afresh). A comparison's distance from its threshold is measured
/// against its sides and how much it changes over each state's magnitude
/// `scale`: a threshold of 0 (`h <= 0`) gives no scale of its own.
bool triggering(System &sys, Mode &from, const RunTrace::Jump &j,
                const std::vector<double> &scale, std::size_t &which) {
  if (j.comparisons.empty())
    return false;
  std::vector<double> x = gather(from, j.before);
  std::size_t n = x.size();
  std::vector<double> sides(2 * (sys.switching().numComparisons() + from.numKinks()));
  std::vector<double> plus(sides.size()), minus(sides.size());
  call(from.guards(j.time, x.data(), sides.data()), from, "guards");
  // How much each comparison changes over each state's magnitude.
  std::vector<double> spread(sides.size() / 2, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double h = 1e-6 * scale[from.stateSlots()[i]];
    std::vector<double> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    call(from.guards(j.time, xp.data(), plus.data()), from, "guards");
    call(from.guards(j.time, xm.data(), minus.data()), from, "guards");
    for (std::size_t c = 0; c < spread.size(); ++c) {
      double d = (plus[2 * c] - plus[2 * c + 1]) - (minus[2 * c] - minus[2 * c + 1]);
      spread[c] += std::abs(d) / (2 * h) * scale[from.stateSlots()[i]];
    }
  }
  double best = std::numeric_limits<double>::infinity();
  bool found = false;
  for (std::uint32_t c : j.comparisons) {
    if (2 * std::size_t(c) + 1 >= sides.size())
      continue;
    double lhs = sides[2 * c], rhs = sides[2 * c + 1];
    double rel = std::abs(lhs - rhs) / (std::abs(lhs) + std::abs(rhs) + spread[c] + 1e-300);
    if (rel < 1e-6 && rel < best) {
      best = rel;
      which = c;
      found = true;
    }
  }
  return found;
}

EventDerivatives eventDerivatives(System &sys, const RunTrace::Jump &j,
                                  const std::vector<double> &heldBefore, Mode &after,
                                  const std::vector<double> &afterBranches,
                                  const std::vector<double> &scale, double timeScale,
                                  RemapWorkspace &work) {
  std::size_t N = j.before.size();
  double t = j.time;
  EventDerivatives d;
  // The jump's derivatives by central differences: exact for the linear
  // remaps of linear storage, and to O(h^2) otherwise.
  d.EX = Matrix::Zero(Eigen::Index(N), Eigen::Index(N));
  for (std::size_t c = 0; c < N; ++c) {
    double h = 1e-6 * scale[c];
    std::vector<double> Xp = j.before, Xm = j.before;
    Xp[c] += h;
    Xm[c] -= h;
    std::vector<double> Ep = replay(sys, j, t, Xp, work), Em = replay(sys, j, t, Xm, work);
    for (std::size_t r = 0; r < N; ++r)
      d.EX(Eigen::Index(r), Eigen::Index(c)) = (Ep[r] - Em[r]) / (2 * h);
  }
  double ht = 1e-7 * timeScale;
  d.Et = Vector::Zero(Eigen::Index(N));
  {
    std::vector<double> Ep = replay(sys, j, t + ht, j.before, work),
                        Em = replay(sys, j, t - ht, j.before, work);
    for (std::size_t r = 0; r < N; ++r)
      d.Et[Eigen::Index(r)] = (Ep[r] - Em[r]) / (2 * ht);
  }
  // The held values after the event, as the run set them.
  Mode &from = *j.from;
  setContext(sys, from, j.fromBranches, heldBefore);
  if (sys.numHeld() > 0) {
    std::vector<double> x = gather(from, j.before);
    d.heldAfter.resize(sys.numHeld());
    call(from.held(t, x.data(), d.heldAfter.data()), from, "held values");
  }
  d.fMinus = fullDerivative(from, t, j.before, timeScale);
  setContext(sys, after, afterBranches, d.heldAfter);
  d.fPlus = fullDerivative(after, t, j.after, timeScale);
  setContext(sys, from, j.fromBranches, heldBefore);
  d.gX = Vector::Zero(Eigen::Index(N));
  if (!triggering(sys, from, j, scale, d.which))
    return d;
  d.reached = true;
  // The comparison's gradient in the state and time, by central
  // differences (exact for an affine comparison).
  std::vector<double> x = gather(from, j.before);
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint32_t s = from.stateSlots()[i];
    double h = 1e-6 * scale[s];
    std::vector<double> xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    d.gX[s] = (comparisonValue(sys, from, d.which, t, xp) -
               comparisonValue(sys, from, d.which, t, xm)) /
              (2 * h);
  }
  d.gt = (comparisonValue(sys, from, d.which, t + ht, x) -
          comparisonValue(sys, from, d.which, t - ht, x)) /
         (2 * ht);
  d.rate = d.gX.dot(d.fMinus) + d.gt;
  return d;
}

double comparisonValue(System &sys, Mode &from, std::size_t which, double t,
                       const std::vector<double> &x) {
  std::vector<double> sides(2 * (sys.switching().numComparisons() + from.numKinks()));
  call(from.guards(t, x.data(), sides.data()), from, "guards");
  return sides[2 * which] - sides[2 * which + 1];
}

void EventDerivatives::requireCrossing(System &sys, const RunTrace::Jump &j) const {
  double size = gX.cwiseAbs().dot(fMinus.cwiseAbs()) + std::abs(gt);
  if (std::abs(rate) > 1e-9 * size)
    return;
  std::size_t comparisons = sys.switching().numComparisons();
  std::string text = which < comparisons ? "comparison " + std::to_string(which)
                                         : j.from->kinkText(which - comparisons);
  throw RunError(DiagKind::SteadyGrazing, j.time, j.from->name(), {text});
}

/// An event's saltation matrix over the full state.
Matrix jumpMatrix(System &sys, const RunTrace::Jump &j, const std::vector<double> &heldBefore,
                  Mode &after, const std::vector<double> &afterBranches,
                  const std::vector<double> &scale, double timeScale, RemapWorkspace &work) {
  EventDerivatives d =
      eventDerivatives(sys, j, heldBefore, after, afterBranches, scale, timeScale, work);
  if (!d.reached || d.gX.isZero(0))
    return d.EX; // a time event: it does not move with the state
  d.requireCrossing(sys, j);
  return d.EX - d.moved() * d.gX.transpose() / d.rate;
}

/// The largest magnitude each slot has in a traced run, against which
/// differences and the residual are measured.
std::vector<double> scalesOf(const RunTrace &trace, const std::vector<double> &X1,
                             const std::vector<double> &nominal) {
  std::vector<double> s(X1.size(), 0.0);
  auto grow = [&](const std::vector<double> &X) {
    for (std::size_t i = 0; i < X.size() && i < s.size(); ++i)
      s[i] = std::max(s[i], std::abs(X[i]));
  };
  for (const RunTrace::Segment &seg : trace.segments)
    grow(seg.X0);
  for (const RunTrace::Jump &j : trace.jumps) {
    grow(j.before);
    grow(j.after);
  }
  grow(X1);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i < nominal.size())
      s[i] = std::max(s[i], nominal[i]);
    if (!(s[i] > 0))
      s[i] = 1e-12;
  }
  return s;
}

} // namespace periodic

using namespace periodic;

std::vector<double> monodromy(System &system, const RunTrace &trace, const std::vector<double> &X1,
                              const std::vector<double> &nominal, double timeScale) {
  std::size_t N = X1.size();
  std::vector<double> scale = scalesOf(trace, X1, nominal);
  Matrix M = Matrix::Identity(Eigen::Index(N), Eigen::Index(N));
  RemapWorkspace work;
  visit(
      trace,
      [&](const RunTrace::Segment &seg, std::size_t) {
        if (seg.t1 > seg.t0)
          M = segmentMatrix(system, seg) * M;
      },
      [&](const RunTrace::Jump &j, std::size_t, const std::vector<double> &held, Mode &after,
          const std::vector<double> &afterBranches) {
        M = jumpMatrix(system, j, held, after, afterBranches, scale, timeScale, work) * M;
      });
  return std::vector<double>(M.data(), M.data() + M.size()); // column major
}

namespace {

/// A run of `sys` from X in FSM states q over [t0, t1]: rows every
/// (t1 - t0) / rows to `onRow` (none kept when it is empty), the trace
/// when asked.
void runOver(System &sys, const std::vector<double> &X, const std::vector<std::uint32_t> &q,
             double t0, double t1, const SimulateOptions &base, std::size_t rows,
             std::function<void(const double *)> onRow, RunTrace *trace,
             std::function<void(const Event &)> onEvent, RunRecord &rec) {
  SimulateOptions o = base;
  o.tStart = t0;
  o.tEnd = t1;
  o.dtOut = rows ? (t1 - t0) / double(rows) : (t1 - t0);
  o.onRow = onRow ? std::move(onRow) : [](const double *) {};
  o.onEvent = std::move(onEvent);
  o.initialModes = q;
  o.trace = trace;
  if (trace)
    trace->clear();
  simulate(sys, X, o, rec);
}

/// The largest of |F_i| / scale_i.
double residualOf(const std::vector<double> &F, const std::vector<double> &scale,
                  std::size_t *at = nullptr) {
  double r = 0;
  for (std::size_t i = 0; i < F.size(); ++i) {
    double v = std::abs(F[i]) / scale[i];
    if (!(v <= r)) { // NaN counts as the largest
      r = v;
      if (at)
        *at = i;
    }
  }
  return r;
}

} // namespace

void findSteadyState(System &sys, const std::vector<double> &x0, const SimulateOptions &base,
                     const SteadyOptions &opts, SteadyResult &result) {
  result = SteadyResult{};
  double T = opts.period;
  auto fail = [&](const RunDiagnostic &d) {
    result.failure = d;
    std::string at = d.where();
    result.error = at.empty() ? d.message : at + ": " + d.message;
  };
  auto failRun = [&](const RunRecord &rec) {
    result.error = rec.error;
    result.failure = rec.failure;
    if (result.error.empty())
      result.error = "the run stopped";
  };
  if (!(T > 0) || !std::isfinite(T)) {
    fail(runDiagnostic(DiagKind::SteadyPeriodNotPositive, kNoTime, "", {DiagArg::time(T)}));
    return;
  }
  std::size_t N = x0.size();
  const std::vector<std::string> &names = sys.stateNames();
  std::size_t rows = std::max<std::size_t>(1, opts.rowsPerPeriod);
  double dt = T / double(rows);

  // Transient periods from the initial state; the events of the last one
  // place the start of the search's period between them.
  std::vector<double> X = x0;
  std::vector<std::uint32_t> q;
  double t = base.tStart;
  std::vector<double> eventTimes;
  auto transient = [&](std::size_t periods) -> bool {
    RunRecord rec;
    double from = t, to = t + double(periods) * T;
    eventTimes.clear();
    SimulateOptions o = base;
    o.keepEvents = 64;
    runOver(sys, X, q, from, to, o, 0, nullptr, nullptr,
            [&](const Event &ev) {
              if (ev.time >= to - T)
                eventTimes.push_back(ev.time);
            },
            rec);
    if (!rec.error.empty()) {
      failRun(rec);
      return false;
    }
    X = rec.finalState;
    q = rec.finalModes;
    t = to;
    result.transientPeriods += periods;
    result.periodsSimulated += periods;
    return true;
  };
  if (!transient(std::max<std::size_t>(1, opts.warmupPeriods)))
    return;
  {
    // The middle of the longest stretch between events, on the rows' grid.
    std::vector<double> phases;
    for (double te : eventTimes)
      phases.push_back(std::fmod(std::fmod(te - base.tStart, T) + T, T));
    std::sort(phases.begin(), phases.end());
    double phase = 0;
    if (!phases.empty()) {
      double longest = -1;
      for (std::size_t i = 0; i < phases.size(); ++i) {
        double a = phases[i], b = i + 1 < phases.size() ? phases[i + 1] : phases[0] + T;
        if (b - a > longest) {
          longest = b - a;
          phase = std::fmod(0.5 * (a + b), T);
        }
      }
      phase = std::round(phase / dt) * dt;
      if (phase >= T)
        phase -= T;
    }
    double tPhase = t + phase; // t sits at phase 0
    if (tPhase > t) {
      RunRecord rec;
      runOver(sys, X, q, t, tPhase, base, 0, nullptr, nullptr, nullptr, rec);
      if (!rec.error.empty()) {
        failRun(rec);
        return;
      }
      X = rec.finalState;
      q = rec.finalModes;
      t = tPhase;
    }
  }
  double t0 = t;

  // Newton's method on P(X) - X, damped, with transient periods to fall
  // back on.
  RunTrace trace;
  std::vector<double> Xprev, step(N, 0.0), best = X;
  std::vector<std::uint32_t> qBest = q;
  double rPrev = std::numeric_limits<double>::infinity(), lambda = 1, rBest = rPrev;
  std::size_t newton = 0, fallbacks = 0;
  bool converged = false, observersKnown = false;
  std::vector<std::uint32_t> observers;
  try {
    for (;;) {
      RunRecord rec;
      runOver(sys, X, q, t0, t0 + T, base, 0, nullptr, &trace, nullptr, rec);
      ++result.periodsSimulated;
      if (!rec.error.empty()) {
        failRun(rec);
        return;
      }
      if (!trace.unsupported.empty()) {
        fail(runDiagnostic(DiagKind::SteadyUnsupported, kNoTime, "", {trace.unsupported}));
        return;
      }
      const std::vector<double> &P = rec.finalState;
      std::vector<double> scale = scalesOf(trace, P, base.nominal);
      std::vector<double> F(N);
      for (std::size_t i = 0; i < N; ++i)
        F[i] = P[i] - X[i];
      // Integrals that nothing but outputs read (a shaft's angle) change
      // nothing else: their columns of the monodromy are those of the
      // identity. They may drift; the search leaves them out.
      std::vector<double> M;
      if (!observersKnown) {
        observersKnown = true;
        if (!sys.integralStates().empty()) {
          M = monodromy(sys, trace, P, base.nominal, T);
          for (std::uint32_t j : sys.integralStates()) {
            bool identity = true;
            for (std::size_t i = 0; i < N && identity; ++i)
              identity = std::abs(M[i + N * j] - (i == j ? 1.0 : 0.0)) <= 1e-9;
            if (identity)
              observers.push_back(j);
          }
        }
      }
      result.drifting.clear();
      for (std::uint32_t j : observers) {
        result.drifting.push_back({names[j], F[j]});
        F[j] = 0;
      }
      double r = residualOf(F, scale);
      SteadyIteration it;
      it.residual = r;
      it.step = lambda;
      it.events = rec.events.size();
      it.kind = result.iterations.empty() || lambda == 1 ? "newton" : "damped";
      result.iterations.push_back(it);
      result.residual = r;
      if (r < rBest) {
        rBest = r;
        best = X;
        qBest = q;
      }
      if (r <= opts.tolerance) {
        converged = true;
        break;
      }
      ++newton;
      bool worse = !(r < rPrev);
      if (worse && lambda > 1.0 / 16) {
        lambda /= 2;
        for (std::size_t i = 0; i < N; ++i)
          X[i] = Xprev[i] + lambda * step[i];
        continue;
      }
      if (worse || newton >= opts.maxIterations) {
        // Newton does not get closer: transient periods from the best
        // point so far, then Newton again.
        if (fallbacks++ >= opts.maxFallbacks) {
          fail(runDiagnostic(DiagKind::SteadyNotConverged, kNoTime, "",
                             {rBest, newton, result.transientPeriods, opts.tolerance}));
          return;
        }
        X = best;
        q = qBest;
        t = t0;
        if (!transient(opts.fallbackPeriods))
          return;
        t = t0;
        result.iterations.back().kind = "transient";
        rPrev = std::numeric_limits<double>::infinity();
        lambda = 1;
        newton = 0;
        continue;
      }
      if (M.empty())
        M = monodromy(sys, trace, P, base.nominal, T);
      Matrix A = Eigen::Map<Matrix>(M.data(), Eigen::Index(N), Eigen::Index(N)) -
                 Matrix::Identity(Eigen::Index(N), Eigen::Index(N));
      for (std::uint32_t j : observers) {
        A.row(Eigen::Index(j)).setZero();
        A(Eigen::Index(j), Eigen::Index(j)) = 1;
      }
      // Scaled, so that the rank is judged in each slot's own unit.
      Vector s = Eigen::Map<Vector>(scale.data(), Eigen::Index(N));
      Matrix As = s.cwiseInverse().asDiagonal() * A * s.asDiagonal();
      Vector Fs = Eigen::Map<Vector>(F.data(), Eigen::Index(N)).cwiseQuotient(s);
      Eigen::CompleteOrthogonalDecomposition<Matrix> cod(As);
      cod.setThreshold(1e-10);
      Vector ds = cod.solve(-Fs);
      // What the step leaves of the residual, by the linearised map: all
      // of it where a state moves by the same amount whatever it starts
      // from (M - I singular, the residual outside its range).
      Vector left = As * ds + Fs;
      Eigen::Index worst = 0;
      double leftMax = left.cwiseAbs().maxCoeff(&worst);
      if (leftMax > std::max(10 * opts.tolerance, 0.5 * Fs.cwiseAbs().maxCoeff())) {
        fail(runDiagnostic(DiagKind::SteadyNoSteadyState, kNoTime, "",
                           {DiagArg::element(names[std::size_t(worst)]), F[std::size_t(worst)]}));
        return;
      }
      Xprev = X;
      rPrev = r;
      lambda = 1;
      for (std::size_t i = 0; i < N; ++i) {
        step[i] = ds[Eigen::Index(i)] * scale[i];
        X[i] += step[i];
      }
      q = rec.finalModes;
    }
  } catch (const RunError &e) {
    RunDiagnostic d = e.diagnostic;
    fail(d);
    return;
  }
  (void)converged;

  // The period found, with its rows, events and figures.
  result.t0 = t0;
  result.X0 = X;
  result.q0 = q;
  std::size_t ny = sys.numOutputs();
  std::vector<std::vector<double>> rowsKept;
  std::vector<double> sum(ny, 0.0), sumSq(ny, 0.0), lo(ny, std::numeric_limits<double>::infinity()),
      hi(ny, -std::numeric_limits<double>::infinity()), y(ny), xs;
  // The figures from each step's dense output: the integrals by five-point
  // Gauss-Legendre quadrature, and extrema inside a step located by golden
  // sections between the points that bracket them.
  std::vector<double> at(7), vals;
  std::optional<PowerMeter> meter;
  if (opts.losses)
    meter.emplace(sys, t0, t0 + T);
  trace.onStep = [&](Mode &m, const Stepper &st, double ta, double tb) {
    if (meter)
      meter->step(m, st, ta, tb);
    if (!(tb > ta))
      return;
    xs.resize(m.stateSlots().size());
    auto eval = [&](double tau, std::vector<double> &out) {
      if (tau == st.t())
        std::copy(st.x().begin(), st.x().end(), xs.begin());
      else
        st.interpolate(tau, xs.data());
      out.resize(ny);
      call(m.outputs(tau, xs.data(), out.data()), m, "outputs");
    };
    vals.assign(7 * ny, 0.0);
    at[0] = ta;
    at[6] = tb;
    for (int k = 0; k < 5; ++k) {
      double tau = 0.5 * (ta + tb) + 0.5 * (tb - ta) * kGaussNodes[k];
      at[std::size_t(k) + 1] = tau;
      eval(tau, y);
      for (std::size_t i = 0; i < ny; ++i) {
        double w = 0.5 * (tb - ta) * kGaussWeights[k];
        sum[i] += w * y[i];
        sumSq[i] += w * y[i] * y[i];
        vals[std::size_t(k + 1) * ny + i] = y[i];
      }
    }
    eval(ta, y);
    for (std::size_t i = 0; i < ny; ++i)
      vals[i] = y[i];
    eval(tb, y);
    for (std::size_t i = 0; i < ny; ++i)
      vals[6 * ny + i] = y[i];
    for (std::size_t i = 0; i < ny; ++i)
      for (double sign : {1.0, -1.0}) {
        std::size_t bestK = 0;
        for (std::size_t k = 1; k < 7; ++k)
          if (sign * vals[k * ny + i] > sign * vals[bestK * ny + i])
            bestK = k;
        double v = vals[bestK * ny + i];
        if (sign * v >= sign * (sign > 0 ? hi[i] : lo[i])) {
          // Golden sections over the neighbours' span (an extremum at an
          // end of the step may lie just inside it).
          double a = at[bestK == 0 ? 0 : bestK - 1], b = at[bestK == 6 ? 6 : bestK + 1];
          const double r = 0.6180339887498949;
          double c = b - r * (b - a), d = a + r * (b - a);
          eval(c, y);
          double fc = sign * y[i];
          eval(d, y);
          double fd = sign * y[i];
          for (int it = 0; it < 60 && b - a > 1e-15 * std::max(std::abs(a), std::abs(b)); ++it) {
            if (fc > fd) {
              b = d;
              d = c;
              fd = fc;
              c = b - r * (b - a);
              eval(c, y);
              fc = sign * y[i];
            } else {
              a = c;
              c = d;
              fc = fd;
              d = a + r * (b - a);
              eval(d, y);
              fd = sign * y[i];
            }
          }
          v = sign * std::max({sign * v, fc, fd});
        }
        if (sign > 0)
          hi[i] = std::max(hi[i], v);
        else
          lo[i] = std::min(lo[i], v);
      }
  };
  RunRecord &rec = result.period;
  runOver(
      sys, X, q, t0, t0 + T, base, rows,
      [&](const double *row) { rowsKept.emplace_back(row, row + 1 + ny); }, &trace,
      meter ? std::function<void(const Event &)>([&](const Event &e) { meter->event(e); })
            : nullptr,
      rec);
  ++result.periodsSimulated;
  trace.onStep = nullptr;
  if (meter)
    result.losses = meter->figures();
  if (!rec.error.empty()) {
    failRun(rec);
    return;
  }
  for (const std::vector<double> &row : rowsKept)
    for (std::size_t i = 0; i < ny; ++i) {
      lo[i] = std::min(lo[i], row[1 + i]);
      hi[i] = std::max(hi[i], row[1 + i]);
    }
  for (std::size_t i = 0; i < ny; ++i) {
    OutputFigures f;
    f.mean = sum[i] / T;
    f.rms = std::sqrt(std::max(0.0, sumSq[i] / T));
    f.min = lo[i];
    f.max = hi[i];
    result.figures.push_back(f);
  }

  // Rows by their phase in [0, T]: the period ran from phase phi0; rows
  // past phase T wrap to the start. A row at phase T that is an event's
  // row before stays at T (its row after starts the period at 0).
  double phi0 = std::fmod(std::fmod(t0 - base.tStart, T) + T, T);
  double eps = 1e-9 * T;
  std::vector<std::pair<double, std::vector<double>>> shifted;
  for (std::size_t k = 0; k + 1 < rowsKept.size() || (k < rowsKept.size() && phi0 == 0); ++k) {
    // The last row (phase phi0 + T) repeats the first, by periodicity.
    std::vector<double> row = rowsKept[k];
    double ph = row[0] - t0 + phi0;
    bool beforeEvent = k + 1 < rowsKept.size() && rowsKept[k + 1][0] == row[0];
    if (ph > T + eps || (ph > T - eps && !beforeEvent))
      ph -= T;
    // Rounding of the shift: grid rows back on the grid, and the ends.
    double onGrid = std::round(ph / dt);
    if (std::abs(ph - onGrid * dt) < 1e-6 * dt)
      ph = onGrid * dt;
    row[0] = std::max(0.0, std::min(T, ph));
    shifted.push_back({row[0], std::move(row)});
  }
  std::stable_sort(shifted.begin(), shifted.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  if (!shifted.empty() && shifted.back().first < T - eps) {
    std::vector<double> last = shifted.front().second; // periodic: phase 0 again at T
    last[0] = T;
    shifted.push_back({T, std::move(last)});
  }
  rec.columns.assign(1 + ny, {});
  for (const auto &[ph, row] : shifted)
    for (std::size_t i = 0; i <= ny; ++i)
      rec.columns[i].push_back(row[i]);
  rec.rows = shifted.size();

  // The modes in the period, by phase.
  std::vector<std::pair<double, std::string>> modes;
  for (const RunTrace::Segment &seg : trace.segments) {
    if (!(seg.t1 > seg.t0))
      continue;
    double ph = std::fmod(seg.t0 - t0 + phi0, T);
    if (ph < eps || ph > T - eps)
      ph = 0;
    modes.push_back({ph, seg.mode->name()});
  }
  std::stable_sort(modes.begin(), modes.end());
  for (const auto &[ph, name] : modes) {
    if (!result.modes.empty() && result.modes.back() == name)
      continue;
    result.modes.push_back(name);
    result.modeTimes.push_back(ph);
  }
  if (result.modes.size() > 1 && result.modes.front() == result.modes.back()) {
    result.modes.pop_back(); // the mode the period ends in starts it
    result.modeTimes.pop_back();
  }

  // Floquet multipliers: the monodromy's eigenvalues at the solution.
  try {
    std::vector<double> M = monodromy(sys, trace, rec.finalState, base.nominal, T);
    Matrix Mm = Eigen::Map<Matrix>(M.data(), Eigen::Index(N), Eigen::Index(N));
    Eigen::EigenSolver<Matrix> es(Mm);
    std::vector<std::pair<double, std::pair<double, double>>> mu;
    Eigen::Index lead = 0;
    double leadAbs = -1;
    for (Eigen::Index i = 0; i < es.eigenvalues().size(); ++i) {
      std::complex<double> v = es.eigenvalues()[i];
      mu.push_back({std::abs(v), {v.real(), v.imag()}});
      if (std::abs(v) > leadAbs) {
        leadAbs = std::abs(v);
        lead = i;
      }
    }
    std::sort(mu.begin(), mu.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    for (const auto &m : mu)
      result.multipliers.push_back(m.second);
    if (leadAbs > 1 + 1e-6) {
      Eigen::VectorXcd v = es.eigenvectors().col(lead);
      std::vector<double> scale = scalesOf(trace, rec.finalState, base.nominal);
      std::size_t at = 0;
      double most = -1;
      for (std::size_t i = 0; i < N; ++i)
        if (std::abs(v[Eigen::Index(i)]) / scale[i] > most) {
          most = std::abs(v[Eigen::Index(i)]) / scale[i];
          at = i;
        }
      fail(runDiagnostic(DiagKind::SteadyUnstable, kNoTime, "",
                         {leadAbs, DiagArg::element(names[at])}));
    }
  } catch (const RunError &e) {
    fail(e.diagnostic);
  }
}

} // namespace hbg::runtime
