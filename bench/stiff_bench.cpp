//===- bench/stiff_bench.cpp - Stiff models: hbg against CVODE BDF ---------===//
//
// Four stiff models at hbg's default options and at given tolerances:
//
//   - an RC ladder of 20 sections, unit resistors and capacitances from
//     1 F down to 1 uF (six decades), charged from 1 V to t = 10: hbg's
//     auto, rosenbrock and dopri5 against a hand-written C program using
//     SUNDIALS CVODE (BDF, dense direct solver, analytic Jacobian;
//     stiff_cvode.c) at the same tolerances, every node's v(10) checked
//     against the matrix exponential (Eigen's, independent of both), and
//     CVODE again at more tolerances, for comparisons at equal accuracy;
//     the same ladder of 100 sections at the default tolerance;
//   - the same 20-section ladder made nonlinear, each resistor a
//     conductance passing f = e + e^3, driven by sin(2 pi t), v(10)
//     against SciPy's Radau at rtol 1e-12 (stiff_nonlinear_reference.py),
//     by auto, rosenbrock and rosenbrock keeping its Jacobian (the
//     W-method);
//   - an RC of 1 ns beside one of 1 s, to t = 1, against the closed form;
//   - a transmission line of 1,280 LC sections to t = 4 us at default
//     options (its accuracy is tests/driver/tolerance_test.cpp's).
//
// Integration time is the median over the repeats of a warm run: the
// model and its Jacobian (compiled on the stiff method's first use) are
// compiled before; compile times are reported apart. CVODE's time covers
// its setup and integration, its minimum over the repeats.
//
//   hbg_bench_stiff [--repeat K] [--markdown] [--smoke]
//
// --smoke: the ladder at rtol 1e-6 only, once, failing (exit 1) when
// either side misses the exact solution by more than 10 rtol.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "stiff_cvode.h"

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

/// LLVM's code from the first call: the benchmark measures compiled code
/// (the default tiers would run the first calls on tapes meanwhile).
hbg::CompilerOptions llvmOnly() {
  hbg::CompilerOptions opts;
  opts.tiering = hbg::Tiering::Jit;
  return opts;
}

constexpr int kSections = 20, kLongSections = 100;
constexpr double kV = 1, kTEnd = 10;

/// Capacitance of section k + 1 of `sections`: 1 F down to 1 uF.
double ladderC(int k, int sections) { return std::pow(10.0, -6.0 * k / (sections - 1)); }

/// The ladder charged from kV; `nonlinear`: driven by sin(2 pi t), each
/// resistor a conductance passing f = e + e^3.
std::string ladderModel(int sections, bool nonlinear = false) {
  std::ostringstream os;
  os.precision(17);
  if (nonlinear)
    os << "model NonlinearLadder {\n  MSe src(sin(2 * pi * time));\n";
  else
    os << "model Ladder {\n  Se src(" << kV << ");\n";
  std::string prev = "src";
  for (int k = 1; k <= sections; ++k) {
    os << "  R r" << k << (nonlinear ? "(f = e + e^3)" : "(1)") << "; C c" << k << "("
       << ladderC(k - 1, sections) << ") { q0 = 0; } 1 s" << k << "; 0 n" << k << ";\n  bond "
       << prev << " -> s" << k << "; bond s" << k << " -> r" << k << "; bond s" << k << " -> n" << k
       << "; bond n" << k << " -> c" << k << ";\n";
    prev = "n" + std::to_string(k);
  }
  os << "  output ";
  for (int k = 1; k <= sections; ++k)
    os << (k > 1 ? ", " : "") << "v" << k << " = c" << k << ".e";
  os << ";\n}\n";
  return os.str();
}

/// v(tEnd) = V (1 - exp(A tEnd) 1): the ladder settles to V everywhere.
std::vector<double> exactLadder(int sections) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(sections, sections);
  for (int k = 0; k < sections; ++k) {
    double c = ladderC(k, sections);
    a(k, k) -= 1 / c; // through r_k to the left
    if (k > 0)
      a(k, k - 1) += 1 / c;
    if (k + 1 < sections) { // through r_{k+1} to the right
      a(k, k) -= 1 / c;
      a(k, k + 1) += 1 / c;
    }
  }
  Eigen::MatrixXd e = (a * kTEnd).exp();
  Eigen::VectorXd v = kV * (Eigen::VectorXd::Ones(sections) - e * Eigen::VectorXd::Ones(sections));
  return {v.data(), v.data() + sections};
}

