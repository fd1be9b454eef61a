//===- compiler/driver/Tiers.cpp - Tapes first, LLVM when hot -------------===//
//
// A mode's functions run on tapes from the moment the mode is analysed:
// building a tape is linear in the DAG and takes microseconds per hundred
// nodes, where LLVM takes milliseconds. A mode that keeps being evaluated
// is compiled by LLVM on a background thread and its code swapped in,
// function by function, through atomic pointers; a large one is compiled
// by LLVM's quick tier first (no optimisation, fast instruction selection
// and register allocation), then optimised. A mode only passed
// through during an event (a mythical mode) never reaches LLVM. All of a
// model's modules share one LLJIT, each under a resource tracker of its
// own, so a dropped mode frees its code.
//
//===----------------------------------------------------------------------===//

#include "ModelImpl.h"

#include "hbg/codegen/Tape.h"

#include <cmath>

namespace hbg {

void TieredCode::add(ModeFn &fn, std::string name, std::vector<sym::ExprId> outputs) {
  std::optional<runtime::Tape> tape = codegen::buildTape(*ctx, outputs, /*unknownsInX=*/true);
  if (!tape)
    throw InternalError("function `" + name + "` reads a symbol that has no slot");
  fn.tape = std::move(*tape);
  fn.present = true;
  specs.push_back({std::move(name), std::move(outputs)});
  fns.push_back(&fn);
}

void TieredCode::requestCompile(int level) const {
  std::shared_ptr<CodeTiers> t = tiers.lock();
  std::shared_ptr<const void> keep = owner.lock();
  if (!t || !keep)
    return;
  int before = requested.load();
  do {
    if (before >= level)
      return;
  } while (!requested.compare_exchange_weak(before, level));
  // Aliasing: the queue's pointer keeps the owner (the mode) alive.
  // Evaluators see the code as const; swapping its tier in is the one
  // change it takes, through the atomics of its functions.
  t->request(std::shared_ptr<TieredCode>(keep, const_cast<TieredCode *>(this)));
}

void TieredCode::consider(double t, std::uint32_t n) const {
  std::shared_ptr<CodeTiers> tiers = this->tiers.lock();
  if (!tiers)
    return;
  int current = requested.load();
  if (current >= kOptimisedTier)
    return;
  int level = chooseTier(tiers->costs(), perCall(), tapeSize(), tiers->callsAhead(t, n), current,
                         codegen::backendLoaded(), fns[0]->baseline != nullptr);
  if (level > current)
    requestCompile(level);
}

int chooseTier(const TierCosts &c, std::size_t perCall, std::size_t size, double callsAhead,
               int current, bool loaded, bool baseline) {
  // Nanoseconds the rest of the run saves on each tier, net of compiling
  // it; a tier already asked for is paid.
  double calls = static_cast<double>(perCall) * callsAhead; // instructions ahead
  double now = current >= kQuickTier ? c.quickNs : baseline ? c.baselineNs : c.tapeNs;
  double fixed = c.moduleNs + (loaded ? 0 : c.loadNs);
  double quickGain = current >= kQuickTier
                         ? -1
                         : calls * (now - c.quickNs) -
                               (fixed + c.quickCompileNs * static_cast<double>(size));
  double optimisedGain = calls * (now - c.optimisedNs) -
                         (fixed + c.optimisedCompileNs * static_cast<double>(size));
  if (optimisedGain > 0 && optimisedGain >= quickGain)
    return kOptimisedTier;
  if (quickGain > 0)
    return kQuickTier;
  return current;
}

std::size_t TieredCode::tapeSize() const {
  std::size_t n = 0;
  for (const ModeFn *f : fns)
    n += f->tape.code.size();
  return n;
}

std::size_t TieredCode::perCall() const {
  // The first function is the one counted (the right-hand side, or the
  // Jacobian); a mode's loops are solved on every call of it.
  std::size_t n = 0;
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (i == 0 || specs[i].name == "residual" || specs[i].name == "jacobian")
      n += fns[i]->tape.code.size();
  return n;
}

double CodeTiers::callsAhead(double t, std::uint32_t calls) const {
  double t0 = t0_.load(std::memory_order_relaxed), tEnd = tEnd_.load(std::memory_order_relaxed);
  double done = t - t0, total = tEnd - t0;
  if (!(done > 0) || !(total > done) || !std::isfinite(total))
    return calls; // as many again
  return calls * ((total - done) / done);
}

CodeTiers::CodeTiers(codegen::CodeGenOptions opts, Tiering policy, unsigned hotCalls,
                     std::size_t quickTierMin, std::size_t jitQuickMin)
    : opts_(std::move(opts)), policy_(policy), hotCalls_(hotCalls), quickTierMin_(quickTierMin),
      jitQuickMin_(jitQuickMin) {}

CodeTiers::~CodeTiers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

std::shared_ptr<codegen::JitSession> CodeTiers::session() {
  std::lock_guard<std::mutex> lock(sessionMutex_);
  if (!session_)
    session_ = codegen::JitSession::create();
  return session_;
}

void CodeTiers::start(TieredCode &code, std::shared_ptr<const void> owner, bool ctxLocked) {
  code.owner = std::move(owner);
  code.tiers = weak_from_this();
  switch (policy_) {
  case Tiering::Jit:
    if (!opts_.quick && code.tapeSize() >= jitQuickMin_) {
      // Optimising code this large takes seconds (docs/performance.md,
      // "JIT-ready at scale"): its quick code is ready in a tenth of the
      // time, and the optimised code follows once it pays back, weighed
      // as for the tiered policy (a run that ends soon never waits for it).
      code.requested = kQuickTier;
      compileNow(code, ctxLocked, /*quick=*/true);
      code.quickDone = true;
      code.trigger = TieredCode::Trigger::Cost;
      return;
    }
    code.requested = kOptimisedTier;
    compileNow(code, ctxLocked);
    return;
  case Tiering::Tiered: {
    // Until LLVM's code is in, the tapes run as baseline machine code.
    std::vector<const runtime::Tape *> tapes;
    for (const ModeFn *f : code.fns)
      tapes.push_back(&f->tape);
    if (std::shared_ptr<const runtime::BaselineCode> b = runtime::BaselineCode::translate(tapes)) {
      for (std::size_t i = 0; i < code.fns.size(); ++i) {
        code.fns[i]->baseline = b->entry(i);
        code.fns[i]->baselineCode = b;
      }
    }
    code.trigger = hotCalls_ ? TieredCode::Trigger::Count : TieredCode::Trigger::Cost;
    code.hotCalls = hotCalls_;
    return;
  }
  case Tiering::Tape:
    return;
  }
}

void CodeTiers::compileNow(TieredCode &code, bool ctxLocked, bool quick) {
  codegen::CodeGenOptions opts = opts_;
  opts.quick = opts.quick || quick;
  codegen::CodeGenerator gen(opts);
  codegen::LoweredModule lowered;
  if (ctxLocked) {
    lowered = gen.lower(*code.ctx, code.specs);
  } else {
    // Lowering reads the expression store, which analysing another mode
    // grows; optimising and compiling do not.
    std::lock_guard<std::mutex> lock(code.ctx->mutex());
    lowered = gen.lower(*code.ctx, code.specs);
  }
  codegen::CompiledModule &module = quick ? code.quickModule : code.module;
  module = gen.compile(std::move(lowered), session());
  for (std::size_t i = 0; i < code.specs.size(); ++i) {
    codegen::CompiledFn f = module.lookup(code.specs[i].name);
    if (!f)
      throw InternalError("generated function `" + code.specs[i].name +
                          "` missing from the JIT");
    code.fns[i]->jit.store(f, std::memory_order_release);
  }
  if (quick) {
    if (code.mode)
      ++quick_;
    return;
  }
  code.compiled = true;
  if (code.mode)
    ++compiled_;
}

void CodeTiers::request(std::weak_ptr<TieredCode> code) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_)
      return;
    queue_.push_front(std::move(code));
    if (!thread_.joinable())
      thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

void CodeTiers::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_)
      break;
    std::shared_ptr<TieredCode> code = queue_.front().lock();
    queue_.pop_front();
    if (!code)
      continue; // the mode was dropped before its turn
    lock.unlock();
    // Asked for the quick tier: large code (any code, when the cost
    // decided) gets it, about a tenth of the compile time; by count, it is
    // then queued again, behind everything waiting, to be optimised.
    int level = code->requested.load();
    bool byCost = code->trigger == TieredCode::Trigger::Cost;
    bool quick = level == kQuickTier &&
                 (byCost || code->tapeSize() >= quickTierMin_);
    bool skip = quick ? code->quickDone.load() : code->compiled.load();
    if (!skip) {
      try {
        compileNow(*code, false, quick);
      } catch (const std::exception &) {
        // The tapes compute the same values: a mode whose compilation
        // fails keeps running on them.
        quick = false;
      }
    }
    if (quick)
      code->quickDone = true;
    lock.lock();
    if (quick && !byCost && !stop_) {
      code->requested = kOptimisedTier;
      queue_.push_back(code);
    }
    code.reset();
  }
}

} // namespace hbg
