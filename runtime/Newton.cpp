//===- runtime/Newton.cpp - Newton's method for algebraic loops -----------===//

#include "hbg/runtime/Newton.h"

#include <Eigen/Dense>
#include <klu.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hbg::runtime {

namespace {
std::string formatResidual(double norm) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", norm);
  return text;
}
} // namespace

std::string describe(const NewtonResult &r) {
  switch (r.status) {
  case NewtonStatus::Converged:
    return "converged in " + std::to_string(r.iterations) + " iterations";
  case NewtonStatus::NotConverged:
    return "Newton's method did not converge in " + std::to_string(r.iterations) +
           " iterations (residual " + formatResidual(r.residualNorm) + ")";
  case NewtonStatus::Stalled:
    return "Newton's method stalled (residual " + formatResidual(r.residualNorm) + ")";
  case NewtonStatus::SingularJacobian:
    return "the loop's Jacobian is singular";
  case NewtonStatus::NonFinite:
    return "the loop's residual is not finite";
  }
  return "";
}

namespace {

using Vec = Eigen::VectorXd;

/// What an iteration of Newton's method needs of the loop's Jacobian J.
class Linearisation {
public:
  virtual ~Linearisation() = default;
  /// Evaluates J at z; false when an entry is not finite.
  virtual bool evaluate(const double *z) = 0;
  /// The step dz for the residual r: J dz = -r, or a regularised step
  /// where J is (nearly) singular. False when there is no usable step
  /// (J vanishes, or the step is zero or not finite).
  virtual bool step(const Vec &r, Vec &dz) = 0;
  /// out = |J| tol, the residual that moving each unknown by its
  /// tolerance could produce.
  virtual void absTimes(const Vec &tol, Vec &out) const = 0;
};

/// J as a dense matrix, LU with partial pivoting.
class DenseLinearisation final : public Linearisation {
public:
  DenseLinearisation(std::size_t m, const std::function<void(const double *, double *)> &jacobian)
      : jacobian_(jacobian), jac_(Eigen::Index(m), Eigen::Index(m)) {}
  bool evaluate(const double *z) override {
    jacobian_(z, jac_.data());
    return jac_.allFinite();
  }
  bool step(const Vec &r, Vec &dz) override {
    Eigen::PartialPivLU<Eigen::MatrixXd> lu(jac_);
    // PartialPivLU does not report singularity. A Jacobian singular at one
    // point (e^3 = p at e = 0) is regularised, Levenberg-Marquardt style,
    // so that the step still moves towards a root.
    double scale = std::max(1.0, jac_.cwiseAbs().maxCoeff());
    if (lu.matrixLU().diagonal().cwiseAbs().minCoeff() > 1e-12 * scale) {
      dz = lu.solve(-r);
      return true;
    }
    Eigen::MatrixXd damped = jac_.transpose() * jac_;
    damped.diagonal().array() += 1e-8 * scale * scale;
    dz = damped.ldlt().solve(-(jac_.transpose() * r));
    return dz.allFinite() && dz.lpNorm<Eigen::Infinity>() != 0;
  }
  void absTimes(const Vec &tol, Vec &out) const override { out = jac_.cwiseAbs() * tol; }

private:
  /// Held by value: callers may pass a lambda, converted to a temporary.
  std::function<void(const double *, double *)> jacobian_;
  Eigen::MatrixXd jac_;
};

/// J over a LoopSolver's sparse pattern, factorised by the solver.
class SparseLinearisation final : public Linearisation {
public:
  SparseLinearisation(LoopSolver &solver, const SparsePattern &pattern,
                      const std::function<void(const double *, double *)> &jacobian,
                      std::vector<double> &values)
      : solver_(solver), pattern_(pattern), jacobian_(jacobian), values_(values) {
    values_.resize(pattern.nonZeros());
  }
  bool evaluate(const double *z) override {
    jacobian_(z, values_.data());
    return std::all_of(values_.begin(), values_.end(), [](double v) { return std::isfinite(v); });
  }
  bool step(const Vec &r, Vec &dz) override {
    if (!solver_.factorize(values_.data()))
      return false;
    dz = -r;
    solver_.solveInPlace(dz.data(), 1);
    return dz.allFinite() && dz.lpNorm<Eigen::Infinity>() != 0;
  }
  void absTimes(const Vec &tol, Vec &out) const override {
    out.setZero(tol.size());
    for (std::size_t j = 0; j + 1 < pattern_.colStart.size(); ++j)
      for (std::uint32_t k = pattern_.colStart[j]; k < pattern_.colStart[j + 1]; ++k)
        out[pattern_.rows[k]] += std::fabs(values_[k]) * tol[Eigen::Index(j)];
  }

private:
  LoopSolver &solver_;
  const SparsePattern &pattern_;
  std::function<void(const double *, double *)> jacobian_; ///< by value, as above
  std::vector<double> &values_;
};

NewtonResult newton(std::size_t m, const std::function<void(const double *z, double *r)> &residual,
                    Linearisation &jac, double *z, const NewtonOptions &opts) {
  NewtonResult result;
  Eigen::Map<Vec> zv(z, static_cast<Eigen::Index>(m));
  Vec r(m), trialR(m), trial(m), dz(m), tol(m), bound(m);

  residual(z, r.data());
  if (!r.allFinite()) {
    result.status = NewtonStatus::NonFinite;
    return result;
  }
  double norm = r.lpNorm<Eigen::Infinity>();
  if (norm == 0) // already a solution (a warm start, or z = 0 itself)
    return result;
  auto fail = [&](NewtonStatus status) {
    result.status = status;
    result.residualNorm = norm;
    return result;
  };
  bool perturbed = false;
  for (result.iterations = 0; result.iterations < opts.maxIterations; ++result.iterations) {
    if (!jac.evaluate(z))
      return fail(NewtonStatus::NonFinite);
    if (!jac.step(r, dz)) {
      // A flat point (the Jacobian vanishes, as d(e^3)/de at e = 0): step
      // off it once and try again.
      if (perturbed)
        return fail(NewtonStatus::SingularJacobian);
      perturbed = true;
      for (std::size_t i = 0; i < m; ++i)
        z[i] += 1e-6 * std::max(1.0, std::fabs(z[i]));
      residual(z, r.data());
      if (!r.allFinite()) {
        result.status = NewtonStatus::NonFinite;
        return result;
      }
      norm = r.lpNorm<Eigen::Infinity>();
      continue;
    }

    // Converged when the full step, the linear estimate of the distance to
    // the root, is within tolerance, and the residual is no larger than
    // what moving every unknown by its tolerance could change it by,
    // |r_i| <= sum_j |J_ij| tol_j. For an exact Newton step (r = -J dz) the
    // second test follows from the first; it is there for regularised
    // steps, which are short because J is nearly singular, not because z
    // is near a root: on the flat side of an exponential the step is
    // smaller than the last bit of z while the residual is as large as
    // ever. Both tests are made before the step is damped: a damped step is
    // short because the line search shortened it, which says nothing about
    // the distance to the root.
    for (std::size_t i = 0; i < m; ++i)
      tol[i] = opts.atol + opts.rtol * std::fabs(z[i]);
    jac.absTimes(tol, bound);
    bool converged = (dz.cwiseAbs().array() <= tol.array()).all() &&
                     (r.cwiseAbs().array() <= bound.array()).all();
    if (converged) {
      // Take the last step too, unless rounding makes it worse: it costs one
      // residual and gains the digits of quadratic convergence.
      trial = zv + dz;
      residual(trial.data(), trialR.data());
      if (trialR.allFinite() && trialR.lpNorm<Eigen::Infinity>() <= norm) {
        zv = trial;
        norm = trialR.lpNorm<Eigen::Infinity>();
      }
      ++result.iterations;
      result.residualNorm = norm;
      return result;
    }

    // Damping: halve the step until the residual decreases. Exponential
    // laws (diodes) can need many halvings from a cold start: a full step
    // may overflow exp() by hundreds of orders of magnitude.
    double lambda = 1;
    double trialNorm = 0;
    bool decreased = false;
    for (int k = 0; k < 40 && !decreased; ++k, lambda /= 2) {
      trial = zv + lambda * dz;
      residual(trial.data(), trialR.data());
      trialNorm = trialR.allFinite() ? trialR.lpNorm<Eigen::Infinity>() : INFINITY;
      decreased = trialNorm < norm;
    }
    if (!decreased) {
      // No step along dz, down to 2^-39 of it, lowers the residual, and z
      // is not within tolerance of a root: going on would only repeat this.
      ++result.iterations;
      return fail(std::isfinite(trialNorm) ? NewtonStatus::Stalled : NewtonStatus::NonFinite);
    }
    bool full = lambda == 0.5; // the loop halved once after the full step
    zv = trial;
    r = trialR;
    norm = trialNorm;
    if (norm == 0) {
      ++result.iterations;
      result.residualNorm = 0;
      return result;
    }
    if (opts.linear && full) {
      // r is linear in z: the full step solved J dz = -r exactly, so what
      // remains is rounding. Accepted when it is no larger than moving each
      // unknown by its tolerance would make it (J is constant, so the
      // bound uses the same |J|); otherwise the next step refines.
      for (std::size_t i = 0; i < m; ++i)
        tol[i] = opts.atol + opts.rtol * std::fabs(z[i]);
      jac.absTimes(tol, bound);
      if ((r.cwiseAbs().array() <= bound.array()).all()) {
        ++result.iterations;
        result.residualNorm = norm;
        return result;
      }
    }
  }
  return fail(NewtonStatus::NotConverged);
}

} // namespace

