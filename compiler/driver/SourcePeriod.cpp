//===- compiler/driver/SourcePeriod.cpp - The period of a model's sources -===//
//
// Model::sourcePeriod: the common period T of everything the model's
// behaviour reads, in the sense that matters to a periodically driven
// system: every expression e(t, x) of time t and of the rest (states,
// efforts, flows, held values, junction states) satisfies
// e(t + T, x) = e(t, x) for every x. The expressions are the bond graph's
// (element values and laws, signals, integrators' inputs, held values,
// outputs, guards), so no mode is analysed: each mode's equations are
// made from these and read time only through them.
//
// Each node of the DAG is classified once, operands first (Timing):
// free of time; periodic; a t + p(t) with p periodic or free ("linear",
// growing with time), or not periodic, with the node at fault. Linear
// nodes are what make the floor-based functions work: floor(x) for x
// affine in time is x minus a periodic part, so `x - floor(x)` (mod,
// saw, pwm, pulse) cancels the slopes and is periodic, while a floor
// alone grows like a staircase. sin, cos and tan of a linear argument
// are periodic. A sign (a comparison, `if`, `step`) of an argument
// affine in time changes once; it counts as constant when that happens
// by the start time, and makes the model not periodic otherwise.
//
//===----------------------------------------------------------------------===//

#include "ModelImpl.h"

#include "hbg/support/Diagnostics.h"

#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace hbg {

namespace {

/// How an expression depends on time.
struct Timing {
  enum Kind : std::uint8_t {
    Free,      ///< not at all
    Periodic,  ///< periodic with every common multiple of the periods under it
    Linear,    ///< `slope` t plus a periodic or free part: grows with time
    Aperiodic, ///< none of these: `culprit` is the node at fault, `reason` why
  } kind = Free;
  /// Free: a number of the parameters alone. Linear: `slope` t + b with b
  /// such a number (`affine`).
  bool parametric = true;
  /// Linear: nothing periodic is added to `slope` t.
  bool affine = true;
  double slope = 0;
  enum Reason : std::uint8_t {
    Grows,     ///< time enters outside a periodic function
    StateRate, ///< a rate of change in time that depends on the state
    Once,      ///< a sign of time that changes once, at `at`
    NotFinite, ///< a rate of change that is not a finite number
  } reason = Grows;
  double at = 0;
  sym::ExprId culprit;
  /// Aperiodic: the signal whose expression holds the culprit (innermost).
  std::uint32_t signal = UINT32_MAX;

  static Timing free(bool parametric) {
    Timing t;
    t.parametric = parametric;
    return t;
  }
  static Timing periodic() {
    Timing t;
    t.kind = Periodic;
    t.parametric = false;
    return t;
  }
  static Timing linear(double slope, bool affine, bool parametric) {
    Timing t;
    t.kind = Linear;
    t.slope = slope;
    t.affine = affine;
    t.parametric = parametric;
    return t;
  }
  static Timing aperiodic(sym::ExprId culprit, Reason reason, double at = 0) {
    Timing t;
    t.kind = Aperiodic;
    t.parametric = false;
    t.culprit = culprit;
    t.reason = reason;
    t.at = at;
    return t;
  }
  /// Periodic when any of `parts` is, else free (of the parameters when
  /// they all are): a function of functions that do not grow with time.
  static Timing of(std::initializer_list<const Timing *> parts) {
    bool periodic = false, parametric = true;
    for (const Timing *p : parts) {
      periodic = periodic || p->kind == Periodic;
      parametric = parametric && p->parametric;
    }
    return periodic ? Timing::periodic() : Timing::free(parametric);
  }
};

/// Slopes that cancel to within this, relative to the larger, cancel:
/// `period * floor(t / period)` has slope period * (1 / period), which
/// rounding may leave a few ulps from 1.
constexpr double kSlopeCancel = 1e-12;

constexpr double kPi = 3.141592653589793;

/// The classification of a graph's expressions at given parameter values.
class PeriodAnalysis {
public:
  PeriodAnalysis(const bg::BondGraph &g, const std::vector<double> &params, double tStart)
      : g_(g), ctx_(*g.ctx), params_(params), tStart_(tStart),
        signalState_(g.signals.size(), Unseen), signals_(g.signals.size()),
        signalValue_(g.signals.size(), std::nan("")) {}

