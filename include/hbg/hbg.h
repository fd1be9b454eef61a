//===- hbg/hbg.h - The embedding API ---------------------------------------===//
//
//   hbg::Compiler compiler;
//   hbg::Model model = compiler.compileFile("rlc.hbg");  // throws CompileError
//   hbg::SimulationOptions options;
//   options.tEnd = 2.0;
//   hbg::Simulation sim(model, options);
//   sim.setParameter("R", 2.0);                          // no recompilation
//   hbg::Result result = sim.run();
//   double q = result.at("capacitor.q").back();
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/codegen/Options.h"
#include "hbg/equations/Options.h"
#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/Periodic.h"
#include "hbg/runtime/Setup.h"
#include "hbg/runtime/Simulate.h"

#include <complex>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hbg {

/// Settings of one simulation run (runtime/Simulate.h): times, method,
/// step, tolerances (rtol alone sets the accuracy whatever the units:
/// each state's absolute tolerance is rtol times its nominal magnitude,
/// Model::nominalState() unless `nominal` gives them; docs/numerics.md),
/// remapping, event limits, and the row, step and event callbacks.
using SimulationOptions = runtime::SimulateOptions;

/// What a model's `experiment { ... }` block sets (docs/language.md):
/// each setting it gives, nothing for the others; apply() puts them over
/// a run's settings.
using Experiment = runtime::ExperimentValues;

/// Settings of Model::steady.
struct SteadyOptions {
  /// The period T; when not given, the common period of the model's
  /// periodic sources at the parameters (Model::sourcePeriod), which may
  /// depend on them (a switching frequency).
  std::optional<double> period;
  /// Periods simulated from the initial state before shooting.
  std::size_t transientPeriods = 5;
  /// Converged when every state changes over a period by less than this,
  /// relative to its magnitude.
  double tolerance = 1e-11;
  /// Output rows in SteadyState::rows (events add theirs).
  std::size_t rowsPerPeriod = 1000;
  /// The period's integration's relative tolerance: far tighter than a
  /// run's default, since the fixed point is only as exact as the period
  /// it is the fixed point of.
  double rtol = 1e-12;
  /// The integration's other settings (start time, method, atol, step
  /// limits, remapping): the model's experiment block at the parameters
  /// when not given. Their rtol is `rtol` above; their end time, output
  /// step and row callback are the analysis's own.
  std::optional<SimulationOptions> simulation;
  /// Measure the power balance over the period found (SteadyState::losses).
  bool losses = true;
};

struct SteadyState;
struct FrequencyResponse;

/// The linear model dx/dt = A x + B u, y = C x + D u of a model about an
/// operating point (Model::linearize; `hbgc linearize`): the inputs u are
/// the sources' values (an effort source's effort, a flow source's flow),
/// the outputs y the model's outputs. Matrices row-major: A is states by
/// states, B states by inputs, C outputs by states, D outputs by inputs.
struct LinearModel {
  std::vector<std::string> states, inputs, outputs;
  std::vector<double> a, b, c, d;
  /// The eigenvalues of A, sorted by real part, then imaginary part.
  std::vector<std::complex<double>> poles;
  /// Where: the time and the mode (`sw=on`; empty without switched
  /// junctions).
  double time = 0;
  std::string mode;
};

/// One diagnostic of a failed compilation, with its place in the source.
struct CompileDiagnostic {
  /// The file (compileFile's path, compileString's name, a library's
  /// file for a line inside a component); empty for a diagnostic with no
  /// place (a file that cannot be read).
  std::string file;
  /// 1-based; 0 without a place.
  unsigned line = 0, column = 0;
  /// Its kind, as DiagnosticKinds.def names it (`UnknownName`), and its
  /// severity: "error", "warning" or "note".
  std::string kind, severity;
  /// The message alone, and as hbgc prints it: `file:line:col: error:
  /// message`, the source line and a caret, then its notes.
  std::string message, rendered;
  /// Its notes (where a name was declared first, the instance a line
  /// inside a component belongs to), each with its place.
  std::vector<CompileDiagnostic> notes;
};

