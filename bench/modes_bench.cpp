//===- bench/modes_bench.cpp - Many modes: breakers and alarms ------------===//
//
// Two switched models where the cost of a new mode dominates:
//
//   breakers  N RL loads on one supply, each behind a breaker (a switched
//             1-junction) with a freewheeling ideal diode; every breaker
//             opens at toff, in one instant. The event passes through the
//             mythical mode (all open, all diodes blocking: the coils'
//             currents would vanish, whose impulse makes the diodes
//             conduct) into the real one (all open, all conducting).
//             Checked: every coil current at t_end against the closed form
//             i(toff) exp(-(t - toff) R / L), to 1e-6 of i(toff).
//   alarms    G groups of 10 tanks in a chain (C tanks, R pipes), group g
//             filled at its own rate; a level alarm on the last tank of
//             each group opens a drain when its pressure reaches P: G
//             events, each entering a mode never seen before, of a model
//             of 10 G tanks. Checked: every alarm's time against the
//             group's linear ODE solved by matrix exponential (Eigen).
//
// For each size: compile time, run time (the modes analysed and compiled
// during the run included), modes analysed, modes LLVM compiled, with the
// default tiers (tapes until hot, LLVM in the background) and, with
// --jit, with every mode LLVM-compiled before first use (the cost before
// tiers).
//
// Exits 1 when a result is wrong, 2 on bad arguments.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

const double kV = 10, kL = 0.01, kToff = 0.002, kBreakersEnd = 0.01;
double breakerR(int k) { return 10 + 0.01 * k; }

std::string breakers(int n) {
  std::ostringstream os;
  os << "model Breakers {\n  parameter V = " << kV << ";\n  parameter toff = " << kToff
     << ";\n  Se supply(V);\n  0 bus;\n  bond supply -> bus;\n";
  for (int k = 0; k < n; ++k) {
    std::string s = std::to_string(k);
    os << "  1 brk" << s << " switched { on closed initial; off open;\n"
       << "    closed -> open when (time >= toff)+; }\n"
       << "  1 d" << s << " switched { off blocking initial; on conducting;\n"
       << "    blocking -> conducting when (a" << s << ".e - n" << s << ".e > 0)+;\n"
       << "    conducting -> blocking when (d" << s << ".f < 0)+; }\n"
       << "  Se g" << s << "(0); 0 n" << s << "; 1 ld" << s << "; R r" << s << "("
       << breakerR(k) << "); I c" << s << "(" << kL << ") { p0 = 0; }\n"
       << "  bond bus -> brk" << s << "; bond brk" << s << " -> n" << s << ";\n"
       << "  bond a" << s << ": g" << s << " -> d" << s << "; bond d" << s << " -> n" << s
       << ";\n  bond n" << s << " -> ld" << s << "; bond ld" << s << " -> r" << s
       << "; bond ld" << s << " -> c" << s << ";\n";
  }
  os << "  output i0 = c0.f;\n}\n";
  return os.str();
}

const int kTanks = 10;
const double kA = 1, kR = 1, kRd = 0.5, kP = 1, kAlarmsEnd = 100;
double inflow(int g) { return 1 + 0.02 * g; }

std::string alarms(int groups) {
  std::ostringstream os;
  os << "model Alarms {\n";
  for (int g = 0; g < groups; ++g) {
    std::string G = std::to_string(g);
    os << "  Sf in" << G << "(" << inflow(g) << ");\n";
    for (int k = 0; k < kTanks; ++k) {
      std::string t = G + "_" + std::to_string(k);
      os << "  0 t" << t << "; C c" << t << "(" << kA << ") { q0 = 0; }\n  bond t" << t
         << " -> c" << t << ";\n";
      if (k > 0) {
        std::string prev = G + "_" + std::to_string(k - 1);
        os << "  1 p" << t << "; R r" << t << "(" << kR << ");\n  bond t" << prev << " -> p" << t
           << "; bond p" << t << " -> t" << t << "; bond p" << t << " -> r" << t << ";\n";
      }
    }
    std::string last = G + "_" + std::to_string(kTanks - 1);
    os << "  bond in" << G << " -> t" << G << "_0;\n"
       << "  1 alarm" << G << " switched { off closed initial; on open;\n"
       << "    closed -> open when (c" << last << ".e >= " << kP << ")+; }\n"
       << "  R d" << G << "(" << kRd << ");\n  bond t" << last << " -> alarm" << G
       << "; bond alarm" << G << " -> d" << G << ";\n";
  }
  os << "  output h0 = c0_" << kTanks - 1 << ".e;\n}\n";
  return os.str();
}