  /// Classifies every node of `roots`, the expressions the model reads,
  /// and of the signals they read, each signal after those it reads.
  void classify(const std::vector<sym::ExprId> &roots) {
    std::vector<std::uint32_t> ids = ctx_.reach(roots), read;
    for (std::uint32_t i : ids) {
      const sym::Node &n = ctx_.node(sym::ExprId{i});
      if (n.op == sym::Op::Symbol && g_.variable(n.symbol).kind == bg::VariableInfo::Signal)
        read.push_back(g_.variable(n.symbol).index);
    }
    resolveSignals(read);
    classifyNodes(ids);
  }
  /// The timing of `root` (classified), an expression the model reads as
  /// a value: one that grows with time is not periodic.
  Timing value(sym::ExprId root) const {
    const Timing &t = memo_.at(root.index);
    return t.kind == Timing::Linear ? Timing::aperiodic(root, Timing::Grows) : t;
  }
  /// The timing of the truth of `root > 0` (or any other comparison with
  /// 0), as a guard reads it.
  Timing comparison(sym::ExprId root) { return compared(root, memo_.at(root.index)); }

  /// The periodic functions found, with their periods.
  std::vector<std::pair<std::string, double>> sources;

private:
  /// Classifies the nodes `ids` (increasing) not classified yet.
  void classifyNodes(const std::vector<std::uint32_t> &ids) {
    for (std::uint32_t i : ids)
      if (!memo_.count(i))
        memo_.emplace(i, node(sym::ExprId{i}));
  }

  /// The signals `e` reads, directly.
  std::vector<std::uint32_t> signalsRead(sym::ExprId e) const {
    std::vector<std::uint32_t> out;
    for (sym::SymbolId s : ctx_.symbolsOf(e)) {
      bg::VariableInfo info = g_.variable(s);
      if (info.kind == bg::VariableInfo::Signal)
        out.push_back(info.index);
    }
    return out;
  }

  /// Classifies the signals `read` and those they read, each after those
  /// it reads (iteratively: chains of signals may be long).
  void resolveSignals(const std::vector<std::uint32_t> &read) {
    std::vector<std::pair<std::uint32_t, bool>> stack; // signal, expanded
    for (std::uint32_t s : read)
      stack.push_back({s, false});
    while (!stack.empty()) {
      auto [s, expanded] = stack.back();
      if (expanded) {
        stack.pop_back();
        classifySignal(s);
        continue;
      }
      if (signalState_[s] != Unseen) { // done, or on the path (a cycle)
        stack.pop_back();
        continue;
      }
      signalState_[s] = Open;
      stack.back().second = true;
      for (std::uint32_t r : signalsRead(g_.signals[s].value))
        if (signalState_[r] == Unseen)
          stack.push_back({r, false});
    }
  }

  void classifySignal(std::uint32_t s) {
    sym::ExprId v = g_.signals[s].value;
    classifyNodes(ctx_.reach({v}));
    Timing t = memo_.at(v.index);
    if (t.kind == Timing::Aperiodic && t.signal == UINT32_MAX)
      t.signal = s;
    signals_[s] = t;
    signalState_[s] = Done;
    if (t.parametric && (t.kind == Timing::Free || (t.kind == Timing::Linear && t.affine)))
      signalValue_[s] = number(v);
  }