/// Compilation failed; what() is the rendered diagnostics, diagnostics()
/// each of them with its place.
class CompileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  CompileError(const std::string &what, std::vector<CompileDiagnostic> diagnostics)
      : std::runtime_error(what), diagnostics_(std::move(diagnostics)) {}
  const std::vector<CompileDiagnostic> &diagnostics() const { return diagnostics_; }

private:
  std::vector<CompileDiagnostic> diagnostics_;
};

/// A compiled model. A cheap, shared handle: copies refer to the same JIT
/// code, which is freed when the last copy goes. Any number of threads may
/// simulate one Model at once, plain or switched: modes and Jacobians
/// compiled on first use go into shared caches under the model's locks.
class Model {
public:
  const std::string &name() const;
  /// The parameter array's names, in the order of parameterValues(): the
  /// parameters and the inputs (`input u;`), as declared.
  const std::vector<std::string> &parameterNames() const;
  /// The inputs, which a Simulation sets between steps (setInput).
  const std::vector<std::string> &inputNames() const;
  /// Whether parameter `name` is structural (`for` loops, `if` blocks or indices were
  /// computed from it), and then the value the model was compiled with:
  /// a run cannot change it (CompilerOptions::parameters can).
  bool structural(const std::string &name, double *value = nullptr) const;
  /// The states: without switched junctions, the independent states of
  /// the equations; with them, the full state of every mode (every storage
  /// element, then every integrator).
  const std::vector<std::string> &stateNames() const;
  const std::vector<std::string> &outputNames() const;
  /// Parameter values from the defaults, with `overrides` (by name) applied
  /// before dependent defaults are evaluated.
  std::vector<double> parameterValues(const std::map<std::string, double> &overrides = {}) const;
  /// Initial state for the given parameter values (parameterValues()'s
  /// layout; fewer values than parameters throw std::invalid_argument).
  std::vector<double> initialState(const std::vector<double> &params) const;
  /// The nominal magnitude of each state for `params`, positive: what its
  /// absolute tolerance scales with (eq::stateNominals, docs/numerics.md).
  std::vector<double> nominalState(const std::vector<double> &params) const;
  /// The run defaults of the model's `experiment { ... }` block, evaluated
  /// with the parameter values `overrides` gives (the defaults
  /// otherwise). Throws std::invalid_argument naming the setting when
  /// the parameters make one of them invalid (a step that is not
  /// positive, an end before the start).
  Experiment experiment(const std::map<std::string, double> &overrides = {}) const;
  /// True when the model has switched junctions (and so modes and events).
  bool switched() const;
  /// The common period of the model's periodic functions of time at the
  /// parameter values `params` (parameterValues()): sin, cos of time
  /// (argument affine in time with a constant nonzero slope), and the
  /// functions that jump periodically (pwm, pulse, saw, mod(f time, 1): each
  /// a floor of an argument affine in time). `period` is 0 when there is
  /// none, with `why` saying what stops it, naming the expression's text
  /// where one is at fault (time outside a periodic function such as a
  /// ramp, periods with no common multiple, no function of time at all).
  /// What counts as periodic: docs/language.md, "Periodic sources".
  struct SourcePeriod {
    double period = 0;
    std::string why;
    /// Each periodic function found, as text, with its own period.
    std::vector<std::pair<std::string, double>> sources;
  };
  /// Reads the model's expressions only: no mode is analysed. Throws
  /// std::invalid_argument for fewer values than parameters.
  SourcePeriod sourcePeriod(const std::vector<double> &params) const;
  /// The periodic steady state at the parameter and input values
  /// `parameters` (by name, the defaults otherwise): the motion the model
  /// settles into under its periodic sources, found by shooting instead
  /// of simulating the start-up (docs/numerics.md, "Periodic steady
  /// state"). Never throws for numerical failures (no period, no steady
  /// state, no convergence: SteadyState::error, with what was computed so
  /// far); throws std::invalid_argument for an unknown name, a structural
  /// parameter changed, or an experiment block the values make invalid.
  /// Any number of threads may call it at once.
  SteadyState steady(const std::map<std::string, double> &parameters = {},
                     const SteadyOptions &options = {}) const;
  /// The small-signal frequency response around that steady state: the
  /// complex response of every output at each of `frequencies` (Hz,
  /// positive) to a small sinusoid on `input`, a parameter or an input (a
  /// perturbed duty moves the PWM edges; parameters whose defaults depend
  /// on it follow), per unit of it (docs/numerics.md, "Small-signal
  /// frequency response"). Same conventions as steady(): numerical
  /// failures go to FrequencyResponse::error; an unknown name, a
  /// frequency that is not positive and finite, and what steady() refuses
  /// throw std::invalid_argument. `options.losses` is not used.
  FrequencyResponse frequencyResponse(const std::string &input,
                                      const std::vector<double> &frequencies,
                                      const std::map<std::string, double> &parameters = {},
                                      SteadyOptions options = {}) const;
  /// The linear model about the state a run from the start reaches at
  /// time `at` (the initial state for 0), with `parameters` (by name, the
  /// defaults otherwise), in `mode` (`j1=on, j2=off`; empty: the mode the
  /// run is in at `at`), from the symbolic derivatives of its equations
  /// (docs/numerics.md, "Linearisation"). Throws CompileError for a mode
  /// that names no mode, std::invalid_argument for an unknown parameter,
  /// and SimulationError when the run to `at` fails or the model cannot
  /// be linearised there (a loop with no solution, a singular Jacobian).
  LinearModel linearize(double at = 0, const std::string &mode = "",
                        const std::map<std::string, double> &parameters = {}) const;
  /// Modes analysed so far (switched models analyse a mode the first time
  /// a simulation enters it; one dropped from the cache and entered again
  /// counts again, see CompilerOptions::maxCachedModes).
  std::size_t modesCompiled() const;
  /// Modes (with their Jacobians, for stiff methods) whose code LLVM has
  /// compiled so far; the others run on tapes (Tiering).
  std::size_t modesCompiledByLlvm() const;
  /// Of those and the modes on their way there, the ones LLVM's quick
  /// tier compiled first (CompilerOptions::quickTierMin).
  std::size_t modesCompiledQuickly() const;
  /// Analyses the mode `j1=on,j2=off` now (junctions not named keep their
  /// initial state) and builds its code: its tapes, and LLVM's code when
  /// hot or, with Tiering::Jit, at once. Throws CompileError when it
  /// cannot be analysed.
  void compileMode(const std::string &mode) const;
  /// dx/dt and outputs, through the JIT-compiled code. Models with
  /// nonlinear loops solve them by Newton's method from zero on each call
  /// (a Simulation warm-starts instead); a failed solve gives NaN. Switched
  /// models: in the initial mode, over the full state (dependent storage
  /// gets derivative 0 here), with held values 0. Kinks (`sign`, `abs`,
  /// `min`, `max` of changing values) take the branch of their argument
  /// at (t, x). Without nonlinear loops, rhs() and outputs() allocate
  /// nothing after their first call on a thread.
  void rhs(double t, const double *x, const double *p, double *xdot) const;
  void outputs(double t, const double *x, const double *p, double *y) const;
  /// The Jacobian of rhs(): d xdot / dx (row-major, states by states)
  /// and d xdot / dt, from symbolic derivatives JIT-compiled on the first
  /// call (the stiff method's), through nonlinear loops by implicit
  /// differentiation; NaN when a loop could not be solved. Same
  /// conventions as rhs().
  void jacobian(double t, const double *x, const double *p, double *dfdx, double *dfdt) const;

  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const Impl *impl() const { return impl_.get(); }

private:
  std::shared_ptr<const Impl> impl_;
};

