//===- compiler/driver/ModelImpl.h - What a compiled Model holds ----------===//
#pragma once

#include "hbg/hbg.h"
#include "hbg/codegen/CodeGen.h"
#include "hbg/driver/Internal.h"
#include "TierPolicy.h"
#include "hbg/equations/Equations.h"
#include "hbg/runtime/Energy.h"
#include "hbg/runtime/Guards.h"
#include "hbg/runtime/Newton.h"
#include "hbg/runtime/Program.h"
#include "hbg/runtime/Setup.h"
#include "hbg/runtime/Tape.h"
#include "hbg/bondgraph/BondGraph.h"
#include "hbg/support/Source.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace hbg {

class CodeTiers;

using runtime::ModeFn;
using runtime::ScatteredFn;
using runtime::Evaluator;

/// A group of functions compiled together: their specs for LLVM, their
/// tapes from the start, and the compiled module once LLVM is done.
struct TieredCode {
  std::shared_ptr<sym::ExprContext> ctx;
  std::vector<codegen::FunctionSpec> specs;
  /// The function of each spec, in the same order.
  std::vector<ModeFn *> fns;
  /// Evaluations of the right-hand side (of the Jacobian, for a
  /// Jacobian's code), counted until the optimised code is in.
  mutable std::atomic<std::uint32_t> calls{0};
  /// The code asked for so far, raised once per level: kQuickTier (LLVM's
  /// quick tier), kOptimisedTier.
  mutable std::atomic<int> requested{0};
  /// Set once the optimised code is published in every ModeFn.
  std::atomic<bool> compiled{false};
  codegen::CompiledModule module;
  /// LLVM's quick code (CodeGenOptions::quick), compiled first when the
  /// functions are large; kept while they live, since a run may still be
  /// in it when the optimised code is swapped in.
  codegen::CompiledModule quickModule;
  /// Set once the quick code is in (or was tried).
  std::atomic<bool> quickDone{false};
  /// Instructions of all the functions' tapes: their size.
  std::size_t tapeSize() const;
  /// Tape instructions one counted evaluation runs: the right-hand side's
  /// with its loops' residual and Jacobian, or the Jacobian's.
  std::size_t perCall() const;
  /// A mode's functions (counted in CodeTiers::compiledModes()), not a
  /// Jacobian's.
  bool mode = true;
  /// Where the code is compiled (set by CodeTiers::start in every tier).
  std::weak_ptr<CodeTiers> tiers;
  /// The owner (a ModeCode): the background thread keeps it alive while
  /// it compiles.
  std::weak_ptr<const void> owner;

  /// Adds function `name` of `outputs`, its tape built now (the caller
  /// holds the expression store's lock).
  void add(ModeFn &fn, std::string name, std::vector<sym::ExprId> outputs);
  /// Counts an evaluation at time t on the way to LLVM (Tiering::Tiered):
  /// the `hotCalls`-th asks for the code, or, by default, LLVM's cost is
  /// weighed against what its code would save over the rest of the run
  /// at the 64th, 128th, 256th, ... (CodeTiers::consider).
  void used(double t) const {
    if (trigger == Trigger::Never || compiled.load(std::memory_order_relaxed))
      return;
    std::uint32_t n = calls.fetch_add(1, std::memory_order_relaxed) + 1;
    if (trigger == Trigger::Count) {
      if (n == hotCalls)
        requestCompile(kQuickTier);
    } else if (n >= 64 && (n & (n - 1)) == 0) {
      consider(t, n);
    }
  }
  enum class Trigger : std::uint8_t { Never, Count, Cost };
  Trigger trigger = Trigger::Never;
  std::uint32_t hotCalls = std::numeric_limits<std::uint32_t>::max();
  /// Queues the code for the background thread at `level` (kQuickTier:
  /// quick first when large; for Trigger::Count, optimised after it),
  /// unless it was asked for at that level or higher before.
  void requestCompile(int level) const;
  /// Trigger::Cost: asks for the tier that pays back most, if any.
  void consider(double t, std::uint32_t calls) const;
};

