//===- hbg/runtime/Program.h - A compiled mode as plain data ---------------===//
//
// What the runtime needs of one mode of a compiled model, without the
// compiler: its generated functions (machine code, from the JIT or an
// object file compiled ahead of time, or the tapes that compute the same
// values), the shapes of its algebraic loops and Jacobian, and where its
// states sit in the model's full state. The driver fills one per mode from
// its equations; a simulator built ahead of time (`hbgc build`) reads
// them back from the data it was linked with (ProgramIO.h).
//
// ProgramMode runs a ModeProgram as a runtime::Mode, and ProgramSystem is
// the runtime::System over such modes that both share.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hbg/runtime/Baseline.h"
#include "hbg/runtime/Energy.h"
#include "hbg/runtime/Newton.h"
#include "hbg/runtime/System.h"
#include "hbg/runtime/Tape.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hbg::runtime {

/// The signature of every generated function:
/// out = f(t, x = [states, loop unknowns], p = [parameters, held values,
/// kink branches]).
using CompiledFn = void (*)(double t, const double *x, const double *p, double *out);

/// One of a mode's functions: LLVM's machine code once there is some
/// (published atomically: the JIT swaps it in while runs read it), else
/// its tape translated to machine code one op at a time (Baseline.h),
/// else its tape. All three compute the same values, bit for bit
/// (runtime/Tape.cpp mirrors the lowering op for op).
struct ModeFn {
  Tape tape;
  std::atomic<CompiledFn> jit{nullptr};
  /// The tape's baseline code, set before the function is first used.
  BaselineCode::Entry baseline = nullptr;
  std::shared_ptr<const BaselineCode> baselineCode;
  bool present = false;

  ModeFn() = default;
  /// A copy runs the code the original runs now.
  ModeFn(const ModeFn &o)
      : tape(o.tape), jit(o.jit.load()), baseline(o.baseline), baselineCode(o.baselineCode),
        present(o.present) {}
  ModeFn &operator=(const ModeFn &o) {
    tape = o.tape;
    jit.store(o.jit.load());
    baseline = o.baseline;
    baselineCode = o.baselineCode;
    present = o.present;
    return *this;
  }

  explicit operator bool() const { return present; }
  /// out = the function at (t, x, p); `scratch` holds the tape's values.
  void operator()(double t, const double *x, const double *p, double *out,
                  std::vector<double> &scratch) const {
    if (CompiledFn f = jit.load(std::memory_order_acquire)) {
      f(t, x, p, out);
    } else if (baseline) {
      std::size_t n = BaselineCode::valuesNeeded(tape);
      if (scratch.size() < n)
        scratch.resize(n);
      baseline(x, p, out, scratch.data(), t);
    } else {
      tape.evaluate(t, x, p, out, scratch);
    }
  }
};

/// A function that computes each distinct value of a long vector once (a
/// loop's Jacobian over its pattern, where most entries are 1, -1 or 1/R;
/// a linear loop's residual at z = 0, mostly zero), and the map that
/// scatters them.
struct ScatteredFn {
  ModeFn fn;
  /// Entry k of the vector is distinct value of[k]; empty when every
  /// entry is distinct and fn writes them in order.
  std::vector<std::uint32_t> of;
  std::size_t distinct = 0;
  /// out = the vector at (t, x, p); `scratch` holds the distinct values,
  /// `tape` the tape's.
  void operator()(double t, const double *x, const double *p, double *out,
                  std::vector<double> &scratch, std::vector<double> &tape) const;
};

/// A mode's Jacobian: one function writing the values of the state
/// Jacobian's entries, in the order fx, dfdt, fz, rx, drdt, and how they
/// assemble into df/dx over `pattern`.
struct JacobianProgram {
  virtual ~JacobianProgram() = default;
  ModeFn fn;
  /// Where df/dx may be non-zero: fx's entries, and through nonlinear
  /// loops every row fz reads an unknown in times every column rx does.
  SparsePattern pattern;
  /// Position in the pattern's values of each fx entry.
  std::vector<std::uint32_t> fxAt;
  /// fz's and rx's (row, column), in output order.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> fz, rx;
  /// The columns rx reads, and for fz entry e and the c-th of them the
  /// position fzAt[e * columns.size() + c] in the pattern's values.
  std::vector<std::uint32_t> columns, fzAt;
  std::size_t numOutputs = 0;
  /// Which parts read neither t nor x (jacobianConstancy()), found where
  /// the program is built, which has the tapes, and kept with it (model
  /// images need not hold tapes).
  JacobianConstancy constancy;
  /// Counts an evaluation at time t (the JIT compiles the Jacobian once
  /// it pays).
  virtual void used(double) const {}
};

