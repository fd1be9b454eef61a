//===- runtime/SmallSignal.cpp - Frequency response of a periodic state ---===//

#include "hbg/runtime/SmallSignal.h"

#include "PeriodMap.h"

#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <cmath>
#include <memory>

namespace hbg::runtime {

using namespace periodic;

namespace {

using CMatrix = Eigen::MatrixXcd;
using CVector = Eigen::VectorXcd;

/// Puts the input back at its steady value however the scope is left.
struct Restore {
  const SmallSignalInput &in;
  ~Restore() { in.perturb(0); }
};

/// A mode's own ODE, to follow a segment's trajectory.
class ModeFlow final : public OdeSystem {
public:
  explicit ModeFlow(Mode &m) : m_(m) {}
  std::size_t numStates() const override { return m_.stateSlots().size(); }
  void rhs(double t, const double *x, double *xdot) override {
    call(m_.rhs(t, x, xdot), m_, "derivatives");
  }

private:
  Mode &m_;
};

/// Part of a segment over which the perturbation's coefficients are
/// taken as constant: exactly so in a linear mode with constant input
/// and output derivatives, at its midpoint otherwise.
struct Piece {
  double h = 0;
  Matrix A, C;
  Vector b, d;
};

struct SegmentModel {
  std::vector<std::uint32_t> S;
  std::vector<Piece> pieces;
  /// Dependent storage at the segment's end: its slots, and its
  /// derivatives by the states and by the input.
  std::vector<std::uint32_t> D;
  Matrix Dx;
  Vector Du;
};

struct JumpModel {
  Matrix S;
  Vector su;
};

/// The derivatives at (t, x) in `m` that a piece needs.
struct Coefficients {
  Matrix A, C;
  Vector b, d;
};

Coefficients coefficientsAt(Mode &m, const SmallSignalInput &in, double t,
                            const std::vector<double> &x, std::size_t ny,
                            const std::vector<double> &stateScale) {
  std::size_t n = x.size();
  Coefficients c;
  c.A = jacobianOf(m, t, x);
  c.b = Vector::Zero(Eigen::Index(n));
  c.d = Vector::Zero(Eigen::Index(ny));
  c.C = Matrix::Zero(Eigen::Index(ny), Eigen::Index(n));
  std::vector<double> fp(n), fm(n), yp(ny), ym(ny);
  double hu = 1e-6 * in.scale;
  {
    Restore restore{in};
    in.perturb(hu);
    call(m.rhs(t, x.data(), fp.data()), m, "derivatives");
    call(m.outputs(t, x.data(), yp.data()), m, "outputs");
    in.perturb(-hu);
    call(m.rhs(t, x.data(), fm.data()), m, "derivatives");
    call(m.outputs(t, x.data(), ym.data()), m, "outputs");
  }
  for (std::size_t i = 0; i < n; ++i)
    c.b[Eigen::Index(i)] = (fp[i] - fm[i]) / (2 * hu);
  for (std::size_t i = 0; i < ny; ++i)
    c.d[Eigen::Index(i)] = (yp[i] - ym[i]) / (2 * hu);
  std::vector<double> xp = x;
  for (std::size_t j = 0; j < n; ++j) {
    double h = 1e-6 * stateScale[j];
    xp[j] = x[j] + h;
    call(m.outputs(t, xp.data(), yp.data()), m, "outputs");
    xp[j] = x[j] - h;
    call(m.outputs(t, xp.data(), ym.data()), m, "outputs");
    xp[j] = x[j];
    for (std::size_t i = 0; i < ny; ++i)
      c.C(Eigen::Index(i), Eigen::Index(j)) = (yp[i] - ym[i]) / (2 * h);
  }
  return c;
}

bool close(const Matrix &a, const Matrix &b) {
  double size = std::max(a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff());
  return a.size() == 0 || (a - b).cwiseAbs().maxCoeff() <= 1e-9 * size;
}

SegmentModel segmentModel(System &sys, const RunTrace::Segment &seg, const SmallSignalInput &in,
                          std::size_t ny, const std::vector<double> &scale) {
  Mode &m = *seg.mode;
  setContext(sys, m, seg.branches, seg.held);
  SegmentModel out;
  out.S = m.stateSlots();
  std::size_t n = out.S.size();
  std::vector<double> stateScale(n);
  for (std::size_t i = 0; i < n; ++i)
    stateScale[i] = scale[out.S[i]];
  std::vector<double> x0 = gather(m, seg.X0);
  double h = seg.t1 - seg.t0;
  // The trajectory through the segment, landed on at the times the
  // coefficients are taken.
  ModeFlow flow(m);
  IntegratorOptions io;
  io.method = Method::DormandPrince;
  io.rtol = 1e-11;
  std::unique_ptr<Stepper> stepper;
  if (n) {
    stepper = makeStepper(flow, io);
    stepper->reset(seg.t0, x0.data());
    std::vector<double> nominal(stateScale);
    stepper->setNominal(nominal.data());
  }
  auto stateAt = [&](double t) {
    if (!n)
      return std::vector<double>();
    while (stepper->t() < t)
      if (stepper->step(t) != StepStatus::Ok)
        throw RunError(DiagKind::RunStepTooSmall, stepper->t(), m.name());
    return stepper->x();
  };
  // Constant coefficients over the segment: one piece.
  bool linear = n == 0 || (m.jacobianPattern() && m.jacobianConstancy().dfdx);
  Coefficients first = coefficientsAt(m, in, seg.t0, x0, ny, stateScale);
  std::vector<double> xEnd;
  if (linear) {
    // Sampled ahead on a copy of the trajectory: the mid and end points.
    std::vector<double> xMid = stateAt(seg.t0 + 0.5 * h);
    Coefficients mid = coefficientsAt(m, in, seg.t0 + 0.5 * h, xMid, ny, stateScale);
    xEnd = stateAt(seg.t1);
    Coefficients end = coefficientsAt(m, in, seg.t1, xEnd, ny, stateScale);
    if (close(first.b, mid.b) && close(first.b, end.b) && close(first.d, mid.d) &&
        close(first.d, end.d) && close(first.C, mid.C) && close(first.C, end.C)) {
      out.pieces.push_back({h, first.A, first.C, first.b, first.d});
    } else {
      linear = false;
      if (n) {
        stepper->reset(seg.t0, x0.data());
        std::vector<double> nominal(stateScale);
        stepper->setNominal(nominal.data());
      }
    }
  }
  if (!linear) {
    // Midpoint coefficients over pieces short enough for the frozen
    // coefficients' error, O(piece^2), to be well below a percent.
    const int kPieces = 128;
    double dh = h / kPieces;
    for (int k = 0; k < kPieces; ++k) {
      double tm = seg.t0 + (k + 0.5) * dh;
      std::vector<double> xm = stateAt(tm);
      Coefficients c = coefficientsAt(m, in, tm, xm, ny, stateScale);
      out.pieces.push_back({dh, c.A, c.C, c.b, c.d});
    }
    xEnd = stateAt(seg.t1);
  }
  // Dependent storage at the end.
  const std::vector<std::uint32_t> &D = m.dependentSlots();
  std::size_t nd = D.size();
  out.D = D;
  out.Dx = Matrix::Zero(Eigen::Index(nd), Eigen::Index(n));
  out.Du = Vector::Zero(Eigen::Index(nd));
  if (nd) {
    if (xEnd.empty())
      xEnd = x0;
    std::vector<double> jac(nd * n), dp(nd), dm(nd);
    call(m.dependentJacobian(seg.t1, xEnd.data(), jac.data()), m, "dependent storage");
    for (std::size_t k = 0; k < nd; ++k)
      for (std::size_t i = 0; i < n; ++i)
        out.Dx(Eigen::Index(k), Eigen::Index(i)) = jac[k * n + i];
    double hu = 1e-6 * in.scale;
    {
      Restore restore{in};
      in.perturb(hu);
      call(m.dependent(seg.t1, xEnd.data(), dp.data()), m, "dependent storage");
      in.perturb(-hu);
      call(m.dependent(seg.t1, xEnd.data(), dm.data()), m, "dependent storage");
    }
    for (std::size_t k = 0; k < nd; ++k)
      out.Du[Eigen::Index(k)] = (dp[k] - dm[k]) / (2 * hu);
  }
  return out;
}

/// The derivative by u of the instant at which one of `j`'s comparisons
/// changes truth near the event, the state moving along f- through it:
/// false when none changes there.
bool switchTime(System &sys, Mode &from, const RunTrace::Jump &j, const SmallSignalInput &in,
                double timeScale, double &dtdu) {
  const Switching &sw = sys.switching();
  double t = j.time, w = 1e-4 * timeScale, hu = 1e-6 * in.scale;
  Vector f = fullDerivative(from, t, j.before, timeScale);
  std::vector<double> x0 = gather(from, j.before), x(x0.size());
  std::vector<double> sides(2 * (sw.numComparisons() + from.numKinks()));
  auto holds = [&](std::uint32_t k, double tt) {
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = x0[i] + f[from.stateSlots()[i]] * (tt - t);
    call(from.guards(tt, x.data(), sides.data()), from, "guards");
    return comparisonHolds(sw.op(k), sides[2 * k], sides[2 * k + 1]);
  };
  auto instant = [&](std::uint32_t k, double &at) {
    double a = t - w, b = t + w;
    bool ha = holds(k, a);
    if (ha == holds(k, b))
      return false;
    for (int it = 0; it < 200 && b - a > 0; ++it) {
      double m = 0.5 * (a + b);
      if (m <= a || m >= b)
        break;
      (holds(k, m) == ha ? a : b) = m;
    }
    at = 0.5 * (a + b);
    return true;
  };
  for (std::uint32_t k : j.comparisons) {
    if (k >= sw.numComparisons())
      continue;
    double here = 0;
    if (!instant(k, here))
      continue;
    double up = 0, down = 0;
    bool ok;
    {
      Restore restore{in};
      in.perturb(hu);
      ok = instant(k, up);
      in.perturb(-hu);
      ok = instant(k, down) && ok;
    }
    if (!ok)
      continue;
    dtdu = (up - down) / (2 * hu);
    return true;
  }
  return false;
}

/// An event's saltation matrix and its input column: the jump's own
/// derivative by u, and the event time moving with u through the
/// comparison it reached (a PWM edge moving with the duty).
JumpModel jumpModel(System &sys, const RunTrace::Jump &j, const std::vector<double> &heldBefore,
                    Mode &after, const std::vector<double> &afterBranches,
                    const SmallSignalInput &in, const std::vector<double> &scale, double timeScale,
                    RemapWorkspace &work) {
  EventDerivatives d =
      eventDerivatives(sys, j, heldBefore, after, afterBranches, scale, timeScale, work);
  double t = j.time, hu = 1e-6 * in.scale;
  JumpModel out;
  out.S = d.EX;
  {
    Restore restore{in};
    in.perturb(hu);
    std::vector<double> p = replay(sys, j, t, j.before, work);
    in.perturb(-hu);
    std::vector<double> m = replay(sys, j, t, j.before, work);
    out.su = Vector::Zero(Eigen::Index(p.size()));
    for (std::size_t r = 0; r < p.size(); ++r)
      out.su[Eigen::Index(r)] = (p[r] - m[r]) / (2 * hu);
  }
  Mode &from = *j.from;
  setContext(sys, from, j.fromBranches, heldBefore);
  if (!d.reached) {
    // No comparison sits on its threshold: the event is a jump of a
    // guard's value (a PWM's edge inside `on = pwm(f, D)`), at the time
    // the comparison's truth changes. Its time moves with u as that
    // instant does, found by bisection along the state's motion.
    double dtdu = 0;
    if (switchTime(sys, from, j, in, timeScale, dtdu) && dtdu != 0)
      out.su += d.moved() * dtdu;
    return out;
  }
  std::vector<double> x = gather(from, j.before);
  double gu;
  {
    Restore restore{in};
    in.perturb(hu);
    double p = comparisonValue(sys, from, d.which, t, x);
    in.perturb(-hu);
    gu = (p - comparisonValue(sys, from, d.which, t, x)) / (2 * hu);
  }
  if (d.gX.isZero(0) && gu == 0)
    return out; // nothing moves this event
  d.requireCrossing(sys, j);
  Vector moved = d.moved();
  out.S = d.EX - moved * d.gX.transpose() / d.rate;
  out.su -= moved * (gu / d.rate);
  return out;
}

} // namespace

void frequencyResponse(System &sys, const SteadyResult &steady, const SimulateOptions &base,
                       double period, const SmallSignalInput &input,
                       const std::vector<double> &frequencies, FrequencyResponse &out) {
  out = FrequencyResponse{};
  out.frequencies = frequencies;
  std::size_t N = steady.X0.size(), ny = sys.numOutputs();
  double T = period;
  try {
    // The steady period once more, traced.
    RunTrace trace;
    RunRecord rec;
    SimulateOptions o = base;
    o.tStart = steady.t0;
    o.tEnd = steady.t0 + T;
    o.dtOut = T;
    o.onRow = [](const double *) {};
    o.onEvent = nullptr;
    o.initialModes = steady.q0;
    o.trace = &trace;
    simulate(sys, steady.X0, o, rec);
    if (!rec.error.empty()) {
      out.error = rec.error;
      out.failure = rec.failure;
      return;
    }
    if (!trace.unsupported.empty()) {
      RunDiagnostic d = runDiagnostic(DiagKind::SteadyUnsupported, kNoTime, "", {trace.unsupported});
      out.failure = d;
      out.error = d.message;
      return;
    }
    std::vector<double> scale = scalesOf(trace, rec.finalState, base.nominal);
    // The frequency-independent pieces of the perturbation's dynamics.
    RemapWorkspace work;
    std::vector<SegmentModel> segments(trace.segments.size());
    std::vector<JumpModel> jumps(trace.jumps.size());
    visit(
        trace,
        [&](const RunTrace::Segment &seg, std::size_t index) {
          if (seg.t1 > seg.t0)
            segments[index] = segmentModel(sys, seg, input, ny, scale);
        },
        [&](const RunTrace::Jump &j, std::size_t index, const std::vector<double> &held,
            Mode &after, const std::vector<double> &afterBranches) {
          jumps[index] = jumpModel(sys, j, held, after, afterBranches, input, scale, T, work);
        });

    out.response.assign(ny, std::vector<std::complex<double>>(frequencies.size()));
    const std::complex<double> I(0, 1);
    for (std::size_t fk = 0; fk < frequencies.size(); ++fk) {
      double w = 2 * M_PI * frequencies[fk];
      // p(t) = P p0 + q, and the outputs' integral L p0 + l, from t0.
      CMatrix P = CMatrix::Identity(Eigen::Index(N), Eigen::Index(N));
      CVector q = CVector::Zero(Eigen::Index(N));
      CMatrix L = CMatrix::Zero(Eigen::Index(ny), Eigen::Index(N));
      CVector l = CVector::Zero(Eigen::Index(ny));
      for (const auto &[isJump, index] : trace.order) {
        if (isJump) {
          const JumpModel &jm = jumps[index];
          P = jm.S.cast<std::complex<double>>() * P;
          q = jm.S.cast<std::complex<double>>() * q + jm.su.cast<std::complex<double>>();
          continue;
        }
        const SegmentModel &sm = segments[index];
        if (sm.pieces.empty())
          continue;
        std::size_t n = sm.S.size();
        CMatrix PS = CMatrix::Zero(Eigen::Index(n), Eigen::Index(N));
        CVector qS = CVector::Zero(Eigen::Index(n));
        for (std::size_t i = 0; i < n; ++i) {
          PS.row(Eigen::Index(i)) = P.row(sm.S[i]);
          qS[Eigen::Index(i)] = q[sm.S[i]];
        }
        Eigen::Index a = Eigen::Index(n), m = a + 1 + Eigen::Index(ny);
        for (const Piece &pc : sm.pieces) {
          // exp of [[A - jw, b, 0], [0, 0, 0], [C, d, 0]] h: the state in
          // the rotating frame, the unit forcing, the outputs' integral.
          CMatrix Z = CMatrix::Zero(m, m);
          Z.topLeftCorner(a, a) = pc.A.cast<std::complex<double>>();
          for (Eigen::Index i = 0; i < a; ++i)
            Z(i, i) -= I * w;
          Z.block(0, a, a, 1) = pc.b.cast<std::complex<double>>();
          Z.block(a + 1, 0, Eigen::Index(ny), a) = pc.C.cast<std::complex<double>>();
          Z.block(a + 1, a, Eigen::Index(ny), 1) = pc.d.cast<std::complex<double>>();
          CMatrix E = (Z * pc.h).exp();
          CMatrix Epp = E.topLeftCorner(a, a), Eip = E.block(a + 1, 0, Eigen::Index(ny), a);
          CVector Ep1 = E.block(0, a, a, 1), Ei1 = E.block(a + 1, a, Eigen::Index(ny), 1);
          L += Eip * PS;
          l += Eip * qS + Ei1;
          PS = (Epp * PS).eval();
          qS = (Epp * qS + Ep1).eval();
        }
        for (std::size_t i = 0; i < n; ++i) {
          P.row(sm.S[i]) = PS.row(Eigen::Index(i));
          q[sm.S[i]] = qS[Eigen::Index(i)];
        }
        for (std::size_t k = 0; k < sm.D.size(); ++k) {
          if (sm.D[k] == kNoSlot)
            continue;
          P.row(sm.D[k]) = sm.Dx.row(Eigen::Index(k)).cast<std::complex<double>>() * PS;
          q[sm.D[k]] = (sm.Dx.row(Eigen::Index(k)).cast<std::complex<double>>() * qS)(0) +
                       sm.Du[Eigen::Index(k)];
        }
      }
      // Periodic in the rotating frame: p(t0 + T) = p(t0).
      CMatrix A = CMatrix::Identity(Eigen::Index(N), Eigen::Index(N)) - P;
      Eigen::CompleteOrthogonalDecomposition<CMatrix> cod(A);
      cod.setThreshold(1e-12);
      CVector p0 = cod.solve(q);
      CVector y = (L * p0 + l) / T;
      for (std::size_t i = 0; i < ny; ++i)
        out.response[i][fk] = y[Eigen::Index(i)];
    }
  } catch (const RunError &e) {
    out.failure = e.diagnostic;
    std::string at = e.diagnostic.where();
    out.error = at.empty() ? e.diagnostic.message : at + ": " + e.diagnostic.message;
  }
}

} // namespace hbg::runtime
