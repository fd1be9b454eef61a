//===- hbg/hbg.h - The embedding API ---------------------------------------===//
//
//   hbg::Compiler compiler;
//   hbg::Model model = compiler.compileFile("rlc.hbg");  // throws CompileError
//   hbg::Simulation sim(model, {.tEnd = 2.0});
//   sim.setParameter("R", 2.0);                          // no recompilation
//   hbg::Result result = sim.run();
//   double q = result.at("capacitor.q").back();
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/CodeGen.h"
#include "hbg/equations/Equations.h"
#include "hbg/runtime/Integrator.h"

#include <iosfwd>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace hbg {

/// Compilation failed; what() is the rendered diagnostics.
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A compiled model. A cheap, shared handle: copies refer to the same JIT
/// code, which is freed when the last copy goes.
class Model {
public:
  const std::string &name() const;
  const std::vector<std::string> &parameterNames() const;
  const std::vector<std::string> &stateNames() const;
  const std::vector<std::string> &outputNames() const;
  /// The equations the model was compiled from.
  const eq::EquationSystem &equations() const;
  /// Parameter values from the defaults, with `overrides` (by name) applied
  /// before dependent defaults are evaluated.
  std::vector<double> parameterValues(const std::map<std::string, double> &overrides = {}) const;
  /// Initial state for the given parameter values.
  std::vector<double> initialState(const std::vector<double> &params) const;
  /// dx/dt and outputs, through the JIT-compiled code. Models with
  /// nonlinear loops solve them by Newton's method from zero on each call
  /// (a Simulation warm-starts instead); a failed solve gives NaN.
  void rhs(double t, const double *x, const double *p, double *xdot) const;
  void outputs(double t, const double *x, const double *p, double *y) const;

  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const Impl *impl() const { return impl_.get(); }

private:
  std::shared_ptr<const Impl> impl_;
};

/// Compiler settings.
struct CompilerOptions {
  codegen::CodeGenOptions codegen;
};

/// Parses, checks, analyses and JIT-compiles .hbg models.
class Compiler {
public:
  explicit Compiler(CompilerOptions opts = {}) : opts_(opts) {}
  /// Compiles a file; throws CompileError with the rendered diagnostics.
  Model compileFile(const std::string &path) const;
  /// Compiles text; `name` is used in diagnostics.
  Model compileString(const std::string &text, const std::string &name = "<string>") const;
  /// Compiles equations that were built already (the CLI's pipeline).
  Model compileEquations(eq::EquationSystem equations) const;

private:
  CompilerOptions opts_;
};

/// Settings of one simulation run.
struct SimulationOptions {
  double tStart = 0;
  double tEnd = 1;
  runtime::Method method = runtime::Method::DormandPrince;
  /// Fixed step (euler, rk4) or first trial step (dopri5; 0 picks one).
  double step = 1e-3;
  double rtol = 1e-6;
  double atol = 1e-9;
  /// Output sampling interval; 0 means (tEnd - tStart) / 100.
  double dtOut = 0;
};

/// Sampled trajectories: a `time` column and one per output.
class Result {
public:
  /// Column names: "time" first, then the outputs in model order.
  std::vector<std::string> names;
  std::vector<std::vector<double>> columns;
  /// Empty on success; otherwise what failed, where and when. The
  /// trajectory up to the failure is kept.
  std::string error;
  std::size_t steps = 0, rejectedSteps = 0, rhsCalls = 0;

  bool ok() const { return error.empty(); }
  /// The column `name`; throws std::out_of_range naming close matches.
  const std::vector<double> &at(const std::string &name) const;
  /// CSV with header `time,<outputs>`, full double precision.
  void writeCsv(std::ostream &os) const;
};

/// One configurable run of a model.
class Simulation {
public:
  explicit Simulation(Model model, SimulationOptions opts = {});
  /// Overrides a parameter; throws std::invalid_argument for unknown names.
  void setParameter(const std::string &name, double value);
  SimulationOptions &options() { return opts_; }
  /// Runs from tStart to tEnd; never throws for numerical failures (see Result::error).
  Result run() const;

private:
  Model model_;
  SimulationOptions opts_;
  std::map<std::string, double> overrides_;
};

} // namespace hbg
