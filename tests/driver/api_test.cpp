// The embedding API: compile, set parameters, run, read trajectories.

#include "hbg/hbg.h"
#include "hbg/driver/Internal.h"

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

TEST_CASE("a row callback receives the rows a run would keep, and a step callback stops it") {
  hbg::Model model = hbg::Compiler().compileString(kDecay, "decay.hbg");
  hbg::Simulation kept(model);
  hbg::Result all = runDecay(kept);
  REQUIRE(all.ok());

  hbg::Simulation streamed(model);
  std::vector<std::vector<double>> rows;
  std::size_t steps = 0;
  streamed.options().onRow = [&rows](const double *row) { rows.emplace_back(row, row + 3); };
  streamed.options().onStep = [&steps](const hbg::runtime::Progress &p) {
    CHECK(p.tStart == 0);
    CHECK(p.tEnd == 2);
    CHECK(p.steps > steps);
    steps = p.steps;
    return true;
  };
  hbg::Result r = runDecay(streamed);
  REQUIRE(r.ok());
  for (const std::vector<double> &c : r.columns)
    CHECK(c.empty());
  CHECK(r.rows == rows.size());
  REQUIRE(rows.size() == all.rows);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < 3; ++j)
      CHECK(rows[i][j] == all.columns[j][i]); // bit for bit

  // Stopped once past t = 1: the rows up to there, and why it ended.
  hbg::Simulation stopped(model);
  rows.clear();
  double last = 0;
  stopped.options().onRow = [&rows](const double *row) { rows.emplace_back(row, row + 3); };
  stopped.options().onStep = [&last](const hbg::runtime::Progress &p) {
    last = p.t;
    return p.t <= 1;
  };
  hbg::Result s = runDecay(stopped);
  CHECK(s.stopped);
  CHECK(!s.ok());
  REQUIRE(s.failure);
  CHECK(s.failure->kind == hbg::DiagKind::RunStopped);
  CHECK(s.failure->time == last);
  CHECK(s.error == "model `Decay` at t = " + hbg::timeText(last) + ": stopped");
  CHECK(last > 1);
  CHECK(s.rows == rows.size());
  REQUIRE(!rows.empty());
  CHECK(rows.back()[0] <= last);
  CHECK(rows.size() < all.rows);
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

TEST_CASE("errors: each compile diagnostic with its place, kind and notes") {
  try {
    hbg::Compiler().compileString("model M {\n  R r(1);\n  R r(2);\n  C c(1); bond c -> d;\n}\n",
                                  "bad.hbg");
    FAIL("expected a CompileError");
  } catch (const hbg::CompileError &e) {
    REQUIRE(e.diagnostics().size() >= 2);
    const hbg::CompileDiagnostic &dup = e.diagnostics()[0];
    CHECK(dup.file == "bad.hbg");
    CHECK(dup.line == 3);
    CHECK(dup.column == 5);
    CHECK(dup.kind == "DuplicateName");
    CHECK(dup.severity == "error");
    CHECK(dup.message == "redefinition of `r`");
    CHECK(dup.rendered.rfind("bad.hbg:3:5: error: redefinition of `r`\n  R r(2);\n    ^\n", 0) == 0);
    REQUIRE(dup.notes.size() == 1);
    CHECK(dup.notes[0].line == 2);
    CHECK(dup.notes[0].severity == "note");
    const hbg::CompileDiagnostic &unknown = e.diagnostics()[1];
    CHECK(unknown.line == 4);
    CHECK(unknown.kind == "UnknownName");
    // what() is every diagnostic rendered, in order.
    CHECK(std::string(e.what()).rfind(dup.rendered, 0) == 0);
  }
  try {
    hbg::Compiler().compileFile("/nonexistent/x.hbg");
    FAIL("expected a CompileError");
  } catch (const hbg::CompileError &e) {
    REQUIRE(e.diagnostics().size() == 1);
    CHECK(e.diagnostics()[0].kind == "CannotOpenFile");
    CHECK(e.diagnostics()[0].file.empty());
    CHECK(e.diagnostics()[0].line == 0);
  }
}