/// Compiler settings.
/// How a mode's code is made ready (docs/architecture.md, "Tiers").
enum class Tiering : std::uint8_t {
  /// Every mode runs on tapes (the expression DAG as a straight-line
  /// program, bit for bit the compiled code's values) from its first use,
  /// translated to machine code an instruction at a time (the baseline
  /// tier; interpreted on machines other than x86-64). LLVM is
  /// loaded, and a mode compiled on a background thread and swapped in,
  /// only when the compilation pays back: its cost, estimated from the
  /// tapes' size, against the time LLVM's code would save over the rest
  /// of the run (docs/architecture.md, "Tiers"); or, with
  /// CompilerOptions::hotCalls, after that many evaluations. Runs
  /// integrate in real modes only, so modes only passed through
  /// (mythical) are never LLVM-compiled.
  Tiered,
  /// Every mode LLVM-compiled before its first use.
  Jit,
  /// Nothing LLVM-compiled: every function runs on its tape.
  Tape,
};

struct CompilerOptions {
  codegen::CodeGenOptions codegen;
  Tiering tiering = Tiering::Tiered;
  /// Tiered: 0 (the default) weighs what compiling a mode costs against
  /// what its code saves, and picks LLVM's quick tier
  /// (CodeGenOptions::quick: about a tenth of the compile time, code about
  /// twice as slow as optimised), the optimised code, both in turn, or
  /// neither. A count instead compiles a mode once its right-hand side has
  /// been evaluated that many times, through the quick tier first when
  /// its tapes have `quickTierMin` instructions or more, then optimised.
  unsigned hotCalls = 0;
  std::size_t quickTierMin = 2000;
  /// Jit: code whose tapes hold this many instructions or more is first
  /// compiled by LLVM's quick tier, which takes about a tenth of the time
  /// (the chain of 20,000 masses: 0.7 s instead of 18 s), and optimised
  /// on a background thread once that pays back, as the tiered policy
  /// weighs it. The default lies between 3,000 and 5,000 masses.
  std::size_t jitQuickMin = 40000;
  /// Switched models: modes kept analysed (and compiled) between runs;
  /// beyond this, the least recently used ones that no run is in are
  /// dropped, and analysed again if entered again.
  std::size_t maxCachedModes = 256;
  eq::EquationOptions equations;
  /// Switched models: analyse and compile every mode up front (at most
  /// 2^maxEagerJunctions modes) instead of each on first entry.
  bool compileAllModes = false;
  unsigned maxEagerJunctions = 8;
  /// Directories `import name;` searches for name.hbg before HBG_PATH's
  /// and the standard library's.
  std::vector<std::string> libPath;
  /// Values of structural parameters, by path (`N`, `chain.N`): those that
  /// `for` loops and indices are computed from, fixed once the model is
  /// compiled. Other names are ignored here (they are set per run).
  std::map<std::string, double> parameters;
};

