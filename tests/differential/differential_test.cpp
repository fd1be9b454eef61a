// Differential test of the whole compiler on random linear bond graphs.
//
// Every graph is compiled by hbg, and its state matrices are read off the
// JIT-compiled right-hand side: b = rhs(0), A[:, j] = rhs(e_j) - rhs(0) (the
// right-hand side of a linear model is affine: linear loops are solved
// symbolically, or by an LU at run time, exactly up to rounding). Independently, the graph is written down as the full linear
// DAE of its element and junction equations, in descriptor form
//
//     E w' = A w + g,   w = [q, p of every storage element; e, f of every bond],
//
// straight from docs/language.md (no causality, no tearing: nothing of the
// compiler is used). The DAE is reduced numerically by the shuffle
// algorithm, which leaves a regular E plus the algebraic constraints met on
// the way; fixing the compiler's independent states in the constraints gives
// the consistent w and so dx/dt. Both must agree to 1e-9 relative, for the
// states and for every bond variable (the model outputs all of them). A graph
// whose DAE is singular must be rejected by the compiler with an error; a
// regular one may only be rejected as dependent storage driven through an
// algebraic loop (documented as unsupported), or as a known bug listed in
// kKnownConflicts.
//
// The generator is biased towards algebraic loops (resistors on junctions
// without storage) and derivative causality (two C on a 0-junction, I on both
// sides of a TF, a source fixing a storage element's variable, ...), and
// sometimes closes loops of junctions, which may make the DAE singular.

#include "hbg/hbg.h"
#include "hbg/driver/Internal.h"

#include <Eigen/Dense>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

enum class Kind { Zero, One, C, I, R, Se, Sf, TF, GY };

bool isJunction(Kind k) { return k == Kind::Zero || k == Kind::One; }
bool isStorage(Kind k) { return k == Kind::C || k == Kind::I; }

struct Element {
  Kind kind;
  std::string name;
  double value = 0;       ///< C, I, R, TF and GY ratio, source value
  double initial = 0;     ///< storage: q0 / p0
  bool parameter = false; ///< value declared as a parameter
  std::vector<int> bonds;
};

struct Bond {
  int from, to;
};

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct Graph {
  std::vector<Element> elements;
  std::vector<Bond> bonds;

  /// The graph as a .hbg model that outputs every bond's effort and flow.
  std::string text(const std::string &model) const {
    std::ostringstream os;
    os << "model " << model << " {\n";
    for (const Element &e : elements)
      if (e.parameter)
        os << "    parameter k_" << e.name << " = " << number(e.value) << ";\n";
    for (const Element &e : elements) {
      std::string arg = e.parameter ? "k_" + e.name : number(e.value);
      switch (e.kind) {
      case Kind::Zero:
        os << "    0 " << e.name << ";\n";
        break;
      case Kind::One:
        os << "    1 " << e.name << ";\n";
        break;
      case Kind::C:
        os << "    C " << e.name << "(" << arg << ") { q0 = " << number(e.initial) << "; }\n";
        break;
      case Kind::I:
        os << "    I " << e.name << "(" << arg << ") { p0 = " << number(e.initial) << "; }\n";
        break;
      case Kind::R:
        os << "    R " << e.name << "(" << arg << ");\n";
        break;
      case Kind::Se:
        os << "    Se " << e.name << "(" << arg << ");\n";
        break;
      case Kind::Sf:
        os << "    Sf " << e.name << "(" << arg << ");\n";
        break;
      case Kind::TF:
        os << "    TF " << e.name << "(" << arg << ");\n";
        break;
      case Kind::GY:
        os << "    GY " << e.name << "(" << arg << ");\n";
        break;
      }
    }
    for (std::size_t b = 0; b < bonds.size(); ++b)
      os << "    bond b" << b + 1 << ": " << elements[bonds[b].from].name << " -> "
         << elements[bonds[b].to].name << ";\n";
    os << "    output ";
    for (std::size_t b = 0; b < bonds.size(); ++b)
      os << (b ? ", " : "") << "b" << b + 1 << ".e, b" << b + 1 << ".f";
    os << ";\n}\n";
    return os.str();
  }
};

//===----------------------------------------------------------------------===//
// Generator
//===----------------------------------------------------------------------===//

constexpr int kMaxElements = 30;

