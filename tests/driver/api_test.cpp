// The embedding API: compile, set parameters, run, read trajectories.

#include "hbg/hbg.h"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

namespace {
const char *kDecay = R"(
model Decay {
    parameter R = 2.0;
    parameter C = 0.5;
    parameter q0 = 3 * C;       // a default that uses another parameter
    C cap(C) { q0 = q0; }
    R res(R);
    0 node;
    bond node -> cap;
    bond node -> res;
    output cap.q, voltage = cap.e;
}
)";

hbg::Result runDecay(hbg::Simulation &sim) {
  sim.options().tEnd = 2;
  sim.options().dtOut = 0.5;
  sim.options().rtol = 1e-11;
  sim.options().atol = 1e-14;
  return sim.run();
}
} // namespace

TEST_CASE("compileString, run and read named trajectories") {
  hbg::Model model = hbg::Compiler().compileString(kDecay, "decay.hbg");
  CHECK(model.name() == "Decay");
  CHECK(model.parameterNames() == std::vector<std::string>{"R", "C", "q0"});
  CHECK(model.stateNames() == std::vector<std::string>{"cap.q"});
  CHECK(model.outputNames() == std::vector<std::string>{"cap.q", "voltage"});
  hbg::Simulation sim(model);
  hbg::Result r = runDecay(sim);
  REQUIRE(r.ok());
  CHECK(r.at("time") == std::vector<double>{0, 0.5, 1, 1.5, 2});
  for (std::size_t i = 0; i < r.at("time").size(); ++i) {
    double t = r.at("time")[i];
    CHECK(r.at("cap.q")[i] == doctest::Approx(1.5 * std::exp(-t / 1.0)).epsilon(1e-9));
    CHECK(r.at("voltage")[i] == doctest::Approx(3.0 * std::exp(-t / 1.0)).epsilon(1e-9));
  }
}

TEST_CASE("parameters change without recompiling; dependent defaults follow") {
  hbg::Model model = hbg::Compiler().compileString(kDecay);
  hbg::Simulation sim(model);
  sim.setParameter("C", 1.0); // q0 = 3 C follows, tau = R C = 2
  hbg::Result r = runDecay(sim);
  REQUIRE(r.ok());
  CHECK(r.at("cap.q").front() == doctest::Approx(3.0));
  CHECK(r.at("cap.q").back() == doctest::Approx(3.0 * std::exp(-1.0)).epsilon(1e-9));
  sim.setParameter("q0", 1.0); // an explicit value wins over the default
  CHECK(runDecay(sim).at("cap.q").front() == doctest::Approx(1.0));
  CHECK(model.parameterValues({{"C", 2.0}}) == std::vector<double>{2.0, 2.0, 6.0});
}

TEST_CASE("models are shared handles and outlive their compiler") {
  hbg::Model copy = [] {
    hbg::Compiler compiler;
    hbg::Model m = compiler.compileString(kDecay);
    return m;
  }();
  hbg::Model other = hbg::Compiler().compileString(kDecay);
  hbg::Simulation a(copy), b(other);
  CHECK(runDecay(a).at("cap.q").back() == runDecay(b).at("cap.q").back());
}

TEST_CASE("errors: compile errors carry rendered diagnostics") {
  try {
    hbg::Compiler().compileString("model M { C c(1); bond c -> d; }", "bad.hbg");
    FAIL("expected a CompileError");
  } catch (const hbg::CompileError &e) {
    CHECK(std::string(e.what()) ==
          "bad.hbg:1:29: error: unknown name `d`\n"
          "model M { C c(1); bond c -> d; }\n"
          "                            ^\n");
  }
  CHECK_THROWS_AS(hbg::Compiler().compileFile("/nonexistent/x.hbg"), hbg::CompileError);
}

