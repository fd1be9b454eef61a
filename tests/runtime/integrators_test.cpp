//===- tests/runtime/integrators_test.cpp - ODE integrator tests ----------===//

#include "hbg/runtime/Integrator.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace hbg::runtime;

namespace {

/// An ODE system given by a lambda.
class Lambda final : public OdeSystem {
public:
  using Rhs = std::function<void(double t, const double *x, double *xdot)>;
  Lambda(std::size_t n, Rhs rhs) : n_(n), rhs_(std::move(rhs)) {}
  std::size_t numStates() const override { return n_; }
  void rhs(double t, const double *x, double *xdot) override { rhs_(t, x, xdot); }

private:
  std::size_t n_;
  Rhs rhs_;
};

/// x' = -x, x(0) = 1: x = exp(-t).
Lambda decay() {
  return Lambda(1, [](double, const double *x, double *xdot) { xdot[0] = -x[0]; });
}

/// x' = v, v' = -x, (x, v)(0) = (1, 0): x = cos t, v = -sin t.
Lambda oscillator() {
  return Lambda(2, [](double, const double *x, double *xdot) {
    xdot[0] = x[1];
    xdot[1] = -x[0];
  });
}

std::vector<double> exactDecay(double t) { return {std::exp(-t)}; }
std::vector<double> exactOscillator(double t) { return {std::cos(t), -std::sin(t)}; }

IntegratorOptions fixedStep(Method m, double h) {
  IntegratorOptions opts;
  opts.method = m;
  opts.step = h;
  return opts;
}

/// Dormand-Prince forced to constant steps h: tolerances it can never miss and
/// a step cap of h.
IntegratorOptions dopriFixed(double h) {
  IntegratorOptions opts;
  opts.step = h;
  opts.maxStep = h;
  opts.rtol = opts.atol = 1e10;
  return opts;
}

/// The Rosenbrock method forced to constant steps h, like dopriFixed.
IntegratorOptions rosenbrockFixed(double h) {
  IntegratorOptions opts = dopriFixed(h);
  opts.method = Method::Rosenbrock;
  return opts;
}

/// dopri5 with the given tolerances.
IntegratorOptions adaptive(double rtol, double atol) {
  IntegratorOptions opts;
  opts.method = Method::DormandPrince;
  opts.step = 0;
  opts.rtol = rtol;
  opts.atol = atol;
  return opts;
}

/// Integrates from t = 0 and returns the largest deviation from `exact` over
/// the samples, checking that the run succeeded.
double maxError(OdeSystem &sys, double tEnd, double dtOut, const IntegratorOptions &opts,
                const std::function<std::vector<double>(double)> &exact) {
  double worst = 0;
  std::size_t n = sys.numStates();
  IntegrationStatus st =
      integrate(sys, 0, exact(0), tEnd, dtOut, opts, [&](double t, const double *x) {
        std::vector<double> want = exact(t);
        for (std::size_t i = 0; i < n; ++i)
          worst = std::max(worst, std::abs(x[i] - want[i]));
      });
  REQUIRE_MESSAGE(st.ok(), st.message);
  CHECK(st.t == tEnd);
  return worst;
}

/// Observed order: log2 of the error ratio for h and h/2.
double observedOrder(double errH, double errHalf) { return std::log2(errH / errHalf); }

} // namespace

TEST_CASE("method names round-trip") {
  for (Method m : {Method::Euler, Method::RK4, Method::DormandPrince, Method::Rosenbrock}) {
    Method parsed = Method::Euler;
    CHECK(parseMethod(methodName(m), parsed));
    CHECK(parsed == m);
  }
  Method untouched = Method::RK4;
  CHECK_FALSE(parseMethod("dopri", untouched));
  CHECK_FALSE(parseMethod("", untouched));
  CHECK(untouched == Method::RK4);
}

TEST_CASE("every method follows the closed-form solutions") {
  Lambda dec = decay(), osc = oscillator();
  SUBCASE("euler") {
    CHECK(maxError(dec, 2, 0.1, fixedStep(Method::Euler, 1e-4), exactDecay) < 3e-5);
    CHECK(maxError(osc, 10, 0.5, fixedStep(Method::Euler, 1e-5), exactOscillator) < 1e-3);
  }
  SUBCASE("rk4") {
    CHECK(maxError(dec, 2, 0.1, fixedStep(Method::RK4, 1e-2), exactDecay) < 1e-10);
    CHECK(maxError(osc, 10, 0.5, fixedStep(Method::RK4, 1e-2), exactOscillator) < 1e-9);
  }
  SUBCASE("dopri5") {
    CHECK(maxError(dec, 2, 0.1, adaptive(1e-8, 1e-10), exactDecay) < 1e-7);
    CHECK(maxError(osc, 10, 0.5, adaptive(1e-8, 1e-10), exactOscillator) < 1e-7);
  }
  SUBCASE("rosenbrock") {
    IntegratorOptions o = adaptive(1e-8, 1e-10);
    o.method = Method::Rosenbrock;
    CHECK(maxError(dec, 2, 0.1, o, exactDecay) < 1e-7);
    CHECK(maxError(osc, 10, 0.5, o, exactOscillator) < 1e-6);
    o.rtol = 1e-10;
    CHECK(maxError(osc, 10, 0.5, o, exactOscillator) < 1e-8);
  }
}