NewtonResult newtonSolve(std::size_t m,
                         const std::function<void(const double *z, double *r)> &residual,
                         const std::function<void(const double *z, double *jac)> &jacobian,
                         double *z, const NewtonOptions &opts) {
  DenseLinearisation jac(m, jacobian);
  return newton(m, residual, jac, z, opts);
}

struct LoopSolver::Impl {
  SparsePattern pattern;
  std::size_t m = 0;
  bool dense = true;
  /// The values last factorised, to reuse the factorisation when J has
  /// not changed (a loop whose matrix depends on parameters only).
  std::vector<double> factored;
  bool valid = false;
  std::size_t factorisations = 0;
  Eigen::MatrixXd denseMatrix;
  Eigen::PartialPivLU<Eigen::MatrixXd> denseLu;
  std::vector<double> values; ///< Newton's Jacobian values
  std::vector<double> residual, bound, step; ///< solveLinear's
  /// Large loops: KLU's analysis (its ordering, kept for every
  /// factorisation) and factors, over the pattern as int arrays.
  std::vector<int> ap, ai;
  klu_common common;
  klu_symbolic *symbolic = nullptr;
  klu_numeric *numeric = nullptr;
  ~Impl() {
    if (numeric)
      klu_free_numeric(&numeric, &common);
    if (symbolic)
      klu_free_symbolic(&symbolic, &common);
  }
};

