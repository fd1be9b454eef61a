//===- bench/loops_bench.cpp - For loops against the same model written out ===//
//
// A chain of N masses between two walls, joined by springs, from the
// standard library's Mass, Spring and Fixed, written three ways:
//
//   loops      `for i in 1:N { Mass mass[i](...); ... }`: a dozen lines
//   written    the same model with every instance and bond written out
//              (`Mass mass[17](...)`): what the loops unroll to, N lines
//              per kind
//   primitive  the same bond graph in primitives (I, C, 0- and 1-junctions)
//              with no components: what flattening produces
//
// and compiled with hbg::Compiler::compileString (parse to JIT-ready). The
// loops must cost no more than the written-out text; `primitive` shows what
// components cost on top. The three models are checked to agree (the same
// states and the same derivatives at a random state) before any timing.
//
// Exits 1 when they disagree, 2 on bad arguments.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string loopsModel(std::size_t n) {
  return "import mechanical;\n"
         "model Chain {\n"
         "    parameter N = " + std::to_string(n) + ";\n"
         "    Fixed left;  Fixed right;\n"
         "    for i in 1:N {\n"
         "        Mass mass[i](m = 1 + i / N, v0 = if i < 2 then 1 else 0);\n"
         "        Spring spring[i](k = 100);\n"
         "        bond spring[i].b -> mass[i].a;\n"
         "    }\n"
         "    bond left.a -> spring[1].a;\n"
         "    for i in 2:N {\n"
         "        bond mass[i - 1].a -> spring[i].a;\n"
         "    }\n"
         "    Spring last(k = 100);\n"
         "    bond mass[N].a -> last.a;  bond last.b -> right.a;\n"
         "    output mass[N].v;\n"
         "}\n";
}

std::string writtenModel(std::size_t n) {
  std::string s = "import mechanical;\nmodel Chain {\n    parameter N = " + std::to_string(n) +
                  ";\n    Fixed left;  Fixed right;\n";
  for (std::size_t i = 1; i <= n; ++i) {
    std::string k = std::to_string(i);
    s += "    Mass mass[" + k + "](m = 1 + " + k + " / N, v0 = " + (i == 1 ? "1" : "0") + ");\n";
    s += "    Spring spring[" + k + "](k = 100);\n";
    s += "    bond spring[" + k + "].b -> mass[" + k + "].a;\n";
  }
  s += "    bond left.a -> spring[1].a;\n";
  for (std::size_t i = 2; i <= n; ++i)
    s += "    bond mass[" + std::to_string(i - 1) + "].a -> spring[" + std::to_string(i) + "].a;\n";
  s += "    Spring last(k = 100);\n    bond mass[" + std::to_string(n) +
       "].a -> last.a;  bond last.b -> right.a;\n    output mass[" + std::to_string(n) +
       "].v;\n}\n";
  return s;
}

std::string primitiveModel(std::size_t n) {
  std::string s = "model Chain {\n    parameter N = " + std::to_string(n) + ";\n"
                  "    Sf left(0);  Sf right(0);\n    1 wl;  1 wr;\n"
                  "    bond wl -> left;  bond wr -> right;\n";
  for (std::size_t i = 1; i <= n; ++i) {
    std::string k = std::to_string(i);
    s += "    1 v" + k + ";\n    I mass" + k + "(1 + " + k + " / N) { p0 = " +
         (i == 1 ? "1 + 1 / N" : std::string("0")) + "; }\n    bond v" + k + " -> mass" + k + ";\n";
    s += "    0 s" + k + ";\n    C spring" + k + "(1 / 100) { q0 = 0; }\n    bond s" + k +
         " -> spring" + k + ";\n";
    s += "    bond s" + k + " -> v" + k + ";\n";
    s += i == 1 ? std::string("    bond wl -> s1;\n")
                : "    bond v" + std::to_string(i - 1) + " -> s" + k + ";\n";
  }
  s += "    0 slast;\n    C last(1 / 100) { q0 = 0; }\n    bond slast -> last;\n";
  s += "    bond v" + std::to_string(n) + " -> slast;\n    bond slast -> wr;\n";
  s += "    output mass" + std::to_string(n) + ".f;\n}\n";
  return s;
}

/// The derivatives at a reproducible state.
std::vector<double> derivatives(const hbg::Model &m) {
  std::size_t n = m.stateNames().size();
  std::vector<double> x(n), xdot(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = std::sin(1.0 + 0.37 * double(i));
  std::vector<double> p = m.parameterValues({});
  m.rhs(0.0, x.data(), p.data(), xdot.data());
  return xdot;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::size_t> sizes = {100, 1000, 10000};
  int repeat = 3;
  bool markdown = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (const char *p = argv[++i]; *p;) {
        sizes.push_back(std::strtoul(p, nullptr, 10));
        p = std::strchr(p, ',');
        if (!p)
          break;
        ++p;
      }
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--markdown") {
      markdown = true;
    } else {
      std::fprintf(stderr, "usage: hbg_bench_loops [--sizes N,N,...] [--repeat K] [--markdown]\n"
                           "Compile time of a chain of N masses written with `for` loops, written\n"
                           "out instance by instance, and in primitives (medians of K).\n");
      return 2;
    }
  }
  if (markdown)
    std::printf("| N | loops (s) | written out (s) | primitives (s) | loops / written |\n"
                "| ---: | ---: | ---: | ---: | ---: |\n");
  for (std::size_t n : sizes) {
    std::string texts[3] = {loopsModel(n), writtenModel(n), primitiveModel(n)};
    std::vector<double> times[3];
    std::vector<double> first;
    for (int r = 0; r < repeat; ++r)
      for (int k = 0; k < 3; ++k) {
        auto t0 = Clock::now();
        hbg::Model m = hbg::Compiler().compileString(texts[k], "chain.hbg");
        times[k].push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        if (r > 0)
          continue;
        // The three are one model: the same number of states, and the same
        // derivatives (the primitive chain's states are in another order).
        std::vector<double> d = derivatives(m);
        std::sort(d.begin(), d.end());
        if (k == 0)
          first = d;
        else if (d.size() != first.size() ||
                 !std::equal(d.begin(), d.end(), first.begin(),
                             [](double a, double b) { return std::fabs(a - b) <= 1e-12 * (1 + std::fabs(a)); })) {
          std::fprintf(stderr, "hbg_bench_loops: FAIL: model %d of N = %zu differs from the loops'\n", k, n);
          return 1;
        }
      }
    double l = median(times[0]), w = median(times[1]), p = median(times[2]);
    if (markdown)
      std::printf("| %zu | %.3f | %.3f | %.3f | %.2f |\n", n, l, w, p, l / w);
    else
      std::printf("N = %zu: loops %.3f s, written out %.3f s, primitives %.3f s, loops / written %.2f\n",
                  n, l, w, p, l / w);
  }
  return 0;
}
