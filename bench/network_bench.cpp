//===- bench/network_bench.cpp - Large linear loops: grids and lattices ---===//
//
// Two networks whose algebraic loop grows with the model, both with their
// coefficients given by parameters:
//
//   grid     an n x n grid of resistors R between a capacitor at one
//            corner and a resistor to ground at the other: one linear
//            loop over the grid's node voltages;
//   lattice  an n x n lattice of massless nodes joined by springs in
//            parallel with dampers, a mass at one corner and the wall at
//            the other: one linear loop over the nodes' velocities.
//
// For each side n it measures compile time (parse to JIT-ready, median of
// --repeat runs), the front end's passes (one more run), and the time per
// right-hand-side call against a hand-written C++ function of the same
// network: nodal analysis or force balance with Eigen's SparseLU,
// factorised once, as a careful programmer would write it. The two must
// agree (1e-10 of the largest derivative) before anything is timed.
// A third table, `--threshold`, compiles grids with their loop solved
// symbolically and at run time, to place eq::kRunTimeLoopMin.
//
//   hbg_bench_network [--sizes 10,20,40,70,100] [--repeat K] [--markdown]
//                     [--threshold]
//
//===----------------------------------------------------------------------===//

#include "hbg/driver/Pipeline.h"
#include "hbg/hbg.h"
#include "hbg/driver/Internal.h"

#include <Eigen/SparseLU>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
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

constexpr double kR = 2, kRg = 0.5, kC = 1e-3;                 // grid
constexpr double kM = 1.5, kSpring = 0.01, kDamper = 3;         // lattice
using Sparse = Eigen::SparseMatrix<double>;
using Lu = Eigen::SparseLU<Sparse>;

/// Links of a rows x cols lattice of nodes i*cols+j: right and down
/// neighbours.
std::vector<std::pair<int, int>> links(int rows, int cols) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      if (j + 1 < cols)
        out.push_back({i * cols + j, i * cols + j + 1});
      if (i + 1 < rows)
        out.push_back({i * cols + j, (i + 1) * cols + j});
    }
  return out;
}
std::vector<std::pair<int, int>> links(int n) { return links(n, n); }

std::string gridModel(int rows, int cols) {
  std::ostringstream os;
  os << "model Grid {\n  parameter R = " << kR << "; parameter Rg = " << kRg
     << "; parameter Cv = " << kC << ";\n  C cap(Cv) { q0 = 1e-3; }\n  R rg(Rg);\n";
  for (int k = 0; k < rows * cols; ++k)
    os << "  0 n" << k << ";\n";
  std::vector<std::pair<int, int>> l = links(rows, cols);
  for (std::size_t k = 0; k < l.size(); ++k)
    os << "  1 b" << k << "; R r" << k << "(R); bond n" << l[k].first << " -> b" << k << "; bond b"
       << k << " -> n" << l[k].second << "; bond b" << k << " -> r" << k << ";\n";
  os << "  bond n0 -> cap;\n  bond n" << rows * cols - 1 << " -> rg;\n}\n";
  return os.str();
}
std::string gridModel(int n) { return gridModel(n, n); }

std::string latticeModel(int n) {
  std::ostringstream os;
  os << "model Lattice {\n  parameter m = " << kM << "; parameter c = " << kSpring
     << "; parameter b = " << kDamper << ";\n  I mass(m) { p0 = 1; }\n  Sf wall(0);\n";
  for (int k = 0; k < n * n; ++k)
    os << "  1 v" << k << ";\n";
  os << "  bond v0 -> mass;\n  bond wall -> v" << n * n - 1 << ";\n";
  std::vector<std::pair<int, int>> l = links(n);
  for (std::size_t k = 0; k < l.size(); ++k)
    os << "  0 f" << k << "; 1 d" << k << "; C s" << k << "(c) { q0 = 0; } R k" << k
       << "(b);\n  bond v" << l[k].first << " -> f" << k << "; bond f" << k << " -> v"
       << l[k].second << "; bond f" << k << " -> d" << k << "; bond d" << k << " -> s" << k
       << "; bond d" << k << " -> k" << k << ";\n";
  os << "}\n";
  return os.str();
}

