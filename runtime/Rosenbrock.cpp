//===- runtime/Rosenbrock.cpp - The stiff method: RODAS4 and ROS34PW2 ----===//
//
// Linearly implicit Rosenbrock methods: a step takes a few stages, each a
// solve with one LU factorisation of E = I / (h gamma) - J, where J is
// df/dx at the step's start or, for a W-method, a matrix standing in for
// it.
//
// RODAS4 of Hairer and Wanner (Solving Ordinary Differential Equations
// II, section VI.4, and their code RODAS), of order 4 with an embedded
// solution of order 3, L-stable and stiffly accurate, steps a mode whose
// Jacobian is constant (it reads neither t nor x: evaluated once per
// reset(), E's factorisation kept for as long as h is, growths of h by up
// to 1.2 not taken, as in RADAU5), a nonlinear mode (J evaluated every
// step), and systems that give no Jacobian (J by differences, every
// step). Six stages; the stages also give a dense
// output of order 3 that damps stiff components as the method does (no
// overshoot where a fast transient dies within the step, unlike a
// Hermite interpolant of the ends). Its order rests on J being exact.
//
// With IntegratorOptions::keepJacobian, a nonlinear mode steps by the
// W-method ROS34PW2 of Rang and Angermann, of order 3 with an embedded
// solution of order 2, L-stable and stiffly accurate, whose order holds
// for any matrix in place of J. So J is kept over steps, as CVODE and
// RADAU5 keep theirs: evaluated again when it has served its limit of
// steps (up to MaxJacobianAge, adapted to how long kept ones last), and
// when a step made with a kept J is rejected, before the retry at the
// same h. E is factorised again when h changes (growths by up to 1.2 not
// taken). Four stages, and a dense output of order 2 derived for hbg,
// damped the same way. It is not the default: on the models measured its
// lower order cost more steps than the Jacobians saved (docs/numerics.md).
//
// On stiff forced components a dense output loses order, so its error is
// estimated too (denseErrorNorm) and held to the step's tolerance.
//
// J and df/dt come from the system when it can evaluate them
// (OdeSystem::jacobian: hbg's are symbolic derivatives, JIT-compiled),
// else from forward differences. E is factorised by a band LU when the
// Jacobian's band is narrow (a chain, a ladder, a line: bond graphs of
// repeated sections numbered along them), by Eigen's SparseLU, its
// pattern analysed once, when it is large and sparse but not banded, and
// densely otherwise.
//
//===----------------------------------------------------------------------===//