/// When group g's alarm goes off: the first t with e_last(t) = P for the
/// chain's linear ODE q' = M q + b (closed drain), by bisection on the
/// matrix exponential of the augmented system. The last tank's level
/// rises monotonically from 0, so the crossing is unique.
double alarmTime(int g) {
  Eigen::MatrixXd M = Eigen::MatrixXd::Zero(kTanks + 1, kTanks + 1);
  for (int k = 0; k + 1 < kTanks; ++k) {
    double c = 1 / (kR * kA); // flow through pipe k+1 per unit charge difference
    M(k, k) -= c;
    M(k, k + 1) += c;
    M(k + 1, k + 1) -= c;
    M(k + 1, k) += c;
  }
  M(0, kTanks) = inflow(g); // the last entry is the constant 1
  auto level = [&](double t) {
    Eigen::VectorXd x0 = Eigen::VectorXd::Zero(kTanks + 1);
    x0(kTanks) = 1;
    Eigen::MatrixXd E = (M * t).exp();
    return (E * x0)(kTanks - 1) / kA;
  };
  double lo = 0, hi = kAlarmsEnd;
  if (level(hi) < kP)
    return INFINITY;
  for (int i = 0; i < 100; ++i) {
    double mid = 0.5 * (lo + hi);
    (level(mid) >= kP ? hi : lo) = mid;
  }
  return hi;
}

struct Measured {
  double compile = 0, run = 0;
  std::size_t modes = 0, llvm = 0;
  hbg::Result result;
};

Measured measure(const std::string &text, const std::string &name, hbg::Tiering tiering,
                 double tEnd) {
  Measured m;
  hbg::CompilerOptions copts;
  copts.tiering = tiering;
  auto t0 = std::chrono::steady_clock::now();
  hbg::Model model = hbg::Compiler(copts).compileString(text, name);
  auto t1 = std::chrono::steady_clock::now();
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  opts.dtOut = tEnd / 10;
  opts.rtol = 1e-8;
  m.result = hbg::Simulation(model, opts).run();
  auto t2 = std::chrono::steady_clock::now();
  m.compile = seconds(t1 - t0);
  m.run = seconds(t2 - t1);
  m.modes = model.modesCompiled();
  m.llvm = model.modesCompiledByLlvm();
  return m;
}

bool checkBreakers(const hbg::Result &r, int n) {
  if (!r.ok()) {
    std::fprintf(stderr, "breakers %d: %s\n", n, r.error.c_str());
    return false;
  }
  double worst = 0;
  for (int k = 0; k < n; ++k) {
    double R = breakerR(k), tau = kL / R;
    double i0 = kV / R * (1 - std::exp(-kToff / tau));
    double expected = i0 * std::exp(-(kBreakersEnd - kToff) / tau);
    auto it = std::find(r.stateNames.begin(), r.stateNames.end(), "c" + std::to_string(k) + ".p");
    if (it == r.stateNames.end()) {
      std::fprintf(stderr, "breakers %d: no state c%d.p\n", n, k);
      return false;
    }
    double i = r.finalState[std::size_t(it - r.stateNames.begin())] / kL;
    // Relative to the current at toff: by t_end it has decayed to 1e-4
    // of that, below which the tolerances do not reach.
    worst = std::max(worst, std::abs(i - expected) / i0);
  }
  if (r.events.size() != 1 || !(worst < 1e-6)) {
    std::fprintf(stderr, "breakers %d: %zu events, worst error %.3g of the current at toff\n", n,
                 r.events.size(), worst);
    return false;
  }
  return true;
}