/// The grid by hand: node voltages by nodal analysis, G u = b with the
/// capacitor's node fixed at q / C, G factorised once.
class GridByHand {
public:
  explicit GridByHand(int n) : n_(n), links_(links(n)) {
    int m = n * n - 1; // unknowns: nodes 1 .. n*n-1
    std::vector<Eigen::Triplet<double>> t;
    auto stamp = [&](int a, int b, double g) {
      if (a == 0)
        return;
      t.emplace_back(a - 1, a - 1, g);
      if (b > 0)
        t.emplace_back(a - 1, b - 1, -g);
    };
    for (auto [a, b] : links_) {
      stamp(a, b, 1 / kR);
      stamp(b, a, 1 / kR);
    }
    stamp(n * n - 1, -1, 1 / kRg);
    Sparse g(m, m);
    g.setFromTriplets(t.begin(), t.end());
    lu_.compute(g);
    b_.setZero(m);
    for (auto [a, b] : links_)
      if (a == 0)
        neighbours_.push_back(b);
  }
  void rhs(const double *q, double *dq) {
    double e = q[0] / kC;
    b_.setZero();
    for (int k : neighbours_)
      b_(k - 1) = e / kR;
    u_ = lu_.solve(b_);
    double i = 0;
    for (int k : neighbours_)
      i += (e - u_(k - 1)) / kR;
    dq[0] = -i;
  }

private:
  int n_;
  std::vector<std::pair<int, int>> links_;
  std::vector<int> neighbours_;
  Lu lu_;
  Eigen::VectorXd b_, u_;
};

/// The lattice by hand: the free nodes' velocities from force balance,
/// the dampers' Laplacian factorised once; x = [q of each link, p].
class LatticeByHand {
public:
  explicit LatticeByHand(int n) : nodes_(n * n), links_(links(n)) {
    int u = nodes_ - 2; // free nodes 1 .. nodes-2
    std::vector<Eigen::Triplet<double>> t;
    for (auto [a, b] : links_)
      for (int side = 0; side < 2; ++side) {
        int row = free(side ? b : a), sign = side ? 1 : -1;
        if (row < 0)
          continue;
        if (free(a) >= 0)
          t.emplace_back(row, free(a), sign * kDamper);
        if (free(b) >= 0)
          t.emplace_back(row, free(b), -sign * kDamper);
      }
    Sparse a(u, u);
    a.setFromTriplets(t.begin(), t.end());
    lu_.compute(a);
    rhs_.setZero(u);
    v_.setZero(nodes_);
  }
  void rhs(const double *x, double *xdot) {
    std::size_t links = links_.size();
    double v0 = x[links] / kM;
    rhs_.setZero();
    for (std::size_t l = 0; l < links; ++l) {
      auto [a, b] = links_[l];
      double f = x[l] / kSpring;
      if (free(a) >= 0)
        rhs_(free(a)) += f;
      if (free(b) >= 0)
        rhs_(free(b)) -= f;
      // The mass's known velocity moves to the right-hand side.
      if (a == 0 && free(b) >= 0)
        rhs_(free(b)) -= kDamper * v0;
      if (b == 0 && free(a) >= 0)
        rhs_(free(a)) -= kDamper * v0;
    }
    v_.segment(1, nodes_ - 2) = lu_.solve(rhs_);
    v_(0) = v0;
    v_(nodes_ - 1) = 0;
    double pdot = 0;
    for (std::size_t l = 0; l < links; ++l) {
      auto [a, b] = links_[l];
      xdot[l] = v_(a) - v_(b);
      double f = x[l] / kSpring + kDamper * xdot[l];
      pdot += a == 0 ? -f : b == 0 ? f : 0;
    }
    xdot[links] = pdot;
  }

private:
  int free(int node) const { return node >= 1 && node < nodes_ - 1 ? node - 1 : -1; }
  int nodes_;
  std::vector<std::pair<int, int>> links_;
  Lu lu_;
  Eigen::VectorXd rhs_, v_;
};

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median compile time of `text` over `repeat` runs; the model of the last.
double compileTime(const hbg::Compiler &compiler, const std::string &text, int repeat,
                   hbg::Model &model) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    model = compiler.compileString(text);
    times.push_back(seconds(std::chrono::steady_clock::now() - t0));
  }
  return median(times);
}