TEST_CASE("step halving shows each method's order") {
  Lambda dec = decay(), osc = oscillator();
  struct Case {
    const char *name;
    std::function<IntegratorOptions(double)> opts;
    double h, order;
  };
  for (const Case &c :
       {Case{"euler", [](double h) { return fixedStep(Method::Euler, h); }, 0.01, 1},
        Case{"rk4", [](double h) { return fixedStep(Method::RK4, h); }, 0.1, 4},
        Case{"dopri5", dopriFixed, 0.1, 5}, Case{"rosenbrock", rosenbrockFixed, 0.1, 4}}) {
    // Errors at t = 2 only (dtOut = tEnd), so that sampling cannot interfere.
    for (auto [sys, exact] : {std::pair{&dec, exactDecay}, std::pair{&osc, exactOscillator}}) {
      double h = c.h, prev = maxError(*sys, 2, 2, c.opts(h), exact);
      for (int halving = 0; halving < 2; ++halving) {
        h /= 2;
        double err = maxError(*sys, 2, 2, c.opts(h), exact);
        INFO(std::string(c.name) << " on " << sys->numStates() << " states, h = " << h << ": "
                                 << prev << " -> " << err);
        CHECK(std::abs(observedOrder(prev, err) - c.order) < 0.2);
        prev = err;
      }
    }
  }
}

TEST_CASE("dopri5 error follows the tolerance") {
  Lambda osc = oscillator();
  double prev = std::numeric_limits<double>::infinity();
  for (double rtol : {1e-4, 1e-6, 1e-8, 1e-10}) {
    double err = maxError(osc, 10, 0.25, adaptive(rtol, rtol), exactOscillator);
    INFO("rtol " << rtol << ": error " << err);
    CHECK(err < prev / 10);
    CHECK(err < 10 * rtol);
    prev = err;
  }
}

/// The largest error of dense output sampled at H/8, 2H/8, ... over one
/// step of H on the oscillator.
double denseError(double H, const IntegratorOptions &opts) {
  Lambda osc = oscillator();
  std::size_t samples = 0;
  double err = 0;
  IntegrationStatus st = integrate(osc, 0, exactOscillator(0), H, H / 8, opts,
                                   [&](double t, const double *x) {
                                     ++samples;
                                     std::vector<double> want = exactOscillator(t);
                                     for (std::size_t i = 0; i < 2; ++i)
                                       err = std::max(err, std::abs(x[i] - want[i]));
                                   });
  REQUIRE(st.ok());
  CHECK(samples == 9);
  return err;
}

TEST_CASE("dopri5 dense output is order 4 inside a step") {
  // One big step of H, sampled at H/8, 2H/8, ... through dense output; the
  // local interpolation error then shrinks like H^5.
  double prev = 0;
  for (double H : {0.8, 0.4, 0.2, 0.1}) {
    double err = denseError(H, dopriFixed(H));
    if (prev > 0) {
      INFO("H = " << H << ": " << prev << " -> " << err);
      CHECK(std::abs(observedOrder(prev, err) - 5) < 0.3);
    }
    prev = err;
  }
  CHECK(prev < 1e-8);
}

TEST_CASE("the Rosenbrock method's dense output is order 3 inside a step") {
  // The interpolation error of order 3 shrinks like H^4 per step.
  double prev = 0;
  for (double H : {0.4, 0.2, 0.1, 0.05}) {
    double err = denseError(H, rosenbrockFixed(H));
    if (prev > 0) {
      INFO("H = " << H << ": " << prev << " -> " << err);
      CHECK(std::abs(observedOrder(prev, err) - 4) < 0.3);
    }
    prev = err;
  }
  CHECK(prev < 1e-7);
}

TEST_CASE("dense output reproduces the step's end points") {
  Lambda osc = oscillator();
  for (const IntegratorOptions &opts :
       {fixedStep(Method::Euler, 0.1), fixedStep(Method::RK4, 0.1), dopriFixed(0.5)}) {
    std::unique_ptr<Stepper> stepper = makeStepper(osc, opts);
    std::vector<double> x0 = exactOscillator(0);
    stepper->reset(0, x0.data());
    REQUIRE(stepper->step(1) == StepStatus::Ok);
    REQUIRE(stepper->step(1) == StepStatus::Ok);
    double out[2];
    stepper->interpolate(stepper->tPrev(), out);
    CHECK(out[0] == doctest::Approx(exactOscillator(stepper->tPrev())[0]).epsilon(0.02));
    stepper->interpolate(stepper->t(), out);
    CHECK(out[0] == doctest::Approx(stepper->x()[0]).epsilon(1e-14));
    CHECK(out[1] == doctest::Approx(stepper->x()[1]).epsilon(1e-14));
  }
  // The fixed steppers' cubic Hermite is far better than the Euler steps it
  // interpolates, and RK4's mid-step values are accurate to O(h^4).
  std::unique_ptr<Stepper> rk4 = makeStepper(osc, fixedStep(Method::RK4, 0.1));
  std::vector<double> x0 = exactOscillator(0);
  rk4->reset(0, x0.data());
  REQUIRE(rk4->step(1) == StepStatus::Ok);
  double mid[2];
  rk4->interpolate(0.05, mid);
  CHECK(std::abs(mid[0] - std::cos(0.05)) < 1e-6);
  CHECK(std::abs(mid[1] + std::sin(0.05)) < 1e-6);
}