bool checkAlarms(const hbg::Result &r, int groups) {
  if (!r.ok()) {
    std::fprintf(stderr, "alarms %d: %s\n", groups, r.error.c_str());
    return false;
  }
  std::vector<double> when(std::size_t(groups), INFINITY);
  for (const hbg::Event &e : r.events)
    for (const std::string &tr : e.transitions)
      if (tr.rfind("alarm", 0) == 0)
        when[std::size_t(std::atoi(tr.c_str() + 5))] = e.time;
  double worst = 0;
  for (int g = 0; g < groups; ++g) {
    double expected = alarmTime(g);
    if (!std::isfinite(expected) || !std::isfinite(when[std::size_t(g)])) {
      std::fprintf(stderr, "alarms %d: group %d's alarm at %g, expected at %g\n", groups, g,
                   when[std::size_t(g)], expected);
      return false;
    }
    worst = std::max(worst, std::abs(when[std::size_t(g)] - expected) / expected);
  }
  if (r.events.size() != std::size_t(groups) || !(worst < 1e-6)) {
    std::fprintf(stderr, "alarms %d: %zu events, worst relative error in time %.3g\n", groups,
                 r.events.size(), worst);
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> breakerSizes = {20, 40, 80, 160}, alarmSizes = {10, 25, 50, 100};
  bool jit = false, markdown = false;
  auto parseSizes = [](const char *text) {
    std::vector<int> sizes;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');)
      sizes.push_back(std::stoi(item));
    return sizes;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--breakers" && i + 1 < argc) {
      breakerSizes = parseSizes(argv[++i]);
    } else if (a == "--alarms" && i + 1 < argc) {
      alarmSizes = parseSizes(argv[++i]);
    } else if (a == "--jit") {
      jit = true;
    } else if (a == "--markdown") {
      markdown = true;
    } else {
      std::fprintf(stderr, "usage: hbg_bench_modes [--breakers N,...] [--alarms G,...] [--jit] "
                           "[--markdown]\n");
      return 2;
    }
  }
  if (markdown)
    std::printf("| model | elements | tiers | compile | run | total | modes analysed | "
                "modes compiled by LLVM |\n|---|---:|---|---:|---:|---:|---:|---:|\n");
  bool ok = true;
  auto report = [&](const char *model, int size, int elements, const char *tier,
                    const Measured &m) {
    if (markdown)
      std::printf("| %s %d | %d | %s | %.0f ms | %.0f ms | %.2f s | %zu | %zu |\n", model, size,
                  elements, tier, m.compile * 1e3, m.run * 1e3, m.compile + m.run, m.modes,
                  m.llvm);
    else
      std::printf("%s %d (%d elements, %s): compile %.0f ms, run %.0f ms, total %.2f s; "
                  "%zu modes analysed, %zu compiled by LLVM\n",
                  model, size, elements, tier, m.compile * 1e3, m.run * 1e3, m.compile + m.run,
                  m.modes, m.llvm);
    std::fflush(stdout);
  };
  for (int n : breakerSizes) {
    std::string text = breakers(n);
    int elements = 2 + 7 * n;
    for (hbg::Tiering t : {hbg::Tiering::Tiered, hbg::Tiering::Jit}) {
      if (t == hbg::Tiering::Jit && !jit)
        continue;
      Measured m = measure(text, "breakers.hbg", t, kBreakersEnd);
      ok = checkBreakers(m.result, n) && ok;
      report("breakers", n, elements, t == hbg::Tiering::Jit ? "LLVM only" : "tiered", m);
    }
  }
  for (int g : alarmSizes) {
    std::string text = alarms(g);
    int elements = g * (1 + 2 * kTanks + 2 * (kTanks - 1) + 2);
    for (hbg::Tiering t : {hbg::Tiering::Tiered, hbg::Tiering::Jit}) {
      if (t == hbg::Tiering::Jit && !jit)
        continue;
      Measured m = measure(text, "alarms.hbg", t, kAlarmsEnd);
      ok = checkAlarms(m.result, g) && ok;
      report("alarms", g, elements, t == hbg::Tiering::Jit ? "LLVM only" : "tiered", m);
    }
  }
  return ok ? 0 : 1;
}