/// How a model's code reaches LLVM (CompilerOptions::tiering): one JIT
/// session for all its modes, and the background thread that compiles
/// modes once they are hot. Destroying it stops the thread after the
/// compilation under way.
class CodeTiers : public std::enable_shared_from_this<CodeTiers> {
public:
  /// Tiered code is compiled once `hotCalls` evaluations ask for it, or,
  /// with hotCalls 0, when LLVM pays back (TieredCode::consider); code of
  /// `quickTierMin` tape instructions or more is compiled by LLVM's quick
  /// tier first, and with hotCalls given then optimised. Jit code of
  /// `jitQuickMin` tape instructions or more gets the quick tier before
  /// its first use, and the optimised code when it pays back.
  CodeTiers(codegen::CodeGenOptions opts, Tiering policy, unsigned hotCalls,
            std::size_t quickTierMin, std::size_t jitQuickMin);
  ~CodeTiers();
  /// Sets up `code`'s tiers once its functions are added: compiles it now
  /// (Tiering::Jit, `ctxLocked`: the caller holds the expression store's
  /// lock), or leaves it to its tapes until hot (Tiered; eager: queued at
  /// once) or for good (Tape).
  void start(TieredCode &code, std::shared_ptr<const void> owner, bool ctxLocked);
  /// Compiles `code` on this thread and swaps it in: optimised, or in
  /// LLVM's quick tier.
  void compileNow(TieredCode &code, bool ctxLocked, bool quick = false);
  /// Queues hot `code` for the background thread.
  void request(std::weak_ptr<TieredCode> code);
  /// Modes compiled so far (in the background or not).
  std::size_t compiledModes() const { return compiled_.load(); }
  /// How LLVM compiles (and optimises) the code.
  const codegen::CodeGenOptions &options() const { return opts_; }
  /// Modes compiled in LLVM's quick tier before being optimised.
  std::size_t quickModes() const { return quick_.load(); }
  /// The run under way integrates from t0 to tEnd (infinite when not
  /// known, as for the step API): how far it has come is what the cost
  /// of LLVM is weighed against.
  void runSpan(double t0, double tEnd) {
    t0_.store(t0, std::memory_order_relaxed);
    tEnd_.store(tEnd, std::memory_order_relaxed);
  }
  /// Evaluations still ahead for code evaluated `calls` times so far, now
  /// at time t: as many again per unit of time until the run's end, and
  /// as many again as so far when the end is not known.
  double callsAhead(double t, std::uint32_t calls) const;
  const TierCosts &costs() const { return costs_; }

private:
  void run();
  std::shared_ptr<codegen::JitSession> session();
  codegen::CodeGenOptions opts_;
  Tiering policy_;
  unsigned hotCalls_;
  std::size_t quickTierMin_, jitQuickMin_;
  TierCosts costs_;
  std::atomic<double> t0_{0}, tEnd_{std::numeric_limits<double>::infinity()};
  std::mutex sessionMutex_;
  std::shared_ptr<codegen::JitSession> session_;
  std::atomic<std::size_t> compiled_{0}, quick_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  /// Newest first: a mode just entered is the one the run is in.
  std::deque<std::weak_ptr<TieredCode>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

/// ScatteredFn's map for `entries`: fills `f.of` and `f.distinct`, and
/// returns the distinct expressions (what f.fn computes).
std::vector<sym::ExprId> gather(ScatteredFn &f, const std::vector<sym::ExprId> &entries);

/// A mode's Jacobian program, differentiated from its equations and
/// compiled in the mode's tiers.
struct JacobianCode final : runtime::JacobianProgram {
  TieredCode code;
  void used(double t) const override { code.used(t); }
};

/// A mode's powers of its R elements and sources, compiled in the mode's
/// tiers.
struct PowersCode {
  TieredCode code;
  ModeFn fn;
};

/// The compiled code of one mode (of the only mode, for models without
/// switched junctions). Every function takes x = [states, Newton unknowns]
/// and p = [parameters, held values, kink branches].
struct ModeCode final : runtime::ModeProgram, std::enable_shared_from_this<ModeCode> {
  eq::EquationSystem equations;
  /// The Jacobian's code, differentiated and compiled on first use (only
  /// stiff methods ask for it).
  const JacobianCode &jacobianCode() const;
  const runtime::JacobianProgram &jacobianProgram() const override { return jacobianCode(); }
  mutable std::once_flag jacobianOnce;
  mutable std::unique_ptr<JacobianCode> jacobianCompiled;
  /// e * f of each power port (eq::EquationSystem::powerPorts) with its
  /// sign, then its work per unit jump of each dependent storage
  /// (eq::EquationSystem::sourceWork), built on first use: runs that never
  /// ask for powers pay nothing.
  const ModeFn *powers() const override;
  mutable std::once_flag powersOnce;
  mutable std::unique_ptr<PowersCode> powersCompiled;
  /// The functions of runtime::ModeProgram, as tapes and (once compiled)
  /// LLVM code; its tiers also serve the Jacobian's code.
  TieredCode code;
  void used(double t) const override { code.used(t); }
};

struct Model::Impl {
  /// The initial mode (the only one without switched junctions).
  std::shared_ptr<ModeCode> initial;
  std::vector<std::string> parameterNames, stateNames, outputNames;
  /// The R elements and sources whose power the modes compute (the
  /// initial mode's eq::EquationSystem::powerPorts).
  std::vector<runtime::PowerElement> powerElements;
  /// The inputs, and their slots in the parameter array.
  std::vector<std::string> inputNames;
  std::vector<std::uint32_t> inputSlots;
  /// Fills parameterNames, inputNames and inputSlots from `sys`.
  void nameParameters(const eq::EquationSystem &sys) {
    for (std::uint32_t i = 0; i < sys.parameters.size(); ++i) {
      parameterNames.push_back(sys.parameters[i].name);
      if (sys.parameters[i].input) {
        inputNames.push_back(sys.parameters[i].name);
        inputSlots.push_back(i);
      }
    }
  }
  /// Fills powerElements from `sys` (every mode has the same ports).
  void namePowers(const eq::EquationSystem &sys) {
    for (const eq::PowerPort &port : sys.powerPorts)
      powerElements.push_back({port.name, port.kind});
  }
  eq::EquationOptions equationOptions;
  /// Parameter defaults, initial values, nominal magnitudes and the
  /// experiment block as tapes (runtime::SetupProgram), built once the
  /// initial mode and the full state are known.
  runtime::SetupProgram setup;
  void buildSetup();