TEST_CASE("enclosures of the dense output contain it and tighten with the interval") {
  Lambda osc = oscillator();
  std::uint64_t seed = 7;
  auto uniform = [&seed]() { // a fixed LCG: the test is reproducible
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(seed >> 11) * 0x1.0p-53;
  };
  for (const IntegratorOptions &opts :
       {fixedStep(Method::Euler, 0.3), fixedStep(Method::RK4, 0.3), dopriFixed(0.7)}) {
    std::unique_ptr<Stepper> stepper = makeStepper(osc, opts);
    std::vector<double> x0 = {1e3, -2.5};
    stepper->reset(0, x0.data());
    REQUIRE(stepper->step(10) == StepStatus::Ok);
    REQUIRE(stepper->step(10) == StepStatus::Ok);
    double ta = stepper->tPrev(), tb = stepper->t(), out[2];
    for (int trial = 0; trial < 200; ++trial) {
      double a = ta + (tb - ta) * uniform(), b = ta + (tb - ta) * uniform();
      if (a > b)
        std::swap(a, b);
      for (std::size_t i = 0; i < 2; ++i) {
        double lo, hi;
        stepper->enclose(i, a, b, lo, hi);
        for (int k = 0; k <= 20; ++k) {
          stepper->interpolate(a + (b - a) * k / 20, out);
          CHECK(lo <= out[i]);
          CHECK(out[i] <= hi);
        }
      }
    }
    // The bounds of a short interval are about as wide as the values
    // inside it vary: the overestimate shrinks with the square of the width.
    double mid = 0.5 * (ta + tb);
    for (double w : {1e-2, 1e-4, 1e-6}) {
      double lo, hi, a[2], b[2];
      stepper->enclose(0, mid - w, mid + w, lo, hi);
      stepper->interpolate(mid - w, a);
      stepper->interpolate(mid + w, b);
      CHECK(hi - lo <= std::abs(b[0] - a[0]) + 1e3 * w * w + 1e-10);
    }
  }
}

TEST_CASE("samples land on t0 + k dtOut and end exactly at tEnd") {
  Lambda ramp(1, [](double, const double *, double *xdot) { xdot[0] = 1; });
  struct Grid {
    double t0, tEnd, dtOut;
    std::size_t count;
  };
  // 0.9 is not a multiple of 0.3 in binary: 3 * 0.3 lands a hair short of it
  // and must not become a second sample next to tEnd.
  for (Grid g :
       {Grid{0.1, 1.0, 0.1, 10}, Grid{0, 1, 0.3, 5}, Grid{0, 0.9, 0.3, 4}, Grid{2, 3, 5, 2},
        Grid{1, 1, 0.1, 1}, Grid{0, 1, std::numeric_limits<double>::infinity(), 2}}) {
    for (Method m : {Method::Euler, Method::RK4, Method::DormandPrince}) {
      IntegratorOptions opts = fixedStep(m, 0.07);
      std::vector<double> times, values;
      std::set<double> meshTimes;
      Lambda traced(1, [&](double t, const double *, double *xdot) {
        meshTimes.insert(t);
        xdot[0] = 1;
      });
      IntegrationStatus st =
          integrate(traced, g.t0, {5}, g.tEnd, g.dtOut, opts, [&](double t, const double *x) {
            times.push_back(t);
            values.push_back(x[0]);
          });
      INFO(std::string(methodName(m))
           << " on [" << g.t0 << ", " << g.tEnd << "] every " << g.dtOut);
      REQUIRE(st.ok());
      REQUIRE(times.size() == g.count);
      CHECK(times[0] == g.t0);
      for (std::size_t k = 1; k + 1 < times.size(); ++k)
        CHECK(times[k] == g.t0 + static_cast<double>(k) * g.dtOut);
      CHECK(times.back() == g.tEnd);
      for (std::size_t k = 0; k < times.size(); ++k)
        CHECK(values[k] == doctest::Approx(5 + times[k] - g.t0).epsilon(1e-12));
      // Euler evaluates f at every mesh point it reaches, so this shows the
      // samples are mesh points rather than interpolated.
      if (m == Method::Euler)
        for (double t : times)
          CHECK(meshTimes.count(t) == 1);
    }
  }
}