/// Parses, checks, analyses and JIT-compiles .hbg models.
class Compiler {
public:
  explicit Compiler(CompilerOptions opts = {}) : opts_(opts) {}
  /// Compiles a file; throws CompileError with the rendered diagnostics.
  Model compileFile(const std::string &path) const;
  /// Compiles text; `name` is used in diagnostics.
  Model compileString(const std::string &text, const std::string &name = "<string>") const;
  const CompilerOptions &options() const { return opts_; }

private:
  CompilerOptions opts_;
};

/// One event of a switched model (see runtime/Simulate.h).
using Event = runtime::Event;

/// What a run produced (runtime::RunRecord: the sampled trajectories, a
/// `time` column and one per output, the events, counters and warnings,
/// kept up to a failure), with the names of its columns and the time the
/// run spent compiling. `error` is the failure as a user reads it: `model
/// `M` at t = 0.5 in mode `sw=on`: ...`.
class Result : public runtime::RunRecord {
public:
  /// Column names: "time" first, then the outputs in model order.
  std::vector<std::string> names;
  /// The names of the state entries and of the discrete values (the event
  /// log's columns; Event::discreteBefore, discreteAfter).
  std::vector<std::string> stateNames, discreteNames;
  /// Modes compiled during the run, and the time spent compiling modes
  /// and Jacobians (for the stiff method) versus the whole run.
  std::size_t modesCompiled = 0;
  double compileSeconds = 0, runSeconds = 0;