/// A `sign`, `abs`, `min`, `max` or `floor` of a changing value
/// (runtime::Mode::numKinks()).
struct KinkInfo {
  bool floor = false;
  /// eq::Kink::linear: the branch may slide (Mode::kinkSlides).
  bool slides = false;
  std::string text;
};

/// One mode's functions and shapes.
struct ModeProgram {
  virtual ~ModeProgram() = default;
  /// The independent states' names (the order of x).
  std::vector<std::string> stateNames;
  ModeFn rhs, outputs;
  /// Loops solved at run time: `numUnknowns` unknowns after the states in
  /// x, the residuals r(t, x, z) and their Jacobian dr/dz over
  /// `loopPattern`. When every such loop is linear (`linearLoops`),
  /// `residual` gives r at z = 0 instead, and the evaluator assembles
  /// r = J z + r(0) from the pattern.
  std::size_t numUnknowns = 0;
  SparsePattern loopPattern;
  ScatteredFn residual, jacobian;
  bool linearLoops = false;
  /// Switched models: guard sides, held values, dependent storage values,
  /// their derivatives by the states (row-major: dependent x state) and
  /// the impulse matrix (row-major: state x dependent).
  ModeFn guards, held;
  /// Modes with kinks (switched or not): their arguments; `guards` then
  /// also writes each kink's comparison after the guards'.
  ModeFn kinks, dependent, dependentJacobian, impulse;
  std::vector<KinkInfo> kinkInfo;
  /// Switched modes with dependent storage and guards: each guard side's
  /// impulse per unit jump of each dependent storage (row-major: side x
  /// dependent); absent otherwise.
  ModeFn guardImpulse;
  /// The guards as a tape for interval enclosures (lhs, rhs and lhs - rhs
  /// of every comparison), and the states it reads; none when a guard
  /// reads a Newton-solved unknown.
  std::optional<Tape> guardTape;
  std::vector<std::uint32_t> guardStates;
  /// The comparisons (kinks after the guards') of time and parameters only.
  std::vector<std::uint32_t> timeComparisons;
  /// The paths of the loops solved at run time, joined by "; ", for
  /// run-time errors (DiagArg::loop).
  std::string nonlinearLoops;
  /// Switched models: the mode, `contact=on, valve=off`, for run-time
  /// errors, and where its states and dependent storage sit in the full
  /// state.
  std::string modeName;
  std::vector<std::uint32_t> stateSlots, dependentSlots;
  /// Modes in which sources short-circuit each other through ON junctions:
  /// the conflict's diagnostics, and the names of the stand-in storage
  /// that replaced the sources (dependent storage at kNoSlot).
  std::string shortCircuit;
  std::vector<std::string> standIns;

  /// The Jacobian's program (the compiler builds it on first use).
  virtual const JacobianProgram &jacobianProgram() const = 0;
  /// The power of each R element and source (System::powerElements()),
  /// built on first use: only an analysis of losses asks for it. Null
  /// when the program has none (a model image, a model without a graph).
  virtual const ModeFn *powers() const { return nullptr; }
  /// Counts an evaluation of the right-hand side at time t (the JIT
  /// compiles a mode once it pays).
  virtual void used(double) const {}
};

/// Which parts of a mode's Jacobian read neither time nor a state nor a
/// loop's unknown, as its tapes show (the JIT's code computes what they
/// do): df/dx through fx, and through the loops fz, rx and the loops'
/// own Jacobian; df/dt through dfdt, and fz, drdt and the loops'. None
/// is constant for a program without its tapes (an image built without).
JacobianConstancy jacobianConstancy(const ModeProgram &m, const JacobianProgram &jc);