TEST_CASE("a non-finite derivative stops integration with its time") {
  // State 1's equation breaks down from t = 0.5 on.
  Lambda breaks(2, [](double t, const double *, double *xdot) {
    xdot[0] = 1;
    xdot[1] = t < 0.5 ? -1 : std::nan("");
  });
  for (const IntegratorOptions &opts :
       {fixedStep(Method::Euler, 0.01), fixedStep(Method::RK4, 0.03), adaptive(1e-6, 1e-9)}) {
    INFO(std::string(methodName(opts.method)));
    std::vector<double> times;
    IntegrationStatus st =
        integrate(breaks, 0, {0, 0}, 1, 0.1, opts, [&](double t, const double *x) {
          CHECK(std::isfinite(x[1]));
          times.push_back(t);
        });
    CHECK(st.status == StepStatus::NonFinite);
    CHECK(st.nonFinite.index == 1);
    CHECK(st.nonFinite.derivative);
    CHECK(st.nonFinite.t >= 0.5);
    CHECK(st.nonFinite.t < 0.5 + std::max(opts.step, 1e-10));
    CHECK(st.t < 0.5);
    CHECK(st.message.find("state 1 is not finite at t = 0.5") != std::string::npos);
    // Every sample before the breakdown was delivered.
    CHECK(times.size() == 5);
  }
  // dopri5 narrows the breakdown down instead of reporting a step underflow.
  IntegrationStatus st =
      integrate(breaks, 0, {0, 0}, 1, 0.1, adaptive(1e-6, 1e-9), [](double, const double *) {});
  CHECK(st.nonFinite.t == doctest::Approx(0.5).epsilon(1e-10));

  Lambda dec = decay();
  st = integrate(dec, 0, {std::nan("")}, 1, 0.1, IntegratorOptions{},
                 [](double, const double *) { FAIL("sampled a bad start"); });
  CHECK(st.status == StepStatus::NonFinite);
  CHECK_FALSE(st.nonFinite.derivative);
  CHECK(st.message == "state 0 is not finite at t = 0");
}

TEST_CASE("a finite-time blow-up underflows the dopri5 step size") {
  // x' = x^2, x(0) = 1 has x = 1 / (1 - t).
  Lambda blowUp(1, [](double, const double *x, double *xdot) { xdot[0] = x[0] * x[0]; });
  IntegrationStatus st =
      integrate(blowUp, 0, {1}, 2, 0.1, adaptive(1e-8, 1e-8), [](double, const double *) {});
  CHECK(st.status == StepStatus::StepSizeUnderflow);
  // The numerical solution blows up within the tolerance of t = 1.
  CHECK(st.t == doctest::Approx(1).epsilon(1e-7));
  CHECK(st.message.rfind("step size underflow at t = ", 0) == 0);
}

TEST_CASE("maxSteps bounds accepted plus rejected steps") {
  Lambda dec = decay();
  IntegratorOptions opts = fixedStep(Method::Euler, 0.01);
  opts.maxSteps = 10;
  std::size_t samples = 0;
  IntegrationStatus st =
      integrate(dec, 0, {1}, 1, 0.05, opts, [&](double, const double *) { ++samples; });
  CHECK_FALSE(st.ok());
  CHECK(st.message.find("too many steps (10)") != std::string::npos);
  CHECK(st.t == doctest::Approx(0.1));
  CHECK(samples == 3);

  opts = adaptive(1e-10, 1e-12);
  opts.maxSteps = 20;
  st = integrate(dec, 0, {1}, 100, 1, opts, [](double, const double *) {});
  CHECK_FALSE(st.ok());
  CHECK(st.t > 0);
  CHECK(st.t < 100);
}

TEST_CASE("dopri5 rejects and counts steps on a hard problem") {
  // Van der Pol with mu = 10: slow drifts broken by sharp switches, where the
  // controller's step-size guesses overshoot.
  Lambda vanDerPol(2, [](double, const double *x, double *xdot) {
    xdot[0] = x[1];
    xdot[1] = 10 * (1 - x[0] * x[0]) * x[1] - x[0];
  });
  auto solve = [&](double rtol) {
    std::unique_ptr<Stepper> stepper = makeStepper(vanDerPol, adaptive(rtol, rtol));
    double x0[2] = {2, 0};
    stepper->reset(0, x0);
    while (stepper->t() < 20)
      REQUIRE(stepper->step(20) == StepStatus::Ok);
    return stepper;
  };
  std::unique_ptr<Stepper> coarse = solve(1e-6), reference = solve(1e-12);
  CHECK(coarse->t() == 20);
  CHECK(coarse->rejectedSteps() > 10);
  // One call at the start, one for the initial step size, then six per trial
  // step thanks to FSAL.
  CHECK(coarse->rhsCalls() == 2 + 6 * (coarse->acceptedSteps() + coarse->rejectedSteps()));
  CHECK(std::abs(coarse->x()[0] - reference->x()[0]) < 1e-5);
  CHECK(std::abs(coarse->x()[1] - reference->x()[1]) < 1e-5);
}

TEST_CASE("fixed steppers cost one or four calls per step") {
  Lambda osc = oscillator();
  for (auto [method, perStep] : {std::pair{Method::Euler, 1}, std::pair{Method::RK4, 4}}) {
    std::unique_ptr<Stepper> stepper = makeStepper(osc, fixedStep(method, 0.1));
    std::vector<double> x0 = exactOscillator(0);
    stepper->reset(0, x0.data());
    while (stepper->t() < 1)
      REQUIRE(stepper->step(1) == StepStatus::Ok);
    CHECK(stepper->t() == 1);
    CHECK(stepper->acceptedSteps() == 10);
    CHECK(stepper->rejectedSteps() == 0);
    CHECK(stepper->rhsCalls() == 1 + perStep * 10);
  }
}