TEST_CASE("Model::linearize: the poles of a series RLC are its characteristic roots") {
  hbg::Model m = hbg::Compiler().compileString(R"(
model RLC {
    parameter R = 1;
    Se s(1); R r(R); I l(0.5); C c(0.1); 1 j;
    bond s -> j; bond j -> r; bond j -> l; bond j -> c;
    output q = c.q;
}
)");
  for (double R : {1.0, 5.0}) {
    hbg::LinearModel lin = m.linearize(0, "", {{"R", R}});
    REQUIRE(lin.poles.size() == 2);
    // L C s^2 + R C s + 1 = 0.
    double a = 0.05, b = R * 0.1, c = 1, disc = b * b - 4 * a * c;
    std::complex<double> r1 = (-b - std::sqrt(std::complex<double>(disc))) / (2 * a);
    std::complex<double> r2 = (-b + std::sqrt(std::complex<double>(disc))) / (2 * a);
    auto near = [](std::complex<double> x, std::complex<double> y) {
      return std::abs(x - y) <= 1e-12 * std::abs(y);
    };
    CHECK(((near(lin.poles[0], r1) && near(lin.poles[1], r2)) ||
           (near(lin.poles[0], r2) && near(lin.poles[1], r1))));
    CHECK(lin.inputs == std::vector<std::string>{"s.e"});
    CHECK(lin.outputs == std::vector<std::string>{"q"});
    CHECK(lin.a.size() == 4);
  }
  CHECK_THROWS_AS(m.linearize(0, "", {{"nosuch", 1}}), std::invalid_argument);
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
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunDerivativeNotFinite);
  CHECK(r.failure->element == "c.q");
  CHECK(r.failure->mode.empty());
  CHECK(r.error == "model `Blowup` at t = " + hbg::timeText(r.failure->time) +
                       ": the derivative of state `c.q` is not finite");
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
  REQUIRE(hbg::driver::equations(model).unknowns.size() == 1);
  hbg::SimulationOptions opts;
  opts.tEnd = 1;
  opts.dtOut = 0.05;
  hbg::Result r = hbg::Simulation(model, opts).run();
  REQUIRE_FALSE(r.ok());
  INFO(r.error);
  REQUIRE(r.failure);
  CHECK(r.failure->kind == hbg::DiagKind::RunLoopFailed);
  CHECK(r.failure->loop == "nl [b3] 1:loop [b2] series");
  CHECK(r.error.find("model `Fold` at t = ") == 0);
  CHECK(r.error.find(" in the algebraic loop `nl [b3] 1:loop [b2] series` while evaluating the ") !=
        std::string::npos);
  bool saysWhy = r.error.find("Newton's method did not converge") != std::string::npos ||
                 r.error.find("Newton's method stalled") != std::string::npos ||
                 r.error.find("Jacobian is singular") != std::string::npos ||
                 r.error.find("residual is not finite") != std::string::npos;
  CHECK(saysWhy);
  double when = r.failure->time;
  CHECK(r.error.find("at t = " + hbg::timeText(when) + ": ") != std::string::npos);
  CHECK(when >= 0.5 - 1e-9); // the fold: 4 - 4t = exp(1 - e) + e has no root past t = 0.5
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

namespace {
/// Runs `model` at tight tolerances, failing the test on a run-time error.
hbg::Result runTight(const hbg::Model &model, double tEnd, double dtOut) {
  hbg::SimulationOptions opts;
  opts.tEnd = tEnd;
  opts.dtOut = dtOut;
  opts.rtol = 1e-10;
  opts.atol = 1e-12;
  hbg::Result r = hbg::Simulation(model, opts).run();
  INFO(r.error);
  REQUIRE(r.ok());
  return r;
}
} // namespace