class Generator {
public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  Graph run() {
    for (;;) {
      g_ = Graph{};
      junctions_.clear();
      build();
      if (static_cast<int>(g_.elements.size()) <= kMaxElements)
        return g_;
    }
  }

private:
  // Not std::uniform_*_distribution, whose output differs between standard
  // libraries: the seeds in kKnownConflicts must mean the same graphs.
  double uniform(double a, double b) {
    return a + (b - a) * static_cast<double>(rng_() >> 11) * 0x1p-53;
  }
  int pick(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  bool chance(double p) { return uniform(0, 1) < p; }
  int size() const { return static_cast<int>(g_.elements.size()); }

  int add(Kind k) {
    static const char *prefix[] = {"j", "j", "c", "i", "r", "se", "sf", "tf", "gy"};
    Element e;
    e.kind = k;
    e.name = prefix[static_cast<int>(k)] + std::to_string(g_.elements.size());
    if (k == Kind::Se || k == Kind::Sf)
      e.value = uniform(-2, 2);
    else if (!isJunction(k))
      e.value = uniform(0.5, 2);
    if (isStorage(k))
      e.initial = uniform(-1, 1);
    e.parameter = !isJunction(k) && chance(0.3);
    g_.elements.push_back(e);
    if (isJunction(k))
      junctions_.push_back(size() - 1);
    return size() - 1;
  }

  void bond(int from, int to) {
    g_.bonds.push_back({from, to});
    g_.elements[from].bonds.push_back(static_cast<int>(g_.bonds.size()) - 1);
    g_.elements[to].bonds.push_back(static_cast<int>(g_.bonds.size()) - 1);
  }

  /// Bonds a to b in a random direction, through a TF or GY `twoPort` of
  /// the time (the two-port's orientation is random too).
  void link(int a, int b, double twoPort) {
    if (chance(twoPort)) {
      int t = add(chance(0.65) ? Kind::TF : Kind::GY);
      if (chance(0.5))
        std::swap(a, b);
      bond(a, t);
      bond(t, b);
    } else if (chance(0.5)) {
      bond(a, b);
    } else {
      bond(b, a);
    }
  }

  int junction(Kind k) {
    int j = add(k);
    if (junctions_.size() > 1)
      link(junctions_[pick(static_cast<int>(junctions_.size()) - 1)], j, 0.25);
    return j;
  }

  /// An existing junction of kind k half of the time, else a new one.
  int junctionOf(Kind k) {
    std::vector<int> of;
    for (int j : junctions_)
      if (g_.elements[j].kind == k)
        of.push_back(j);
    if (!of.empty() && chance(0.5))
      return of[pick(static_cast<int>(of.size()))];
    return junction(k);
  }

  int anyJunction() { return junctions_[pick(static_cast<int>(junctions_.size()))]; }

  /// A one-port element of kind k on junction j.
  int attach(int j, Kind k) {
    int e = add(k);
    bool source = k == Kind::Se || k == Kind::Sf;
    bool outward = source ? chance(0.8) : chance(0.3); // bond from the element
    if (!source && chance(0.08)) {
      int t = add(chance(0.6) ? Kind::TF : Kind::GY);
      if (outward) {
        bond(e, t);
        bond(t, j);
      } else {
        bond(j, t);
        bond(t, e);
      }
    } else if (outward) {
      bond(e, j);
    } else {
      bond(j, e);
    }
    return e;
  }

  Kind randomOnePort() {
    double u = uniform(0, 1);
    return u < 0.22   ? Kind::C
           : u < 0.44 ? Kind::I
           : u < 0.78 ? Kind::R
           : u < 0.89 ? Kind::Se
                      : Kind::Sf;
  }

  void pattern() {
    switch (pick(9)) {
    case 0: { // two C on a 0-junction
      int j = junctionOf(Kind::Zero);
      attach(j, Kind::C);
      attach(j, Kind::C);
      break;
    }
    case 1: { // two I on a 1-junction
      int j = junctionOf(Kind::One);
      attach(j, Kind::I);
      attach(j, Kind::I);
      break;
    }
    case 2: { // I on both sides of a TF (rigidly geared inertias)
      int a = junction(Kind::One);
      int t = add(Kind::TF);
      int b = add(Kind::One);
      junctions_.push_back(b);
      chance(0.5) ? (bond(a, t), bond(t, b)) : (bond(b, t), bond(t, a));
      attach(a, Kind::I);
      attach(b, Kind::I);
      break;
    }
    case 3: { // C on both sides of a TF
      int a = junction(Kind::Zero);
      int t = add(Kind::TF);
      int b = add(Kind::Zero);
      junctions_.push_back(b);
      chance(0.5) ? (bond(a, t), bond(t, b)) : (bond(b, t), bond(t, a));
      attach(a, Kind::C);
      attach(b, Kind::C);
      break;
    }
    case 4: { // C on a 0-junction, I on a 1-junction, through a GY
      int a = junction(Kind::Zero);
      int t = add(Kind::GY);
      int b = add(Kind::One);
      junctions_.push_back(b);
      chance(0.5) ? (bond(a, t), bond(t, b)) : (bond(b, t), bond(t, a));
      attach(a, Kind::C);
      attach(b, Kind::I);
      break;
    }
    case 5: { // a source fixing a storage element's variable
      if (chance(0.5)) {
        int j = junctionOf(Kind::Zero);
        attach(j, Kind::Se);
        attach(j, Kind::C);
      } else {
        int j = junctionOf(Kind::One);
        attach(j, Kind::Sf);
        attach(j, Kind::I);
      }
      break;
    }
    case 6: { // C on two 0-junctions bonded directly (one effort)
      int a = junctionOf(Kind::Zero);
      int b = add(Kind::Zero);
      junctions_.push_back(b);
      chance(0.5) ? bond(a, b) : bond(b, a);
      attach(a, Kind::C);
      attach(b, Kind::C);
      break;
    }
    default: { // resistors only: algebraic loops
      int a = junctionOf(Kind::Zero);
      int b = junctionOf(Kind::One);
      attach(a, Kind::R);
      attach(b, Kind::R);
      if (chance(0.5))
        attach(chance(0.5) ? a : b, Kind::R);
      break;
    }
    }
  }

  void build() {
    int target = 4 + pick(kMaxElements - 3); // 4..30 elements
    int nj = 1 + pick(std::clamp(target / 4, 1, 8));
    for (int k = 0; k < nj; ++k)
      junction(chance(0.5) ? Kind::Zero : Kind::One);
    for (int k = pick(3); k > 0; --k)
      pattern();
    // Loops of junctions: an extra bond between two junctions (parallel to
    // an existing one when they are already bonded).
    if (junctions_.size() >= 2 && chance(0.2)) {
      for (int k = 1 + pick(2); k > 0; --k) {
        int a = anyJunction(), b = anyJunction();
        if (a != b)
          link(a, b, 0.3);
      }
    }
    // Two equal TFs in parallel: between junctions of one kind, the loop they
    // close leaves the split of the flow (effort) between them free, so the
    // DAE is singular.
    if (junctions_.size() >= 2 && chance(0.06)) {
      int a = anyJunction(), b = anyJunction();
      if (a != b) {
        int t1 = add(Kind::TF), t2 = add(Kind::TF);
        g_.elements[t2].value = g_.elements[t1].value;
        bond(a, t1);
        bond(t1, b);
        bond(a, t2);
        bond(t2, b);
      }
    }
    while (size() < target)
      attach(anyJunction(), randomOnePort());
    for (std::size_t k = 0; k < junctions_.size(); ++k)
      while (g_.elements[junctions_[k]].bonds.size() < 2)
        attach(junctions_[k], randomOnePort());
  }

  std::mt19937_64 rng_;
  Graph g_;
  std::vector<int> junctions_;
};

//===----------------------------------------------------------------------===//
// Reference: the full DAE and its reduction
//===----------------------------------------------------------------------===//

using Eigen::MatrixXd;
using Eigen::VectorXd;

/// E w' = A w + g over w = [energy variables; e_1, f_1, e_2, f_2, ...].
struct Dae {
  int n = 0;
  int storage = 0;
  MatrixXd E, A;
  VectorXd g;
  std::vector<int> energy; ///< by element: index of q / p in w, or -1
  int effort(int b) const { return storage + 2 * b; }
  int flow(int b) const { return storage + 2 * b + 1; }
};

Dae buildDae(const Graph &gr) {
  Dae d;
  d.energy.assign(gr.elements.size(), -1);
  for (std::size_t i = 0; i < gr.elements.size(); ++i)
    if (isStorage(gr.elements[i].kind))
      d.energy[i] = d.storage++;
  d.n = d.storage + 2 * static_cast<int>(gr.bonds.size());
  d.E = MatrixXd::Zero(d.n, d.n);
  d.A = MatrixXd::Zero(d.n, d.n);
  d.g = VectorXd::Zero(d.n);
  int row = 0;
  for (int id = 0; id < static_cast<int>(gr.elements.size()); ++id) {
    const Element &el = gr.elements[id];
    // +1 when the bond points at this element.
    auto s = [&](int b) { return gr.bonds[b].to == id ? 1.0 : -1.0; };
    switch (el.kind) {
    case Kind::C: { // dq/dt = s f;  0 = e - q / C
      int b = el.bonds[0], q = d.energy[id];
      d.E(row, q) = 1;
      d.A(row++, d.flow(b)) = s(b);
      d.A(row, d.effort(b)) = 1;
      d.A(row++, q) = -1 / el.value;
      break;
    }
    case Kind::I: { // dp/dt = e;  0 = s f - p / m
      int b = el.bonds[0], p = d.energy[id];
      d.E(row, p) = 1;
      d.A(row++, d.effort(b)) = 1;
      d.A(row, d.flow(b)) = s(b);
      d.A(row++, p) = -1 / el.value;
      break;
    }
    case Kind::R: { // 0 = e - R s f
      int b = el.bonds[0];
      d.A(row, d.effort(b)) = 1;
      d.A(row++, d.flow(b)) = -el.value * s(b);
      break;
    }
    case Kind::Se: // 0 = e - V
      d.A(row, d.effort(el.bonds[0])) = 1;
      d.g(row++) = -el.value;
      break;
    case Kind::Sf: // 0 = f - F
      d.A(row, d.flow(el.bonds[0])) = 1;
      d.g(row++) = -el.value;
      break;
    case Kind::TF:
    case Kind::GY: {
      int in = -1, out = -1;
      for (int b : el.bonds)
        (gr.bonds[b].to == id ? in : out) = b;
      REQUIRE(in >= 0);
      REQUIRE(out >= 0);
      if (el.kind == Kind::TF) { // e1 = n e2, f2 = n f1
        d.A(row, d.effort(in)) = 1;
        d.A(row++, d.effort(out)) = -el.value;
        d.A(row, d.flow(out)) = 1;
        d.A(row++, d.flow(in)) = -el.value;
      } else { // e1 = r f2, e2 = r f1
        d.A(row, d.effort(in)) = 1;
        d.A(row++, d.flow(out)) = -el.value;
        d.A(row, d.effort(out)) = 1;
        d.A(row++, d.flow(in)) = -el.value;
      }
      break;
    }
    case Kind::Zero:
    case Kind::One: {
      // 0: common effort, sum of s_i f_i = 0; 1: common flow, sum of s_i e_i = 0.
      bool zero = el.kind == Kind::Zero;
      auto common = [&](int b) { return zero ? d.effort(b) : d.flow(b); };
      auto summed = [&](int b) { return zero ? d.flow(b) : d.effort(b); };
      for (std::size_t k = 1; k < el.bonds.size(); ++k) {
        d.A(row, common(el.bonds[k])) += 1;
        d.A(row++, common(el.bonds[0])) -= 1;
      }
      for (int b : el.bonds)
        d.A(row, summed(b)) += s(b);
      ++row;
      break;
    }
    }
  }
  REQUIRE(row == d.n);
  return d;
}

/// True when det(sE - A) vanishes for several s: the pencil is singular.
bool singularPencil(const Dae &d) {
  for (double s : {0.7318, -1.913, 2.4471, 5.21}) {
    Eigen::JacobiSVD<MatrixXd> svd(s * d.E - d.A);
    const VectorXd &sv = svd.singularValues();
    if (sv(sv.size() - 1) > 1e-11 * sv(0))
      return false;
  }
  return true;
}

/// The shuffle algorithm: E w' = A w + g becomes Ef w' = Af w + gf with Ef
/// regular, plus the constraints C w + c = 0 met on the way.
struct Shuffled {
  bool ok = false;
  MatrixXd Ef, Af;
  VectorXd gf;
  MatrixXd C;
  VectorXd c;
};

Shuffled shuffle(const Dae &d) {
  Shuffled out;
  int n = d.n;
  MatrixXd E = d.E, A = d.A;
  VectorXd g = d.g;
  std::vector<MatrixXd> cRows;
  std::vector<VectorXd> cRhs;
  for (int iter = 0; iter <= n + 2; ++iter) {
    Eigen::JacobiSVD<MatrixXd> svd(E, Eigen::ComputeFullU);
    const VectorXd &sv = svd.singularValues();
    double tol = 1e-10 * std::max(1.0, sv(0));
    int r = 0;
    while (r < n && sv(r) > tol)
      ++r;
    if (r == n) {
      out.ok = true;
      out.Ef = E;
      out.Af = A;
      out.gf = g;
      break;
    }
    // Rows U^T E: the first r span E's rows, the others are (numerically) 0.
    MatrixXd Ut = svd.matrixU().transpose();
    MatrixXd EU = Ut * E, AU = Ut * A;
    VectorXd gU = Ut * g;
    // 0 = A2 w + g2: a constraint; its derivative A2 w' = 0 (constant sources).
    MatrixXd A2 = AU.bottomRows(n - r);
    cRows.push_back(A2);
    cRhs.push_back(gU.tail(n - r));
    E.topRows(r) = EU.topRows(r);
    E.bottomRows(n - r) = A2;
    A.topRows(r) = AU.topRows(r);
    A.bottomRows(n - r).setZero();
    g.head(r) = gU.head(r);
    g.tail(n - r).setZero();
  }
  Eigen::Index rows = 0;
  for (const MatrixXd &m : cRows)
    rows += m.rows();
  out.C = MatrixXd::Zero(rows, n);
  out.c = VectorXd::Zero(rows);
  rows = 0;
  for (std::size_t k = 0; k < cRows.size(); ++k) {
    out.C.middleRows(rows, cRows[k].rows()) = cRows[k];
    out.c.segment(rows, cRows[k].rows()) = cRhs[k];
    rows += cRows[k].rows();
  }
  return out;
}

/// The reference solution for given independent states: w = W0 + Wx x and
/// dx/dt = b + A x.
struct Reference {
  std::string problem; ///< empty when the reduction succeeded
  MatrixXd A, Wx;
  VectorXd b, W0;
};

Reference reference(const Dae &d, const std::vector<int> &stateVars) {
  Reference ref;
  Shuffled sh = shuffle(d);
  if (!sh.ok) {
    ref.problem = "the shuffle algorithm did not terminate on a regular pencil";
    return ref;
  }
  int n = d.n, k = static_cast<int>(stateVars.size());
  // Consistent w: C w + c = 0, so w = wp + Z alpha over the null space Z of C.
  MatrixXd Z;
  VectorXd wp = VectorXd::Zero(n);
  if (sh.C.rows() == 0) {
    Z = MatrixXd::Identity(n, n);
  } else {
    Eigen::JacobiSVD<MatrixXd> svd(sh.C, Eigen::ComputeFullU | Eigen::ComputeFullV);
    const VectorXd &sv = svd.singularValues();
    double tol = 1e-10 * std::max(1.0, sv(0));
    int r = 0;
    while (r < sv.size() && sv(r) > tol)
      ++r;
    svd.setThreshold(tol / std::max(1.0, sv(0)));
    wp = svd.solve(-sh.c);
    if ((sh.C * wp + sh.c).norm() > 1e-8 * (1 + sh.c.norm())) {
      ref.problem = "the constraints are inconsistent";
      return ref;
    }
    Z = svd.matrixV().rightCols(n - r);
  }
  if (Z.cols() != k) {
    ref.problem = "the DAE has " + std::to_string(Z.cols()) + " degrees of freedom, the model " +
                  std::to_string(k) + " states";
    return ref;
  }
  // x = S w fixes alpha: S Z alpha = x - S wp.
  MatrixXd SZ(k, k);
  VectorXd Swp(k);
  for (int i = 0; i < k; ++i) {
    SZ.row(i) = Z.row(stateVars[i]);
    Swp(i) = wp(stateVars[i]);
  }
  MatrixXd M = MatrixXd::Identity(k, k);
  if (k > 0) {
    Eigen::JacobiSVD<MatrixXd> svd(SZ);
    const VectorXd &sv = svd.singularValues();
    if (sv(k - 1) < 1e-9 * sv(0)) {
      ref.problem = "the model's states do not parametrise the DAE's solutions";
      return ref;
    }
    M = SZ.inverse();
  }
  ref.Wx = Z * M;
  ref.W0 = wp - ref.Wx * Swp;
  Eigen::PartialPivLU<MatrixXd> lu(sh.Ef);
  // No states: nothing to solve for (Eigen's triangular solve reads the
  // data of an empty right-hand side, which UBSan flags).
  MatrixXd dWx = k > 0 ? MatrixXd(lu.solve(sh.Af * ref.Wx)) : MatrixXd(sh.Ef.rows(), 0);
  VectorXd dW0 = lu.solve(sh.Af * ref.W0 + sh.gf);
  ref.A = MatrixXd(k, k);
  ref.b = VectorXd(k);
  for (int i = 0; i < k; ++i) {
    ref.A.row(i) = dWx.row(stateVars[i]);
    ref.b(i) = dW0(stateVars[i]);
  }
  return ref;
}

//===----------------------------------------------------------------------===//
// The compiled model's matrices
//===----------------------------------------------------------------------===//

struct Compiled {
  MatrixXd A, Cy; ///< dx/dt = b + A x, y = d + Cy x
  VectorXd b, d;
};

Compiled compiledMatrices(const hbg::Model &model) {
  std::size_t n = model.stateNames().size(), m = model.outputNames().size();
  std::vector<double> p = model.parameterValues();
  std::vector<double> x(n, 0.0), xdot(n), y(m);
  Compiled c;
  c.A = MatrixXd(n, n);
  c.Cy = MatrixXd(m, n);
  c.b = VectorXd(n);
  c.d = VectorXd(m);
  model.rhs(0, x.data(), p.data(), xdot.data());
  model.outputs(0, x.data(), p.data(), y.data());
  for (std::size_t i = 0; i < n; ++i)
    c.b(i) = xdot[i];
  for (std::size_t i = 0; i < m; ++i)
    c.d(i) = y[i];
  for (std::size_t j = 0; j < n; ++j) {
    std::fill(x.begin(), x.end(), 0.0);
    x[j] = 1;
    model.rhs(0, x.data(), p.data(), xdot.data());
    model.outputs(0, x.data(), p.data(), y.data());
    for (std::size_t i = 0; i < n; ++i)
      c.A(i, j) = xdot[i] - c.b(i);
    for (std::size_t i = 0; i < m; ++i)
      c.Cy(i, j) = y[i] - c.d(i);
  }
  return c;
}

/// |got - want| <= 1e-9 max(1, |want|) elementwise, relative to the scale
/// of the matrix. Returns the worst ratio of error to tolerance.
double mismatch(const MatrixXd &got, const MatrixXd &want) {
  if (got.rows() != want.rows() || got.cols() != want.cols())
    return INFINITY;
  if (want.size() == 0)
    return 0;
  double tol = 1e-9 * std::max(1.0, want.cwiseAbs().maxCoeff());
  double worst = 0;
  for (Eigen::Index i = 0; i < got.size(); ++i) {
    double err = std::abs(got.data()[i] - want.data()[i]);
    worst = std::max(worst, std::isfinite(err) ? err / tol : INFINITY);
  }
  return worst;
}

std::string show(const MatrixXd &m) {
  std::ostringstream os;
  os << m.format(Eigen::IOFormat(Eigen::FullPrecision, 0, ", ", "\n", "    [", "]"));
  return os.str();
}

/// The diagnostic kind of a rejection, from its first error line.
std::string errorKind(const std::string &what) {
  static const std::pair<const char *, const char *> kinds[] = {
      {"is in derivative causality, but its", "DerivativeThroughLoop"},
      {"are singular at the default", "SingularLoopAtDefaults"},
      {"are singular:", "SingularLoop"},
      {"both impose the", "SourceConflict"},
      {"causal conflict at", "CausalConflict"},
  };
  for (const auto &[text, kind] : kinds)
    if (what.find(text) != std::string::npos)
      return kind;
  return "other";
}

// Known compiler bugs (seeds of the default run), to be removed when fixed:
// regular DAEs that hbg rejects with a causal conflict. SCAP retracts one
// choice at a time (a storage element or R that contradicts the junction
// structure takes the other causality), but does not search combinations of
// earlier choices. Seed 13 is a loop of junctions and a TF with no storage
// (E = n E, so every flow is 0): each single retraction still conflicts.
// A seed here is excused only while its rejection is a causal conflict;
// once it compiles, the test asks for its removal.
const std::set<std::uint64_t> kKnownConflicts = {13};

int envInt(const char *name, int fallback) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

struct Stats {
  int generated = 0, compiled = 0, withLoops = 0, withDependent = 0, interesting = 0;
  int runTimeLoops = 0; ///< models with a linear loop solved at run time
  int rejectedSingular = 0, rejectedRegular = 0, derivativeThroughLoop = 0, knownConflicts = 0;
  int maxStates = 0, maxElements = 0;
  std::map<std::string, int> singularKinds, regularKinds;
};

} // namespace