TEST_CASE("dopri5 respects maxStep and lands on tLimit") {
  Lambda dec = decay();
  IntegratorOptions opts = adaptive(1e-3, 1e-6);
  opts.maxStep = 0.05;
  std::unique_ptr<Stepper> stepper = makeStepper(dec, opts);
  double x0 = 1;
  stepper->reset(0, &x0);
  while (stepper->t() < 0.987)
    REQUIRE(stepper->step(0.987) == StepStatus::Ok);
  CHECK(stepper->t() == 0.987);
  CHECK(stepper->acceptedSteps() >= 20);
  // Without the cap this tolerance allows steps of several tenths.
  stepper->reset(0, &x0);
  for (int i = 0; i < 30; ++i) {
    REQUIRE(stepper->step(10) == StepStatus::Ok);
    CHECK(stepper->t() - stepper->tPrev() <= 0.05 * (1 + 1e-12));
  }
}

TEST_CASE("the Rosenbrock method takes large steps on a stiff problem") {
  // x' = -1e6 (x - cos t) - sin t, x(0) = 1: x = cos t, with a transient
  // that decays at 1e6 per second. dopri5 is held to steps of about
  // 3.3e-6 by its stability; the L-stable Rosenbrock method is not.
  Lambda stiff(1, [](double t, const double *x, double *xdot) {
    xdot[0] = -1e6 * (x[0] - std::cos(t)) - std::sin(t);
  });
  IntegratorOptions o = adaptive(1e-6, 0);
  o.method = Method::Rosenbrock;
  std::size_t steps = 0;
  auto stepper = makeStepper(stiff, o);
  double x0 = 1;
  stepper->reset(0, &x0);
  while (stepper->t() < 10) {
    REQUIRE(stepper->step(10) == StepStatus::Ok);
    ++steps;
    CHECK(std::abs(stepper->x()[0] - std::cos(stepper->t())) < 1e-5);
  }
  // The steps follow cos t's accuracy (order 4 at rtol 1e-6), not the
  // transient: dopri5 would take some 3 million.
  CHECK(steps < 300);
  CHECK(stepper->acceptedSteps() == steps);
}

TEST_CASE("the stiff methods' dense output keeps the tolerance on a forced stiff problem") {
  // An RC low-pass with tau = 1e-4 driven by sin(5 t) from rest:
  // x' = (sin(w t) - x) / tau, x = (sin w t - a cos w t + a e^{-t/tau}) /
  // (1 + a^2) with a = w tau. After the transient the state follows the
  // source on the slow manifold, where the steps grow to hundredths of a
  // second and the Rosenbrock method's dense output loses order: sampled
  // between step ends, it was 2e-3 off at rtol 1e-6 until its error was
  // estimated and controlled too. Default tolerances, sampled every ms.
  const double tau = 1e-4, w = 5, a = w * tau;
  Lambda rc(1, [&](double t, const double *x, double *xdot) {
    xdot[0] = (std::sin(w * t) - x[0]) / tau;
  });
  auto exact = [&](double t) {
    return (std::sin(w * t) - a * std::cos(w * t) + a * std::exp(-t / tau)) / (1 + a * a);
  };
  for (Method m : {Method::Rosenbrock, Method::Auto}) {
    IntegratorOptions o;
    o.method = m;
    double worst = 0, at = 0;
    std::size_t samples = 0;
    IntegrationStatus st = integrate(rc, 0, {0.0}, 2, 1e-3, o, [&](double t, const double *x) {
      ++samples;
      double err = std::abs(x[0] - exact(t));
      if (err > worst) {
        worst = err;
        at = t;
      }
    });
    REQUIRE(st.ok());
    INFO(std::string(methodName(m)) << ": worst error " << worst << " at t = " << at << " over "
                       << st.acceptedSteps << " steps");
    CHECK(samples == 2001);
    CHECK(worst < 1e-5);
    // The control costs steps where the dense output needs them, not the
    // transient's: dopri5 takes over 6,000 here.
    CHECK(st.acceptedSteps < 2500);
  }
}

