//===- tools/hbgc/Linearize.cpp - hbgc linearize --------------------------===//

#include "Command.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>

namespace hbg::tools {

namespace {

struct LinearizeArgs {
  std::string file, mode, format = "text";
  bool haveMode = false;
  double at = 0;
  std::map<std::string, double> overrides;
};

int linearize(const LinearizeArgs &a, const Common &common) {
  if (a.file.empty())
    throw UsageError{"no input file"};
  const std::string &path = a.file, &mode = a.mode, &format = a.format;
  bool haveMode = a.haveMode;
  double at = a.at;
  const std::map<std::string, double> &overrides = a.overrides;
  // The model is compiled from its initial mode (that is where a run
  // starts); the mode to linearise in is read separately.
  driver::Session session(sessionOptions(common, overrides), std::cerr);
  if (!session.load(path))
    return 1;
  bg::BondGraph graph = *session.frontend().graph;
  bg::Mode where = session.frontend().mode;
  bool switched = bg::hasSwitched(graph);
  if (haveMode) {
    bg::ModeError err;
    bg::Mode given;
    if (!bg::parseMode(graph, mode, where, given, err)) {
      driver::reportModeError(graph, err, session.diagnostics());
      session.printDiagnostics();
      return 1;
    }
    where = std::move(given);
  }
  std::optional<Model> compiled = session.compile(Compiler());
  if (!compiled)
    return 1;
  Model &model = *compiled;
  SimulationOptions opts;
  opts.tEnd = at;
  Simulation sim(model, opts);
  for (const auto &[name, v] : overrides) {
    try {
      sim.setParameter(name, v);
    } catch (const std::invalid_argument &e) {
      std::cerr << "hbgc: error: " << e.what() << "\n";
      return 1;
    }
  }
  std::vector<double> params = model.parameterValues(overrides);
  std::vector<double> state = model.initialState(params);
  std::string modeText = bg::modeText(graph, where);
  if (at > 0) {
    Result r = sim.run();
    if (!r.ok()) {
      std::cerr << "hbgc: error: " << r.error << "\n";
      return 1;
    }
    state = r.finalState;
    if (switched && !haveMode && r.finalMode != modeText) {
      bg::ModeError err;
      if (!bg::parseMode(graph, r.finalMode, bg::initialMode(graph), where, err)) {
        std::cerr << "hbgc: internal error: cannot read mode `" << r.finalMode << "`\n";
        return 70;
      }
      modeText = r.finalMode;
    }
  }
  const std::vector<std::string> &names = model.stateNames();
  auto stateValue = [&](const std::string &name) {
    auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? 0.0 : state[static_cast<std::size_t>(it - names.begin())];
  };
  std::optional<RunDiagnostic> why;
  std::optional<eq::StateSpace> ss =
      eq::linearize(graph, where, params, at, stateValue, session.diagnostics(), why);
  session.printDiagnostics();
  if (!ss) {
    why->mode = modeText; // as the run that reached it names it
    std::cerr << "hbgc: error: " << why->text(model.name()) << "\n";
    return 1;
  }
  std::size_t n = ss->states.size(), m = ss->inputs.size(), p = ss->outputs.size();
  auto pole = [&](std::size_t k) {
    double re = ss->eigenRe[k], im = ss->eigenIm[k];
    if (im == 0)
      return re < 0 ? "time constant " + num(-1 / re) + " s"
                    : re == 0 ? std::string("integrator") : "unstable, growing as exp(" + num(re) + " t)";
    double wn = std::hypot(re, im);
    return "natural frequency " + num(wn) + " rad/s (" + num(wn / (2 * M_PI)) +
           " Hz), damping ratio " + num(-re / wn);
  };
  if (format == "csv") {
    std::cout << "matrix,row,column,value\n";
    auto dump = [&](const char *tag, const std::vector<double> &v, const std::vector<std::string> &rows,
                    const std::vector<std::string> &cols) {
      for (std::size_t i = 0; i < rows.size(); ++i)
        for (std::size_t j = 0; j < cols.size(); ++j)
          std::cout << tag << ",\"" << rows[i] << "\",\"" << cols[j] << "\","
                    << num(v[i * cols.size() + j]) << "\n";
    };
    dump("A", ss->a, ss->states, ss->states);
    dump("B", ss->b, ss->states, ss->inputs);
    dump("C", ss->c, ss->outputs, ss->states);
    dump("D", ss->d, ss->outputs, ss->inputs);
    for (std::size_t k = 0; k < n; ++k)
      std::cout << "pole," << k << ",\"" << pole(k) << "\"," << num(ss->eigenRe[k])
                << (ss->eigenIm[k] < 0 ? "" : "+") << num(ss->eigenIm[k]) << "i\n";
    return finishStdout(0);
  }
  std::cout << "model " << model.name() << "\n";
  if (!modeText.empty())
    std::cout << "mode: " << modeText << "\n";
  std::cout << "at t = " << timeText(at) << "\n";
  auto list = [&](const char *what, const std::vector<std::string> &v) {
    std::cout << what << ":";
    for (const std::string &s : v)
      std::cout << " " << s;
    std::cout << "\n";
  };
  list("states x", ss->states);
  list("inputs u", ss->inputs);
  list("outputs y", ss->outputs);
  auto matrix = [&](const char *name, const std::vector<double> &v, std::size_t rows,
                    std::size_t cols) {
    std::cout << "\n" << name << " (" << rows << " x " << cols << ")\n";
    for (std::size_t i = 0; i < rows; ++i) {
      std::cout << " ";
      for (std::size_t j = 0; j < cols; ++j)
        std::cout << " " << std::setw(16) << num(v[i * cols + j]);
      std::cout << "\n";
    }
  };
  matrix("A", ss->a, n, n);
  matrix("B", ss->b, n, m);
  matrix("C", ss->c, p, n);
  matrix("D", ss->d, p, m);
  std::cout << "\npoles\n";
  for (std::size_t k = 0; k < n; ++k) {
    std::cout << "  " << num(ss->eigenRe[k]);
    if (ss->eigenIm[k] != 0)
      std::cout << (ss->eigenIm[k] < 0 ? " - " : " + ") << num(std::abs(ss->eigenIm[k])) << "i";
    std::cout << ": " << pole(k) << "\n";
  }
  return finishStdout(0);
}

} // namespace

Runner declareLinearize(CLI::App *cmd, Common &common) {
  cmd->footer("The linear model dx/dt = A x + B u, y = C x + D u of FILE about an operating "
              "point, from the symbolic derivatives of its equations: the inputs u are the "
              "sources' values (an effort source's effort, a flow source's flow), the outputs y "
              "the model's outputs. Then the eigenvalues of A (the poles), each with its time "
              "constant, or its natural frequency and damping ratio.");
  auto a = std::make_shared<LinearizeArgs>();
  addModelArguments(*cmd, a->file, common);
  addValue(
      *cmd, "--at",
      [a](const std::string &text) {
        a->at = parseNumber("--at", text);
        if (!(a->at >= 0) || !std::isfinite(a->at))
          throw UsageError{"`--at` must be a time of 0 or later"};
      },
      "linearise about the state a run from t = 0 reaches at T, in the mode it is in there "
      "(default: the initial state at t = 0)",
      "T");
  addValue(
      *cmd, "--mode",
      [a](const std::string &m) {
        a->mode = m;
        a->haveMode = true;
      },
      "the mode of a model with switched junctions (default: the initial mode, or with --at the "
      "mode at T)",
      "J=on|off,...");
  addRepeated(
      *cmd, "-p,--parameter", [a](const std::string &kv) { parseParameter(kv, a->overrides); },
      "override a parameter (repeatable)", "NAME=VALUE");
  addValue(
      *cmd, "--format",
      [a](const std::string &f) {
        if (f != "text" && f != "csv")
          throw UsageError{"unknown format `" + f + "`; expected text or csv"};
        a->format = f;
      },
      "text (default) or csv: one row per matrix entry (`A,row,column,value`) and per pole", "F");
  return [a, &common] { return linearize(*a, common); };
}

const Command kLinearize = {"linearize",
                            "the state matrices and poles at an operating point", declareLinearize};

} // namespace hbg::tools
