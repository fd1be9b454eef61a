//===- compiler/sema/Values.cpp - Parameters, element laws, signals -------===//
//
// Step 3 of sema, the values a model declares: parameter defaults, element
// values and constitutive laws, initial values and nominal magnitudes,
// signals and outputs, lowered into the symbolic DAG; and the checks that
// what must be constant is, and that a linear storage element's value is
// positive at the parameters' defaults.
//
//===----------------------------------------------------------------------===//

#include "Analyzer.h"

#include <cmath>
#include <map>
#include <string>

namespace hbg::sema {

using namespace hbg::bg;

/// Reports `what` (at `range`) unless `v` uses parameters and numbers only.
/// Held values are Parameter symbols too, but change at events: one of them
/// makes `v` not constant, with a note saying where and why.
bool Analyzer::isConstant(sym::ExprId v, SourceRange range, FunctionRef<std::string()> what) {
  if (ctx().isConst(v))
    return true;
  const Held *held = nullptr;
  const Parameter *input = nullptr;
  for (sym::SymbolId s : ctx().symbolsOf(v)) {
    if ((held = g_.heldOf(s)))
      break;
    const sym::Symbol &sym = ctx().symbol(s);
    if (sym.kind == sym::SymbolKind::Parameter && sym.slot < g_.parameters.size() &&
        g_.parameters[sym.slot].input && (input = &g_.parameters[sym.slot]))
      break;
  }
  if (ctx().isParametric(v) && !held && !input)
    return true;
  diags_.report(DiagKind::NotConstant, range, {what()});
  if (held)
    diags_.note(DiagKind::HeldChangesAtEvents, held->range, {held->name});
  if (input)
    diags_.note(DiagKind::InputChanges, input->range, {input->name});
  return false;
}

sym::ExprId Analyzer::lowerConstant(const ast::Expr &e, FunctionRef<std::string()> what) {
  sym::ExprId v = lower(e, {});
  if (v.valid() && !isConstant(v, e.range, what))
    return {};
  return v;
}

void Analyzer::lowerParameters(const ast::Model &m) {
  for (std::size_t i = 0; i < m.parameters.size(); ++i) {
    const ast::Parameter &p = m.parameters[i];
    g_.parameters[i].defaultValue =
        lowerConstant(*p.value, [&] { return "the default of parameter `" + p.name + "`"; });
  }
}

void Analyzer::checkStorageValues() {
  // A linear C or I of zero capacitance (inertance) has no law for its
  // effort (flow), and a negative one stores negative energy: an error at
  // the parameters' defaults; other values are the run's to use.
  std::vector<double> params;
  for (const Element &e : g_.elements) {
    if (!isStorage(e.kind) || e.law != bg::LawForm::Linear || !e.value.valid())
      continue;
    if (params.empty())
      params = bg::defaultParameterValues(g_);
    double v = ctx().evaluate(e.value, [&](sym::SymbolId s) {
      std::uint32_t slot = ctx().symbol(s).slot;
      return slot < params.size() ? params[slot] : std::nan("");
    });
    if (std::isfinite(v) && !(v > 0))
      diags_.report(DiagKind::StorageNotPositive, e.range,
                    {e.kind == ElementKind::C ? "capacitance" : "inertance", e.name, v});
  }
}

void Analyzer::lowerElements(const ast::Model &m) {
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const ast::Element &a = m.elements[i];
    Element &e = g_.elements[i];

    if (a.args.size() != 1) {
      diags_.report(DiagKind::WrongArgumentCount, a.argsRange.valid() ? a.argsRange : a.nameRange,
                    {elementNoun(e.kind), a.name, "one argument", a.args.size()});
      continue;
    }
    const ast::ElementArg &arg = a.args[0];

    // Named arguments are nonlinear laws, allowed on C, I and R only.
    if (!arg.name.empty()) {
      std::string allowed;
      sym::SymbolId local;
      if (e.kind == ElementKind::C && arg.name == "e") {
        e.law = LawForm::EffortLaw;
        local = e.state;
      } else if (e.kind == ElementKind::I && arg.name == "f") {
        e.law = LawForm::FlowLaw;
        local = e.state;
      } else if (e.kind == ElementKind::R && (arg.name == "e" || arg.name == "f")) {
        e.law = arg.name == "e" ? LawForm::EffortLaw : LawForm::FlowLaw;
        local = ctx().addSymbol(a.name + (arg.name == "e" ? ".f" : ".e"),
                                sym::SymbolKind::Variable, 0);
      } else {
        allowed = e.kind == ElementKind::C   ? "a value or `e = ...` of `q`"
                  : e.kind == ElementKind::I ? "a value or `f = ...` of `p`"
                  : e.kind == ElementKind::R ? "a value, `e = ...` of `f` or `f = ...` of `e`"
                                             : "only a value";
        diags_.report(DiagKind::BadLaw, arg.nameRange, {kindName(e.kind), a.name, arg.name, allowed});
        continue;
      }
      e.lawArg = local;
      ExprScope scope;
      std::string localName = e.kind == ElementKind::C   ? "q"
                              : e.kind == ElementKind::I ? "p"
                                                         : (arg.name == "e" ? "f" : "e");
      scope.locals.push_back({localName, local});
      // An R's local stands for its bond's variable (a storage element's
      // is its state, a model variable already).
      if (e.kind == ElementKind::R && e.bonds.size() == 1) {
        const Bond &b = g_.bond(e.bonds[0]);
        scope.heldLocals.push_back({localName, localName == "f" ? b.flow : b.effort});
      }
      e.lawExpr = lower(*arg.value, scope);
    } else if (e.kind == ElementKind::MSe || e.kind == ElementKind::MSf ||
               e.kind == ElementKind::MTF || e.kind == ElementKind::MGY) {
      e.value = lower(*arg.value, {});
    } else {
      sym::ExprId v = lower(*arg.value, {});
      auto what = [&] { return "the value of " + elementNoun(e.kind) + " `" + a.name + "`"; };
      if (v.valid() && !isConstant(v, arg.value->range, what)) {
        if (isSource(e.kind) || isTwoPort(e.kind))
          diags_.note(DiagKind::UseModulatedSource, a.kindRange,
                      {isSource(e.kind)               ? "a source"
                       : e.kind == ElementKind::TF ? "a transformer"
                                                   : "a gyrator",
                       std::string("M") + kindName(e.kind) + " " + a.name + "(...)"});
        v = {};
      }
      e.value = v;
    }

    // Initial values.
    if (!isStorage(e.kind)) {
      if (!a.initials.empty())
        diags_.report(DiagKind::NoInitialValue, a.initials[0].nameRange, {kindName(e.kind), a.name});
      continue;
    }
    std::string expected = e.kind == ElementKind::C ? "q0" : "p0";
    for (const ast::InitialValue &iv : a.initials) {
      if (iv.name == "nominal") {
        if (e.nominal.valid()) {
          diags_.report(DiagKind::DuplicateNominal, iv.nameRange, {a.name});
          continue;
        }
        e.nominal =
            lowerConstant(*iv.value, [&] { return "the nominal magnitude of `" + a.name + "`"; });
        if (e.nominal.valid() && ctx().isConst(e.nominal) &&
            !(std::abs(ctx().node(e.nominal).value) > 0))
          diags_.report(DiagKind::NominalNotPositive, iv.value->range, {a.name});
        continue;
      }
      if (iv.name != expected) {
        diags_.report(DiagKind::BadInitialValue, iv.nameRange,
                      {kindName(e.kind), a.name, iv.name, expected});
        continue;
      }
      if (e.initial.valid()) {
        diags_.report(DiagKind::DuplicateInitialValue, iv.nameRange, {iv.name, a.name});
        continue;
      }
      e.initial = lowerConstant(*iv.value, [&] { return "the initial value of `" + a.name + "`"; });
      e.initialRange = iv.nameRange;
    }
    if (!e.initial.valid())
      e.initial = ctx().constant(0);
  }
}

void Analyzer::lowerSignalsAndOutputs(const ast::Model &m) {
  for (std::size_t i = 0; i < m.signals.size(); ++i) {
    if (m.signals[i].discrete) {
      lowerDiscrete(m.signals[i], g_.signals[i]);
      continue;
    }
    ExprScope scope;
    scope.signal = static_cast<int>(i);
    g_.signals[i].value = lower(*m.signals[i].value, scope);
  }
  std::map<std::string, SourceRange> seen;
  for (const ast::Output &o : m.outputs) {
    Output out;
    out.name = o.name.empty() ? o.text : o.name;
    out.range = o.name.empty() ? o.value->range : o.nameRange;
    out.value = lower(*o.value, {});
    if (!seen.emplace(out.name, out.range).second) {
      diags_.report(DiagKind::DuplicateOutput, out.range, {out.name});
      continue;
    }
    g_.outputs.push_back(std::move(out));
  }
}

} // namespace hbg::sema
