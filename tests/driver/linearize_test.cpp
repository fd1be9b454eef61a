//===- tests/driver/linearize_test.cpp - State matrices and poles ---------===//
//
// eq::linearize on models parsed from text: the poles of an RLC and of a
// quarter-car suspension against the roots of their characteristic
// polynomials (found here by the Durand-Kerner iteration), B and C
// against the equations by hand.
//
//===----------------------------------------------------------------------===//

#include "hbg/driver/Pipeline.h"
#include "hbg/equations/Equations.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

using namespace hbg;

namespace {

/// eq::linearize of `text` in its initial mode at all states zero; `why`
/// gets the reason when it is empty.
std::optional<eq::StateSpace> tryLinearize(const std::string &text, double t,
                                           std::optional<RunDiagnostic> &why) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  std::uint32_t file = sm.addBuffer("test.hbg", text);
  driver::FrontendResult fe = driver::runFrontend(sm, file, diags);
  INFO(diags.renderAll());
  REQUIRE(fe.graph);
  std::vector<double> params = bg::defaultParameterValues(*fe.graph);
  return eq::linearize(*fe.graph, fe.mode, params, t, [](const std::string &) { return 0.0; },
                       diags, why);
}

eq::StateSpace linearizeText(const std::string &text, double t = 0) {
  std::optional<RunDiagnostic> why;
  std::optional<eq::StateSpace> ss = tryLinearize(text, t, why);
  INFO((why ? why->message : ""));
  REQUIRE(ss);
  return *ss;
}

/// The roots of sum c[k] s^k (c.back() != 0), by Durand-Kerner.
std::vector<std::complex<double>> roots(std::vector<double> c) {
  std::size_t n = c.size() - 1;
  for (double &v : c)
    v /= c.back();
  std::vector<std::complex<double>> z(n);
  for (std::size_t k = 0; k < n; ++k)
    z[k] = std::pow(std::complex<double>(0.4, 0.9), double(k)) * 10.0;
  for (int it = 0; it < 2000; ++it)
    for (std::size_t k = 0; k < n; ++k) {
      std::complex<double> p = 0, d = 1;
      for (std::size_t j = n + 1; j-- > 0;)
        p = p * z[k] + c[j];
      for (std::size_t j = 0; j < n; ++j)
        if (j != k)
          d *= z[k] - z[j];
      z[k] -= p / d;
    }
  std::sort(z.begin(), z.end(), [](auto a, auto b) {
    return a.real() != b.real() ? a.real() < b.real() : a.imag() < b.imag();
  });
  return z;
}

void checkPoles(const eq::StateSpace &ss, const std::vector<double> &poly) {
  std::vector<std::complex<double>> expected = roots(poly);
  REQUIRE(ss.eigenRe.size() == expected.size());
  // Pair each pole with the nearest root (the two sortings may order a
  // conjugate pair differently when real parts tie to rounding).
  for (std::size_t k = 0; k < expected.size(); ++k) {
    double best = 1e300;
    for (std::size_t j = 0; j < expected.size(); ++j)
      best = std::min(best, std::abs(std::complex<double>(ss.eigenRe[j], ss.eigenIm[j]) -
                                     expected[k]));
    CAPTURE(expected[k]);
    CHECK(best <= 1e-10 * std::abs(expected[k]));
  }
}

} // namespace

TEST_CASE("linearize: an RLC's poles are the roots of L C s^2 + R C s + 1") {
  const double R = 1, L = 0.5, C = 0.1;
  eq::StateSpace ss = linearizeText(R"(model RLC {
    parameter R = 1.0; parameter L = 0.5; parameter C = 0.1;
    Se source(1); R resistor(R); I inductor(L) { p0 = 0; } C capacitor(C) { q0 = 0; }
    1 loop;
    bond source -> loop; bond loop -> resistor; bond loop -> inductor; bond loop -> capacitor;
    output vc = capacitor.e, current = inductor.f;
  })");
  REQUIRE(ss.states == std::vector<std::string>{"inductor.p", "capacitor.q"});
  REQUIRE(ss.inputs == std::vector<std::string>{"source.e"});
  // dp/dt = u - R p / L - q / C, dq/dt = p / L; vc = q / C, i = p / L.
  CHECK(ss.a == std::vector<double>{-R / L, -1 / C, 1 / L, 0});
  CHECK(ss.b == std::vector<double>{1, 0});
  CHECK(ss.c == std::vector<double>{0, 1 / C, 1 / L, 0});
  CHECK(ss.d == std::vector<double>{0, 0});
  checkPoles(ss, {1, R * C, L * C});
}