/// Evaluates a mode's code at (t, x), first solving its nonlinear loops
/// by Newton's method warm-started from the previous solution.
class Evaluator {
public:
  Evaluator(const ModeProgram &m, const double *p);
  Evaluator(const Evaluator &) = delete;
  Evaluator &operator=(const Evaluator &) = delete;
  /// False when the loops could not be solved (see failure()). Only the
  /// right-hand side counts towards a mode's being hot: a run integrates
  /// in real modes only, so a mythical mode, however often an event
  /// passes through it, stays on its tapes.
  bool rhs(double t, const double *x, double *xdot) {
    m_.used(t);
    return call(m_.rhs, t, x, xdot);
  }
  bool outputs(double t, const double *x, double *y) { return call(m_.outputs, t, x, y); }
  /// Any of the mode's functions.
  bool call(const ModeFn &f, double t, const double *x, double *out);
  /// df/dx over the mode's JacobianProgram pattern into `values` and
  /// df/dt into `dfdt`, through the nonlinear loops by implicit
  /// differentiation. False when the loops could not be solved or their
  /// Jacobian is singular.
  bool jacobian(double t, const double *x, double *values, double *dfdt);
  /// Why the last failed call failed: names the loop and the time.
  const LoopFailure &failure() const { return failure_; }
  const ModeProgram &program() const { return m_; }
  /// Evaluates with other parameters from now on (the loops' solver keeps
  /// its factorisation while their matrix does not change, and reuses it
  /// only for identical values).
  void setParameters(const double *p) { p_ = p; }
  /// Starts Newton's method from zero again, as a new evaluator does, so
  /// that a kept evaluator gives the same values whatever it solved before.
  void forgetStart() { std::fill(warm_.begin(), warm_.end(), 0.0); }

private:
  bool solve(double t, const double *x);
  /// The loops' Jacobian at the states and unknowns in xz_, over
  /// ModeProgram::loopPattern.
  void loopJacobian(double t, double *values) {
    m_.jacobian(t, xz_.data(), p_, values, distinct_, tape_);
  }
  const ModeProgram &m_;
  const double *p_;
  std::size_t n_, u_;
  std::vector<double> xz_, warm_, start_, raw_, loopJacobian_, dz_, distinct_, r0_, j0_;
  /// The values of the tapes' instructions (tiers), as they run.
  std::vector<double> tape_;
  /// The loops' Newton iteration and factorisation, kept between calls.
  std::unique_ptr<LoopSolver> loops_;
  NewtonOptions newton_;
  LoopFailure failure_;
};

/// A ModeProgram as the simulation loop runs it: its evaluator, and its
/// own copy of the parameter array followed by its kink branches.
class ProgramMode final : public Mode {
public:
  /// `p`: the parameters and held values. `switched`: the mode is one of
  /// a model with switched junctions (its name and slots are its own;
  /// otherwise the states fill the full state in order). `jacobianSeconds`:
  /// where the time building the Jacobian's program is added.
  ProgramMode(std::shared_ptr<const ModeProgram> program, const std::vector<double> &p,
              bool switched, double &jacobianSeconds);

  const std::string &name() const override { return name_; }
  const std::vector<std::uint32_t> &stateSlots() const override { return stateSlots_; }
  const std::vector<std::uint32_t> &dependentSlots() const override { return dependentSlots_; }
  const std::string &shortCircuit() const override { return program_->shortCircuit; }
  const std::string &stateName(std::size_t i) const override { return program_->stateNames[i]; }
  bool rhs(double t, const double *x, double *xdot) override { return e_.rhs(t, x, xdot); }
  const SparsePattern *jacobianPattern() override;
  bool jacobian(double t, const double *x, double *values, double *dfdt) override {
    return e_.jacobian(t, x, values, dfdt);
  }
  JacobianConstancy jacobianConstancy() override {
    return program_->jacobianProgram().constancy;
  }
  bool outputs(double t, const double *x, double *y) override { return e_.outputs(t, x, y); }
  bool powers(double t, const double *x, double *out) override {
    const ModeFn *f = program_->powers();
    return f && e_.call(*f, t, x, out);
  }
  bool guards(double t, const double *x, double *sides) override {
    return e_.call(program_->guards, t, x, sides);
  }
  bool encloseGuards(Interval t, const Interval *x, Interval *out) override;
  bool encloseGuardSlopes(Interval t, const Interval *x, const Interval *xdot, Interval *out,
                          Interval *outDot) override;
  const std::vector<std::uint32_t> &guardStates() const override { return program_->guardStates; }
  const std::vector<std::uint32_t> &timeComparisons() const override {
    return program_->timeComparisons;
  }
  bool held(double t, const double *x, double *values) override {
    return e_.call(program_->held, t, x, values);
  }
  bool dependent(double t, const double *x, double *d) override {
    return e_.call(program_->dependent, t, x, d);
  }
  bool dependentJacobian(double t, const double *x, double *jac) override;
  bool impulse(double t, const double *x, double *b) override {
    return e_.call(program_->impulse, t, x, b);
  }
  bool guardImpulses(double t, const double *x, double *out) override {
    return program_->guardImpulse && e_.call(program_->guardImpulse, t, x, out);
  }
  const LoopFailure &failure() const override { return e_.failure(); }