  bool ok() const { return error.empty(); }
  /// The column `name`; throws std::out_of_range naming close matches.
  const std::vector<double> &at(const std::string &name) const;
  /// CSV with header `time,<outputs>`, full double precision.
  void writeCsv(std::ostream &os) const;
  /// The event log as CSV: one row per event and phase (`before`, each
  /// `mythical` mode, each `remap` iteration, `after`) with the energy
  /// stored in that row's state, on the `after` row the energy the jump
  /// removed, then the state.
  void writeEventsCsv(std::ostream &os) const;
};

/// Per output, over one period: its mean, RMS, minimum and maximum
/// (peakToPeak()), exact to the integration's accuracy.
using OutputFigures = runtime::OutputFigures;
/// One Newton iteration of the steady-state search: its residual, step
/// length, events and kind (`newton`, `damped`, `transient`).
using SteadyIteration = runtime::SteadyIteration;

/// The power balance of a window of a run (runtime/Losses.h): each R
/// element's and source's path and kind (`elements`), its mean power
/// (`mean`: dissipated by R elements, delivered into the model by
/// sources), and the loss at events (`eventLoss`, a power).
using PowerFigures = runtime::PowerFigures;
using PowerElement = runtime::PowerElement;

/// A periodic steady state (Model::steady). After a failure, `error` says
/// what failed and what was computed before it stays (the iterations so
/// far; no rows, no figures).
struct SteadyState {
  /// The period T.
  double period = 0;
  /// One period: `time` from 0 to T, measured from a start of the
  /// sources' period (t = 0, T, 2T, ...), and a column per output
  /// (Result::names); the period's events and counters.
  Result rows;
  /// Each output's figures over the period, in Model::outputNames()
  /// order (rows.names without `time`).
  std::vector<OutputFigures> figures;
  /// The figures of output `name`; throws std::out_of_range naming close
  /// matches.
  const OutputFigures &figuresOf(const std::string &name) const;
  /// The residual at the end (the largest change of a state over the
  /// period, relative to its magnitude), and each iteration's.
  double residual = 0;
  std::vector<SteadyIteration> iterations;
  /// The modes in the period in order (`sw=on, d=off`; one "" without
  /// switched junctions), and the phase in [0, T) at which each begins.
  std::vector<std::string> modes;
  std::vector<double> modePhases;
  /// The monodromy matrix's eigenvalues at the solution, largest
  /// magnitude first: how much of a disturbance a period leaves.
  std::vector<std::complex<double>> multipliers;
  /// The full state (Model::stateNames()) at the start of the period
  /// the search integrated, and that start's time.
  std::vector<double> state;
  double startTime = 0;
  /// The power balance over the period (SteadyOptions::losses; empty
  /// after a failure and for a model with no R element or source).
  PowerFigures losses;
  /// The efficiency OUT/IN from `losses`: the mean power of the elements
  /// `out` names over that of those `in` names (element paths, separated
  /// by commas: "load.r", "supply.s"). Throws std::invalid_argument
  /// naming an unknown element and the closest ones.
  double efficiency(const std::string &out, const std::string &in) const;
  /// Periods of transient simulated, and periods in all.
  std::size_t transientPeriods = 0, periodsSimulated = 0;
  /// Empty on success; otherwise what failed as a user reads it (`model
  /// `M`: no period: ...`), and the failure as a diagnostic when it is
  /// one.
  std::string error;
  std::optional<RunDiagnostic> failure;
  bool ok() const { return error.empty(); }
};

/// A small-signal frequency response (Model::frequencyResponse). After a
/// failure, `error` says what failed (the steady state it is taken around
/// included) and there are no responses.
struct FrequencyResponse {
  /// The input perturbed, the frequencies (Hz) and the outputs
  /// (Model::outputNames()).
  std::string input;
  std::vector<double> frequencies;
  std::vector<std::string> outputs;
  /// response[i][k]: output i's complex response at frequencies[k] per
  /// unit of the input (magnitude and phase).
  std::vector<std::vector<std::complex<double>>> response;
  /// The responses of output `name`; throws std::out_of_range naming
  /// close matches.
  const std::vector<std::complex<double>> &at(const std::string &name) const;
  /// The period of the steady state, and its residual.
  double period = 0, residual = 0;
  /// Empty on success; otherwise what failed as a user reads it, and the
  /// failure as a diagnostic when it is one.
  std::string error;
  std::optional<RunDiagnostic> failure;
  bool ok() const { return error.empty(); }
};