/// The nonlinear ladder's v(10): bench/stiff_nonlinear_reference.py, which
/// integrates it with SciPy's Radau at rtol 1e-12 (its BDF at the same
/// tolerance agrees to 7.9e-12).
const std::vector<double> kNonlinearExact = {
    -0.21243272928020318, -0.04785625425507635, 0.00042582208917255212, 0.010400422873894165,
    0.011882260727856123, 0.011820271320130016, 0.011610170940316002,   0.011466821047127857,
    0.011387815640811764, 0.011347371536357252, 0.011327303404863893,   0.011317488596913618,
    0.011312723805133566, 0.01131042172069187,  0.011309314983357948,   0.01130878714097988,
    0.011308539349072871, 0.011308426965880863, 0.011308380038424659,   0.011308364748023136};

struct Row {
  std::string what;
  double rtol = 0;
  /// stiffSteps: the steps the Jacobians and LUs served (hbg: the
  /// Rosenbrock method's, CVODE: all).
  std::size_t steps = 0, rhs = 0, jacobians = 0, factorisations = 0, stiffSteps = 0;
  double seconds = 0, error = 0;
  std::string methods, note;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string spans(const hbg::Result &r) {
  std::ostringstream os;
  os.precision(3);
  for (const hbg::runtime::MethodSpan &s : r.methods)
    os << (os.tellp() > 0 ? ", " : "") << hbg::runtime::methodName(s.method) << " "
       << s.steps << " to " << s.to;
  return os.str();
}

/// Runs `model` warm `repeat` times; the error from `error(result)`.
template <class Error>
Row timeHbg(const hbg::Model &model, hbg::SimulationOptions opts, int repeat, const char *what,
            Error error) {
  Row row;
  row.what = std::string("hbg ") + what;
  row.rtol = opts.rtol;
  hbg::Result first = hbg::Simulation(model, opts).run(); // compiles the Jacobian
  if (!first.ok()) {
    row.note = first.error;
    return row;
  }
  std::vector<double> seconds;
  hbg::Result r;
  for (int i = 0; i < repeat; ++i) {
    r = hbg::Simulation(model, opts).run();
    seconds.push_back(r.runSeconds);
  }
  row.seconds = median(seconds);
  row.steps = r.steps;
  row.rhs = r.rhsCalls;
  row.jacobians = r.jacobianCalls;
  row.factorisations = r.factorisations;
  for (const hbg::runtime::MethodSpan &s : r.methods)
    if (s.method == hbg::runtime::Method::Rosenbrock)
      row.stiffSteps += s.steps;
  row.error = error(r);
  row.methods = spans(r);
  return row;
}

Row timeCvode(double rtol, int repeat, const std::vector<double> &exact) {
  const int n = static_cast<int>(exact.size());
  std::vector<double> r(n, 1.0), c(n), atol(n), v(n);
  for (int k = 0; k < n; ++k) {
    c[k] = ladderC(k, n);
    // hbg's absolute tolerance: rtol times the nominal magnitude, 1e-3 of
    // the source's 1 V (docs/numerics.md), here in volts.
    atol[k] = rtol * 1e-3 * kV;
  }
  hbg_cvode_stats st{};
  Row row;
  row.what = "CVODE BDF (C)";
  row.rtol = rtol;
  if (hbg_cvode_rc_ladder(n, r.data(), c.data(), kV, kTEnd, rtol, atol.data(), repeat,
                          v.data(), &st) != 0) {
    row.note = st.message;
    return row;
  }
  row.seconds = st.cpu_seconds;
  row.steps = static_cast<std::size_t>(st.steps);
  row.rhs = static_cast<std::size_t>(st.rhs_evals);
  row.jacobians = static_cast<std::size_t>(st.jac_evals);
  row.factorisations = static_cast<std::size_t>(st.lu_setups);
  row.stiffSteps = row.steps;
  for (int k = 0; k < n; ++k)
    row.error = std::max(row.error, std::abs(v[k] - exact[k]));
  row.methods = "BDF";
  return row;
}

void print(const std::vector<Row> &rows, bool markdown) {
  if (markdown)
    std::printf("| run | rtol | steps | rhs | Jacobians | LU | per stiff step | time (ms) | "
                "max error | methods |\n"
                "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row &r : rows) {
    if (!r.note.empty()) {
      std::printf(markdown ? "| %s | %g | %s |\n" : "%-22s rtol %-6g %s\n", r.what.c_str(),
                  r.rtol, r.note.c_str());
      continue;
    }
    // Jacobians and LUs per step of the stiff method.
    char perStep[48] = "";
    if (r.stiffSteps > 0)
      std::snprintf(perStep, sizeof perStep, "%.2f, %.2f",
                    double(r.jacobians) / double(r.stiffSteps),
                    double(r.factorisations) / double(r.stiffSteps));
    std::printf(markdown ? "| %s | %g | %zu | %zu | %zu | %zu | %s | %.3g | %.2g | %s |\n"
                         : "%-22s rtol %-6g steps %-8zu rhs %-9zu jac %-5zu lu %-5zu "
                           "per step %-10s %8.3g ms  error %-8.2g %s\n",
                r.what.c_str(), r.rtol, r.steps, r.rhs, r.jacobians, r.factorisations, perStep,
                1e3 * r.seconds, r.error, r.methods.c_str());
  }
}

std::string lineModel(int n) {
  const double z0 = 50, delay = 1e-6;
  std::ostringstream os;
  os.precision(17);
  os << "model Line {\n  parameter Ls = " << z0 * delay / n << "; parameter Cs = "
     << delay / z0 / n << ";\n  Se src(1); R rs(" << z0 << "); R load(" << z0 << "); 1 s;\n"
     << "  bond src -> s; bond s -> rs; bond s -> l1;\n";
  for (int k = 1; k <= n; ++k) {
    os << "  I coil" << k << "(Ls) { p0 = 0; } C cap" << k << "(Cs) { q0 = 0; } 1 l" << k
       << "; 0 n" << k << ";\n  bond l" << k << " -> coil" << k << "; bond l" << k << " -> n" << k
       << "; bond n" << k << " -> cap" << k << ";\n";
    if (k < n)
      os << "  bond n" << k << " -> l" << k + 1 << ";\n";
  }
  os << "  bond n" << n << " -> load;\n  output v = cap" << n << ".e;\n}\n";
  return os.str();
}

} // namespace