TEST_CASE("a nonlinear capacitor in derivative causality follows a linear one in parallel") {
  // c1 takes the node's effort e = q1 / C1; c2's charge solves its law
  // q2 + a q2^3 = e by Newton's method at every evaluation. Both are fed
  // through the resistor, so q1 + q2 grows by the charge it carries, and
  // at the end e has settled at the source's V.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Parallel {
    parameter V = 2; parameter R = 0.5; parameter C1 = 1; parameter a = 0.5;
    Se source(V); R r(R);
    C c1(C1) { q0 = 0.5; }
    C c2(e = q + a * q^3);
    1 loop; 0 node;
    bond source -> loop; bond loop -> r; bond loop -> node;
    bond node -> c1; bond node -> c2;
    signal carried = integral(r.f);
    output q1 = c1.q, q2 = c2.q, e1 = c1.e, e2 = c2.e, carried;
}
)");
  REQUIRE(hbg::driver::equations(model).unknowns.size() == 1);
  hbg::Result r = runTight(model, 20, 0.25);
  const std::vector<double> &q1 = r.at("q1"), &q2 = r.at("q2");
  double total0 = q1[0] + q2[0];
  for (std::size_t i = 0; i < q1.size(); ++i) {
    CAPTURE(r.at("time")[i]);
    CHECK(r.at("e1")[i] == r.at("e2")[i]);
    // Each sample's charge solves the law at the common effort.
    CHECK(q2[i] + 0.5 * std::pow(q2[i], 3) == doctest::Approx(q1[i] / 1.0).epsilon(1e-10));
    CHECK(q1[i] + q2[i] - total0 == doctest::Approx(r.at("carried")[i]).epsilon(1e-8));
  }
  CHECK(q1[0] == 0.5);
  // q2 + q2^3 / 2 = 0.5 at the start.
  CHECK(q2[0] == doctest::Approx(0.4533976515).epsilon(1e-9));
  CHECK(q1.back() == doctest::Approx(2.0).epsilon(1e-7));
  CHECK(q2.back() + 0.5 * std::pow(q2.back(), 3) == doctest::Approx(2.0).epsilon(1e-7));
}

TEST_CASE("a mass with a nonlinear momentum law rigidly coupled to a linear mass") {
  // The force F accelerates both: p1 + p2 = F t exactly, while the common
  // velocity p1 / m1 = p2 / m2 + a p2^3 splits the momentum.
  hbg::Model model = hbg::Compiler().compileString(R"(
model Rigid {
    parameter F = 2; parameter m1 = 1; parameter m2 = 2; parameter a = 0.3;
    Se push(F);
    I mass1(m1);
    I mass2(f = p / m2 + a * p^3);
    1 v;
    bond push -> v; bond v -> mass1; bond v -> mass2;
    output p1 = mass1.p, p2 = mass2.p;
}
)");
  hbg::Result r = runTight(model, 3, 0.1);
  for (std::size_t i = 0; i < r.at("time").size(); ++i) {
    double t = r.at("time")[i], p1 = r.at("p1")[i], p2 = r.at("p2")[i];
    CAPTURE(t);
    CHECK(p1 + p2 == doctest::Approx(2 * t).epsilon(1e-8));
    CHECK(p1 / 1.0 == doctest::Approx(p2 / 2.0 + 0.3 * p2 * p2 * p2).epsilon(1e-10));
  }
}

TEST_CASE("a collision with a nonlinear body is remapped by conservation of momentum") {
  // The bullet reaches the wood at t = 0.2 and sticks: afterwards the
  // wood's momentum solves v = p2 / m2 + a p2^3 with the common velocity v,
  // and p1 + p2 keeps the bullet's momentum 1. The wood is three times as
  // heavy, so the remapping needs the dependent momentum's true derivative
  // in the bullet's (a fixed-point iteration would not converge).
  hbg::Model model = hbg::Compiler().compileString(R"(
model Sticking {
    parameter m1 = 1.0; parameter m2 = 3.0; parameter a = 0.5;
    I bullet(m1) { p0 = 1.0; }
    I wood(f = p / m2 + a * p^3);
    1 v1; 1 v2;
    0 contact switched { off initial; on; off -> on when (time >= 0.2)+; }
    bond v1 -> bullet; bond v2 -> wood; bond v1 -> contact; bond contact -> v2;
    output v1 = bullet.f, v2 = wood.f, p1 = bullet.p, p2 = wood.p;
}
)");
  hbg::Result r = runTight(model, 1, 0.25);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].time == doctest::Approx(0.2));
  double p1 = r.at("p1").back(), p2 = r.at("p2").back();
  CHECK(p1 + p2 == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(r.at("v1").back() == doctest::Approx(r.at("v2").back()).epsilon(1e-12));
  CHECK(p1 / 1.0 == doctest::Approx(p2 / 3.0 + 0.5 * p2 * p2 * p2).epsilon(1e-12));
  CHECK(p1 == doctest::Approx(0.35202491).epsilon(1e-7));
}

namespace {
/// RC discharge, q(t) = q0 exp(-t / tau), run as its experiment block says.
const char *kExperiment = R"(
model Discharge {
    parameter tau = 0.5;
    C cap(tau) { q0 = 1; }
    R res(1);
    0 node;
    bond node -> cap;
    bond node -> res;
    output cap.q;
    experiment {
        t_end = 4 * tau;   // follows tau
        dt_out = tau;
        method = dopri5;
        rtol = 1e-10;
        atol = 1e-14;
        max_step = 0.05;
    }
}
)";
} // namespace