  std::size_t numKinks() const override { return program_->kinkInfo.size(); }
  bool kinkFloor(std::size_t k) const override { return program_->kinkInfo[k].floor; }
  bool kinkSlides(std::size_t k) const override { return program_->kinkInfo[k].slides; }
  const std::string &kinkText(std::size_t k) const override { return program_->kinkInfo[k].text; }
  bool kinkArguments(double t, const double *x, double *c) override {
    return e_.call(program_->kinks, t, x, c);
  }
  double branch(std::size_t k) const override { return p_[firstBranch() + k]; }
  void setBranch(std::size_t k, double b) override {
    p_[firstBranch() + k] = b;
    valuesKept_ = slopesKept_ = valuesBoxSet_ = false;
  }

  /// Parameters and held values, as the system holds them.
  void setParameters(const std::vector<double> &p);

private:
  std::size_t firstBranch() const { return p_.size() - numKinks(); }

  std::shared_ptr<const ModeProgram> program_;
  /// Parameters, held values, kink branches.
  std::vector<double> p_;
  Evaluator e_;
  double &jacobianSeconds_;
  std::vector<Interval> scratch_, slopes_;
  /// The guard tape's instructions that read time or states, and whether
  /// the others' values and slopes in scratch_ and slopes_ are current.
  std::vector<std::uint32_t> varying_;
  bool valuesKept_ = false, slopesKept_ = false;
  /// The time and the boxes of the states the guard tape reads (xRead_)
  /// that scratch_'s values were last computed for: the event locator
  /// asks for slopes over the box it has just enclosed the guards on.
  std::vector<std::uint32_t> xRead_;
  std::vector<Interval> valuesBox_;
  bool valuesBoxSet_ = false;
  /// Whether scratch_ holds the values of (t, x), and notes that it does.
  bool valuesFor(Interval t, const Interval *x) const;
  void noteValues(Interval t, const Interval *x);
  std::string name_;
  std::vector<std::uint32_t> stateSlots_, dependentSlots_;
};

/// A runtime::System over ModeProgram modes: the parameter array they all
/// read (parameters, then held values), a ProgramMode per program a run
/// enters, and the energy audit from the storage laws. Subclasses say how
/// FSM states map to a program (the compiler analyses a mode on first
/// entry; a simulator built ahead of time looks it up).
class ProgramSystem : public System {
public:
  /// `params`: the parameter values; `numHeld` values `pre(...)` holds
  /// follow them. `laws`: the storage laws by full-state slot (null: no
  /// audit). `switched`: the model has switched junctions.
  ProgramSystem(std::vector<double> params, std::size_t numHeld, bool switched,
                const std::vector<std::optional<StorageLaw>> *laws);
  ~ProgramSystem() override;

  std::size_t numHeld() const override { return p_.size() - np_; }
  /// Held value k as the run last set it.
  double held(std::size_t k) const { return p_[np_ + k]; }
  void setHeld(const double *values) override;
  Mode *mode(const std::vector<std::uint32_t> &q, std::string &why) override;
  bool storedEnergy(double t, const double *X, double *energy) override;
  /// Sets one entry of the parameter array (an input, between steps).
  void setParameter(std::size_t slot, double value);

  /// Programs entered for the first time during this run (compiled then,
  /// for the compiler's system), and the time spent on them and on their
  /// Jacobians.
  std::size_t modesCompiled = 0;
  double compileSeconds = 0;

protected:
  /// The program of FSM states `q`; null with `why` set when there is
  /// none. May count a compilation in modesCompiled and compileSeconds.
  virtual std::shared_ptr<const ModeProgram> program(const std::vector<std::uint32_t> &q,
                                                     std::string &why) = 0;
  /// Drops the run's modes (a subclass that must release its programs
  /// before its own destructor finishes calls this first).
  void releaseModes() { modes_.clear(); }

private:
  std::vector<double> p_;
  std::size_t np_;
  bool switched_;
  const std::vector<std::optional<StorageLaw>> *laws_;
  /// By program: FSM states that differ only in names share one program
  /// (and one evaluator).
  std::map<const ModeProgram *, std::unique_ptr<ProgramMode>> modes_;
  std::vector<double> energyScratch_;
};

} // namespace hbg::runtime