int main(int argc, char **argv) {
  int repeat = 5;
  bool markdown = false, smoke = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--markdown")) {
      markdown = true;
    } else if (!std::strcmp(argv[i], "--smoke")) {
      smoke = true;
      repeat = 1;
    } else {
      std::fprintf(stderr, "usage: hbg_bench_stiff [--repeat K] [--markdown] [--smoke]\n");
      return 2;
    }
  }
  std::vector<double> exact = exactLadder(kSections);
  auto t0 = std::chrono::steady_clock::now();
  hbg::Model ladder =
      hbg::Compiler(llvmOnly()).compileString(ladderModel(kSections), "ladder.hbg");
  double compile = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The worst node's error at tEnd against `exact`.
  auto errorAgainst = [](const std::vector<double> &exact) {
    return [&exact](const hbg::Result &r) {
      double worst = 0;
      for (std::size_t k = 0; k < exact.size(); ++k)
        worst = std::max(worst, std::abs(r.at("v" + std::to_string(k + 1)).back() - exact[k]));
      return worst;
    };
  };
  auto ladderError = errorAgainst(exact);
  std::vector<Row> rows;
  std::vector<double> rtols = smoke ? std::vector<double>{1e-6} : std::vector<double>{1e-4, 1e-6, 1e-8};
  for (double rtol : rtols) {
    hbg::SimulationOptions opts;
    opts.tEnd = kTEnd;
    opts.dtOut = kTEnd;
    opts.rtol = rtol;
    rows.push_back(timeHbg(ladder, opts, repeat, "auto", ladderError));
    opts.method = hbg::runtime::Method::Rosenbrock;
    rows.push_back(timeHbg(ladder, opts, repeat, "rosenbrock", ladderError));
    if (!smoke && rtol == 1e-6) {
      opts.method = hbg::runtime::Method::DormandPrince;
      rows.push_back(timeHbg(ladder, opts, 1, "dopri5", ladderError));
    }
    rows.push_back(timeCvode(rtol, smoke ? 1 : 50 * repeat, exact));
  }
  std::printf("%sRC ladder, %d sections, C from 1 F to 1 uF, to t = %g (compile %.3g ms)\n\n",
              markdown ? "### " : "", kSections, kTEnd, 1e3 * compile);
  print(rows, markdown);
  if (!smoke) {
    // CVODE at every decade, to compare at equal accuracy rather than
    // equal tolerance: its error is several times the tolerance, hbg's
    // a fraction of it.
    std::vector<Row> cvode;
    for (double rtol : {1e-5, 1e-7, 1e-9, 1e-10})
      cvode.push_back(timeCvode(rtol, 50 * repeat, exact));
    std::printf("\n%sThe ladder with CVODE at more tolerances\n\n", markdown ? "### " : "");
    print(cvode, markdown);

    // The ladder of 100 sections at the default tolerance.
    std::vector<double> exactLong = exactLadder(kLongSections);
    hbg::Model longLadder =
        hbg::Compiler(llvmOnly()).compileString(ladderModel(kLongSections), "ladder100.hbg");
    hbg::SimulationOptions opts;
    opts.tEnd = kTEnd;
    opts.dtOut = kTEnd;
    std::vector<Row> longRows{timeHbg(longLadder, opts, repeat, "auto", errorAgainst(exactLong))};
    opts.method = hbg::runtime::Method::Rosenbrock;
    longRows.push_back(timeHbg(longLadder, opts, repeat, "rosenbrock", errorAgainst(exactLong)));
    longRows.push_back(timeCvode(opts.rtol, 10 * repeat, exactLong));
    std::printf("\n%sRC ladder, %d sections, C from 1 F to 1 uF, to t = %g, rtol %g\n\n",
                markdown ? "### " : "", kLongSections, kTEnd, opts.rtol);
    print(longRows, markdown);
  }
  if (smoke) {
    bool ok = true;
    for (const Row &r : rows)
      if (!r.note.empty() || !(r.error < 10 * r.rtol)) {
        std::fprintf(stderr, "%s misses the exact solution: %s error %g\n", r.what.c_str(),
                     r.note.c_str(), r.error);
        ok = false;
      }
    return ok ? 0 : 1;
  }

  // The nonlinear ladder, against SciPy's Radau at rtol 1e-12.
  hbg::Model nonlinear = hbg::Compiler(llvmOnly()).compileString(
      ladderModel(kSections, true), "nonlinear_ladder.hbg");
  std::vector<Row> nonlinearRows;
  for (double rtol : {1e-4, 1e-6, 1e-8}) {
    hbg::SimulationOptions opts;
    opts.tEnd = kTEnd;
    opts.dtOut = kTEnd;
    opts.rtol = rtol;
    nonlinearRows.push_back(
        timeHbg(nonlinear, opts, repeat, "auto", errorAgainst(kNonlinearExact)));
    opts.method = hbg::runtime::Method::Rosenbrock;
    nonlinearRows.push_back(
        timeHbg(nonlinear, opts, repeat, "rosenbrock", errorAgainst(kNonlinearExact)));
    // The W-method keeping J over steps (IntegratorOptions::keepJacobian).
    opts.keepJacobian = true;
    nonlinearRows.push_back(
        timeHbg(nonlinear, opts, repeat, "rosenbrock, J kept", errorAgainst(kNonlinearExact)));
  }
  std::printf("\n%sNonlinear RC ladder, %d sections, conductances f = e + e^3, driven by "
              "sin(2 pi t), to t = %g\n\n",
              markdown ? "### " : "", kSections, kTEnd);
  print(nonlinearRows, markdown);

  // The RC pair: v1 = 1 - exp(-t / 1e-9), v2 = 1 - exp(-t).
  hbg::Model pair = hbg::Compiler(llvmOnly()).compileString(R"(model StiffPair {
    Se v(1);
    R r1(1); C c1(1e-9) { q0 = 0; }
    R r2(1); C c2(1) { q0 = 0; }
    0 n; 1 a; 1 b;
    bond v -> n; bond n -> a; bond a -> r1; bond a -> c1;
    bond n -> b; bond b -> r2; bond b -> c2;
    output v1 = c1.e, v2 = c2.e;
  })", "pair.hbg");
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 0.01;
  auto pairError = [](const hbg::Result &r) {
    double worst = 0;
    const std::vector<double> &t = r.at("time"), &v1 = r.at("v1"), &v2 = r.at("v2");
    for (std::size_t k = 1; k < t.size(); ++k)
      worst = std::max({worst, std::abs(v1[k] - (1 - std::exp(-t[k] / 1e-9))),
                        std::abs(v2[k] - (1 - std::exp(-t[k])))});
    return worst;
  };
  std::vector<Row> pairRows{timeHbg(pair, opts, repeat, "auto", pairError)};
  std::printf("\n%sRC of 1 ns beside one of 1 s, to t = 1, default options\n\n",
              markdown ? "### " : "");
  print(pairRows, markdown);

  // The transmission line at default options.
  t0 = std::chrono::steady_clock::now();
  hbg::Model line = hbg::Compiler(llvmOnly()).compileString(lineModel(1280), "line.hbg");
  compile = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  opts.tEnd = 4e-6;
  opts.dtOut = 1e-7;
  std::vector<Row> lineRows{
      timeHbg(line, opts, std::max(1, repeat / 2), "auto", [](const hbg::Result &r) {
        // Matched at both ends: the load sees half the source once the
        // wave has arrived (the exact N-section solution rings about it).
        return std::abs(r.at("v").back() - 0.5);
      })};
  std::printf("\n%sTransmission line, 1,280 sections, to t = 4 us, default options "
              "(compile %.3g ms; error: |v(4 us) - 0.5|)\n\n",
              markdown ? "### " : "", 1e3 * compile);
  print(lineRows, markdown);
  return 0;
}