namespace {
/// Heat flow along a rod of n cells: x_i' = x_{i-1} - 2 x_i + x_{i+1}
/// scaled by k, insulated ends, with its exact sparse Jacobian (or none).
/// With `ring`, the ends are joined: the Jacobian's corners make its band
/// the whole matrix, so the general sparse LU takes it.
class Rod final : public OdeSystem {
public:
  Rod(std::size_t n, double k, bool exact, bool ring = false)
      : n_(n), k_(k), exact_(exact), ring_(ring) {
    for (std::size_t j = 0; j < n; ++j) {
      pattern_.colStart.push_back(static_cast<std::uint32_t>(pattern_.rows.size()));
      std::set<std::size_t> rows;
      for (std::size_t i = 0; i < n; ++i)
        if (neighbours(i, j) || i == j)
          rows.insert(i);
      for (std::size_t i : rows)
        pattern_.rows.push_back(static_cast<std::uint32_t>(i));
    }
    pattern_.colStart.push_back(static_cast<std::uint32_t>(pattern_.rows.size()));
  }
  std::size_t numStates() const override { return n_; }
  void rhs(double, const double *x, double *xdot) override {
    for (std::size_t i = 0; i < n_; ++i) {
      xdot[i] = 0;
      for (std::size_t j : {(i + n_ - 1) % n_, (i + 1) % n_})
        if (neighbours(i, j))
          xdot[i] += k_ * (x[j] - x[i]);
    }
  }
  const SparsePattern *jacobianPattern() override { return exact_ ? &pattern_ : nullptr; }
  bool jacobian(double, const double *, double *values, double *dfdt) override {
    ++calls;
    for (std::size_t j = 0; j < n_; ++j)
      for (std::uint32_t k = pattern_.colStart[j]; k < pattern_.colStart[j + 1]; ++k) {
        std::size_t i = pattern_.rows[k];
        double degree = 0;
        for (std::size_t m = 0; m < n_; ++m)
          degree += neighbours(i, m) ? 1 : 0;
        values[k] = i == j ? -k_ * degree : k_;
      }
    std::fill(dfdt, dfdt + n_, 0.0);
    return true;
  }
  std::size_t calls = 0;

private:
  /// Cells i and j exchange heat.
  bool neighbours(std::size_t i, std::size_t j) const {
    if (i == j || n_ < 2)
      return false;
    std::size_t d = i > j ? i - j : j - i;
    return d == 1 || (ring_ && n_ > 2 && d == n_ - 1);
  }
  std::size_t n_;
  double k_;
  bool exact_, ring_;
  SparsePattern pattern_;
};
} // namespace

TEST_CASE("the Rosenbrock method with a sparse Jacobian of the system") {
  // 8 cells (dense LU), 200 in a row (band LU) and 200 in a ring (sparse
  // LU): the system's Jacobian and differences of f give the same
  // solution, which conserves the total and decays to the mean.
  for (auto [n, ring] : {std::pair{std::size_t(8), false}, std::pair{std::size_t(200), false},
                         std::pair{std::size_t(200), true}}) {
    CAPTURE(ring);
    Rod exact(n, 1e4, true, ring), differenced(n, 1e4, false, ring);
    std::vector<double> x0(n, 0.0);
    x0[0] = 1;
    IntegratorOptions o = adaptive(1e-8, 1e-12);
    o.method = Method::Rosenbrock;
    std::vector<double> a, b;
    for (auto [sys, out] : {std::pair{&exact, &a}, std::pair{&differenced, &b}}) {
      IntegrationStatus st = integrate(*sys, 0, x0, 1, 1, o,
                                       [&](double, const double *x) { out->assign(x, x + n); });
      REQUIRE(st.ok());
    }
    CHECK(exact.calls > 0);
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      INFO("n = " << n << ", cell " << i);
      CHECK(std::abs(a[i] - b[i]) < 1e-9);
      total += a[i];
    }
    CHECK(std::abs(total - 1) < 1e-12);
    // The slowest mode decays at k (2 - 2 cos(pi / n)), at least 2.4 per
    // second for n = 200: after t = 1 every cell is near 1 / n.
    if (n == 8)
      for (double v : a)
        CHECK(std::abs(v - 1.0 / double(n)) < 1e-8);
  }
}

TEST_CASE("auto: stiff where the decay rate is large, not where it is small") {
  // x' = -lambda(t) (x - cos t) - sin t, x(0) = 1: x = cos t whatever
  // lambda, here 10^(6 - t): stiff at first, not stiff from t of about 4.
  Lambda varying(1, [](double t, const double *x, double *xdot) {
    xdot[0] = -std::pow(10.0, 6 - t) * (x[0] - std::cos(t)) - std::sin(t);
  });
  IntegratorOptions o = adaptive(1e-8, 0);
  o.method = Method::Auto;
  auto stepper = makeStepper(varying, o);
  double x0 = 1;
  stepper->reset(0, &x0);
  std::vector<MethodSpan> spans;
  while (stepper->t() < 10) {
    REQUIRE(stepper->step(10) == StepStatus::Ok);
    recordSpan(spans, stepper->method(), stepper->tPrev(), stepper->t());
    CHECK(std::abs(stepper->x()[0] - std::cos(stepper->t())) < 1e-6);
  }
  REQUIRE(spans.size() == 3);
  CHECK(spans[0].method == Method::DormandPrince);
  CHECK(spans[0].steps < 40); // 15 steps at the stability bound, then off
  CHECK(spans[1].method == Method::Rosenbrock);
  CHECK(spans[2].method == Method::DormandPrince);
  // Back to dopri5 once h |lambda| stays small: lambda below 1e3 or so.
  CHECK(spans[1].to > 2);
  CHECK(spans[1].to < 6);
  CHECK(spans[2].to == 10);
  std::size_t total = 0;
  for (const MethodSpan &s : spans)
    total += s.steps;
  CHECK(total == stepper->acceptedSteps());
  // dopri5 alone pays for the stiff start with its stability bound.
  auto plain = makeStepper(varying, adaptive(1e-8, 0));
  plain->reset(0, &x0);
  while (plain->t() < 10)
    REQUIRE(plain->step(10) == StepStatus::Ok);
  CHECK(10 * stepper->acceptedSteps() < plain->acceptedSteps());
}

