//===- bench/ladder_bench.cpp - A ladder of N algebraic loops --------------===//
//
// A ladder of N stages between a voltage source and N capacitors. In stage
// k, resistors ra (from node k-1) and rb (to node k) meet a resistor rc to
// ground at an inner node whose voltage nothing fixes: one algebraic loop
// per stage, torn and solved in closed form at compile time. Measures
//
//   - compile time, parse to JIT-ready, and its growth with N (it must stay
//     linear: the loops are separate strongly connected components);
//   - time per right-hand-side call against a hand-written C++ function of
//     the same ladder (checked to agree first).
//
//   hbg_bench_ladder [--sizes 10,100,1000] [--repeat K] [--markdown]
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "hbg/driver/Internal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
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

constexpr double kV = 5, kRa = 100, kRb = 220, kRc = 470, kC = 1e-5;

std::string ladderModel(int n) {
  std::ostringstream os;
  os << "model Ladder {\n"
     << "  parameter V = " << kV << "; parameter Ra = " << kRa << "; parameter Rb = " << kRb
     << ";\n  parameter Rc = " << kRc << "; parameter Cv = " << kC << ";\n"
     << "  Se src(V); 0 n0; bond src -> n0;\n";
  for (int k = 1; k <= n; ++k)
    os << "  C c" << k << "(Cv) { q0 = 0; }\n";
  for (int k = 1; k <= n; ++k) {
    os << "  R ra" << k << "(Ra); R rb" << k << "(Rb); R rc" << k << "(Rc);\n"
       << "  0 m" << k << "; 0 n" << k << "; 1 a" << k << "; 1 b" << k << ";\n"
       << "  bond n" << k - 1 << " -> a" << k << "; bond a" << k << " -> m" << k << "; bond a" << k
       << " -> ra" << k << ";\n"
       << "  bond m" << k << " -> b" << k << "; bond b" << k << " -> n" << k << "; bond b" << k
       << " -> rb" << k << ";\n"
       << "  bond m" << k << " -> rc" << k << "; bond n" << k << " -> c" << k << ";\n";
  }
  os << "  output c1.q;\n}\n";
  return os.str();
}

/// The same ladder by hand: node voltages v_k = q_k / C, inner nodes by
/// their nodal equation, capacitor currents by Kirchhoff.
void handRhs(int n, const double *q, double *dq) {
  const double ga = 1 / kRa, gb = 1 / kRb, gc = 1 / kRc;
  auto v = [&](int k) { return k == 0 ? kV : q[k - 1] / kC; };
  auto inner = [&](int k) { return (v(k - 1) * ga + v(k) * gb) / (ga + gb + gc); };
  for (int k = 1; k <= n; ++k) {
    double in = (inner(k) - v(k)) * gb;
    double out = k < n ? (v(k) - inner(k + 1)) * ga : 0;
    dq[k - 1] = in - out;
  }
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes = {10, 100, 1000};
  int repeat = 3;
  bool markdown = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string item; std::getline(ss, item, ',');)
        sizes.push_back(std::stoi(item));
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--markdown") {
      markdown = true;
    } else {
      std::fprintf(stderr, "usage: hbg_bench_ladder [--sizes N,...] [--repeat K] [--markdown]\n");
      return 2;
    }
  }

  if (markdown)
    std::printf("| N loops | compile (ms) | compile per loop (us) | rhs hbg (ns) | rhs by hand (ns) "
                "| ratio |\n|---:|---:|---:|---:|---:|---:|\n");
  else
    std::printf("%8s %14s %16s %14s %14s %8s\n", "N", "compile_ms", "per_loop_us", "rhs_hbg_ns",
                "rhs_hand_ns", "ratio");

  for (int n : sizes) {
    std::string text = ladderModel(n);
    std::vector<double> compileTimes;
    hbg::Model model = hbg::Compiler(llvmOnly()).compileString(text);
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      model = hbg::Compiler(llvmOnly()).compileString(text);
      compileTimes.push_back(seconds(std::chrono::steady_clock::now() - t0));
    }
    if (hbg::driver::equations(model).loops.size() != static_cast<std::size_t>(n)) {
      std::fprintf(stderr, "expected %d separate loops, got %zu\n", n,
                   hbg::driver::equations(model).loops.size());
      return 1;
    }

    // States are c1.q ... cN.q in order; check against the hand-written rhs.
    std::vector<double> p = model.parameterValues();
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> u(0, 5 * kC);
    std::vector<double> q(n), a(n), b(n);
    for (double &x : q)
      x = u(rng);
    model.rhs(0, q.data(), p.data(), a.data());
    handRhs(n, q.data(), b.data());
    double scale = 0, err = 0;
    for (int i = 0; i < n; ++i) {
      scale = std::max(scale, std::fabs(b[i]));
      err = std::max(err, std::fabs(a[i] - b[i]));
    }
    if (!(err <= 1e-12 * scale)) {
      std::fprintf(stderr, "N = %d: compiled rhs differs from the hand-written one by %g\n", n,
                   err / scale);
      return 1;
    }

    // Time per call: enough calls for ~50 ms, median of `repeat` runs.
    int calls = std::max(10, 5'000'000 / n);
    std::vector<double> hbgTimes, handTimes;
    volatile double sink = 0;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c)
        model.rhs(0, q.data(), p.data(), a.data());
      auto t1 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c)
        handRhs(n, q.data(), b.data());
      auto t2 = std::chrono::steady_clock::now();
      sink = sink + a[0] + b[0];
      hbgTimes.push_back(seconds(t1 - t0) / calls);
      handTimes.push_back(seconds(t2 - t1) / calls);
    }
    double compile = median(compileTimes), hbgRhs = median(hbgTimes), hand = median(handTimes);
    if (markdown)
      std::printf("| %d | %.1f | %.1f | %.0f | %.0f | %.2f |\n", n, compile * 1e3, compile * 1e6 / n,
                  hbgRhs * 1e9, hand * 1e9, hbgRhs / hand);
    else
      std::printf("%8d %14.1f %16.1f %14.0f %14.0f %8.2f\n", n, compile * 1e3, compile * 1e6 / n,
                  hbgRhs * 1e9, hand * 1e9, hbgRhs / hand);
  }
  return 0;
}