  /// The value of `e` at time 0, of the parameters alone (NaN where it
  /// reads anything else).
  double number(sym::ExprId e) {
    auto it = numbers_.find(e.index);
    if (it != numbers_.end())
      return it->second;
    double v = ctx_.evaluate(e, [this](sym::SymbolId s) {
      const sym::Symbol &sy = ctx_.symbol(s);
      if (s == ctx_.timeSymbol())
        return 0.0;
      if (sy.kind == sym::SymbolKind::Parameter && sy.slot < g_.parameters.size())
        return params_[sy.slot];
      bg::VariableInfo info = g_.variable(s);
      if (info.kind == bg::VariableInfo::Signal)
        return signalValue_[info.index];
      return std::nan("");
    });
    numbers_.emplace(e.index, v);
    return v;
  }

  Timing symbol(sym::SymbolId s) const {
    const sym::Symbol &sy = ctx_.symbol(s);
    if (s == ctx_.timeSymbol())
      return Timing::linear(1, true, true);
    if (sy.kind == sym::SymbolKind::Parameter) // held values follow the parameters
      return Timing::free(sy.slot < g_.parameters.size());
    bg::VariableInfo info = g_.variable(s);
    if (info.kind == bg::VariableInfo::Signal && signalState_[info.index] == Done)
      return signals_[info.index];
    // A state, effort, flow, integral or junction state: what the system
    // is, not a function of time.
    return Timing::free(false);
  }

  /// The sign of `arg` (a comparison, `if`, `step`): periodic or free as
  /// `arg` is; for `arg` affine in time, constant once it has changed
  /// sign, which must be by the start time.
  Timing compared(sym::ExprId arg, const Timing &t) {
    if (t.kind != Timing::Linear)
      return t;
    if (!t.affine || !t.parametric)
      return Timing::aperiodic(arg, Timing::Grows);
    double when = -number(arg) / t.slope;
    if (!std::isfinite(when))
      return Timing::aperiodic(arg, Timing::NotFinite);
    if (when > tStart_)
      return Timing::aperiodic(arg, Timing::Once, when);
    return Timing::free(false);
  }

  /// `k` times linear `t`, with `k` the node `factor`: its value must be
  /// known from the parameters.
  Timing scaled(sym::ExprId id, const Timing &t, sym::ExprId factor, const Timing &f, bool divide) {
    if (!f.parametric)
      return Timing::aperiodic(id, Timing::StateRate);
    double k = number(factor);
    if (divide)
      k = 1 / k;
    if (!std::isfinite(k))
      return Timing::aperiodic(id, Timing::NotFinite);
    if (k == 0)
      return Timing::free(t.parametric);
    return Timing::linear(t.slope * k, t.affine, t.parametric);
  }

  /// The timing of `a + sign b`.
  static Timing sum(const Timing &a, const Timing &b, double sign) {
    if (a.kind != Timing::Linear && b.kind != Timing::Linear)
      return Timing::of({&a, &b});
    auto slope = [](const Timing &t) { return t.kind == Timing::Linear ? t.slope : 0.0; };
    auto periodicPart = [](const Timing &t) {
      return t.kind == Timing::Periodic || (t.kind == Timing::Linear && !t.affine);
    };
    bool periodic = periodicPart(a) || periodicPart(b);
    bool parametric = a.parametric && b.parametric;
    double s = slope(a) + sign * slope(b);
    if (std::abs(s) <= kSlopeCancel * std::max(std::abs(slope(a)), std::abs(slope(b))))
      return periodic ? Timing::periodic() : Timing::free(parametric);
    return Timing::linear(s, !periodic, parametric);
  }

  /// sin, cos or tan of `a`, whose period is `cycle` in its argument.
  Timing wave(sym::ExprId id, const Timing &a, double cycle) {
    if (a.kind != Timing::Linear)
      return Timing::of({&a});
    found(id, cycle / std::abs(a.slope));
    return Timing::periodic();
  }

  void found(sym::ExprId id, double period) { sources.push_back({ctx_.print(id), period}); }

