//===- runtime/Energy.cpp - Energy stored in storage elements -------------===//

#include "hbg/runtime/Energy.h"
#include "hbg/runtime/System.h"

#include <cmath>

namespace hbg::runtime {

namespace {
/// Law of `law` at energy variable s.
double lawAt(const StorageLaw &law, double t, double s, const double *p,
             std::vector<double> &scratch) {
  double out = 0;
  law.law.evaluate(t, &s, p, &out, scratch);
  return out;
}
} // namespace

double storedEnergy(const StorageLaw &law, double t, double x, const double *p,
                    std::vector<double> &scratch) {
  if (x == 0)
    return 0;
  if (law.form == StorageLaw::Form::Linear)
    return 0.5 * x * lawAt(law, t, x, p, scratch);
  // Five-point Gauss-Legendre on [a, b].
  static const double node[5] = {0.0, 0.5384693101056831, -0.5384693101056831,
                                 0.9061798459386640, -0.9061798459386640};
  static const double weight[5] = {0.5688888888888889, 0.4786286704993665,
                                   0.4786286704993665, 0.2369268850561891,
                                   0.2369268850561891};
  auto gauss = [&](double a, double b) {
    double mid = 0.5 * (a + b), half = 0.5 * (b - a), sum = 0;
    for (int i = 0; i < 5; ++i)
      sum += weight[i] * lawAt(law, t, mid + half * node[i], p, scratch);
    return half * sum;
  };
  // Adaptive bisection: a panel is accepted when its two halves agree
  // with it to its share of 1e-12 of the whole. Smooth laws stop after a
  // level or two; a kink (max, abs, sign, a select) is refined around, to
  // panels of 1e-12 of x at most.
  constexpr double kTolerance = 1e-12;
  constexpr int kMaxPanels = 4000;
  double whole = gauss(0, x);
  if (std::isnan(whole))
    return whole;
  double scale = std::abs(whole), result = 0;
  struct Panel {
    double a, b, value;
  };
  Panel stack[64];
  int top = 0, panels = 0;
  stack[top++] = {0, x, whole};
  while (top > 0) {
    Panel pn = stack[--top];
    double mid = 0.5 * (pn.a + pn.b);
    double left = gauss(pn.a, mid), right = gauss(mid, pn.b);
    if (std::isnan(left + right))
      return left + right;
    double share = std::abs(pn.b - pn.a) / std::abs(x);
    bool fine = std::abs(left + right - pn.value) <= kTolerance * scale * share ||
                std::abs(pn.b - pn.a) <= 1e-12 * std::abs(x) || ++panels > kMaxPanels ||
                top + 2 > 64;
    if (fine) {
      result += left + right;
    } else {
      stack[top++] = {mid, pn.b, right};
      stack[top++] = {pn.a, mid, left};
    }
  }
  return result;
}

bool System::storedEnergy(double, const double *, double *) { return false; }

} // namespace hbg::runtime