LoopSolver::LoopSolver(SparsePattern pattern, bool linear) : impl_(std::make_unique<Impl>()) {
  Impl &s = *impl_;
  s.m = pattern.colStart.empty() ? 0 : pattern.colStart.size() - 1;
  s.dense = !linear && s.m <= kDenseMax;
  s.pattern = std::move(pattern);
  if (s.dense) {
    s.denseMatrix = Eigen::MatrixXd::Zero(Eigen::Index(s.m), Eigen::Index(s.m));
    return;
  }
  klu_defaults(&s.common);
  s.ap.assign(s.pattern.colStart.begin(), s.pattern.colStart.end());
  s.ai.assign(s.pattern.rows.begin(), s.pattern.rows.end());
  s.symbolic = klu_analyze(int(s.m), s.ap.data(), s.ai.data(), &s.common);
}

LoopSolver::~LoopSolver() = default;

std::size_t LoopSolver::factorisations() const { return impl_->factorisations; }

bool LoopSolver::factorize(const double *values) {
  Impl &s = *impl_;
  std::size_t nnz = s.pattern.nonZeros();
  if (s.valid && std::equal(values, values + nnz, s.factored.begin()))
    return true;
  s.factored.assign(values, values + nnz);
  s.valid = false;
  ++s.factorisations;
  if (s.dense) {
    s.denseMatrix.setZero();
    for (std::size_t j = 0; j < s.m; ++j)
      for (std::uint32_t k = s.pattern.colStart[j]; k < s.pattern.colStart[j + 1]; ++k)
        s.denseMatrix(Eigen::Index(s.pattern.rows[k]), Eigen::Index(j)) = values[k];
    s.denseLu.compute(s.denseMatrix);
    double scale = std::max(1.0, s.denseMatrix.cwiseAbs().maxCoeff());
    s.valid = s.denseLu.matrixLU().diagonal().cwiseAbs().minCoeff() > 1e-14 * scale;
    return s.valid;
  }
  if (!s.symbolic)
    return false;
  if (s.numeric)
    klu_free_numeric(&s.numeric, &s.common);
  // KLU reads the values and does not write them.
  s.numeric = klu_factor(s.ap.data(), s.ai.data(), const_cast<double *>(values), s.symbolic,
                         &s.common);
  s.valid = s.numeric != nullptr && s.common.status == KLU_OK;
  return s.valid;
}