namespace {

/// Compiles random graphs with `compiler` and compares each with the
/// reduction of its DAE.
/// Returns how many compiled models had a linear loop solved at run time.
int checkRandomGraphs(const hbg::Compiler &compiler) {
  // Graphs with loops or dependent states to check, and the first seed; a
  // longer run: HBG_DIFFERENTIAL_GRAPHS=5000 HBG_DIFFERENTIAL_SEED=1000000.
  const int kWanted = envInt("HBG_DIFFERENTIAL_GRAPHS", 200);
  const auto firstSeed = static_cast<std::uint64_t>(envInt("HBG_DIFFERENTIAL_SEED", 1));
  const int kMaxGraphs = 25 * kWanted; // a bound in case the generator drifts
  Stats st;
  std::vector<std::string> failures;

  for (std::uint64_t seed = firstSeed; st.interesting < kWanted && st.generated < kMaxGraphs;
       ++seed) {
    Graph gr = Generator(seed).run();
    ++st.generated;
    st.maxElements = std::max(st.maxElements, static_cast<int>(gr.elements.size()));
    std::string name = "G" + std::to_string(seed);
    std::string text = gr.text(name);
    Dae dae = buildDae(gr);
    bool singular = singularPencil(dae);

    std::optional<hbg::Model> model;
    std::string error;
    try {
      model = compiler.compileString(text, name + ".hbg");
    } catch (const hbg::CompileError &e) {
      error = e.what();
    } catch (const std::exception &e) {
      failures.push_back("seed " + std::to_string(seed) + ": the compiler threw " + e.what() +
                         "\n" + text);
      continue;
    }

    if (!model) {
      if (error.find("error:") == std::string::npos)
        failures.push_back("seed " + std::to_string(seed) + ": a rejection without `error:`\n" +
                           error + "\n" + text);
      std::string kind = errorKind(error);
      if (singular) {
        ++st.rejectedSingular;
        ++st.singularKinds[kind];
      } else {
        ++st.rejectedRegular;
        ++st.regularKinds[kind];
        bool known = kKnownConflicts.count(seed) && kind == "CausalConflict";
        if (kind == "DerivativeThroughLoop") {
          ++st.derivativeThroughLoop;
        } else if (known) {
          ++st.knownConflicts;
        } else {
          failures.push_back("seed " + std::to_string(seed) +
                             ": the DAE is regular but the compiler rejected the model:\n" + error +
                             "\n" + text);
        }
      }
      continue;
    }
    ++st.compiled;
    if (kKnownConflicts.count(seed))
      failures.push_back("seed " + std::to_string(seed) +
                         " compiles now: remove it from kKnownConflicts");
    if (singular) {
      failures.push_back("seed " + std::to_string(seed) +
                         ": the DAE is singular but the model compiled:\n" + text);
      continue;
    }
    const hbg::eq::EquationSystem &eqs = hbg::driver::equations(*model);
    bool loops = !eqs.loops.empty(), dependent = !eqs.dependent.empty();
    st.withLoops += loops;
    st.runTimeLoops += std::any_of(eqs.loops.begin(), eqs.loops.end(), [](const auto &l) {
      return l.linear && !l.unknowns.empty();
    });
    st.withDependent += dependent;
    int numStates = static_cast<int>(model->stateNames().size());
    st.interesting += (loops || dependent) && numStates > 0;
    st.maxStates = std::max(st.maxStates, numStates);

    // The compiled model's states, as energy variables of the DAE.
    std::vector<int> stateVars;
    for (const std::string &s : model->stateNames()) {
      std::string element = s.substr(0, s.find('.'));
      int var = -1;
      for (std::size_t i = 0; i < gr.elements.size(); ++i)
        if (gr.elements[i].name == element)
          var = dae.energy[i];
      if (var < 0)
        failures.push_back("seed " + std::to_string(seed) + ": unknown state `" + s + "`");
      stateVars.push_back(std::max(var, 0));
    }

    Reference ref = reference(dae, stateVars);
    if (!ref.problem.empty()) {
      failures.push_back("seed " + std::to_string(seed) + ": " + ref.problem + "\n" + text);
      continue;
    }
    Compiled c = compiledMatrices(*model);
    // Outputs are b1.e, b1.f, b2.e, ...: rows effort(b), flow(b) of w.
    MatrixXd Cref(2 * gr.bonds.size(), numStates);
    VectorXd dref(2 * gr.bonds.size());
    for (std::size_t b = 0; b < gr.bonds.size(); ++b) {
      Cref.row(2 * b) = ref.Wx.row(dae.effort(static_cast<int>(b)));
      Cref.row(2 * b + 1) = ref.Wx.row(dae.flow(static_cast<int>(b)));
      dref(2 * b) = ref.W0(dae.effort(static_cast<int>(b)));
      dref(2 * b + 1) = ref.W0(dae.flow(static_cast<int>(b)));
    }
    double worstState = std::max(mismatch(c.A, ref.A), mismatch(c.b, ref.b));
    double worstOutput = std::max(mismatch(c.Cy, Cref), mismatch(c.d, dref));
    if (worstState > 1 || worstOutput > 1) {
      std::ostringstream os;
      os << "seed " << seed << ": the compiled model and the reference disagree ("
         << (worstState > 1 ? "state matrices" : "bond variables") << ")\n"
         << text << "states:";
      for (const std::string &s : model->stateNames())
        os << ' ' << s;
      os << "\n  compiled A:\n"
         << show(c.A) << "\n  reference A:\n"
         << show(ref.A) << "\n  compiled b:\n"
         << show(c.b.transpose()) << "\n  reference b:\n"
         << show(ref.b.transpose()) << "\n";
      if (worstOutput > 1)
        os << "  compiled outputs (rows b1.e, b1.f, ...; columns 1, x):\n"
           << show((MatrixXd(c.d.size(), numStates + 1) << c.d, c.Cy).finished())
           << "\n  reference outputs:\n"
           << show((MatrixXd(dref.size(), numStates + 1) << dref, Cref).finished()) << "\n";
      failures.push_back(os.str());
    }
  }

  std::ostringstream summary;
  summary << "graphs generated: " << st.generated << " (up to " << st.maxElements
          << " elements, up to " << st.maxStates << " states)\n"
          << "compiled: " << st.compiled << ", with algebraic loops: " << st.withLoops
          << " (linear, solved at run time: " << st.runTimeLoops << ")"
          << ", with dependent states: " << st.withDependent
          << ", with loops or dependent states and at least one state: " << st.interesting << "\n"
          << "rejected, DAE singular: " << st.rejectedSingular;
  for (const auto &[kind, count] : st.singularKinds)
    summary << (kind == st.singularKinds.begin()->first ? " (" : ", ") << kind << " " << count;
  summary << (st.singularKinds.empty() ? "" : ")") << "\n"
          << "rejected otherwise (DAE regular): " << st.rejectedRegular;
  for (const auto &[kind, count] : st.regularKinds)
    summary << (kind == st.regularKinds.begin()->first ? " (" : ", ") << kind << " " << count;
  summary << (st.regularKinds.empty() ? "" : ")")
          << "; of these, known compiler bugs: " << st.knownConflicts
          << ", unsupported dependent storage through a loop: " << st.derivativeThroughLoop;
  MESSAGE(summary.str());

  for (const std::string &f : failures)
    FAIL_CHECK(f);
  CHECK(st.interesting >= kWanted);
  // The generator must exercise the rejection of singular graphs too.
  CHECK(st.rejectedSingular >= 5);
  // Dependent storage driven through an algebraic loop is documented as
  // unsupported; it must stay rare for the test to mean anything.
  CHECK(st.derivativeThroughLoop <= st.interesting / 10);
  return st.runTimeLoops;
}

} // namespace