  Timing node(sym::ExprId id) {
    const sym::Node &n = ctx_.node(id);
    if (n.op == sym::Op::Const)
      return Timing::free(true);
    if (n.op == sym::Op::Symbol)
      return symbol(n.symbol);
    int k = sym::arity(n.op);
    Timing a = memo_.at(n.lhs.index);
    Timing b = k >= 2 ? memo_.at(n.rhs.index) : Timing::free(true);
    Timing c = k >= 3 ? memo_.at(n.third.index) : Timing::free(true);
    for (const Timing *t : {&a, &b, &c})
      if (t->kind == Timing::Aperiodic)
        return *t;
    bool linear = a.kind == Timing::Linear || b.kind == Timing::Linear || c.kind == Timing::Linear;
    switch (n.op) {
    case sym::Op::Neg:
      a.slope = -a.slope;
      return a;
    case sym::Op::Add:
      return sum(a, b, 1);
    case sym::Op::Sub:
      return sum(a, b, -1);
    case sym::Op::Mul:
      if (a.kind == Timing::Linear && b.kind == Timing::Free)
        return scaled(id, a, n.rhs, b, false);
      if (b.kind == Timing::Linear && a.kind == Timing::Free)
        return scaled(id, b, n.lhs, a, false);
      break;
    case sym::Op::Div:
      if (a.kind == Timing::Linear && b.kind == Timing::Free)
        return scaled(id, a, n.rhs, b, true);
      break;
    case sym::Op::Sin:
    case sym::Op::Cos:
      return wave(id, a, 2 * kPi);
    case sym::Op::Tan:
      return wave(id, a, kPi);
    case sym::Op::Floor:
      // floor(x) = x - (x - floor(x)): x less a part of period 1 / |slope|.
      if (a.kind != Timing::Linear)
        return Timing::of({&a});
      found(id, 1 / std::abs(a.slope));
      return Timing::linear(a.slope, false, false);
    case sym::Op::Sign:
      return compared(n.lhs, a);
    case sym::Op::Select: {
      Timing condition = compared(n.lhs, a);
      if (condition.kind == Timing::Aperiodic)
        return condition;
      if (b.kind == Timing::Linear || c.kind == Timing::Linear)
        break;
      return Timing::of({&condition, &b, &c});
    }
    default:
      break;
    }
    if (linear)
      return Timing::aperiodic(id, Timing::Grows);
    return Timing::of({&a, &b, &c});
  }

  enum SignalState : std::uint8_t { Unseen, Open, Done };
  const bg::BondGraph &g_;
  const sym::ExprContext &ctx_;
  const std::vector<double> &params_;
  double tStart_;
  std::vector<SignalState> signalState_;
  std::vector<Timing> signals_;
  std::vector<double> signalValue_;
  std::unordered_map<std::uint32_t, Timing> memo_;
  std::unordered_map<std::uint32_t, double> numbers_;
};

/// n / d in lowest terms with both at most kMaxRatio, within a relative
/// 1e-9 of `r`.
constexpr long kMaxRatio = 1000;
bool smallRatio(double r, long &n, long &d) {
  for (d = 1; d <= kMaxRatio; ++d) {
    double nd = r * d;
    n = std::lround(nd);
    if (n >= 1 && n <= kMaxRatio && std::abs(nd - static_cast<double>(n)) <= 1e-9 * nd)
      return true;
  }
  return false;
}

std::string seconds(double t) { return timeText(t) + " s"; }

} // namespace

