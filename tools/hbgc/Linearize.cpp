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
  const std::string &format = a.format;
  double at = a.at;
  // The model is compiled from its initial mode (that is where a run
  // starts); Model::linearize reads the mode to linearise in.
  driver::Session session(sessionOptions(common, a.overrides), std::cerr);
  if (!session.load(a.file))
    return 1;
  std::optional<Model> compiled = session.compile(Compiler());
  if (!compiled)
    return 1;
  Model &model = *compiled;
  std::optional<LinearModel> linear;
  try {
    linear = model.linearize(at, a.haveMode ? a.mode : "", a.overrides);
  } catch (const CompileError &e) {
    std::cerr << e.what();
    return 1;
  } catch (const std::invalid_argument &e) {
    std::cerr << "hbgc: error: " << e.what() << "\n";
    return 1;
  } catch (const SimulationError &e) {
    std::cerr << e.details() << "hbgc: error: " << e.what() << "\n";
    return 1;
  }
  const LinearModel *ss = &*linear;
  const std::string &modeText = ss->mode;
  std::size_t n = ss->states.size(), m = ss->inputs.size(), p = ss->outputs.size();
  auto pole = [&](std::size_t k) {
    double re = ss->poles[k].real(), im = ss->poles[k].imag();
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
      std::cout << "pole," << k << ",\"" << pole(k) << "\"," << num(ss->poles[k].real())
                << (ss->poles[k].imag() < 0 ? "" : "+") << num(ss->poles[k].imag()) << "i\n";
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
    std::cout << "  " << num(ss->poles[k].real());
    if (ss->poles[k].imag() != 0)
      std::cout << (ss->poles[k].imag() < 0 ? " - " : " + ") << num(std::abs(ss->poles[k].imag()))
                << "i";
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
