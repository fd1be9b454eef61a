//===- hbg/runtime/Newton.h - Newton's method for algebraic loops ---------===//
//
// Nonlinear algebraic loops are solved at run time on their tearing
// variables: r(z) = 0 with the generated residual and symbolic Jacobian,
// warm-started from the previous solution. Steps are damped (halved until
// the residual norm decreases) so a poor start does not throw z far away.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace hbg::runtime {

/// Settings of newtonSolve.
struct NewtonOptions {
  /// Converged when every |dz_i| <= atol + rtol |z_i| and the residual is small.
  double rtol = 1e-12;
  double atol = 1e-12;
  int maxIterations = 50;
};

/// How newtonSolve ended.
enum class NewtonStatus { Converged, NotConverged, SingularJacobian, NonFinite };

/// What newtonSolve did.
struct NewtonResult {
  NewtonStatus status = NewtonStatus::Converged;
  int iterations = 0;
  double residualNorm = 0;
  bool ok() const { return status == NewtonStatus::Converged; }
};

/// Readable reason ("did not converge in 50 iterations", ...).
std::string describe(const NewtonResult &r);

/// Solves r(z) = 0 for m unknowns. `residual(z, r)` writes m values;
/// `jacobian(z, J)` writes the m x m Jacobian column-major. `z` holds the
/// start on entry and the solution (or the last iterate) on return.
NewtonResult newtonSolve(std::size_t m,
                         const std::function<void(const double *z, double *r)> &residual,
                         const std::function<void(const double *z, double *jac)> &jacobian,
                         double *z, const NewtonOptions &opts = {});

} // namespace hbg::runtime