TEST_CASE("linearize: a quarter-car suspension's four poles") {
  // Body ms on a spring ks and damper cs over the wheel mu, on a tyre kt
  // driven by the road's vertical velocity. det(M s^2 + Cd s + K):
  // ms mu s^4 + (ms + mu) cs s^3 + (ms (ks + kt) + mu ks) s^2 + cs kt s + ks kt.
  const double ms = 250, mu = 35, ks = 16000, cs = 1000, kt = 160000;
  eq::StateSpace ss = linearizeText(R"(model QuarterCar {
    parameter ms = 250; parameter mu = 35; parameter ks = 16000; parameter cs = 1000;
    parameter kt = 160000;
    Sf road(0);
    I body(ms) { p0 = 0; } I wheel(mu) { p0 = 0; }
    C spring(1 / ks) { q0 = 0; } R damper(cs); C tyre(1 / kt) { q0 = 0; }
    1 vb; 1 vw; 0 fs; 1 rel; 0 ft; 1 trel;
    bond vb -> body; bond vw -> wheel;
    bond vw -> fs; bond fs -> vb; bond fs -> rel; bond rel -> spring; bond rel -> damper;
    bond road -> ft; bond ft -> vw; bond ft -> trel; bond trel -> tyre;
    output body_velocity = body.f;
  })");
  REQUIRE(ss.states.size() == 4);
  REQUIRE(ss.inputs == std::vector<std::string>{"road.f"});
  checkPoles(ss, {ks * kt, cs * kt, ms * (ks + kt) + mu * ks, (ms + mu) * cs, ms * mu});
  // The road moves only the tyre's deflection: B is 1 in its row.
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(ss.b[i] == (ss.states[i] == "tyre.q" ? 1.0 : 0.0));
}

TEST_CASE("linearize through a loop solved by Newton's method") {
  // A diode in series with a resistor charging a capacitor: one current i
  // with V - R i - vd - q / C = 0 and i = Is (exp(vd / Vt) - 1). At the
  // operating point q = 0 the diode's small-signal resistance is
  // rd = Vt / (i + Is), and every derivative goes through R + rd:
  // dq/dt = i gives A = -1 / (C (R + rd)) and B = 1 / (R + rd).
  const double V = 1, R = 1, Is = 1e-12, Vt = 0.025, C = 2;
  std::optional<eq::StateSpace> ss = linearizeText(R"(model Diode {
    Se s(1); R r(1); R d(f = 1e-12 * (exp(e / 0.025) - 1)); C c(2) { q0 = 0; }
    1 loop;
    bond s -> loop; bond loop -> r; bond loop -> d; bond loop -> c;
    output current = r.f, drop = d.e;
  })");
  // vd by bisection on V - R Is (exp(vd / Vt) - 1) - vd = 0.
  double lo = 0, hi = V;
  for (int k = 0; k < 200; ++k) {
    double mid = 0.5 * (lo + hi);
    (V - R * Is * (std::exp(mid / Vt) - 1) - mid > 0 ? lo : hi) = mid;
  }
  double vd = 0.5 * (lo + hi), i = Is * (std::exp(vd / Vt) - 1), rd = Vt / (i + Is);
  REQUIRE(ss->a.size() == 1);
  CHECK(ss->a[0] == doctest::Approx(-1 / (C * (R + rd))).epsilon(1e-10));
  CHECK(ss->b[0] == doctest::Approx(1 / (R + rd)).epsilon(1e-10));
  // current: di/dq and di/dV; drop: rd times them.
  CHECK(ss->c[0] == doctest::Approx(-1 / (C * (R + rd))).epsilon(1e-10));
  CHECK(ss->d[0] == doctest::Approx(1 / (R + rd)).epsilon(1e-10));
  CHECK(ss->c[1] == doctest::Approx(-rd / (C * (R + rd))).epsilon(1e-10));
  CHECK(ss->d[1] == doctest::Approx(rd / (R + rd)).epsilon(1e-10));
  CHECK(ss->eigenRe[0] == doctest::Approx(-1 / (C * (R + rd))).epsilon(1e-10));
}

TEST_CASE("linearize says why when Newton's method finds no loop solution") {
  // i = -vd through the resistor and i = vd^2 + 1 through the law: no root.
  std::optional<RunDiagnostic> why;
  CHECK_FALSE(tryLinearize(R"(model NoRoot {
    Se s(0); R r(1); R d(f = e * e + 1); C c(1) { q0 = 0; }
    1 loop;
    bond s -> loop; bond loop -> r; bond loop -> d; bond loop -> c;
  })",
                           0.5, why));
  REQUIRE(why);
  CHECK(why->kind == DiagKind::LinearizeLoopFailed);
  CHECK(why->time == 0.5);
  CHECK(why->loop.rfind("d [", 0) == 0);
  CHECK(why->message.find("in the algebraic loop `d") != std::string::npos);
  CHECK(why->message.find("at the operating point") != std::string::npos);
}

TEST_CASE("linearize says so when the state matrix is not finite") {
  // e = sqrt(q): de/dq is infinite at q = 0.
  std::optional<RunDiagnostic> why;
  CHECK_FALSE(tryLinearize(R"(model Root {
    Se s(1); R r(1); C c(e = sqrt(q)) { q0 = 0; }
    1 loop;
    bond s -> loop; bond loop -> r; bond loop -> c;
  })",
                           0, why));
  REQUIRE(why);
  CHECK(why->kind == DiagKind::LinearizeNotFinite);
  CHECK(why->text("Root") ==
        "model `Root` at t = 0: cannot linearise: the state matrix is not finite at the "
        "operating point");
}