void LoopSolver::solveInPlace(double *b, std::size_t k) {
  Impl &s = *impl_;
  if (s.dense) {
    Eigen::Map<Eigen::MatrixXd> rhs(b, Eigen::Index(s.m), Eigen::Index(k));
    rhs = s.denseLu.solve(rhs).eval();
  } else {
    klu_solve(s.symbolic, s.numeric, int(s.m), int(k), b, &s.common);
  }
}

NewtonResult LoopSolver::solveLinear(const double *values, const double *r0, double *z,
                                     const NewtonOptions &opts) {
  Impl &s = *impl_;
  NewtonResult result;
  if (!factorize(values)) {
    result.status = NewtonStatus::SingularJacobian;
    return result;
  }
  const SparsePattern &pattern = s.pattern;
  s.residual.resize(s.m);
  s.bound.resize(s.m);
  s.step.resize(s.m);
  for (std::size_t i = 0; i < s.m; ++i)
    z[i] = -r0[i];
  solveInPlace(z, 1);
  for (result.iterations = 1;; ++result.iterations) {
    // r = J z + r0, and the bound sum_j |J_ij| tol_j.
    std::copy(r0, r0 + s.m, s.residual.begin());
    std::fill(s.bound.begin(), s.bound.end(), 0.0);
    for (std::size_t j = 0; j < s.m; ++j) {
      double tol = opts.atol + opts.rtol * std::fabs(z[j]);
      for (std::uint32_t k = pattern.colStart[j]; k < pattern.colStart[j + 1]; ++k) {
        s.residual[pattern.rows[k]] += values[k] * z[j];
        s.bound[pattern.rows[k]] += std::fabs(values[k]) * tol;
      }
    }
    double norm = 0;
    bool within = true;
    for (std::size_t i = 0; i < s.m; ++i) {
      if (!std::isfinite(s.residual[i])) {
        result.status = NewtonStatus::NonFinite;
        return result;
      }
      norm = std::max(norm, std::fabs(s.residual[i]));
      within = within && std::fabs(s.residual[i]) <= s.bound[i];
    }
    result.residualNorm = norm;
    if (within)
      return result;
    if (result.iterations > 3) {
      result.status = NewtonStatus::NotConverged;
      return result;
    }
    // Refine: J d = -r, z += d.
    for (std::size_t i = 0; i < s.m; ++i)
      s.step[i] = -s.residual[i];
    solveInPlace(s.step.data(), 1);
    for (std::size_t i = 0; i < s.m; ++i)
      z[i] += s.step[i];
  }
}

NewtonResult LoopSolver::solve(const std::function<void(const double *z, double *r)> &residual,
                               const std::function<void(const double *z, double *values)> &jacobian,
                               double *z, const NewtonOptions &opts) {
  Impl &s = *impl_;
  if (s.dense) {
    // Small loops: the dense iteration, regularised where J is singular.
    auto dense = [&](const double *zz, double *jac) {
      s.values.resize(s.pattern.nonZeros());
      jacobian(zz, s.values.data());
      std::fill(jac, jac + s.m * s.m, 0.0);
      for (std::size_t j = 0; j < s.m; ++j)
        for (std::uint32_t k = s.pattern.colStart[j]; k < s.pattern.colStart[j + 1]; ++k)
          jac[j * s.m + s.pattern.rows[k]] = s.values[k];
    };
    DenseLinearisation jac(s.m, dense);
    return newton(s.m, residual, jac, z, opts);
  }
  SparseLinearisation jac(*this, s.pattern, jacobian, s.values);
  return newton(s.m, residual, jac, z, opts);
}

} // namespace hbg::runtime