TEST_CASE("errors: unknown parameter and unknown output name close matches") {
  hbg::Model model = hbg::Compiler().compileString(kDecay);
  hbg::Simulation sim(model);
  try {
    sim.setParameter("CC", 1);
    FAIL("expected invalid_argument");
  } catch (const std::invalid_argument &e) {
    CHECK(std::string(e.what()) == "model `Decay` has no parameter `CC`; did you mean `C`?");
  }
  hbg::Result r = runDecay(sim);
  try {
    r.at("voltag");
    FAIL("expected out_of_range");
  } catch (const std::out_of_range &e) {
    CHECK(std::string(e.what()) == "no output `voltag`; did you mean `voltage`?");
  }
}

TEST_CASE("run-time failure names the state and the time and keeps the trajectory") {
  // dq/dt = q^2 from q = 1 blows up at t = 1.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Blowup {
    C c(e = 1) { q0 = 1; }
    MSf feed(c.q * c.q);
    0 n;
    bond feed -> n;
    bond n -> c;
    output c.q;
}
)");
  hbg::SimulationOptions opts;
  opts.tEnd = 2;
  opts.dtOut = 0.1;
  opts.method = hbg::runtime::Method::RK4;
  opts.step = 0.01;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error.find("model `Blowup`: ") == 0);
  CHECK(r.error.find("`c.q`") != std::string::npos);
  CHECK(r.error.find("is not finite at t = ") != std::string::npos);
  REQUIRE(r.at("time").size() >= 10);
  CHECK(r.at("time").back() < 2.0);
  CHECK(r.at("c.q")[5] == doctest::Approx(1 / (1 - 0.5)).epsilon(1e-6));
}

TEST_CASE("CSV has a header and one row per sample at full precision") {
  hbg::Model model = hbg::Compiler().compileString(kDecay);
  hbg::Simulation sim(model);
  hbg::Result r = runDecay(sim);
  std::ostringstream os;
  r.writeCsv(os);
  std::string csv = os.str();
  CHECK(csv.rfind("time,cap.q,voltage\n0,1.5,3\n0.5,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 6);
}

TEST_CASE("run-time failure of a nonlinear loop names the loop, the reason and the time") {
  // The loop's effort z solves z + exp(1 - z) = 4 - 4 t. The left side is
  // at least 2 (at z = 1), so the loop has a solution up to t = 0.5 and
  // none after: Newton's method must fail just after t = 0.5.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Fold {
    MSe drive(4 - 4 * time);
    R   series(1);
    R   nl(f = exp(1 - e));
    1   loop;
    bond drive -> loop;
    bond loop -> series;
    bond loop -> nl;
    signal charge = integral(nl.f);
    output current = nl.f, voltage = nl.e, charge;
}
)");
  REQUIRE(model.equations().unknowns.size() == 1);
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 0.05;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_FALSE(r.ok());
  INFO(r.error);
  CHECK(r.error.find("model `Fold`: ") == 0);
  CHECK(r.error.find(" in the algebraic loop `nl [b3] 1:loop [b2] series` at t = ") !=
        std::string::npos);
  bool saysWhy = r.error.find("Newton's method did not converge") != std::string::npos ||
                 r.error.find("Jacobian is singular") != std::string::npos ||
                 r.error.find("residual is not finite") != std::string::npos;
  CHECK(saysWhy);
  double when = std::stod(r.error.substr(r.error.rfind("t = ") + 4));
  CHECK(when > 0.5);
  CHECK(when < 0.6);
  // The trajectory up to the failure is kept and solves the loop.
  const std::vector<double> &time = r.at("time");
  REQUIRE(time.size() >= 10);
  CHECK(time.back() <= 0.5 + 1e-9);
  for (std::size_t i = 0; i < time.size(); ++i) {
    double z = r.at("voltage")[i], current = r.at("current")[i];
    CHECK(current == doctest::Approx(std::exp(1 - z)).epsilon(1e-9));
    CHECK(z + current == doctest::Approx(4 - 4 * time[i]).epsilon(1e-9));
  }
  CHECK(r.at("charge").front() == 0);
  CHECK(r.at("charge").back() > 1);
}