  /// The checked bond graph, whose expressions (in the same store as the
  /// equations') Model::sourcePeriod reads, and from which a switched
  /// model analyses its modes; null for a model compiled from equations
  /// alone (driver::compileEquations).
  std::shared_ptr<bg::BondGraph> graph;

  // Switched models only.
  bool switched = false;
  std::shared_ptr<SourceManager> sources;
  /// Notes for a mode's diagnostics: the instance a line inside a
  /// component belongs to.
  DiagnosticEngine::ContextFn context;
  /// The junctions' state machines and guards, as the runtime sees them,
  /// and each junction's element in the graph.
  runtime::Switching switching;
  std::vector<std::uint32_t> junctionElements;
  /// Full state vector: every storage element, then every integrator;
  /// their initial values and nominal magnitudes (invalid: none).
  std::vector<sym::ExprId> initialValues, nominalValues;
  /// The law of each storage element, by its slot in the full state (they
  /// come first), for the energy audit; none where the law reads more
  /// than its own state, time and parameters.
  std::vector<std::optional<runtime::StorageLaw>> storageLaws;
  /// For each state: `full` (switched models, by full-state slot) or the
  /// given field of the equations' states (plain models).
  std::vector<sym::ExprId> stateExprs(sym::ExprId eq::State::*field,
                                      const std::vector<sym::ExprId> &full) const;
  /// Index in the full state vector by state name.
  std::unordered_map<std::string, std::uint32_t> stateIndex;
  /// Places a switched mode's states and dependent storage in the full
  /// state vector.
  void placeInState(ModeCode &m) const;

  /// The mode of FSM states `q` (one per switched junction).
  bg::Mode modeOf(const std::vector<std::uint32_t> &q) const {
    bg::Mode mode = bg::initialMode(*graph);
    mode.on.resize(graph->elements.size(), true);
    for (std::size_t j = 0; j < q.size(); ++j) {
      std::uint32_t element = junctionElements[j];
      const bg::Fsm &fsm = *graph->elements[element].fsm;
      mode.on[element] = fsm.states[q[j]].on;
      if (fsm.observed)
        mode.state[element] = q[j];
    }
    return mode;
  }
  /// The code of `mode`, analysed and compiled on first use. Throws
  /// CompileError (diagnostics of that mode) when the mode cannot be
  /// analysed.
  std::shared_ptr<ModeCode> modeCode(const bg::Mode &mode) const;
  /// A mode that has no causal assignment because sources conflict with
  /// each other or with OFF junctions through ON junctions, analysed with
  /// stand-ins for the conflicting sources; null when stand-ins do not
  /// resolve the conflict. `why`: the conflict's diagnostics.
  std::shared_ptr<ModeCode> shortedMode(const bg::Mode &mode, std::string why) const;
  std::size_t modesCompiled() const;

  mutable std::mutex cacheMutex;
  /// Every mode analysed and not evicted, and when it was last asked for.
  struct Cached {
    std::shared_ptr<ModeCode> code;
    std::uint64_t lastUse = 0;
  };
  mutable std::map<std::vector<std::uint32_t>, Cached> cache;
  mutable std::uint64_t uses = 0;
  /// Modes analysed so far (evicted ones, and ones analysed again, count).
  mutable std::size_t analysed = 0;
  /// Above this many cached modes, the least recently used ones that no
  /// run holds are dropped (CompilerOptions::maxCachedModes).
  std::size_t maxCachedModes = 256;
  /// Drops modes while the cache is above its bound (cacheMutex held).
  void evict() const;
  /// The LLVM tier of every mode. Last: destroyed first, its thread
  /// stops before the modes and expressions it compiles go.
  std::shared_ptr<CodeTiers> tiers;
};

/// Compiles one mode's equations (shared by the plain and switched paths):
/// its tapes now, its LLVM code as `tiers` decides. The caller holds the
/// expression store's lock when `ctxLocked`.
std::shared_ptr<ModeCode> compileMode(eq::EquationSystem equations,
                                      const std::shared_ptr<CodeTiers> &tiers, bool switched,
                                      bool ctxLocked);

/// Why a run cannot set structural parameter `name` to another value
/// than `built`, the one the model was compiled with.
std::string structuralMessage(const std::string &name, double built);

/// The index of `name` in `names`; throws std::invalid_argument (`model
/// `M` has no <what> `name``, with the closest name) when it is absent.
std::size_t indexOf(const std::vector<std::string> &names, const std::string &name,
                    const std::string &what, const std::string &model);

} // namespace hbg
