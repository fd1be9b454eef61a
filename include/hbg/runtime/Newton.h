//===- hbg/runtime/Newton.h - Newton's method for algebraic loops ---------===//
//
// Nonlinear algebraic loops are solved at run time on their tearing
// variables: r(z) = 0 with the generated residual and symbolic Jacobian,
// warm-started from the previous solution. Steps are damped (halved until
// the residual norm decreases) so a poor start does not throw z far away.
// Convergence is judged on the undamped step and the residual, never on how
// far a damped step moved: a point where the damping leaves z in place is a
// failure, not a root.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Integrator.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace hbg::runtime {

/// Settings of newtonSolve.
struct NewtonOptions {
  /// Converged when the undamped step has every |dz_i| <= tol_i = atol +
  /// rtol |z_i| and every |r_i| <= sum_j |J_ij| tol_j.
  double rtol = 1e-12;
  /// The absolute part of the tolerance, for unknowns near zero.
  double atol = 1e-12;
  /// Jacobians evaluated (steps tried) before giving up.
  int maxIterations = 50;
  /// The residual is linear in z (only linear loops): a full step whose
  /// residual is within |r_i| <= sum_j |J_ij| tol_j ends the iteration
  /// without a second Jacobian.
  bool linear = false;
};

/// How newtonSolve ended. `Stalled`: no damped step lowers the residual,
/// which is still too large for a root (a flat region, or rounding noise
/// above the tolerance).
enum class NewtonStatus { Converged, NotConverged, Stalled, SingularJacobian, NonFinite };

/// What newtonSolve did.
struct NewtonResult {
  NewtonStatus status = NewtonStatus::Converged;
  int iterations = 0;
  double residualNorm = 0;
  bool ok() const { return status == NewtonStatus::Converged; }
};

/// Readable reason ("did not converge in 50 iterations", "stalled", ...).
std::string describe(const NewtonResult &r);

/// Solves r(z) = 0 for m unknowns. `residual(z, r)` writes m values;
/// `jacobian(z, J)` writes the m x m Jacobian column-major. `z` holds the
/// start on entry and the solution (or the last iterate) on return.
NewtonResult newtonSolve(std::size_t m,
                         const std::function<void(const double *z, double *r)> &residual,
                         const std::function<void(const double *z, double *jac)> &jacobian,
                         double *z, const NewtonOptions &opts = {});

/// Newton's method on the loops of one mode, whose Jacobian has a fixed
/// sparse pattern (compressed columns: column j is unknown j), keeping its
/// factorisation between calls: a loop whose matrix depends only on
/// parameters (a network of linear resistors or springs) is factorised
/// once. Loops up to kDenseMax unknowns are factorised densely and, where
/// J is singular, regularised as newtonSolve does; larger ones by KLU
/// (SuiteSparse's LU for circuit matrices, its ordering analysed once),
/// which was measured 1.2-1.4x faster per solve than Eigen's SparseLU on
/// resistor grids and spring lattices (docs/performance.md).
class LoopSolver {
public:
  static constexpr std::size_t kDenseMax = 48;
  /// `linear`: every loop is linear (solveLinear), and KLU serves every
  /// size: its solves were measured faster than the dense LU's even at a
  /// few unknowns; the dense path is for Newton's regularised steps.
  explicit LoopSolver(SparsePattern pattern, bool linear = false);
  ~LoopSolver();
  LoopSolver(const LoopSolver &) = delete;
  LoopSolver &operator=(const LoopSolver &) = delete;
  /// newtonSolve with `jacobian(z, values)` writing J's values over the
  /// pattern.
  NewtonResult solve(const std::function<void(const double *z, double *r)> &residual,
                     const std::function<void(const double *z, double *values)> &jacobian,
                     double *z, const NewtonOptions &opts = {});
  /// Solves the linear loops J z + r0 = 0 (J's values over the pattern):
  /// one solve with the kept factorisation, then iterative refinement
  /// while the residual exceeds what moving each unknown by its
  /// tolerance (opts.atol + opts.rtol |z_j|) could produce, at most three
  /// times. `z` receives the solution. Allocates nothing once sized.
  NewtonResult solveLinear(const double *values, const double *r0, double *z,
                           const NewtonOptions &opts = {});
  /// Factorises J (values over the pattern); when the values equal those
  /// last factorised, keeps that factorisation. False when J is singular.
  bool factorize(const double *values);
  /// Solves J X = B in place with the last factorisation: B has size()
  /// rows and k columns, column-major.
  void solveInPlace(double *b, std::size_t k);
  /// Factorisations computed (not reused) so far.
  std::size_t factorisations() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace hbg::runtime
