//===- compiler/driver/ModelImpl.h - What a compiled Model holds ----------===//
#pragma once

#include "hbg/hbg.h"
#include "hbg/runtime/Newton.h"

namespace hbg {

struct Model::Impl {
  eq::EquationSystem equations;
  std::vector<std::string> parameterNames, stateNames, outputNames;
  codegen::CompiledModule code;
  /// All take x = [states, Newton unknowns].
  codegen::CompiledFn rhs = nullptr;
  codegen::CompiledFn outputs = nullptr;
  codegen::CompiledFn residual = nullptr; ///< nonlinear loops only
  codegen::CompiledFn jacobian = nullptr; ///< column-major
  /// The nonlinear loops' paths, for run-time errors.
  std::string nonlinearLoops;
};

/// Evaluates a compiled model at (t, x), first solving its nonlinear loops
/// by Newton's method warm-started from the previous solution.
class Evaluator {
public:
  Evaluator(const Model::Impl &m, const double *p);
  /// False when the loops could not be solved (see failure()).
  bool rhs(double t, const double *x, double *xdot);
  bool outputs(double t, const double *x, double *y);
  /// Why the last failed call failed: names the loop and the time.
  const std::string &failure() const { return failure_; }

private:
  bool solve(double t, const double *x);
  const Model::Impl &m_;
  const double *p_;
  std::size_t n_, u_;
  std::vector<double> xz_, warm_;
  std::string failure_;
};

} // namespace hbg