TEST_CASE("api: the experiment block sets a run's defaults") {
  hbg::Model model = hbg::Compiler().compileString(kExperiment, "discharge.hbg");
  hbg::Experiment ex = model.experiment();
  REQUIRE(ex.tEnd);
  CHECK(*ex.tEnd == 2.0);
  CHECK(*ex.dtOut == 0.5);
  CHECK(*ex.rtol == 1e-10);
  CHECK(*ex.atol == 1e-14);
  CHECK(*ex.maxStep == 0.05);
  CHECK(!ex.tStart);
  CHECK(!ex.step);
  REQUIRE(ex.method);
  CHECK(*ex.method == hbg::runtime::Method::DormandPrince);

  // Settings not given keep the options' own values.
  hbg::SimulationOptions base;
  base.step = 0.25;
  base.remapFactor = 0.3;
  hbg::SimulationOptions o = ex.apply(base);
  CHECK(o.tEnd == 2.0);
  CHECK(o.tStart == 0.0);
  CHECK(o.step == 0.25);
  CHECK(o.remapFactor == 0.3);
  CHECK(o.method == hbg::runtime::Method::DormandPrince);

  // Simulation(model) runs with them: rows at 0, tau, ..., 4 tau, each on
  // the closed form.
  hbg::Result r = hbg::Simulation(model).run();
  REQUIRE(r.ok());
  const std::vector<double> &t = r.at("time"), &q = r.at("cap.q");
  REQUIRE(t.size() == 5);
  for (std::size_t k = 0; k < t.size(); ++k) {
    CHECK(t[k] == doctest::Approx(0.5 * double(k)).epsilon(1e-12));
    CHECK(q[k] == doctest::Approx(std::exp(-double(k))).epsilon(1e-8));
  }
  CHECK(r.methods.size() == 1);
  CHECK(r.methods[0].method == hbg::runtime::Method::DormandPrince);

  // Settings are evaluated with the parameters a run gives.
  hbg::Experiment slow = model.experiment({{"tau", 2.0}});
  CHECK(*slow.tEnd == 8.0);
  CHECK(*slow.dtOut == 2.0);
  hbg::Simulation sim(model, slow.apply());
  sim.setParameter("tau", 2.0);
  hbg::Result rs = sim.run();
  REQUIRE(rs.ok());
  CHECK(rs.at("time").back() == doctest::Approx(8.0));
  CHECK(rs.at("cap.q").back() == doctest::Approx(std::exp(-4.0)).epsilon(1e-8));

  // A parameter value that makes a setting invalid names it.
  CHECK_THROWS_WITH_AS(model.experiment({{"tau", -1.0}}),
                       doctest::Contains("experiment setting `dt_out`"), std::invalid_argument);
  std::string late = kExperiment;
  late.replace(late.find("t_end"), 0, "t_start = 1; ");
  hbg::Model lateModel = hbg::Compiler().compileString(late, "late.hbg");
  CHECK(*lateModel.experiment().tStart == 1.0);
  try {
    lateModel.experiment({{"tau", 0.25}}); // t_end = 1
    FAIL("t_end = t_start");
  } catch (const std::invalid_argument &e) {
    CHECK(std::string(e.what()).find("`t_end` of model `Discharge` must be after `t_start`") !=
          std::string::npos);
  }

  // Options given explicitly do not read the block.
  hbg::SimulationOptions plain;
  plain.tEnd = 1;
  CHECK(hbg::Simulation(model, plain).run().at("time").size() == 101);
}

TEST_CASE("api: every method an experiment block may name") {
  // Sema keeps its own list of names (it does not link the runtime).
  for (const char *m : {"auto", "dopri5", "rosenbrock", "rk4", "euler"}) {
    std::string text = kExperiment;
    text.replace(text.find("dopri5"), 6, m);
    hbg::Experiment ex = hbg::Compiler().compileString(text, "discharge.hbg").experiment();
    REQUIRE(ex.method);
    CHECK(std::string(hbg::runtime::methodName(*ex.method)) == m);
  }
  // Without a block nothing is set.
  hbg::Experiment none = hbg::Compiler().compileString(kDecay, "decay.hbg").experiment();
  CHECK(!none.tStart);
  CHECK(!none.tEnd);
  CHECK(!none.method);
}
