//===- runtime/DormandPrince.cpp - Adaptive Dormand-Prince 5(4) ------------===//
//
// The explicit Runge-Kutta pair of Dormand and Prince: a 5th-order solution,
// an embedded 4th-order one for the local error estimate, the last stage
// reused as the next step's first (FSAL), and an order-4 dense output that
// needs no extra right-hand-side calls.
//
//===----------------------------------------------------------------------===//

#include "StepperBase.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace hbg::runtime {
namespace {

/// Stage times as fractions of the step.
constexpr double C[7] = {0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1};

/// Stage coefficients; the last row doubles as the 5th-order weights because
/// stage 7 is evaluated at the new state.
constexpr double A[7][6] = {
    {},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
    {35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}};

/// 5th- minus 4th-order weights: h * sum(E_i k_i) is the local error estimate.
constexpr double E[7] = {71.0 / 57600,      0,          -71.0 / 16695, 71.0 / 1920,
                         -17253.0 / 339200, 22.0 / 525, -1.0 / 40};

/// Dense output. The cubic Hermite interpolant of (x_n, k1) and (x_{n+1}, k7)
/// is only order 3; adding h θ²(1-θ)² Σ D_i k_i, which vanishes with its slope
/// at both ends, makes it order 4 for every θ. Those order conditions leave one
/// free parameter (with D_2 = 0); D_7 minimises the fifth-order error terms at
/// θ = 1/2, the choice Shampine published, and the others follow from it.
constexpr double D[7] = {-12715105075.0 / 11282082432.0,  0,
                         87487479700.0 / 32700410799.0,   -10690763975.0 / 1880347072.0,
                         701980252875.0 / 199316789632.0, -1453857185.0 / 822651844.0,
                         69997945.0 / 29380423.0};

/// Step-size controller: the error estimate is O(h^5).
constexpr double Safety = 0.9, MaxGrow = 10;

class DormandPrinceStepper final : public AdaptiveStepper {
public:
  DormandPrinceStepper(OdeSystem &sys, const IntegratorOptions &opts)
      : AdaptiveStepper(sys, opts, 5, Safety, MaxGrow) {}
  void reset(double t0, const double *x0) override;
  void interpolate(double tau, double *out) const override;
  void densePolynomial(std::size_t i, double c[5]) const override;
  double stiffness() const override;

private:
  /// Hairer's starting step: from the sizes of x0, f(x0) and an estimate of
  /// the second derivative (one extra right-hand-side call).
  double firstStep(double tLimit) override;
  /// Computes stages 2..7, xNew_ and the local error estimate for a step
  /// of h ending at tNew.
  double trial(double h, double tNew) override;
  void accept(double tNew) override;