TEST_CASE("auto stays with dopri5 on a problem that is not stiff") {
  Lambda osc = oscillator();
  IntegratorOptions o = adaptive(1e-8, 1e-10);
  o.method = Method::Auto;
  auto stepper = makeStepper(osc, o);
  std::vector<double> x0 = exactOscillator(0);
  stepper->reset(0, x0.data());
  while (stepper->t() < 50) {
    REQUIRE(stepper->step(50) == StepStatus::Ok);
    CHECK(stepper->method() == Method::DormandPrince);
  }
  CHECK(stepper->jacobianCalls() == 0);
  CHECK(std::abs(stepper->x()[0] - std::cos(50.0)) < 1e-6);
}

TEST_CASE("auto on Van der Pol with mu = 1000 switches at each relaxation") {
  // Slow drifts (stiff: the fast manifold attracts at about mu) broken by
  // jumps of width 1 / mu; the reference is the Rosenbrock method at a
  // tight tolerance.
  Lambda vdp(2, [](double, const double *x, double *xdot) {
    xdot[0] = x[1];
    xdot[1] = 1000 * ((1 - x[0] * x[0]) * x[1]) - x[0];
  });
  auto run = [&](Method m, double rtol) {
    IntegratorOptions o = adaptive(rtol, 0);
    o.method = m;
    auto stepper = makeStepper(vdp, o);
    double x0[2] = {2, 0};
    stepper->reset(0, x0);
    while (stepper->t() < 3000) {
      INFO(methodName(m) << " at t = " << stepper->t() << ", " << stepper->acceptedSteps()
                         << " steps, h " << stepper->proposedStep());
      REQUIRE(stepper->step(3000) == StepStatus::Ok);
    }
    return stepper;
  };
  auto automatic = run(Method::Auto, 1e-6), reference = run(Method::Rosenbrock, 1e-11);
  CHECK(std::abs(automatic->x()[0] - reference->x()[0]) < 1e-3);
  CHECK(automatic->factorisations() > 0);
  // dopri5 would need some 10^6 steps on the slow drifts.
  CHECK(automatic->acceptedSteps() < 20000);
}

TEST_CASE("the Rosenbrock method stops when the system cannot evaluate its Jacobian") {
  Rod rod(3, 1, true);
  class Failing final : public OdeSystem {
  public:
    explicit Failing(Rod &r) : r_(r) {}
    std::size_t numStates() const override { return r_.numStates(); }
    void rhs(double t, const double *x, double *xdot) override { r_.rhs(t, x, xdot); }
    const SparsePattern *jacobianPattern() override { return r_.jacobianPattern(); }
    bool jacobian(double t, const double *, double *, double *) override { return t < 0.5; }

  private:
    Rod &r_;
  } failing(rod);
  IntegratorOptions o = adaptive(1e-6, 1e-9);
  o.method = Method::Rosenbrock;
  IntegrationStatus st = integrate(failing, 0, {1, 0, 0}, 1, 0.1, o, [](double, const double *) {});
  CHECK(st.status == StepStatus::NonFinite);
  CHECK(st.t >= 0.5);
  CHECK(st.message.find("the Jacobian could not be evaluated at t = ") == 0);
}

namespace {
/// x1' = 1 + x1^2, x2' = -x1 x2, x3' = cos t - x1 x3 from (0, 1, 0): x1 =
/// tan t, x2 = cos t, x3 = t cos t. Nonlinear and non-autonomous; the
/// Jacobian it gives the stepper is J and df/dt at t = 0 plus `perturb`
/// times a fixed matrix and vector, wherever it is asked: a W-method's
/// order must not depend on it, a Rosenbrock method's falls.
class Tangent final : public OdeSystem {
public:
  explicit Tangent(double perturb) : perturb_(perturb) {
    pattern_.colStart = {0, 3, 4, 5};
    pattern_.rows = {0, 1, 2, 1, 2};
  }
  static std::vector<double> exact(double t) { return {std::tan(t), std::cos(t), t * std::cos(t)}; }
  std::size_t numStates() const override { return 3; }
  void rhs(double t, const double *x, double *xdot) override {
    xdot[0] = 1 + x[0] * x[0];
    xdot[1] = -x[0] * x[1];
    xdot[2] = std::cos(t) - x[0] * x[2];
  }
  const SparsePattern *jacobianPattern() override { return &pattern_; }
  bool jacobian(double, const double *, double *values, double *dfdt) override {
    ++calls;
    // At t = 0, x = (0, 1, 0): column 0 is (2 x1, -x2, -x3), then -x1, -x1.
    const double at0[5] = {0, -1, 0, 0, 0}, off[5] = {0.7, -0.4, 0.3, 1.1, -0.5};
    for (int k = 0; k < 5; ++k)
      values[k] = at0[k] + perturb_ * off[k];
    dfdt[0] = 0.5 * perturb_;
    dfdt[1] = -0.2 * perturb_;
    dfdt[2] = 0.1 * perturb_; // -sin 0
    return true;
  }
  std::size_t calls = 0;

private:
  double perturb_;
  SparsePattern pattern_;
};

/// The Rosenbrock method at constant steps h, keeping a nonlinear mode's
/// Jacobian.
IntegratorOptions keptFixed(double h) {
  IntegratorOptions opts = rosenbrockFixed(h);
  opts.keepJacobian = true;
  return opts;
}
} // namespace