/// Median time per call of f over `repeat` blocks of about 20 ms.
double perCall(const std::function<void()> &f, int repeat) {
  int calls = 1;
  for (;;) {
    auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c)
      f();
    if (seconds(std::chrono::steady_clock::now() - t0) > 0.02)
      break;
    calls *= 2;
  }
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c)
      f();
    times.push_back(seconds(std::chrono::steady_clock::now() - t0) / calls);
  }
  return median(times);
}

/// The front end's pass times (ms) of one compilation of `text`.
std::map<std::string, double> passTimes(const std::string &text) {
  hbg::SourceManager sm;
  std::uint32_t file = sm.addBuffer("network.hbg", text);
  hbg::DiagnosticEngine diags(sm);
  std::ostringstream os;
  hbg::driver::PipelineOptions opts;
  opts.timings = &os;
  hbg::driver::runFrontend(sm, file, diags, opts);
  std::map<std::string, double> out;
  std::istringstream in(os.str());
  for (std::string line; std::getline(in, line);) {
    // "pass parse: 12.3 ms"
    auto colon = line.find(':');
    if (line.rfind("pass ", 0) == 0 && colon != std::string::npos)
      out[line.substr(5, colon - 5)] = std::atof(line.c_str() + colon + 1);
  }
  return out;
}

struct Options {
  std::vector<int> sizes = {10, 20, 40, 70, 100};
  int repeat = 3;
  bool markdown = false, threshold = false;
};

/// One row per size: false when hbg and the hand-written rhs disagree.
template <typename ByHand>
bool measure(const char *title, const std::function<std::string(int)> &model, const Options &o) {
  if (o.markdown)
    std::printf("\n%s\n\n| n | nodes | unknowns | compile ms | us/node | parse | sema | causality "
                "| equations | rhs hbg us | rhs hand us | ratio |\n|---:|---:|---:|---:|---:|---:|"
                "---:|---:|---:|---:|---:|---:|\n",
                title);
  else
    std::printf("\n%s\n%5s %7s %9s %11s %8s %7s %7s %9s %9s %11s %11s %6s\n", title, "n", "nodes",
                "unknowns", "compile_ms", "us/node", "parse", "sema", "causality", "equations",
                "rhs_hbg_us", "rhs_hand_us", "ratio");
  for (int n : o.sizes) {
    std::string text = model(n);
    hbg::Model m = hbg::Compiler(llvmOnly()).compileString(text);
    double compile = compileTime(hbg::Compiler(llvmOnly()), text, o.repeat, m);
    std::map<std::string, double> passes = passTimes(text);
    ByHand hand(n);
    std::size_t states = m.stateNames().size();
    std::vector<double> p = m.parameterValues(), x(states), a(states), b(states);
    // hbg's states in the hand-written order (grid: cap.q; lattice: the
    // springs s<k>.q by k, then mass.p).
    std::vector<std::size_t> at(states);
    for (std::size_t k = 0; k < states; ++k) {
      const std::string &s = m.stateNames()[k];
      at[k] = s == "mass.p" ? states - 1 : s == "cap.q" ? 0 : std::stoul(s.substr(1));
    }
    std::vector<double> xs(states);
    for (std::size_t k = 0; k < states; ++k)
      xs[at[k]] = x[k] = 1e-3 * std::sin(1.0 + static_cast<double>(at[k]));
    m.rhs(0, x.data(), p.data(), a.data());
    hand.rhs(xs.data(), b.data());
    double scale = 0, err = 0;
    for (std::size_t k = 0; k < states; ++k) {
      scale = std::max(scale, std::fabs(b[at[k]]));
      err = std::max(err, std::fabs(a[k] - b[at[k]]));
    }
    if (!(err <= 1e-10 * scale)) {
      std::fprintf(stderr, "%s n = %d: compiled rhs differs from the hand-written one by %g\n",
                   title, n, err / scale);
      return false;
    }
    double hbgRhs = perCall([&] { m.rhs(0, x.data(), p.data(), a.data()); }, o.repeat);
    double handRhs = perCall([&] { hand.rhs(xs.data(), b.data()); }, o.repeat);
    std::size_t unknowns = hbg::driver::equations(m).unknowns.size();
    int nodes = n * n;
    const char *fmt = o.markdown
                          ? "| %d | %d | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f |\n"
                          : "%5d %7d %9zu %11.1f %8.1f %7.1f %7.1f %9.1f %9.1f %11.2f %11.2f %6.2f\n";
    std::printf(fmt, n, nodes, unknowns, compile * 1e3, compile * 1e6 / nodes, passes["parse"],
                passes["sema"], passes["causality"], passes["equations"], hbgRhs * 1e6,
                handRhs * 1e6, hbgRhs / handRhs);
    std::fflush(stdout);
  }
  return true;
}