  std::vector<double> xPrev_, xNew_, y_;
  /// Stages of the current trial (k_[0] is unused: stage 1 is dk_[6]).
  std::array<std::vector<double>, 7> k_;
  /// Stages of the last accepted step, for dense output. dk_[6] = f(t_, x_) is
  /// also the next step's first stage.
  std::array<std::vector<double>, 7> dk_;
};

void DormandPrinceStepper::reset(double t0, const double *x0) {
  start(t0, x0, dk_[6]);
  for (std::size_t s = 0; s < 7; ++s) {
    k_[s].resize(n_);
    dk_[s].resize(n_);
  }
  xPrev_ = x_;
  xNew_.resize(n_);
  y_.resize(n_);
  startAdaptive();
}

double DormandPrinceStepper::firstStep(double) {
  const std::vector<double> &f0 = dk_[6];
  // A state at zero with nothing to scale it by (no nominal magnitude, no
  // floor) has no weight yet: it takes no part in the first step's choice,
  // and its error counts relative to its value from the first step on.
  double d0 = 0, d1 = 0;
  for (std::size_t i = 0; i < n_; ++i) {
    double sc = weight(i, x_[i], x_[i]);
    if (sc == 0)
      continue;
    d0 += (x_[i] / sc) * (x_[i] / sc);
    d1 += (f0[i] / sc) * (f0[i] / sc);
  }
  double count = static_cast<double>(std::max<std::size_t>(n_, 1));
  d0 = std::sqrt(d0 / count);
  d1 = std::sqrt(d1 / count);
  double h0 = d0 < 1e-5 || d1 < 1e-5 ? 1e-6 : 0.01 * d0 / d1;
  h0 = std::min(h0, opts_.maxStep);

  // An Euler step of h0 and the change in f estimate the second derivative.
  for (std::size_t i = 0; i < n_; ++i)
    y_[i] = x_[i] + h0 * f0[i];
  if (!eval(t_ + h0, y_.data(), k_[1].data()))
    return h0;
  double d2 = 0;
  for (std::size_t i = 0; i < n_; ++i) {
    double sc = weight(i, x_[i], x_[i]);
    if (sc == 0)
      continue;
    double r = (k_[1][i] - f0[i]) / sc;
    d2 += r * r;
  }
  d2 = std::sqrt(d2 / count) / h0;
  double m = std::max(d1, d2);
  double h1 = m <= 1e-15 ? std::max(1e-6, h0 * 1e-3) : std::pow(0.01 / m, 1.0 / 5);
  return std::min({100 * h0, h1, opts_.maxStep});
}

/// out = base + sum over the M terms of a[m] k[m], added in that order: one
/// pass over the states, whose loop the compiler vectorises.
template <std::size_t M>
void combine(std::size_t n, double *__restrict out, const double *__restrict base,
             const double *a, const double *const *k) {
  const double *__restrict k0 = k[0];
  for (std::size_t i = 0; i < n; ++i) {
    double v = base ? base[i] + a[0] * k0[i] : a[0] * k0[i];
    for (std::size_t m = 1; m < M; ++m)
      v += a[m] * k[m][i];
    out[i] = v;
  }
}

/// combine() for a count known only at run time (at most 6 terms).
void combine(std::size_t terms, std::size_t n, double *out, const double *base,
             const double *a, const double *const *k) {
  switch (terms) {
  case 1: return combine<1>(n, out, base, a, k);
  case 2: return combine<2>(n, out, base, a, k);
  case 3: return combine<3>(n, out, base, a, k);
  case 4: return combine<4>(n, out, base, a, k);
  case 5: return combine<5>(n, out, base, a, k);
  default: return combine<6>(n, out, base, a, k);
  }
}

double DormandPrinceStepper::trial(double h, double tNew) {
  const std::vector<double> &k1 = dk_[6];
  double a[6];
  const double *k[6];
  for (std::size_t s = 1; s < 7; ++s) {
    // The last stage is evaluated at the candidate new state itself. Each
    // stage's state is one pass over the earlier stages' slopes, the terms
    // added in the order of the coefficients.
    std::vector<double> &y = s == 6 ? xNew_ : y_;
    std::size_t terms = 0;
    for (std::size_t j = 0; j < s; ++j) {
      if (A[s][j] == 0)
        continue;
      a[terms] = h * A[s][j];
      k[terms++] = j == 0 ? k1.data() : k_[j].data();
    }
    combine(terms, n_, y.data(), x_.data(), a, k);
    if (s == 6 && !checkState(tNew, xNew_))
      return -1;
    double ts = C[s] == 1 ? tNew : t_ + C[s] * h;
    if (!eval(ts, y.data(), k_[s].data()))
      return -1;
  }
  std::size_t terms = 0;
  for (std::size_t j = 0; j < 7; ++j) {
    if (E[j] == 0)
      continue;
    a[terms] = h * E[j];
    k[terms++] = j == 0 ? k1.data() : k_[j].data();
  }
  double *err = err_.data();
  combine(terms, n_, err, nullptr, a, k);
  // The stage times t + c h are rounded to the ulps of t, which moves each
  // stage's derivative by about |df/dt| ulp(t), estimated as the change of
  // the derivative over the step: an estimate within that noise says
  // nothing. It matters for a state still at zero with no absolute
  // tolerance (an integrator of a ramp that starts at an event), whose
  // tolerance shrinks with the step while the noise does not.
  double noiseScale = 0;
  for (double e : E)
    noiseScale += std::abs(e);
  noiseScale *= 16 * std::numeric_limits<double>::epsilon() *
                std::max(std::abs(t_), std::abs(tNew));
  const double *kEnd = k_[6].data(), *kStart = k1.data();
  for (std::size_t i = 0; i < n_; ++i)
    err[i] = std::abs(err[i]) <= noiseScale * std::abs(kEnd[i] - kStart[i]) ? 0 : err[i];
  return errorNorm(xNew_);
}

void DormandPrinceStepper::accept(double tNew) {
  tPrev_ = t_;
  t_ = tNew;
  xPrev_.swap(x_);
  x_.swap(xNew_);
  // Rotate buffers instead of copying: the old f(t_, x_) becomes the dense
  // output's k1 and the new last stage becomes f at the new point.
  dk_[0].swap(dk_[6]);
  for (std::size_t s = 1; s < 7; ++s)
    dk_[s].swap(k_[s]);
}

double DormandPrinceStepper::stiffness() const {
  // Stages 6 and 7 sit at the same time, at y_ (until the next trial
  // overwrites it) and at the new state: the ratio of their slopes'
  // difference to the states' estimates the dominant eigenvalue's
  // magnitude (Hairer and Wanner's test; DOPRI5's stability region
  // reaches about 3.3 along the negative real axis).
  // The sums in any order (`omp simd`, CMakeLists.txt gives this file
  // -fopenmp-simd), so that the loop vectorises: the estimate is a
  // heuristic for switching methods, not part of any result.
  const double *x = x_.data(), *y = y_.data(), *f7 = dk_[6].data(), *f6 = dk_[5].data();
  const double *nominal = nominal_.data();
  double atol = opts_.atol, rtol = opts_.rtol;
  double n = 0, d = 0;
#pragma omp simd reduction(+ : n, d)
  for (std::size_t i = 0; i < n_; ++i) {
    double sc = stateWeight(nominal[i], x[i], y[i], atol, rtol);
    double df = (f7[i] - f6[i]) / sc, dx = (x[i] - y[i]) / sc;
    n += df * df;
    d += dx * dx;
  }
  return d > 0 ? (t_ - tPrev_) * std::sqrt(n / d) : 0;
}

void DormandPrinceStepper::interpolate(double tau, double *out) const {
  double h = t_ - tPrev_;
  if (!(h > 0)) {
    std::copy(x_.begin(), x_.end(), out);
    return;
  }
  double theta = (tau - tPrev_) / h;
  hermite(theta, h, xPrev_, x_, dk_[0], dk_[6], out);
  double bubble = h * theta * theta * (1 - theta) * (1 - theta);
  for (std::size_t i = 0; i < n_; ++i) {
    double sum = 0;
    for (std::size_t s = 0; s < 7; ++s)
      sum += D[s] * dk_[s][i];
    out[i] += bubble * sum;
  }
}

void DormandPrinceStepper::densePolynomial(std::size_t i, double c[5]) const {
  double h = t_ - tPrev_;
  hermitePolynomial(i, h, xPrev_, x_, dk_[0], dk_[6], c);
  // The bubble h s^2 (1 - s)^2 S = h S (s^2 - 2 s^3 + s^4).
  double sum = 0;
  for (std::size_t s = 0; s < 7; ++s)
    sum += D[s] * dk_[s][i];
  double b = h * sum;
  c[2] += b;
  c[3] -= 2 * b;
  c[4] = b;
}

} // namespace

std::unique_ptr<Stepper> makeDormandPrinceStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  return std::make_unique<DormandPrinceStepper>(sys, opts);
}

} // namespace hbg::runtime
