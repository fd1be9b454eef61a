//===- runtime/Newton.cpp - Newton's method for algebraic loops -----------===//

#include "hbg/runtime/Newton.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hbg::runtime {

std::string describe(const NewtonResult &r) {
  switch (r.status) {
  case NewtonStatus::Converged:
    return "converged in " + std::to_string(r.iterations) + " iterations";
  case NewtonStatus::NotConverged:
  {
    char residual[32];
    std::snprintf(residual, sizeof residual, "%.3g", r.residualNorm);
    return "Newton's method did not converge in " + std::to_string(r.iterations) +
           " iterations (residual " + residual + ")";
  }
  case NewtonStatus::SingularJacobian:
    return "the loop's Jacobian is singular";
  case NewtonStatus::NonFinite:
    return "the loop's residual is not finite";
  }
  return "";
}

NewtonResult newtonSolve(std::size_t m,
                         const std::function<void(const double *z, double *r)> &residual,
                         const std::function<void(const double *z, double *jac)> &jacobian,
                         double *z, const NewtonOptions &opts) {
  using Vec = Eigen::VectorXd;
  NewtonResult result;
  Eigen::Map<Vec> zv(z, static_cast<Eigen::Index>(m));
  Vec r(m), trialR(m), trial(m), dz(m);
  Eigen::MatrixXd jac(m, m);

  residual(z, r.data());
  if (!r.allFinite()) {
    result.status = NewtonStatus::NonFinite;
    return result;
  }
  double norm = r.lpNorm<Eigen::Infinity>();
  if (norm == 0) // already a solution (a warm start, or z = 0 itself)
    return result;
  bool perturbed = false;
  for (result.iterations = 0; result.iterations < opts.maxIterations; ++result.iterations) {
    jacobian(z, jac.data());
    if (!jac.allFinite()) {
      result.status = NewtonStatus::NonFinite;
      result.residualNorm = norm;
      return result;
    }
    Eigen::PartialPivLU<Eigen::MatrixXd> lu(jac);
    // PartialPivLU does not report singularity. A Jacobian singular at one
    // point (e^3 = p at e = 0) is regularised, Levenberg-Marquardt style,
    // so that the step still moves towards a root.
    double scale = std::max(1.0, jac.cwiseAbs().maxCoeff());
    if (!(lu.matrixLU().diagonal().cwiseAbs().minCoeff() > 1e-12 * scale)) {
      Eigen::MatrixXd damped = jac.transpose() * jac;
      damped.diagonal().array() += 1e-8 * scale * scale;
      dz = damped.ldlt().solve(-(jac.transpose() * r));
      if (!dz.allFinite() || dz.lpNorm<Eigen::Infinity>() == 0) {
        // A flat point (the Jacobian vanishes, as d(e^3)/de at e = 0): step
        // off it once and try again.
        if (perturbed) {
          result.status = NewtonStatus::SingularJacobian;
          result.residualNorm = norm;
          return result;
        }
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
    } else {
      dz = lu.solve(-r);
    }
    // Damping: halve the step until the residual decreases. Exponential
    // laws (diodes) can need many halvings from a cold start: a full step
    // may overflow exp() by hundreds of orders of magnitude.
    double lambda = 1;
    double trialNorm = 0;
    for (int k = 0; k < 40; ++k, lambda /= 2) {
      trial = zv + lambda * dz;
      residual(trial.data(), trialR.data());
      trialNorm = trialR.allFinite() ? trialR.lpNorm<Eigen::Infinity>() : INFINITY;
      if (trialNorm < norm || trialNorm == 0)
        break;
    }
    if (!std::isfinite(trialNorm)) {
      result.status = NewtonStatus::NonFinite;
      result.residualNorm = norm;
      return result;
    }
    bool small = true;
    for (std::size_t i = 0; i < m; ++i)
      small &= std::fabs(lambda * dz[i]) <= opts.atol + opts.rtol * std::fabs(trial[i]);
    zv = trial;
    r = trialR;
    norm = trialNorm;
    if (small || norm == 0) {
      ++result.iterations;
      result.residualNorm = norm;
      return result;
    }
  }
  result.status = NewtonStatus::NotConverged;
  result.residualNorm = norm;
  return result;
}

} // namespace hbg::runtime
