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
  // Five-point Gauss-Legendre nodes on [-1, 1] and their weights.
  static const double node[5] = {0.0, 0.5384693101056831, -0.5384693101056831,
                                 0.9061798459386640, -0.9061798459386640};
  static const double weight[5] = {0.5688888888888889, 0.4786286704993665,
                                   0.4786286704993665, 0.2369268850561891,
                                   0.2369268850561891};
  constexpr int panels = 16;
  double h = x / panels, sum = 0;
  for (int k = 0; k < panels; ++k) {
    double mid = (k + 0.5) * h;
    for (int i = 0; i < 5; ++i)
      sum += weight[i] * lawAt(law, t, mid + 0.5 * h * node[i], p, scratch);
  }
  return 0.5 * h * sum;
}

bool System::storedEnergy(double, const double *, double *) { return false; }

} // namespace hbg::runtime