TEST_CASE("keeping the Jacobian, the stiff method's order holds with any matrix for J") {
  // A nonlinear mode with keepJacobian steps by a W-method, whose order
  // conditions hold for any matrix in place of J: given J at t = 0
  // throughout, exact there or not, it keeps order 3 at t = 1, and its
  // dense output order 2 (the error of an interpolated value within one
  // step shrinks like H^3).
  for (double perturb : {0.0, 1.0}) {
    Tangent sys(perturb);
    double h = 0.1, prev = maxError(sys, 1, 1, keptFixed(h), Tangent::exact);
    for (int halving = 0; halving < 3; ++halving) {
      h /= 2;
      double err = maxError(sys, 1, 1, keptFixed(h), Tangent::exact);
      INFO("perturbation " << perturb << ", h = " << h << ": " << prev << " -> " << err);
      CHECK(std::abs(observedOrder(prev, err) - 3) < 0.3);
      prev = err;
    }
    double prevDense = 0;
    for (double H : {0.2, 0.1, 0.05, 0.025}) {
      double err = 0;
      IntegrationStatus st = integrate(sys, 0, Tangent::exact(0), H, H / 8, keptFixed(H),
                                       [&](double t, const double *x) {
                                         std::vector<double> want = Tangent::exact(t);
                                         for (std::size_t i = 0; i < 3; ++i)
                                           err = std::max(err, std::abs(x[i] - want[i]));
                                       });
      REQUIRE(st.ok());
      if (prevDense > 0) {
        INFO("perturbation " << perturb << ", dense output, H = " << H << ": " << prevDense
                             << " -> " << err);
        CHECK(std::abs(observedOrder(prevDense, err) - 3) < 0.3);
      }
      prevDense = err;
    }
  }
}

namespace {
/// x' = phi' - lambda (x - phi), y' = 2 phi phi' - mu (y - x^2) with phi =
/// 2 + sin t, from (phi(0), phi(0)^2): x = phi, y = phi^2. Stiff through
/// lambda, nonlinear through x^2, so its Jacobian reads x.
class Follower final : public OdeSystem {
public:
  Follower(double lambda, double mu) : lambda_(lambda), mu_(mu) {
    pattern_.colStart = {0, 2, 3};
    pattern_.rows = {0, 1, 1};
  }
  static double phi(double t) { return 2 + std::sin(t); }
  std::size_t numStates() const override { return 2; }
  void rhs(double t, const double *x, double *xdot) override {
    double p = phi(t), dp = std::cos(t);
    xdot[0] = dp - lambda_ * (x[0] - p);
    xdot[1] = 2 * p * dp - mu_ * (x[1] - x[0] * x[0]);
  }
  const SparsePattern *jacobianPattern() override { return &pattern_; }
  bool jacobian(double t, const double *x, double *values, double *dfdt) override {
    ++calls;
    double p = phi(t), dp = std::cos(t), ddp = -std::sin(t);
    values[0] = -lambda_;       // df0/dx
    values[1] = 2 * mu_ * x[0]; // df1/dx
    values[2] = -mu_;           // df1/dy
    dfdt[0] = ddp + lambda_ * dp;
    dfdt[1] = 2 * (dp * dp + p * ddp);
    return true;
  }
  std::size_t calls = 0;

private:
  double lambda_, mu_;
  SparsePattern pattern_;
};
} // namespace

TEST_CASE("keeping the Jacobian of a nonlinear stiff mode over steps") {
  // lambda = 1e6 against steps of about 0.01 to 0.1: at default
  // tolerances, accurate against the closed form, with a Jacobian every
  // few steps rather than every step when it is kept.
  for (bool keep : {false, true}) {
    Follower sys(1e6, 1);
    IntegratorOptions o;
    o.method = Method::Rosenbrock;
    o.keepJacobian = keep;
    auto stepper = makeStepper(sys, o);
    double x0[2] = {Follower::phi(0), Follower::phi(0) * Follower::phi(0)};
    stepper->reset(0, x0);
    double worst = 0;
    while (stepper->t() < 20) {
      REQUIRE(stepper->step(20) == StepStatus::Ok);
      double p = Follower::phi(stepper->t());
      worst = std::max(
          {worst, std::abs(stepper->x()[0] - p) / p, std::abs(stepper->x()[1] - p * p) / (p * p)});
    }
    double steps = double(stepper->acceptedSteps());
    INFO(std::string(keep ? "kept" : "every step")
         << ": " << steps << " steps, " << stepper->rejectedSteps() << " rejected, " << sys.calls
         << " Jacobians, " << stepper->factorisations() << " LUs, worst relative error " << worst);
    CHECK(worst < 1e-5);
    CHECK(sys.calls == stepper->jacobianCalls());
    if (keep) {
      // 80 Jacobians and 326 LUs over 543 steps.
      CHECK(double(stepper->jacobianCalls()) < 0.2 * steps);
      CHECK(double(stepper->factorisations()) < 0.7 * steps);
    } else {
      CHECK(stepper->jacobianCalls() == stepper->acceptedSteps());
    }
  }
}
