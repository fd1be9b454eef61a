//===- runtime/Remap.cpp - State remapping at mode changes ----------------===//

#include "hbg/runtime/Remap.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>

namespace hbg::runtime {

struct RemapWorkspace::Impl {
  Eigen::MatrixXd B, A, BA, J;
  Eigen::VectorXd x, d, F, dd, Bdd, step;
  Eigen::FullPivLU<Eigen::MatrixXd> lu;
  std::vector<double> buf;
};

RemapWorkspace::RemapWorkspace() : impl_(std::make_unique<Impl>()) {}
RemapWorkspace::~RemapWorkspace() = default;

void remapExact(Mode &mode, const std::string &modeText, double t, std::vector<double> &x0,
                std::vector<double> &d0) {
  RemapWorkspace work;
  remapExact(mode, modeText, t, x0, d0, work);
}

void remapExact(Mode &mode, const std::string &modeText, double t, std::vector<double> &x0,
                std::vector<double> &d0, RemapWorkspace &work) {
  std::size_t n = x0.size(), nd = d0.size();
  // x+ - x- = B (D(x+) - d-): Newton on x+ (one step when the storage is
  // linear). Eigen's resize keeps the storage when the size is the same.
  RemapWorkspace::Impl &w = work.impl();
  Eigen::MatrixXd &B = w.B, &A = w.A, &J = w.J;
  Eigen::VectorXd &x = w.x, &d = w.d, &F = w.F, &step = w.step;
  std::vector<double> &buf = w.buf;
  B.resize(n, nd);
  A.resize(nd, n);
  buf.resize(std::max<std::size_t>(1, n * nd));
  call(mode.impulse(t, x0.data(), buf.data()), mode, "impulse", &modeText);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < nd; ++k)
      B(i, k) = buf[i * nd + k];
  Eigen::Map<const Eigen::VectorXd> xMinus(x0.data(), n), dMinus(d0.data(), nd);
  x = xMinus;
  d.resize(nd);
  for (int it = 0;; ++it) {
    call(mode.dependent(t, x.data(), d.data()), mode, "dependent storage", &modeText);
    w.dd = d - dMinus;
    w.Bdd.noalias() = B * w.dd;
    F = x - xMinus - w.Bdd;
    double scale = 1 + (n ? x.cwiseAbs().maxCoeff() : 0.0);
    if (n == 0 || F.cwiseAbs().maxCoeff() <= 1e-15 * scale)
      break;
    if (it == 20)
      throw RunError(DiagKind::RunRemapNotConverged, t, modeText, {DiagArg::mode(modeText)});
    call(mode.dependentJacobian(t, x.data(), buf.data()), mode, "dependent storage", &modeText);
    for (std::size_t k = 0; k < nd; ++k)
      for (std::size_t i = 0; i < n; ++i)
        A(k, i) = buf[k * n + i];
    // I - B A, rounded as the product is.
    w.BA.noalias() = B * A;
    J = -w.BA;
    J.diagonal().array() += 1.0;
    Eigen::FullPivLU<Eigen::MatrixXd> &lu = w.lu;
    lu.compute(J);
    if (!lu.isInvertible())
      throw RunError(DiagKind::RunRemapSingular, t, modeText, {DiagArg::mode(modeText)});
    step = lu.solve(F);
    x -= step;
    if (!x.allFinite())
      throw RunError(DiagKind::RunRemapNotFinite, t, modeText, {DiagArg::mode(modeText)});
    // Dependent storage defined through loops solved by Newton's method is
    // accurate to their tolerance only: a negligible step ends the
    // iteration too.
    if (step.cwiseAbs().maxCoeff() <= 1e-13 * scale) {
      call(mode.dependent(t, x.data(), d.data()), mode, "dependent storage", &modeText);
      break;
    }
  }
  std::copy(x.data(), x.data() + n, x0.begin());
  std::copy(d.data(), d.data() + nd, d0.begin());
}

void remapIterative(Mode &mode, const std::string &modeText, double t, double factor,
                    double tolerance, std::vector<double> &x, std::vector<double> &d,
                    const std::function<void(const std::vector<double> &,
                                             const std::vector<double> &)> &step) {
  std::size_t n = x.size(), nd = d.size();
  std::vector<double> target(nd), B(std::max<std::size_t>(1, n * nd));
  call(mode.impulse(t, x.data(), B.data()), mode, "impulse", &modeText);
  // HYBRSIM: a fraction of the difference between what the constraints
  // demand and what dependent storage holds is put into it and taken out
  // of independent storage along the junction structure, until the
  // difference is below the tolerance.
  const std::size_t maxIterations = 1'000'000;
  for (std::size_t it = 0;; ++it) {
    call(mode.dependent(t, x.data(), target.data()), mode, "dependent storage", &modeText);
    step(x, d);
    double gap = 0, scale = 1;
    for (std::size_t k = 0; k < nd; ++k) {
      gap = std::max(gap, std::abs(target[k] - d[k]));
      scale = std::max(scale, std::abs(target[k]));
    }
    if (gap <= tolerance * scale)
      break;
    if (it == maxIterations)
      throw RunError(DiagKind::RunRemapIterative, t, modeText,
                     {DiagArg::mode(modeText), maxIterations});
    for (std::size_t k = 0; k < nd; ++k) {
      double delta = factor * (target[k] - d[k]);
      d[k] += delta;
      for (std::size_t i = 0; i < n; ++i)
        x[i] += B[i * nd + k] * delta;
    }
  }
}

} // namespace hbg::runtime
