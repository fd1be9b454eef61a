//===- hbg/driver/Internal.h - The compiler's entry points past the API ---===//
//
// For hbgc, the benchmarks and the tests, not installed: compiling what the
// front end (Pipeline.h) built, and the equations behind a Model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/bondgraph/BondGraph.h"
#include "hbg/equations/Equations.h"
#include "hbg/hbg.h"
#include "hbg/runtime/Program.h"

#include <memory>

namespace hbg {
class SourceManager;
} // namespace hbg

namespace hbg::driver {

/// The error of a failed compilation: every diagnostic `diags` holds,
/// rendered and with its place (CompileError::diagnostics()).
CompileError compileError(const DiagnosticEngine &diags, const SourceManager &sources);

/// The equations `model` was compiled from (of its initial mode). Code
/// that reads their expression store while others simulate the model
/// takes `ctx->mutex()`.
const eq::EquationSystem &equations(const Model &model);

/// The runtime's view of `model` with the parameter values `params`
/// (Model::parameterValues()'s layout): what hbg::Simulation runs, for
/// front doors that run the runtime's loop themselves.
std::unique_ptr<runtime::ProgramSystem> systemOf(const Model &model, std::vector<double> params);

/// Compiles equations built already, with `compiler`'s options.
Model compileEquations(const Compiler &compiler, eq::EquationSystem equations);

/// Compiles the front end's result: a model with switched junctions, or
/// whose dependent storage jumps where a kink switches (a piecewise
/// velocity profile driving a mass), with compileSwitched, whose runtime
/// keeps every storage element in the state and remaps it exactly; any
/// other with compileEquations.
Model compileModel(const Compiler &compiler, std::shared_ptr<SourceManager> sources,
                   bg::BondGraph graph, eq::EquationSystem initial,
                   DiagnosticEngine::ContextFn context = {});

/// Compiles a checked graph with switched junctions whose initial mode's
/// equations were built already; `sources` renders the diagnostics of
/// modes analysed later, with `context`'s notes (the instance a line
/// inside a component belongs to).
Model compileSwitched(const Compiler &compiler, std::shared_ptr<SourceManager> sources,
                      bg::BondGraph graph, eq::EquationSystem initial,
                      DiagnosticEngine::ContextFn context = {});

} // namespace hbg::driver