TEST_CASE("random linear bond graphs: compiled state matrices equal a reduction of the DAE") {
  checkRandomGraphs(hbg::Compiler());
}

TEST_CASE("the same graphs with every linear loop solved at run time") {
  // Large loops are solved by the runtime's LU instead of symbolically;
  // the graphs here are small, so the option sends every loop that way.
  hbg::CompilerOptions opts;
  opts.equations.runTimeLoopMin = 0;
  CHECK(checkRandomGraphs(hbg::Compiler(opts)) >= 150);
}

TEST_CASE("the same graphs on tapes and as baseline code: right-hand sides and outputs equal LLVM's bit for bit") {
  // A mode runs on its tape until LLVM has compiled it (Tiering); the two
  // must not differ in a single bit, or a run would depend on when the
  // compiled code was swapped in. Loops closed symbolically and solved at
  // run time (KLU) both.
  for (unsigned runTimeLoopMin : {8u, 0u}) {
    CAPTURE(runTimeLoopMin);
    hbg::CompilerOptions jitOpts, tapeOpts, baselineOpts;
    jitOpts.tiering = hbg::Tiering::Jit;
    tapeOpts.tiering = hbg::Tiering::Tape;
    // Tiered, never hot: the tapes as baseline machine code.
    baselineOpts.hotCalls = std::numeric_limits<unsigned>::max();
    jitOpts.equations.runTimeLoopMin = tapeOpts.equations.runTimeLoopMin =
        baselineOpts.equations.runTimeLoopMin = runTimeLoopMin;
    hbg::Compiler jit(jitOpts), tape(tapeOpts), baseline(baselineOpts);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> value(-2, 2);
    int compared = 0;
    for (std::uint64_t seed = 1; compared < 150 && seed < 2000; ++seed) {
      Graph gr = Generator(seed).run();
      std::string text = gr.text("G" + std::to_string(seed));
      std::optional<hbg::Model> a, b, c;
      try {
        a = jit.compileString(text);
        b = tape.compileString(text);
        c = baseline.compileString(text);
      } catch (const hbg::CompileError &) {
        continue;
      }
      CAPTURE(seed);
      std::vector<double> p = a->parameterValues();
      for (double &v : p)
        v *= 1 + 0.1 * value(rng);
      std::size_t n = a->stateNames().size(), m = a->outputNames().size();
      for (int k = 0; k < 3; ++k) {
        std::vector<double> x(n), fa(n), fb(n), fc(n), ya(m), yb(m), yc(m);
        for (double &v : x)
          v = value(rng);
        double t = value(rng);
        a->rhs(t, x.data(), p.data(), fa.data());
        b->rhs(t, x.data(), p.data(), fb.data());
        c->rhs(t, x.data(), p.data(), fc.data());
        a->outputs(t, x.data(), p.data(), ya.data());
        b->outputs(t, x.data(), p.data(), yb.data());
        c->outputs(t, x.data(), p.data(), yc.data());
        // (memcmp must not see the null data() of an empty vector.)
        CHECK((n == 0 || std::memcmp(fa.data(), fb.data(), n * sizeof(double)) == 0));
        CHECK((m == 0 || std::memcmp(ya.data(), yb.data(), m * sizeof(double)) == 0));
        CHECK((n == 0 || std::memcmp(fa.data(), fc.data(), n * sizeof(double)) == 0));
        CHECK((m == 0 || std::memcmp(ya.data(), yc.data(), m * sizeof(double)) == 0));
      }
      ++compared;
    }
    CHECK(compared == 150);
  }
}