/// Grids of growing size with their loop solved symbolically and at run
/// time: where the run-time LU starts to pay.
void threshold(const Options &o) {
  if (o.markdown)
    std::printf("\n| grid | tearing variables | symbolic: compile ms | rhs ns | run time: compile "
                "ms | rhs ns |\n|---:|---:|---:|---:|---:|---:|\n");
  else
    std::printf("\n%6s %8s %14s %10s %14s %10s\n", "grid", "tearing", "sym_compile_ms", "sym_rhs_ns",
                "rt_compile_ms", "rt_rhs_ns");
  hbg::CompilerOptions symbolic = llvmOnly(), runTime = llvmOnly();
  symbolic.equations.runTimeLoopMin = 1u << 30;
  runTime.equations.runTimeLoopMin = 0;
  for (auto [rows, cols] : {std::pair{2, 3}, {2, 4}, {3, 3}, {2, 6}, {3, 4}, {2, 8}, {4, 4}}) {
    std::string text = gridModel(rows, cols);
    hbg::Model ms = hbg::Compiler(symbolic).compileString(text);
    hbg::Model mr = hbg::Compiler(runTime).compileString(text);
    double cs = compileTime(hbg::Compiler(symbolic), text, o.repeat, ms);
    double cr = compileTime(hbg::Compiler(runTime), text, o.repeat, mr);
    std::vector<double> p = ms.parameterValues();
    double q = 1e-3, d = 0;
    double rs = perCall([&] { ms.rhs(0, &q, p.data(), &d); }, o.repeat);
    double rr = perCall([&] { mr.rhs(0, &q, p.data(), &d); }, o.repeat);
    std::size_t tearing = hbg::driver::equations(ms).loops.empty() ? 0 : hbg::driver::equations(ms).loops[0].tearing.size();
    std::printf(o.markdown ? "| %dx%d | %zu | %.1f | %.0f | %.1f | %.0f |\n"
                           : "%3dx%-2d %8zu %14.1f %10.0f %14.1f %10.0f\n",
                rows, cols, tearing, cs * 1e3, rs * 1e9, cr * 1e3, rr * 1e9);
    std::fflush(stdout);
  }
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      o.sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string item; std::getline(ss, item, ',');)
        o.sizes.push_back(std::stoi(item));
    } else if (a == "--repeat" && i + 1 < argc) {
      o.repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--markdown") {
      o.markdown = true;
    } else if (a == "--threshold") {
      o.threshold = true;
    } else if ((a == "--print-grid" || a == "--print-lattice") && i + 1 < argc) {
      int n = std::atoi(argv[++i]);
      if (n < 2) {
        std::fprintf(stderr, "hbg_bench_network: %s needs a size of at least 2\n", a.c_str());
        return 2;
      }
      std::fputs((a == "--print-grid" ? gridModel(n) : latticeModel(n)).c_str(), stdout);
      return 0;
    } else {
      std::fprintf(stderr, "usage: hbg_bench_network [--sizes n,...] [--repeat K] [--markdown] "
                           "[--threshold]\n"
                           "       hbg_bench_network --print-grid n | --print-lattice n\n");
      return 2;
    }
  }
  if (o.threshold) {
    threshold(o);
    return 0;
  }
  if (!measure<GridByHand>("Resistor grid (n x n nodes, one loop)", [](int n) { return gridModel(n); }, o) ||
      !measure<LatticeByHand>("Spring-damper lattice with massless nodes (n x n)", latticeModel, o))
    return 1;
  return 0;
}
