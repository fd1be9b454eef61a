//===- compiler/driver/Linearize.cpp - A model about an operating point ---===//
//
// Model::linearize: the run to the operating point, then the equations'
// symbolic derivatives there (eq::linearize), in the mode given or the
// one the run reached.
//
//===----------------------------------------------------------------------===//

#include "ModelImpl.h"

#include "hbg/driver/Pipeline.h"

#include <algorithm>

namespace hbg {

LinearModel Model::linearize(double at, const std::string &modeText,
                             const std::map<std::string, double> &parameters) const {
  if (!impl_->graph || !impl_->sources)
    throw std::logic_error("model `" + name() +
                           "` was compiled from its equations alone: it has no bond graph to "
                           "linearise");
  const bg::BondGraph &graph = *impl_->graph;
  bool switched = bg::hasSwitched(graph);
  auto parse = [&](const std::string &text, bg::Mode &out) {
    bg::ModeError err;
    if (bg::parseMode(graph, text, bg::initialMode(graph), out, err))
      return;
    SourceManager sm;
    DiagnosticEngine diags(sm);
    driver::reportModeError(graph, err, diags);
    throw driver::compileError(diags, sm);
  };
  bg::Mode where = bg::initialMode(graph);
  if (!modeText.empty())
    parse(modeText, where);

  // The run to `at` (its parameters checked first, whether it runs or not).
  SimulationOptions opts;
  opts.tEnd = at;
  Simulation sim(*this, opts);
  for (const auto &[name, value] : parameters)
    sim.setParameter(name, value);
  std::vector<double> params = parameterValues(parameters);
  std::vector<double> state = initialState(params);
  std::string text = bg::modeText(graph, where);
  if (at > 0) {
    Result r = sim.run();
    if (!r.ok())
      throw SimulationError(r.error, r.failure);
    state = r.finalState;
    if (switched && modeText.empty() && r.finalMode != text) {
      parse(r.finalMode, where);
      text = r.finalMode;
    }
  }
  const std::vector<std::string> &names = stateNames();
  auto stateValue = [&](const std::string &n) {
    auto it = std::find(names.begin(), names.end(), n);
    return it == names.end() ? 0.0 : state[static_cast<std::size_t>(it - names.begin())];
  };
  std::optional<RunDiagnostic> why;
  std::optional<eq::StateSpace> ss;
  std::string details;
  {
    // Linearising builds into the model's shared expressions.
    std::lock_guard<std::mutex> lock(graph.ctx->mutex());
    DiagnosticEngine diags(*impl_->sources);
    diags.setContext(impl_->context);
    ss = eq::linearize(graph, where, params, at, stateValue, diags, why);
    if (!ss && !why)
      throw driver::compileError(diags, *impl_->sources);
    details = diags.renderAll();
  }
  if (!ss) {
    why->mode = text; // as the run that reached it names it
    throw SimulationError(why->text(name()), why, details);
  }
  LinearModel out;
  out.states = ss->states;
  out.inputs = ss->inputs;
  out.outputs = ss->outputs;
  out.a = ss->a;
  out.b = ss->b;
  out.c = ss->c;
  out.d = ss->d;
  for (std::size_t k = 0; k < ss->eigenRe.size(); ++k)
    out.poles.emplace_back(ss->eigenRe[k], ss->eigenIm[k]);
  out.time = at;
  out.mode = text;
  return out;
}

} // namespace hbg
