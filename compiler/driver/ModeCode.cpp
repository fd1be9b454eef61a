//===- compiler/driver/ModeCode.cpp - Compiling one mode's functions ------===//
//
// The functions of a mode (right-hand side, outputs, loops, guards, kinks,
// dependent states, impulses) and its Jacobian, as tapes and for LLVM.
//
//===----------------------------------------------------------------------===//

#include "ModelImpl.h"

#include "hbg/codegen/Tape.h"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace hbg {

std::vector<sym::ExprId> gather(ScatteredFn &f, const std::vector<sym::ExprId> &entries) {
  std::vector<std::uint32_t> &of = f.of;
  std::unordered_map<std::uint32_t, std::uint32_t> slot;
  std::vector<sym::ExprId> values;
  of.clear();
  for (sym::ExprId e : entries) {
    auto [it, added] = slot.emplace(e.index, static_cast<std::uint32_t>(values.size()));
    if (added)
      values.push_back(e);
    of.push_back(it->second);
  }
  if (values.size() == entries.size())
    of.clear();
  f.distinct = values.size();
  return values;
}

const JacobianCode &ModeCode::jacobianCode() const {
  std::call_once(jacobianOnce, [&] {
    std::lock_guard<std::mutex> lock(equations.ctx->mutex());
    auto jc = std::make_unique<JacobianCode>();
    eq::StateJacobian sj = eq::stateJacobian(equations);
    std::size_t n = equations.states.size();
    // The pattern: fx's entries, and every row fz reads an unknown in
    // times every column rx reads (dz/dx couples them through the loop).
    std::vector<std::uint32_t> rowsZ, columns;
    for (const auto &e : sj.fz)
      rowsZ.push_back(e.row);
    for (const auto &e : sj.rx)
      columns.push_back(e.col);
    for (auto *v : {&rowsZ, &columns}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    std::vector<std::vector<std::uint32_t>> byColumn(n);
    for (const auto &e : sj.fx)
      byColumn[e.col].push_back(e.row);
    for (std::uint32_t j : columns)
      byColumn[j].insert(byColumn[j].end(), rowsZ.begin(), rowsZ.end());
    runtime::SparsePattern &p = jc->pattern;
    for (std::vector<std::uint32_t> &rows : byColumn) {
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
      p.colStart.push_back(static_cast<std::uint32_t>(p.rows.size()));
      p.rows.insert(p.rows.end(), rows.begin(), rows.end());
    }
    p.colStart.push_back(static_cast<std::uint32_t>(p.rows.size()));
    auto at = [&](std::uint32_t row, std::uint32_t col) {
      auto begin = p.rows.begin() + p.colStart[col], end = p.rows.begin() + p.colStart[col + 1];
      return static_cast<std::uint32_t>(std::lower_bound(begin, end, row) - p.rows.begin());
    };
    codegen::FunctionSpec fn{"stateJacobian", {}};
    for (const auto &e : sj.fx) {
      jc->fxAt.push_back(at(e.row, e.col));
      fn.outputs.push_back(e.value);
    }
    fn.outputs.insert(fn.outputs.end(), sj.dfdt.begin(), sj.dfdt.end());
    for (const auto &e : sj.fz) {
      jc->fz.emplace_back(e.row, e.col);
      fn.outputs.push_back(e.value);
      for (std::uint32_t j : columns)
        jc->fzAt.push_back(at(e.row, j));
    }
    for (const auto &e : sj.rx) {
      jc->rx.emplace_back(e.row, e.col);
      fn.outputs.push_back(e.value);
    }
    fn.outputs.insert(fn.outputs.end(), sj.drdt.begin(), sj.drdt.end());
    jc->columns = std::move(columns);
    jc->numOutputs = fn.outputs.size();
    jc->code.ctx = equations.ctx;
    jc->code.mode = false;
    jc->code.add(jc->fn, fn.name, std::move(fn.outputs));
    // From the tapes just built: the stiff method keeps what is constant.
    jc->constancy = runtime::jacobianConstancy(*this, *jc);
    // Tiered as the mode's functions are, counting its own evaluations:
    // only stiff methods ask for it, and rarely.
    std::shared_ptr<const void> self = shared_from_this();
    if (std::shared_ptr<CodeTiers> t = code.tiers.lock())
      t->start(jc->code, self, true);
    jacobianCompiled = std::move(jc);
  });
  return *jacobianCompiled;
}

const ModeFn *ModeCode::powers() const {
  std::call_once(powersOnce, [&] {
    std::lock_guard<std::mutex> lock(equations.ctx->mutex());
    sym::ExprContext &ctx = *equations.ctx;
    auto pc = std::make_unique<PowersCode>();
    std::vector<sym::ExprId> powers;
    for (const eq::PowerPort &port : equations.powerPorts) {
      sym::ExprId p = ctx.mul(equations.bondEffort[port.bond], equations.bondFlow[port.bond]);
      powers.push_back(port.sign < 0 ? ctx.neg(p) : p);
    }
    // The work through jumps, where the mode's dependent storage has its
    // place in the full state (a model run without events has none).
    if (dependentSlots.size() == equations.dependent.size())
      powers.insert(powers.end(), equations.sourceWork.begin(), equations.sourceWork.end());
    if (powers.empty()) {
      powersCompiled = std::move(pc);
      return;
    }
    pc->code.ctx = equations.ctx;
    pc->code.mode = false;
    pc->code.add(pc->fn, "powers", std::move(powers));
    // In the mode's tiers (compiled now under Tiering::Jit, else baseline
    // code over its tape), but never counted towards LLVM: a loss
    // analysis evaluates it a few times per step.
    std::shared_ptr<const void> self = shared_from_this();
    if (std::shared_ptr<CodeTiers> t = code.tiers.lock())
      t->start(pc->code, self, true);
    powersCompiled = std::move(pc);
  });
  return powersCompiled->fn ? &powersCompiled->fn : nullptr;
}

std::shared_ptr<ModeCode> compileMode(eq::EquationSystem equations,
                                      const std::shared_ptr<CodeTiers> &tiers, bool switched,
                                      bool ctxLocked) {
  auto m = std::make_shared<ModeCode>();
  TieredCode &code = m->code;
  code.ctx = equations.ctx;
  std::vector<sym::ExprId> derivatives, outputs;
  for (const eq::State &s : equations.states)
    derivatives.push_back(s.derivative);
  for (const eq::Output &o : equations.outputs)
    outputs.push_back(o.value);
  code.add(m->rhs, "rhs", std::move(derivatives));
  code.add(m->outputs, "outputs", std::move(outputs));
  bool newton = !equations.unknowns.empty();
  if (newton) {
    // Linear loops (a resistor or spring network) need only r(0): the
    // evaluator assembles J z + r(0), and a network's residuals, as large
    // as the network, are never compiled.
    m->linearLoops = equations.loopsLinear();
    std::vector<sym::ExprId> residuals = equations.residuals;
    if (m->linearLoops) {
      std::unordered_map<std::uint32_t, sym::ExprId> zero;
      for (const eq::Unknown &u : equations.unknowns)
        zero[u.symbol.index] = equations.ctx->constant(0);
      std::vector<sym::ExprId *> roots;
      for (sym::ExprId &r : residuals)
        roots.push_back(&r);
      equations.ctx->substitute(roots, zero);
    }
    // Both vectors have an entry per residual or structural non-zero, and
    // in a network most are the same few values (0; 1, -1, 1/R): each is
    // computed once and scattered (thousands of stores of a handful of
    // values would otherwise dominate the module's compile time).
    code.add(m->residual.fn, "residual", gather(m->residual, residuals));
    code.add(m->jacobian.fn, "jacobian", gather(m->jacobian, equations.jacobian));
    for (const eq::AlgebraicLoop &l : equations.loops)
      if (!l.unknowns.empty())
        m->nonlinearLoops += (m->nonlinearLoops.empty() ? "" : "; ") + l.path;
  }
  if (switched || !equations.heldValues.empty())
    code.add(m->held, "held", equations.heldValues);
  bool events = switched || !equations.kinks.empty();
  if (events) {
    // The guards' sides, then each kink's comparison `lhs <= rhs` (see
    // runtime::Mode::numKinks): b c <= -denorm (b c < 0) for b = +-1
    // (b c <= -0 for a c of time alone), -|c| <= -denorm (c != 0) for b = 0, min(c - b + denorm, b + 1 - c) <= 0 for a floor; and the
    // same as a tape for enclosures.
    sym::ExprContext &ctx = *equations.ctx;
    auto ofTime = [&](sym::ExprId e) {
      for (sym::SymbolId s : ctx.symbolsOf(e)) {
        sym::SymbolKind kind = ctx.symbol(s).kind;
        if (kind != sym::SymbolKind::Time && kind != sym::SymbolKind::Parameter)
          return false;
      }
      return true;
    };
    // Both sides of a comparison that reads the state are raised by the
    // rounding magnitude of the two (runtime::comparisonTolerance is
    // relative to the sides), so that a difference which is zero in exact
    // arithmetic counts as zero however large the terms that form it: a
    // gap between two bodies far from the origin, a node's voltage against
    // a source's. Raising rounds the difference to the ulps of that
    // magnitude, which is its accuracy anyway. Comparisons of time and
    // parameters alone are exact time events and keep their sides, and so
    // do sides without a sum or difference of varying terms (nothing in
    // them can cancel, so their magnitude is their value's). The
    // difference the tape encloses for event location is the unraised one.
    auto cancels = [&](sym::ExprId e) {
      bool found = false;
      std::vector<sym::ExprId> todo{e};
      std::unordered_set<std::uint32_t> seen;
      while (!todo.empty() && !found) {
        sym::ExprId id = todo.back();
        todo.pop_back();
        if (!seen.insert(id.index).second)
          continue;
        const sym::Node &n = ctx.node(id);
        if ((n.op == sym::Op::Add || n.op == sym::Op::Sub) &&
            !(ctx.isParametric(n.lhs) && ctx.isParametric(n.rhs)))
          found = true;
        sym::forEachOperand(n, [&](sym::ExprId o) { todo.push_back(o); });
      }
      return found;
    };
    codegen::FunctionSpec guards{"guards", {}}, kinks{"kinks", {}};
    std::vector<sym::ExprId> differences;
    for (std::size_t k = 0; k + 1 < equations.guards.size(); k += 2) {
      sym::ExprId lhs = equations.guards[k], rhs = equations.guards[k + 1];
      differences.push_back(ctx.sub(lhs, rhs));
      if ((!ofTime(lhs) || !ofTime(rhs)) && (cancels(lhs) || cancels(rhs))) {
        sym::ExprId scale = ctx.add(ctx.roundingMagnitude(lhs), ctx.roundingMagnitude(rhs));
        lhs = ctx.add(lhs, scale);
        rhs = ctx.add(rhs, scale);
      }
      guards.outputs.push_back(lhs);
      guards.outputs.push_back(rhs);
    }
    for (const eq::Kink &k : equations.kinks) {
      sym::ExprId b = ctx.ref(k.branch), c = k.argument;
      if (k.floor) {
        // c = b itself (just after the jump up to b) does not count: the
        // lower margin is raised by the smallest double.
        sym::ExprId lower = ctx.add(ctx.sub(c, b),
                                    ctx.constant(std::numeric_limits<double>::denorm_min()));
        guards.outputs.push_back(ctx.min(lower, ctx.sub(ctx.add(b, ctx.constant(1)), c)));
        guards.outputs.push_back(ctx.constant(0));
        differences.push_back(guards.outputs[guards.outputs.size() - 2]);
        kinks.outputs.push_back(c);
        continue;
      }
      // An argument of the state exactly at zero has not left its
      // branch's side: a body that stops slipping tangentially (its rate
      // zero there) sits at zero before it moves on. One of time alone
      // is a time event, exactly at its zero.
      sym::ExprId off = ctx.sub(ctx.constant(1), ctx.mul(b, b)); // 1 where b = 0
      sym::ExprId least = ctx.constant(-std::numeric_limits<double>::denorm_min());
      guards.outputs.push_back(
          ctx.sub(ctx.mul(b, c), ctx.mul(off, ctx.unary(sym::Op::Abs, c))));
      guards.outputs.push_back(ofTime(c) ? ctx.mul(off, least) : least);
      differences.push_back(ctx.sub(guards.outputs[guards.outputs.size() - 2],
                                    guards.outputs.back()));
      kinks.outputs.push_back(c);
    }
    std::vector<sym::ExprId> enclosed;
    for (std::size_t k = 0; k + 1 < guards.outputs.size(); k += 2) {
      enclosed.push_back(guards.outputs[k]);
      enclosed.push_back(guards.outputs[k + 1]);
      enclosed.push_back(differences[k / 2]);
    }
    m->guardTape = codegen::buildTape(ctx, enclosed);
    if (m->guardTape)
      m->guardStates = m->guardTape->xRead();
    for (std::size_t k = 0; k + 1 < guards.outputs.size(); k += 2)
      if (ofTime(guards.outputs[k]) && ofTime(guards.outputs[k + 1]))
        m->timeComparisons.push_back(static_cast<std::uint32_t>(k / 2));
    code.add(m->guards, "guards", std::move(guards.outputs));
    code.add(m->kinks, "kinks", std::move(kinks.outputs));
  }
  if (switched) {
    sym::ExprContext &ctx = *equations.ctx;
    codegen::FunctionSpec dep{"dependent", {}}, depJac{"dependentJacobian", {}},
        imp{"impulse", {}};
    for (const eq::DependentState &d : equations.dependent) {
      dep.outputs.push_back(d.value);
      for (const eq::State &s : equations.states)
        depJac.outputs.push_back(ctx.derivative(d.value, s.symbol));
    }
    for (std::size_t i = 0; i < equations.states.size(); ++i)
      for (const eq::DependentState &d : equations.dependent)
        imp.outputs.push_back(i < d.impulse.size() ? d.impulse[i] : ctx.constant(0));
    code.add(m->dependent, "dependent", std::move(dep.outputs));
    code.add(m->dependentJacobian, "dependentJacobian", std::move(depJac.outputs));
    code.add(m->impulse, "impulse", std::move(imp.outputs));
    if (!equations.guardImpulse.empty())
      code.add(m->guardImpulse, "guardImpulse", equations.guardImpulse);
  }
  for (const eq::State &st : equations.states)
    m->stateNames.push_back(st.name);
  m->numUnknowns = equations.unknowns.size();
  m->loopPattern = equations.jacobianPattern;
  for (const eq::Kink &k : equations.kinks)
    m->kinkInfo.push_back({k.floor, k.linear && !k.floor, k.text});
  m->equations = std::move(equations);
  tiers->start(code, m, ctxLocked);
  return m;
}

} // namespace hbg