#include "BandLu.h"
#include "StepperBase.h"

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <Eigen/SparseLU>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hbg::runtime {
namespace {

// The method's coefficients (RODAS4, as Hairer and Wanner give them): the
// stage times c, the stage weights a and c of the previous stages, the
// df/dt weights d, and the dense-output weights (dense2, dense3).
constexpr double Gamma = 0.25;
constexpr double C2 = 0.386, C3 = 0.21, C4 = 0.63;
constexpr double D1 = 0.25, D2 = -0.1043, D3 = 0.1035, D4 = -0.0362;
constexpr double A21 = 1.544;
constexpr double A31 = 0.9466785280815826, A32 = 0.2557011698983284;
constexpr double A41 = 3.314825187068521, A42 = 2.896124015972201, A43 = 0.9986419139977817;
constexpr double A51 = 1.221224509226641, A52 = 6.019134481288629, A53 = 12.53708332932087,
                 A54 = -0.687886036105895;
constexpr double C21 = -5.6688;
constexpr double C31 = -2.430093356833875, C32 = -0.2063599157091915;
constexpr double C41 = -0.1073529058151375, C42 = -9.594562251023355, C43 = -20.47028614809616;
constexpr double C51 = 7.496443313967647, C52 = -10.24680431464352, C53 = -33.99990352819905,
                 C54 = 11.7089089320616;
constexpr double C61 = 8.083246795921522, C62 = -7.981132988064893, C63 = -31.52159432874371,
                 C64 = 16.31930543123136, C65 = -6.058818238834054;
constexpr double Dense2[5] = {10.12623508344586, -7.487995877610167, -34.80091861555747,
                              -7.992771707568823, 1.025137723295662};
constexpr double Dense3[5] = {-0.6762803392801253, 6.087714651680015, 16.43084320892478,
                              24.76722511418386, -6.594389125716872};

// ROS34PW2 of Rang and Angermann (BIT Numerical Mathematics 45, 2005):
// a Rosenbrock W-method of order 3, whose order conditions
// hold whatever matrix W stands in for J, with an embedded solution of
// order 2; L-stable and stiffly accurate. Their alpha_ij, gamma_ij and b
// are written here in the variables of Hairer and Wanner's codes, u_i =
// sum_j gamma_ij k_j, as RODAS4's are: a = alpha Gamma^-1, c = diag(1 /
// gamma) - Gamma^-1, the stage times alpha_i and the df/dt weights
// gamma_i = sum_j gamma_ij (the last is zero). The solution is y4 + u4;
// w::Err gives the difference from the embedded one; w::Dense is a dense
// output of order 2 derived for hbg: x(s) = (1 - s) x0 + s x1 + s (1 - s)
// sum Dense_j u_j, whose weights b_j(s) satisfy the W-method's order
// conditions to order 2 for every s and, on y' = lambda y with h lambda
// to -infinity, give (1 - s)^2 x0: it decays within the step as the
// solution does, without overshoot.
namespace w {
constexpr double Gamma = 0.435866521508459;
constexpr double C2 = 0.87173304301691801, C3 = 0.73157995778885243;
constexpr double D1 = 0.435866521508459, D2 = -0.435866521508459, D3 = -0.4133333762338865;
constexpr double A21 = 2;
constexpr double A31 = 1.4192173174557647, A32 = -0.25923221167296973;
constexpr double A41 = 4.1847604823191604, A42 = -0.28519201735549593, A43 = 2.2942803602790418;
constexpr double C21 = -4.5885607205580836;
constexpr double C31 = -4.1847604823191604, C32 = 0.28519201735549593;
constexpr double C41 = -6.3681792001283579, C42 = -6.7956209444668358, C43 = 2.8700986043310559;
constexpr double Err[4] = {0.27774994764796812, -1.403239895175999, 1.7726301276675507, 0.5};
constexpr double Dense[4] = {-0.51691903192138078, -15.500252332878306, 15.800159730615384,
                             1.7057196397209566};
} // namespace w

/// The coefficients of the first three stages, alike in form in both
/// methods.
struct Opening {
  double d1, c2, a21, c21, d2, c3, a31, a32, c31, c32, d3;
};
constexpr Opening Rodas4Opening{D1, C2, A21, C21, D2, C3, A31, A32, C31, C32, D3};
constexpr Opening WOpening{w::D1,  w::C2,  w::A21, w::C21, w::D2, w::C3,
                           w::A31, w::A32, w::C31, w::C32, w::D3};

/// NonFiniteInfo::index when the Jacobian, not a state, failed.
constexpr std::size_t NoState = static_cast<std::size_t>(-1);

/// Step-size controller: RODAS4's error estimate is O(h^4), ROS34PW2's
/// O(h^3).
constexpr double Safety = 0.9, MaxGrow = 6;
/// After a kept J fails on its first kept step, J is evaluated every step
/// for 1, 3, 7, ... and at most this many steps before one is kept again.
constexpr std::size_t MaxPause = 64;
/// A nonlinear mode's J is kept for at most this many accepted steps.
constexpr std::size_t MaxJacobianAge = 20;
/// With a constant J, growths of the step by up to this factor are not
/// taken, so that E's factorisation serves the next step too (RADAU5's
/// QUOT2; CVODE holds below 1.5).
constexpr double HoldGrowthUpTo = 1.2;

/// Systems with at least this many states and a Jacobian with at most a
/// quarter of its entries structurally non-zero are factorised sparsely,
/// unless a band LU is cheaper.
constexpr std::size_t SparseFrom = 40;


/// E = I / (h gamma) - J, factorised densely, as a band or sparsely.
class ImplicitMatrix {
public:
  /// Dense J of n states, written by the caller into dense().
  void useDense(std::size_t n) {
    kind_ = Dense;
    jac_.resize(Eigen::Index(n), Eigen::Index(n));
  }
  /// J with the given pattern, whose values go into values() in the
  /// pattern's order. The pattern's band decides between a band LU and a
  /// general sparse one. False when a dense LU is the cheaper: the caller
  /// then calls useDense() and scatters values() into dense().
  bool useSparse(const SparsePattern &p, std::size_t n);
  bool isSparse() const { return kind_ != Dense; }
  Eigen::MatrixXd &dense() { return jac_; }
  std::vector<double> &values() { return values_; }
  /// Factorises E = I / hGamma - J; false when it is singular.
  bool factorise(double hGamma);
  /// x = E \ b, in place.
  void solve(Eigen::VectorXd &b) {
    if (kind_ == Band) {
      band_.solve(b.data());
      return;
    }
    if (kind_ == Sparse)
      x_ = splu_.solve(b);
    else
      x_ = lu_.solve(b);
    b.swap(x_);
  }

private:
  enum Kind { Dense, Band, Sparse } kind_ = Dense;
  BandLu band_;
  Eigen::MatrixXd jac_, e_dense_;
  Eigen::VectorXd x_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  // Sparse: E's pattern is J's and the diagonal; where each value of J and
  // each diagonal entry sits in E's values.
  Eigen::SparseMatrix<double> e_;
  std::vector<double> values_;
  std::vector<std::uint32_t> fromJ_, diag_;
  Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> splu_;
};

bool ImplicitMatrix::useSparse(const SparsePattern &p, std::size_t n) {
  values_.assign(p.nonZeros(), 0.0);
  fromJ_.resize(p.nonZeros());
  diag_.resize(n);
  // The band: a band LU costs about n kl (kl + ku) and its solves n (2 kl
  // + ku); chosen when that is well below a dense LU's n^3 / 3 and the
  // band holds a quarter of the matrix or less.
  std::size_t kl = 0, ku = 0;
  for (std::size_t j = 0; j < n; ++j)
    for (std::uint32_t k = p.colStart[j]; k < p.colStart[j + 1]; ++k) {
      std::size_t i = p.rows[k];
      kl = std::max(kl, i > j ? i - j : 0);
      ku = std::max(ku, j > i ? j - i : 0);
    }
  if (4 * (2 * kl + ku + 1) <= n) {
    kind_ = Band;
    band_.resize(n, kl, ku);
    for (std::size_t j = 0; j < n; ++j) {
      for (std::uint32_t k = p.colStart[j]; k < p.colStart[j + 1]; ++k)
        fromJ_[k] = static_cast<std::uint32_t>(band_.at(p.rows[k], j));
      diag_[j] = static_cast<std::uint32_t>(band_.at(j, j));
    }
    return true;
  }
  if (n < SparseFrom || 4 * p.nonZeros() > n * n)
    return false;
  kind_ = Sparse;
  std::vector<Eigen::Triplet<double>> entries;
  for (std::size_t j = 0; j < n; ++j) {
    for (std::uint32_t k = p.colStart[j]; k < p.colStart[j + 1]; ++k)
      entries.emplace_back(int(p.rows[k]), int(j), 1.0);
    entries.emplace_back(int(j), int(j), 1.0);
  }
  e_.resize(Eigen::Index(n), Eigen::Index(n));
  e_.setFromTriplets(entries.begin(), entries.end()); // sums duplicates
  e_.makeCompressed();
  for (std::size_t j = 0; j < n; ++j) {
    const int *rows = e_.innerIndexPtr();
    int begin = e_.outerIndexPtr()[j], end = e_.outerIndexPtr()[j + 1];
    auto at = [&](std::uint32_t r) {
      return static_cast<std::uint32_t>(std::lower_bound(rows + begin, rows + end, int(r)) - rows);
    };
    for (std::uint32_t k = p.colStart[j]; k < p.colStart[j + 1]; ++k)
      fromJ_[k] = at(p.rows[k]);
    diag_[j] = at(static_cast<std::uint32_t>(j));
  }
  splu_.analyzePattern(e_);
  return true;
}

bool ImplicitMatrix::factorise(double hGamma) {
  double fac = 1 / hGamma;
  if (jac_.size() == 0 && kind_ == Dense)
    return true; // no states: nothing to solve
  if (kind_ == Band) {
    std::vector<double> &a = band_.values();
    std::fill(a.begin(), a.end(), 0.0);
    for (std::size_t k = 0; k < values_.size(); ++k)
      a[fromJ_[k]] -= values_[k];
    for (std::uint32_t d : diag_)
      a[d] += fac;
    return band_.factorise();
  }
  if (kind_ == Dense) {
    e_dense_ = -jac_;
    e_dense_.diagonal().array() += fac;
    lu_.compute(e_dense_);
    // PartialPivLU does not report singularity: a zero or non-finite pivot
    // on U's diagonal shows it.
    auto pivots = lu_.matrixLU().diagonal().array();
    return pivots.isFinite().all() && (pivots != 0).all();
  }
  double *v = e_.valuePtr();
  std::fill(v, v + e_.nonZeros(), 0.0);
  for (std::size_t k = 0; k < values_.size(); ++k)
    v[fromJ_[k]] -= values_[k];
  for (std::uint32_t d : diag_)
    v[d] += fac;
  splu_.factorize(e_);
  return splu_.info() == Eigen::Success;
}

class RosenbrockStepper final : public AdaptiveStepper {
public:
  RosenbrockStepper(OdeSystem &sys, const IntegratorOptions &opts)
      : AdaptiveStepper(sys, opts, 4, Safety, MaxGrow) {}
  void reset(double t0, const double *x0) override;
  void interpolate(double tau, double *out) const override {
    double h = t_ - tPrev_;
    double s = h > 0 ? (tau - tPrev_) / h : 1;
    for (std::size_t i = 0; i < n_; ++i)
      out[i] = (1 - s) * xPrev_[i] + s * (x_[i] + (1 - s) * (dense2_[i] + s * dense3_[i]));
  }
  void densePolynomial(std::size_t i, double c[5]) const override {
    // (1 - s) x0 + s x1 + s (1 - s) (D2 + s D3)
    c[0] = xPrev_[i];
    c[1] = x_[i] - xPrev_[i] + dense2_[i];
    c[2] = dense3_[i] - dense2_[i];
    c[3] = -dense3_[i];
    c[4] = 0;
  }

private:
  double firstStep(double tLimit) override {
    return std::min(1e-6 * std::max(1.0, std::abs(tLimit - t_)), opts_.maxStep);
  }
  /// f, J = df/dx and T = df/dt at (t_, x_), once per step: every retry
  /// of the step uses them. A constant J (constancy_) is evaluated on the
  /// first step after reset() only, and a constant T with it; a nonlinear
  /// mode's J (wMethod_) is kept for up to MaxJacobianAge steps.
  bool beginStep(double h) override;
  /// J and T from the system at (t_, x_), into e_; the step that asked
  /// for them is h.
  bool evaluateJacobian(double h);
  /// A trial with a kept J failed: J at the step's start, for the retry.
  Retry rejected() override {
    if (!wMethod_ || fresh_)
      return Retry::Shorter;
    // Kept no longer than this one served; after a failure at the first
    // step past its evaluation, fresh Jacobians for a while, doubling.
    ageLimit_ = std::max<std::size_t>(1, age_ / 2);
    if (age_ <= 1) {
      pause_ = std::min<std::size_t>(MaxPause, 2 * pause_ + 1);
      freshFor_ = pause_;
    }
    if (!evaluateJacobian(lastH_))
      return Retry::Fail;
    return Retry::Same;
  }
  /// J and T by forward differences.
  bool differenceJacobian(double h);
  /// T alone by a forward difference in t.
  bool differenceDfdt(double h);
  /// Replaces the non-finite columns of the system's J (in pattern order,
  /// `values`) and a non-finite T by forward differences; false, with
  /// nonFinite_ set, when they are not finite either.
  bool differenceWhereNotFinite(double h, std::vector<double> &values);
  /// The size state j's difference step is relative to.
  double differenceScale(std::size_t j) const;
  double trial(double h, double tNew) override;
  /// A trial's stages by RODAS4 and by ROS34PW2: xNew_, err_ and the
  /// dense output trial2_, trial3_; false when something is not finite.
  bool stagesRodas4(double h, double tNew);
  /// The first three stages into k_[0..2], with f at the third's state in
  /// fy_.
  bool openingStages(const Opening &m, double h);
  bool stagesW(double h, double tNew);
  /// The first `count` stages are finite; else nonFinite_ is set.
  bool finiteStages(int count, double tNew);
  /// The error norm of the trial's dense output, at least `stepNorm`
  /// (the norm of its local error), folded into err_.
  double denseErrorNorm(double h, double stepNorm);
  void accept(double tNew) override {
    tPrev_ = t_;
    t_ = tNew;
    xPrev_.swap(x_);
    x_.swap(xNew_);
    dense2_.swap(trial2_);
    dense3_.swap(trial3_);
    fCurrent_ = false;
    stiffness_ = (t_ - tPrev_) * radius_;
    ++age_;
  }
  double stiffness() const override { return stiffness_; }
  /// Gershgorin's bound on J's spectral radius, in the error weights'
  /// scaling.
  void boundRadius();
  /// Stage i's state y = x + sum_j a_j k_j into y_, then f there into fy_.
  bool stage(double t, std::initializer_list<std::pair<double, const Eigen::VectorXd *>> terms);

  /// f at (t_, x_) is in f_ (false after a step, until beginStep()).
  bool fCurrent_ = true;
  /// The system's Jacobian pattern (null: differences) and which of its
  /// parts are constant, asked for once.
  bool configured_ = false;
  const SparsePattern *pattern_ = nullptr;
  JacobianConstancy constancy_;
  /// J (and, when constant, T) in e_ holds until the next reset().
  bool kept_ = false;
  /// A nonlinear mode with the system's J: steps by the W-method
  /// ROS34PW2, with J and T kept over steps. held_: e_ has them; age_:
  /// steps accepted since they were evaluated; fresh_: at this step's
  /// start.
  bool wMethod_ = false, held_ = false, fresh_ = false;
  std::size_t age_ = 0;
  /// A J is kept for up to this many steps: halved from the age of one
  /// whose step was rejected, doubled (up to MaxJacobianAge) after one
  /// that served to its limit.
  std::size_t ageLimit_ = MaxJacobianAge;
  /// The length of the last pause from keeping J, and the steps left of
  /// the current one.
  std::size_t pause_ = 0, freshFor_ = 0;
  /// The last trial's step.
  double lastH_ = 0;
  /// The h gamma that E is factorised for; 0 when E is not factorised for
  /// the J in e_.
  double factorisedFor_ = 0;
  ImplicitMatrix e_;
  /// The Jacobian's values when only T is wanted of them.
  std::vector<double> spare_;
  std::vector<double> xPrev_, f_, xNew_, y_, fy_, scratch_;
  /// Dense output of the last accepted step and of the trial.
  std::vector<double> dense2_, dense3_, trial2_, trial3_;
  Eigen::VectorXd dfdt_, k_[6];
  /// The bound on J's spectral radius at the step's start, and h times it
  /// over the last accepted step.
  double radius_ = 0, stiffness_ = 0;
  std::vector<double> rowSum_, weights_;
};

void RosenbrockStepper::boundRadius() {
  // Of D^-1 J D with D the error weights: the same eigenvalues, and a
  // bound that does not depend on the states' units.
  rowSum_.assign(n_, 0.0);
  weights_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i)
    weights_[i] = std::max(weight(i, x_[i], x_[i]), std::numeric_limits<double>::min());
  if (!pattern_) {
    const Eigen::MatrixXd &jac = e_.dense();
    for (std::size_t j = 0; j < n_; ++j)
      for (std::size_t i = 0; i < n_; ++i)
        rowSum_[i] += std::abs(jac(Eigen::Index(i), Eigen::Index(j))) * weights_[j];
  } else {
    const std::vector<double> &values = e_.values();
    for (std::size_t j = 0; j < n_; ++j)
      for (std::uint32_t k = pattern_->colStart[j]; k < pattern_->colStart[j + 1]; ++k)
        rowSum_[pattern_->rows[k]] += std::abs(values[k]) * weights_[j];
  }
  radius_ = 0;
  for (std::size_t i = 0; i < n_; ++i)
    radius_ = std::max(radius_, rowSum_[i] / weights_[i]);
}

void RosenbrockStepper::reset(double t0, const double *x0) {
  start(t0, x0, f_);
  fCurrent_ = true;
  xPrev_ = x_;
  for (std::vector<double> *v : {&xNew_, &y_, &fy_, &scratch_})
    v->resize(n_);
  for (std::vector<double> *v : {&dense2_, &dense3_, &trial2_, &trial3_})
    v->assign(n_, 0.0);
  dfdt_.resize(Eigen::Index(n_));
  radius_ = stiffness_ = 0;
  if (!configured_) {
    configured_ = true;
    pattern_ = sys_.jacobianPattern();
    if (!pattern_ || !e_.useSparse(*pattern_, n_))
      e_.useDense(n_);
    if (pattern_)
      constancy_ = sys_.jacobianConstancy();
    wMethod_ = pattern_ && !constancy_.dfdx && opts_.keepJacobian;
    if (wMethod_)
      setOrder(3);
    if (constancy_.dfdx || wMethod_)
      holdGrowthUpTo_ = HoldGrowthUpTo;
  }
  // The parameters may have changed since the last step (an event, an
  // input): a constant J, or a kept one, is evaluated again.
  kept_ = held_ = fresh_ = false;
  factorisedFor_ = 0;
  startAdaptive();
}

bool RosenbrockStepper::beginStep(double h) {
  if (!fCurrent_) {
    if (!eval(t_, x_.data(), f_.data()))
      return false;
    fCurrent_ = true;
  }
  if (!pattern_) {
    if (!differenceJacobian(h))
      return false;
    factorisedFor_ = 0;
    boundRadius();
    return true;
  }
  if (held_ && freshFor_ > 0) {
    --freshFor_;
    held_ = false;
  }
  if (held_ && age_ < ageLimit_) {
    fresh_ = false;
    // df/dt is kept only when constant: a stiff row's df/dt (a fast RC
    // following its source) kept from an earlier step costs the W-method
    // its accuracy, as measured, where its J entries do not. Differenced
    // in t, it costs one evaluation of f rather than the Jacobian's.
    if (!constancy_.dfdt && !differenceDfdt(h))
      return false;
    boundRadius(); // the error weights have moved with x
    return true;
  }
  if (held_) { // served to its limit
    if (ageLimit_ > 1)
      pause_ = 0;
    ageLimit_ = std::min(MaxJacobianAge, 2 * ageLimit_);
  }
  if (kept_) {
    if (!constancy_.dfdt) { // T at the step's start, from the Jacobian's program
      spare_.resize(e_.values().size());
      ++jacobianCalls_;
      if (!sys_.jacobian(t_, x_.data(), spare_.data(), dfdt_.data())) {
        nonFinite_ = {NoState, false, t_, true};
        return false;
      }
      if (!differenceWhereNotFinite(h, spare_))
        return false;
    }
    boundRadius(); // the error weights have moved with x
    return true;
  }
  return evaluateJacobian(h);
}

bool RosenbrockStepper::evaluateJacobian(double h) {
  std::vector<double> &values = e_.values();
  ++jacobianCalls_;
  factorisedFor_ = 0;
  if (!sys_.jacobian(t_, x_.data(), values.data(), dfdt_.data())) {
    nonFinite_ = {NoState, false, t_, true}; // could not be evaluated
    return false;
  }
  // Kept only as the system gave it: a column or T differenced at this x
  // is not constant.
  kept_ = constancy_.dfdx && dfdt_.allFinite() &&
          std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
  // A symbolic derivative can be infinite where f is not (sqrt at 0):
  // those columns, and df/dt, are differenced instead; still not finite,
  // the step fails naming the first row (state derivative) affected.
  if (!differenceWhereNotFinite(h, values))
    return false;
  if (!e_.isSparse()) {
    Eigen::MatrixXd &jac = e_.dense();
    jac.setZero();
    for (std::size_t j = 0; j < n_; ++j)
      for (std::uint32_t k = pattern_->colStart[j]; k < pattern_->colStart[j + 1]; ++k)
        jac(Eigen::Index(pattern_->rows[k]), Eigen::Index(j)) = values[k];
  }
  held_ = fresh_ = wMethod_;
  age_ = 0;
  boundRadius();
  return true;
}

bool RosenbrockStepper::differenceWhereNotFinite(double h, std::vector<double> &values) {
  const double root = std::sqrt(std::numeric_limits<double>::epsilon());
  std::size_t bad = NoState;
  for (std::size_t j = 0; j < n_; ++j) {
    bool finite = true;
    for (std::uint32_t k = pattern_->colStart[j]; k < pattern_->colStart[j + 1]; ++k)
      finite = finite && std::isfinite(values[k]);
    if (finite)
      continue;
    y_ = x_;
    double delta = root * differenceScale(j);
    y_[j] = x_[j] + delta;
    delta = y_[j] - x_[j];
    if (!eval(t_, y_.data(), scratch_.data())) {
      bad = std::min(bad, nonFinite_.index);
      continue;
    }
    for (std::uint32_t k = pattern_->colStart[j]; k < pattern_->colStart[j + 1]; ++k) {
      values[k] = (scratch_[pattern_->rows[k]] - f_[pattern_->rows[k]]) / delta;
      if (!std::isfinite(values[k]))
        bad = std::min<std::size_t>(bad, pattern_->rows[k]);
    }
  }
  if (!dfdt_.allFinite()) {
    double dt = root * std::max(std::abs(t_), h);
    if (!eval(t_ + dt, x_.data(), scratch_.data()))
      bad = std::min(bad, nonFinite_.index);
    for (std::size_t i = 0; i < n_ && bad == NoState; ++i) {
      dfdt_(Eigen::Index(i)) = (scratch_[i] - f_[i]) / dt;
      if (!std::isfinite(dfdt_(Eigen::Index(i))))
        bad = std::min(bad, i);
    }
  }
  if (bad != NoState) {
    nonFinite_ = {bad, true, t_, true};
    return false;
  }
  return true;
}

double RosenbrockStepper::differenceScale(std::size_t j) const {
  // A step of sqrt(eps) relative to the state's scale; a state with no
  // scale yet (zero, no nominal, no floor) takes 1e-5 as Hairer and
  // Wanner's codes do.
  double scale = std::max({std::abs(x_[j]), nominal_[j], opts_.atol});
  return scale > 0 ? scale : 1e-5;
}

bool RosenbrockStepper::differenceDfdt(double h) {
  const double root = std::sqrt(std::numeric_limits<double>::epsilon());
  double dt = root * std::max(std::abs(t_), h);
  if (!eval(t_ + dt, x_.data(), scratch_.data()))
    return false;
  for (std::size_t i = 0; i < n_; ++i)
    dfdt_(Eigen::Index(i)) = (scratch_[i] - f_[i]) / dt;
  return true;
}

bool RosenbrockStepper::differenceJacobian(double h) {
  const double root = std::sqrt(std::numeric_limits<double>::epsilon());
  Eigen::MatrixXd &jac = e_.dense();
  y_ = x_;
  for (std::size_t j = 0; j < n_; ++j) {
    double delta = root * differenceScale(j);
    y_[j] = x_[j] + delta;
    delta = y_[j] - x_[j]; // exactly representable
    if (!eval(t_, y_.data(), scratch_.data()))
      return false;
    for (std::size_t i = 0; i < n_; ++i)
      jac(Eigen::Index(i), Eigen::Index(j)) = (scratch_[i] - f_[i]) / delta;
    y_[j] = x_[j];
  }
  return differenceDfdt(h);
}

bool RosenbrockStepper::stage(double t,
                              std::initializer_list<std::pair<double, const Eigen::VectorXd *>> terms) {
  for (std::size_t i = 0; i < n_; ++i) {
    double y = x_[i];
    for (const auto &[a, k] : terms)
      y += a * (*k)(Eigen::Index(i));
    y_[i] = y;
  }
  return eval(t, y_.data(), fy_.data());
}

double RosenbrockStepper::trial(double h, double tNew) {
  lastH_ = h;
  const double gamma = wMethod_ ? w::Gamma : Gamma;
  if (h * gamma < 1e-300) {
    // A sliver of a step, landing on a time event a few ulps away (a
    // comparison of time touching its threshold at t = 0): 1 / (h gamma)
    // would overflow. At this size the step is x + h f, exact in
    // rounding, with a linear dense output.
    for (std::size_t i = 0; i < n_; ++i) {
      xNew_[i] = x_[i] + h * f_[i];
      err_[i] = 0;
      trial2_[i] = trial3_[i] = 0;
    }
    if (!checkState(tNew, xNew_))
      return -1;
    return errorNorm(xNew_);
  }
  if (h * gamma != factorisedFor_) {
    factorisedFor_ = 0;
    if (!e_.factorise(h * gamma)) {
      nonFinite_ = {NoState, true, t_, true};
      return -1;
    }
    factorisedFor_ = h * gamma;
    ++factorisations_;
  }
  if (!(wMethod_ ? stagesW(h, tNew) : stagesRodas4(h, tNew)))
    return -1;
  if (!checkState(tNew, xNew_))
    return -1;
  double norm = errorNorm(xNew_);
  if (!(norm <= 1))
    return norm;
  return denseErrorNorm(h, norm);
}

bool RosenbrockStepper::finiteStages(int count, double tNew) {
  for (int s = 0; s < count; ++s)
    for (std::size_t i = 0; i < n_; ++i)
      if (!std::isfinite(k_[s](Eigen::Index(i)))) {
        nonFinite_ = {i, false, tNew};
        return false;
      }
  return true;
}

bool RosenbrockStepper::openingStages(const Opening &m, double h) {
  Eigen::Index n = Eigen::Index(n_);
  Eigen::Map<const Eigen::VectorXd> f0(f_.data(), n), fy(fy_.data(), n);
  Eigen::VectorXd *k = k_;
  const double hd = h;
  // Stage i: k_i = E \ (f(t + c_i h, x + sum a_ij k_j) + sum (c_ij / h) k_j
  // + h d_i df/dt).
  k[0] = f0 + (hd * m.d1) * dfdt_;
  e_.solve(k[0]);
  if (!stage(t_ + m.c2 * h, {{m.a21, &k[0]}}))
    return false;
  k[1] = fy + (m.c21 / h) * k[0] + (hd * m.d2) * dfdt_;
  e_.solve(k[1]);
  if (!stage(t_ + m.c3 * h, {{m.a31, &k[0]}, {m.a32, &k[1]}}))
    return false;
  k[2] = fy + (m.c31 / h) * k[0] + (m.c32 / h) * k[1] + (hd * m.d3) * dfdt_;
  e_.solve(k[2]);
  return true;
}

bool RosenbrockStepper::stagesRodas4(double h, double tNew) {
  Eigen::Index n = Eigen::Index(n_);
  Eigen::Map<const Eigen::VectorXd> fy(fy_.data(), n);
  Eigen::VectorXd *k = k_;
  const double hd = h;
  if (!openingStages(Rodas4Opening, h))
    return false;
  if (!stage(t_ + C4 * h, {{A41, &k[0]}, {A42, &k[1]}, {A43, &k[2]}}))
    return false;
  k[3] = fy + (C41 / h) * k[0] + (C42 / h) * k[1] + (C43 / h) * k[2] + (hd * D4) * dfdt_;
  e_.solve(k[3]);
  if (!stage(tNew, {{A51, &k[0]}, {A52, &k[1]}, {A53, &k[2]}, {A54, &k[3]}}))
    return false;
  k[4] = fy + (C51 / h) * k[0] + (C52 / h) * k[1] + (C53 / h) * k[2] + (C54 / h) * k[3];
  e_.solve(k[4]);
  // Stiffly accurate: the last two stages sit at the step's end.
  if (!stage(tNew, {{A51, &k[0]}, {A52, &k[1]}, {A53, &k[2]}, {A54, &k[3]}, {1.0, &k[4]}}))
    return false;
  k[5] = fy + (C61 / h) * k[0] + (C62 / h) * k[1] + (C63 / h) * k[2] + (C64 / h) * k[3] +
         (C65 / h) * k[4];
  e_.solve(k[5]);
  if (!finiteStages(6, tNew))
    return false;
  for (std::size_t i = 0; i < n_; ++i) {
    Eigen::Index r = Eigen::Index(i);
    xNew_[i] = y_[i] + k[5](r);
    err_[i] = k[5](r);
    double d2 = 0, d3 = 0;
    for (int s = 0; s < 5; ++s) {
      d2 += Dense2[s] * k[s](r);
      d3 += Dense3[s] * k[s](r);
    }
    trial2_[i] = d2;
    trial3_[i] = d3;
  }
  return true;
}

bool RosenbrockStepper::stagesW(double h, double tNew) {
  Eigen::Map<const Eigen::VectorXd> fy(fy_.data(), Eigen::Index(n_));
  Eigen::VectorXd *k = k_;
  // As RODAS4's stages, with E = I / (h gamma) - W for the kept J, and
  // the last stage's df/dt weight zero.
  if (!openingStages(WOpening, h))
    return false;
  // Stiffly accurate: the last stage sits at the step's end.
  if (!stage(tNew, {{w::A41, &k[0]}, {w::A42, &k[1]}, {w::A43, &k[2]}}))
    return false;
  k[3] = fy + (w::C41 / h) * k[0] + (w::C42 / h) * k[1] + (w::C43 / h) * k[2];
  e_.solve(k[3]);
  if (!finiteStages(4, tNew))
    return false;
  for (std::size_t i = 0; i < n_; ++i) {
    Eigen::Index r = Eigen::Index(i);
    xNew_[i] = y_[i] + k[3](r);
    double e = 0, d2 = 0;
    for (int s = 0; s < 4; ++s) {
      e += w::Err[s] * k[s](r);
      d2 += w::Dense[s] * k[s](r);
    }
    err_[i] = e;
    trial2_[i] = d2;
    trial3_[i] = 0;
  }
  return true;
}

double RosenbrockStepper::denseErrorNorm(double h, double stepNorm) {
  // The dense output's error is estimated from its defect at two points
  // inside the step: with p the dense output, d = p' - f(t, p) there, and
  // the error e = E^-1 d. For a non-stiff component E^-1 is about h gamma
  // (the defect over a part of the step); for a stiff one about -J^-1,
  // and e = -J^-1 d is the error itself (the component follows the slow
  // manifold, so its error is where the defect balances J e). Two points
  // tell both shapes an interpolation error of a cubic takes, s (1 - s)
  // (a + b s), apart; one would miss the antisymmetric one, which stiff
  // forced components show (the dense output loses order there).
  constexpr double Points[2] = {0.25, 0.75};
  Eigen::Index n = Eigen::Index(n_);
  Eigen::VectorXd &defect = k_[0];
  Eigen::Map<const Eigen::VectorXd> fy(fy_.data(), n);
  for (double s : Points) {
    // p(s) = x0 + s (x1 - x0) + s (1 - s) D2 + s^2 (1 - s) D3, and dp/ds.
    for (std::size_t i = 0; i < n_; ++i) {
      double dx = xNew_[i] - x_[i];
      y_[i] = x_[i] + s * (dx + (1 - s) * (trial2_[i] + s * trial3_[i]));
      defect(Eigen::Index(i)) =
          (dx + (1 - 2 * s) * trial2_[i] + s * (2 - 3 * s) * trial3_[i]) / h;
    }
    if (!eval(t_ + s * h, y_.data(), fy_.data()))
      return -1;
    defect -= fy;
    e_.solve(defect);
    for (std::size_t i = 0; i < n_; ++i) {
      double e = defect(Eigen::Index(i));
      if (!std::isfinite(e)) {
        nonFinite_ = {i, false, t_ + s * h};
        return -1;
      }
      err_[i] = std::max(std::abs(err_[i]), std::abs(e));
    }
  }
  return std::max(stepNorm, errorNorm(xNew_));
}

} // namespace

std::unique_ptr<Stepper> makeRosenbrockStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  return std::make_unique<RosenbrockStepper>(sys, opts);
}

} // namespace hbg::runtime
