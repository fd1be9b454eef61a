//===- runtime/Newton.cpp - Newton's method for algebraic loops -----------===//

#include "hbg/runtime/Newton.h"

#include <Eigen/Dense>

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

NewtonResult newtonSolve(std::size_t m,
                         const std::function<void(const double *z, double *r)> &residual,
                         const std::function<void(const double *z, double *jac)> &jacobian,
                         double *z, const NewtonOptions &opts) {
  using Vec = Eigen::VectorXd;
  NewtonResult result;
  Eigen::Map<Vec> zv(z, static_cast<Eigen::Index>(m));
  Vec r(m), trialR(m), trial(m), dz(m), tol(m);
  Eigen::MatrixXd jac(m, m);

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
    jacobian(z, jac.data());
    if (!jac.allFinite())
      return fail(NewtonStatus::NonFinite);
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
    } else {
      dz = lu.solve(-r);
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
    bool converged = (dz.cwiseAbs().array() <= tol.array()).all() &&
                     (r.cwiseAbs().array() <= (jac.cwiseAbs() * tol).array()).all();
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
    zv = trial;
    r = trialR;
    norm = trialNorm;
    if (norm == 0) {
      ++result.iterations;
      result.residualNorm = 0;
      return result;
    }
  }
  return fail(NewtonStatus::NotConverged);
}

} // namespace hbg::runtime