Model::SourcePeriod Model::sourcePeriod(const std::vector<double> &params) const {
  SourcePeriod out;
  if (!impl_->graph) {
    out.why = "model `" + name() + "` was compiled from equations, without its bond graph";
    return out;
  }
  const bg::BondGraph &g = *impl_->graph;
  if (params.size() < g.parameters.size())
    throw std::invalid_argument("sourcePeriod: " + std::to_string(params.size()) +
                                " parameter values for " + std::to_string(g.parameters.size()) +
                                " parameters");
  // A sign of time that has changed by the start of a run is constant
  // over it: the model's own start (0 by default).
  double tStart = SimulationOptions().tStart;
  try {
    if (std::optional<double> t = impl_->setup.experimentValues(params, name()).tStart)
      tStart = *t;
  } catch (const std::invalid_argument &) {
    // An invalid experiment block: runs will say so; start at the default.
  }

  // What the behaviour reads, and where, for the message.
  struct Root {
    sym::ExprId expr;
    std::string what;
    bool guard = false;
  };
  std::vector<Root> roots;
  for (const bg::Element &e : g.elements) {
    std::string what = (bg::isJunction(e.kind) ? std::string("junction") : bg::kindName(e.kind)) +
                       " `" + e.name + "`";
    if (e.value.valid())
      roots.push_back({e.value, what});
    if (e.lawExpr.valid())
      roots.push_back({e.lawExpr, "the law of " + what});
    if (e.fsm)
      for (const bg::FsmTransition &t : e.fsm->transitions)
        for (const bg::Guard *c : eq::guardComparisons(t.guard))
          roots.push_back({c->value, "a guard of " + what, true});
  }
  for (const bg::Integrator &i : g.integrators)
    roots.push_back({i.input, "`" + i.name + "`"});
  for (const bg::Held &h : g.held)
    roots.push_back({h.value, "`" + h.name + "`"});
  for (const bg::Output &o : g.outputs)
    roots.push_back({o.value, "output `" + o.name + "`"});

  std::lock_guard<std::mutex> lock(g.ctx->mutex());
  PeriodAnalysis analysis(g, params, tStart);
  std::vector<sym::ExprId> exprs;
  for (const Root &r : roots)
    exprs.push_back(r.expr);
  analysis.classify(exprs);
  Timing fault;
  std::string where;
  bool timed = false;
  for (const Root &r : roots) {
    Timing t = r.guard ? analysis.comparison(r.expr) : analysis.value(r.expr);
    timed = timed || t.kind != Timing::Free;
    if (t.kind == Timing::Aperiodic && fault.kind != Timing::Aperiodic) {
      fault = t;
      where = r.what;
    }
  }
  out.sources = std::move(analysis.sources);

  if (fault.kind == Timing::Aperiodic) {
    std::string text = "`" + g.ctx->print(fault.culprit) + "` (";
    if (fault.signal != UINT32_MAX)
      text += "in signal `" + g.signals[fault.signal].name + "`, read by ";
    text += where + ")";
    switch (fault.reason) {
    case Timing::Grows:
      out.why = text + " changes with time outside a periodic function (sin, cos, or the floor "
                       "of a phase, as in pwm, pulse, saw and mod): it is not periodic";
      break;
    case Timing::StateRate:
      out.why = text + " changes with time at a rate that depends on the model's state: it is "
                       "not periodic";
      break;
    case Timing::Once:
      out.why = text + " changes sign once, at t = " + timeText(fault.at) +
                ", after the run starts at t = " + timeText(tStart) +
                " (a `step`, or a comparison of time): the model is not periodic before then";
      break;
    case Timing::NotFinite:
      out.why = text + " changes with time at a rate that is not a finite number at these "
                       "parameter values";
      break;
    }
    return out;
  }
  if (!timed || out.sources.empty()) {
    out.why = "no source of the model depends on time";
    return out;
  }

  // The least common multiple: each period a small fraction of the
  // common one so far.
  const auto &src = out.sources;
  double period = src.front().second;
  for (std::size_t i = 1; i < src.size(); ++i) {
    long n = 0, d = 0;
    if (smallRatio(src[i].second / period, n, d)) {
      period *= static_cast<double>(n);
      continue;
    }
    std::size_t j = 0; // the first source with no common multiple with this one
    while (j + 1 < i && smallRatio(src[i].second / src[j].second, n, d))
      ++j;
    out.why = "the periods of `" + src[j].first + "` (" + seconds(src[j].second) + ") and `" +
              src[i].first + "` (" + seconds(src[i].second) +
              ") have no common multiple: their ratio is no fraction of whole numbers up to " +
              std::to_string(kMaxRatio);
    return out;
  }
  out.period = period;
  return out;
}

} // namespace hbg