/// A run driven step by step failed (Simulation::advance); what() says
/// what failed, where and when, and diagnostic() is the failure's kind,
/// time, mode and element.
class SimulationError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  SimulationError(const std::string &what, std::optional<RunDiagnostic> d,
                  std::string details = {})
      : std::runtime_error(what), diagnostic_(std::move(d)), details_(std::move(details)) {}
  const std::optional<RunDiagnostic> &diagnostic() const { return diagnostic_; }
  /// What the model's analysis reported on the way, rendered with carets
  /// (a mode whose sources conflict, for Model::linearize); mostly empty.
  const std::string &details() const { return details_; }

private:
  std::optional<RunDiagnostic> diagnostic_;
  std::string details_;
};

/// One configurable run of a model: all at once (run()), or step by step
/// (start(), then advance() as often as needed, setting inputs between
/// calls), as a controller or an FMI master drives a model.
class Simulation {
public:
  /// Runs with the model's `experiment { ... }` settings over
  /// SimulationOptions' defaults (evaluated at the parameters' defaults:
  /// with other values, pass `model.experiment(overrides).apply()`).
  explicit Simulation(Model model);
  /// Runs with `opts` as given: the model's experiment block is not read.
  Simulation(Model model, SimulationOptions opts);
  Simulation(Simulation &&) noexcept;
  Simulation &operator=(Simulation &&) noexcept;
  ~Simulation();
  /// Overrides a parameter; throws std::invalid_argument for unknown names
  /// and inputs (setInput sets those).
  void setParameter(const std::string &name, double value);
  SimulationOptions &options() { return opts_; }
  /// Runs from tStart to tEnd with the inputs at the values set (their
  /// declared values otherwise); never throws for numerical failures (see
  /// Result::error).
  Result run() const;

  /// Sets input `name` (Model::inputNames()); it holds that value until
  /// set again. Before start(), the value the run starts with; between
  /// advance() calls, the model follows it at once: storage in derivative
  /// causality jumps with it, and guards it makes true switch junctions
  /// at time() (an event). Throws std::invalid_argument for unknown names.
  void setInput(const std::string &name, double value);
  double input(const std::string &name) const;
  /// Starts a run driven step by step at options().tStart, with the
  /// parameters and inputs set so far (parameters are fixed from here on):
  /// the initial state, and the events at the start time. Starting again
  /// starts over. Throws SimulationError on a run-time failure.
  void start();
  /// Integrates from time() to exactly `t` with options()'s method and
  /// tolerances, handling every event on the way (inputs constant in
  /// between). Throws SimulationError on a run-time failure, naming what
  /// failed, the mode and the time; the state stays where the run
  /// stopped and later calls throw the same error. A `t` before time()
  /// (or not finite) throws std::invalid_argument and changes nothing.
  void advance(double t);
  /// Whether start() has been called.
  bool started() const;
  /// The run's time, full state (Model::stateNames()), outputs
  /// (Model::outputNames()), one state or output by name, and mode
  /// (`j1=on, j2=off`; empty without switched junctions). Before
  /// start(), throws std::logic_error.
  double time() const;
  const std::vector<double> &state() const;
  double state(const std::string &name) const;
  std::vector<double> outputs() const;
  double output(const std::string &name) const;
  std::string mode() const;
  /// Every event since start(), and the run's counters so far.
  const std::vector<Event> &events() const;
  std::size_t steps() const;

private:
  struct Stepping;
  Stepping &stepping() const;
  Model model_;
  SimulationOptions opts_;
  std::map<std::string, double> overrides_;
  std::unique_ptr<Stepping> stepping_;
};

} // namespace hbg
