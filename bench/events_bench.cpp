//===- bench/events_bench.cpp - Events, mode compilation and remapping ----===//
//
// Four measurements of switched models:
//
//   events    a lossless ball (restitution 1) bouncing on a switched floor
//             junction many times: CPU time per event of hbg::Simulation
//             (dopri5, event location, mode iteration, exact remap) against
//             a hand-written C++ baseline with the same dopri5 stepper and
//             root finder, free-fall rhs and velocity reversal by hand.
//   buck      examples/buck.hbg over 2,000 PWM periods at default options:
//             steps accepted and rejected, CPU time per step and per event.
//
// Both take the least CPU time of this thread over the repetitions: on a
// machine shared with other work, wall time measures the others too.
//   modes     a bank of N independent RC cells, each switched on at its own
//             time: the first mode is analysed with the model, the other N
//             when the run enters them (default tiers: on tapes, compiled by
//             LLVM in the background when hot); time per newly visited mode.
//
// The other parts measure LLVM's code from the first call (Tiering::Jit).
//   remap     examples/collision_inelastic.hbg: the exact remap against HYBRSIM's
//             iterative one (factor 0.4 and 0.1): iterations to 1e-12 and
//             wall time per collision run.
//
// Exits 1 when a result is wrong (event count, bounce times, remapped
// momenta), 2 on bad arguments.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"
#include "hbg/runtime/Integrator.h"
#include "hbg/runtime/RootFind.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

namespace {

/// LLVM's code from the first call: the benchmark measures compiled code
/// (the default tiers would run the first calls on tapes meanwhile).
hbg::CompilerOptions llvmOnly() {
  hbg::CompilerOptions opts;
  opts.tiering = hbg::Tiering::Jit;
  return opts;
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// The CPU time this thread has used, in seconds.
double threadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double least(const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const double kG = 9.81, kH0 = 0.01;

const char *kBall = R"(model Ball {
    parameter g = 9.81;
    parameter h0 = 0.01;
    Se gravity(-g);
    I  ball(1) { p0 = 0; }
    MSf rebound(-pre(ball.f));
    1  body;
    0  floor switched {
        off flying initial;  on impact;
        flying -> impact when (h <= 0)+ and (ball.f < 0)-;
        impact -> flying when (ball.f > 0)-;
    }
    bond gravity -> body;  bond body -> ball;
    bond floor -> body;    bond rebound -> floor;
    signal h = h0 + integral(ball.f);
    output h;
})";

/// Free fall, x = [v, h], by hand.
class FreeFall : public hbg::runtime::OdeSystem {
public:
  std::size_t numStates() const override { return 2; }
  void rhs(double, const double *x, double *xdot) override {
    xdot[0] = -kG;
    xdot[1] = x[0];
  }
};

/// The baseline: the same stepper and root finder, the event by hand.
std::size_t handBounces(double tEnd, double rtol, double atol, std::vector<double> &times) {
  FreeFall sys;
  hbg::runtime::IntegratorOptions io;
  io.method = hbg::runtime::Method::DormandPrince;
  io.rtol = rtol;
  io.atol = atol;
  io.step = 0;
  std::vector<double> x{0, kH0};
  double t = 0;
  std::size_t events = 0;
  while (t < tEnd) {
    auto stepper = hbg::runtime::makeStepper(sys, io);
    stepper->reset(t, x.data());
    for (;;) {
      double ha = stepper->x()[1];
      if (stepper->step(tEnd) != hbg::runtime::StepStatus::Ok)
        return events;
      double hb = stepper->x()[1];
      if (hb <= 0 && stepper->x()[0] < 0) {
        std::vector<double> xi(2);
        auto h = [&](double tau) {
          stepper->interpolate(tau, xi.data());
          return xi[1];
        };
        hbg::runtime::Bracket br = hbg::runtime::locateSignChange(
            h, stepper->tPrev(), ha, stepper->t(), hb == 0 ? -1e-300 : hb,
            1e-12 * (stepper->t() - stepper->tPrev()));
        stepper->interpolate(br.hi, x.data());
        x[0] = -x[0];
        t = br.hi;
        times.push_back(t);
        ++events;
        break;
      }
      if (stepper->t() >= tEnd) {
        t = tEnd;
        break;
      }
    }
  }
  return events;
}

std::string bank(int n) {
  std::ostringstream os;
  os << "model Bank {\n";
  for (int k = 0; k < n; ++k)
    os << "  Se s" << k << "(1); R r" << k << "(1); C c" << k << "(1) { q0 = 0; }\n"
       << "  1 sw" << k << " switched { off open initial; on closed;\n"
       << "    open -> closed when (time >= " << 0.01 * (k + 1) << ")+; }\n"
       << "  bond s" << k << " -> sw" << k << "; bond sw" << k << " -> r" << k << "; bond sw"
       << k << " -> c" << k << ";\n";
  os << "  output c0.q;\n}\n";
  return os.str();
}

} // namespace

int main(int argc, char **argv) {
  int repeat = 3;
  double tEnd = 20;
  std::vector<int> sizes = {10, 40};
  std::string parts = "events,buck,modes,remap";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--t-end" && i + 1 < argc) {
      tEnd = std::atof(argv[++i]);
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      for (std::string item; std::getline(ss, item, ',');)
        sizes.push_back(std::stoi(item));
    } else if (a == "--parts" && i + 1 < argc) {
      parts = argv[++i];
    } else {
      std::fprintf(stderr, "usage: hbg_bench_events [--repeat K] [--t-end T] [--sizes N,...] "
                           "[--parts events,buck,modes,remap]\n");
      return 2;
    }
  }

  auto part = [&](const char *name) {
    std::stringstream ss(parts);
    for (std::string item; std::getline(ss, item, ',');)
      if (item == name)
        return true;
    return false;
  };

  // 1. Time per event.
  if (part("events")) {
    hbg::Model model = hbg::Compiler(llvmOnly()).compileString(kBall, "ball.hbg");
    hbg::SimulationOptions opts;
    opts.method = hbg::runtime::Method::DormandPrince; // the figures' method
    opts.tEnd = tEnd;
    opts.rtol = 1e-10;
    opts.atol = 1e-12;
    opts.step = 0;
    opts.dtOut = tEnd;
    std::vector<double> hbgTimes, handTimes, handEvents;
    hbg::Result r;
    std::size_t events = 0;
    for (int k = 0; k < repeat; ++k) {
      // The previous run's result (its event log) is freed before the
      // clock starts: freeing it is not part of this run.
      r = hbg::Result();
      double t0 = threadSeconds();
      r = hbg::Simulation(model, opts).run();
      hbgTimes.push_back(threadSeconds() - t0);
      handEvents.clear();
      t0 = threadSeconds();
      events = handBounces(tEnd, opts.rtol, opts.atol, handEvents);
      handTimes.push_back(threadSeconds() - t0);
    }
    if (!r.ok()) {
      std::fprintf(stderr, "ball: %s\n", r.error.c_str());
      return 1;
    }
    // Bounce k at (2k + 1) sqrt(2 h0 / g).
    double t1 = std::sqrt(2 * kH0 / kG);
    std::size_t expected = static_cast<std::size_t>((tEnd / t1 + 1) / 2);
    if (r.events.size() != expected || events != expected) {
      std::fprintf(stderr, "ball: %zu events (hand-written %zu), expected %zu\n",
                   r.events.size(), events, expected);
      return 1;
    }
    double worst = 0;
    for (std::size_t k = 0; k < expected; ++k)
      worst = std::max(worst, std::abs(r.events[k].time - (2.0 * k + 1) * t1));
    if (worst > 1e-8) {
      std::fprintf(stderr, "ball: bounce times off by %g\n", worst);
      return 1;
    }
    double per = least(hbgTimes) / expected, perHand = least(handTimes) / expected;
    std::printf("events: %zu bounces in %g s, worst bounce time error %.2g s\n", expected, tEnd,
                worst);
    std::printf("  hbg %.2f us/event, hand-written %.2f us/event, ratio %.2f (%zu steps)\n",
                1e6 * per, 1e6 * perHand, per / perHand, r.steps);
  }

  // 2. A long switched run: 2,000 periods of examples/buck.hbg at default
  // options, every step proven and the steps ending on the PWM's time
  // events. Checked: two switchings per period in steady state (the first
  // periods have a few more: the coil current starts at zero), and the output's average
  // over the last 100 periods at D Vin to 1 % (the ripple averages out;
  // the diode's drop is ideal).
  if (part("buck")) {
    hbg::Model model =
        hbg::Compiler(llvmOnly()).compileFile(std::string(HBG_SOURCE_DIR) + "/examples/buck.hbg");
    // The real modes and the two each switching passes through: the
    // diode blocking as the switch opens (its impulse turns it on), the
    // switch closing onto the conducting diode (a short circuit).
    for (const char *m : {"switch.j=closed, diode.j=blocking", "switch.j=open, diode.j=conducting",
                          "switch.j=open, diode.j=blocking", "switch.j=closed, diode.j=conducting"})
      model.compileMode(m);
    hbg::SimulationOptions opts;
    opts.method = hbg::runtime::Method::DormandPrince; // the figures' method
    double fs = 10000, periods = 2000, D = 0.4, vin = 12;
    opts.tEnd = periods / fs;
    opts.dtOut = 0.05 / fs;
    std::vector<double> times, search;
    hbg::Result r;
    for (int k = 0; k < repeat; ++k) {
      r = hbg::Result(); // freed before the clock starts, as above
      double t0 = threadSeconds();
      r = hbg::Simulation(model, opts).run();
      times.push_back(threadSeconds() - t0);
      search.push_back(r.eventSearchSeconds);
    }
    std::size_t late = 0;
    for (const hbg::Event &ev : r.events)
      late += ev.time >= opts.tEnd - 100 / fs && ev.time < opts.tEnd; // not the end's switching
    if (!r.ok() || late != 200) {
      std::fprintf(stderr, "buck: %s (%zu events in the last 100 periods)\n", r.error.c_str(),
                   late);
      return 1;
    }
    const std::vector<double> &t = r.at("time"), &v = r.at("vout");
    double sum = 0, span = 0;
    for (std::size_t i = 1; i < t.size(); ++i)
      if (t[i - 1] >= opts.tEnd - 100 / fs) {
        sum += 0.5 * (v[i] + v[i - 1]) * (t[i] - t[i - 1]);
        span += t[i] - t[i - 1];
      }
    double average = sum / span;
    if (std::abs(average - D * vin) > 0.01 * D * vin) {
      std::fprintf(stderr, "buck: average output %g V, expected %g V\n", average, D * vin);
      return 1;
    }
    double cpu = least(times);
    std::printf("buck: %g periods, %zu events, %zu steps accepted, %zu rejected, %zu rhs calls, "
                "average %.4f V\n",
                periods, r.events.size(), r.steps, r.rejectedSteps, r.rhsCalls, average);
    // Result::eventSearchSeconds is wall time, so it is only a guide on
    // a loaded machine.
    double proof = least(search);
    std::printf("  %.1f ms CPU, %.2f us/step, %.2f us/event; proving and locating events %.1f ms "
                "(wall)\n",
                1e3 * cpu, 1e6 * cpu / r.steps, 1e6 * cpu / r.events.size(), 1e3 * proof);
  }

  // 3. Compile time of a newly visited mode.
  for (int n : part("modes") ? sizes : std::vector<int>{}) {
    std::vector<double> perMode, first;
    for (int k = 0; k < repeat; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      hbg::Model model = hbg::Compiler().compileString(bank(n), "bank.hbg");
      first.push_back(seconds(std::chrono::steady_clock::now() - t0));
      hbg::SimulationOptions opts;
      opts.method = hbg::runtime::Method::DormandPrince; // the figures' method
      opts.tEnd = 0.01 * (n + 1);
      hbg::Result r = hbg::Simulation(model, opts).run();
      if (!r.ok() || r.modesCompiled != static_cast<std::size_t>(n)) {
        std::fprintf(stderr, "bank %d: %s (%zu modes compiled)\n", n, r.error.c_str(),
                     r.modesCompiled);
        return 1;
      }
      perMode.push_back(r.compileSeconds / n);
    }
    std::printf("modes: %d switched junctions: model (first mode) %.1f ms, each new mode %.1f ms\n",
                n, 1e3 * median(first), 1e3 * median(perMode));
  }

  // 4. Exact against iterative remapping.
  if (part("remap")) {
    hbg::Model model =
        hbg::Compiler(llvmOnly()).compileFile(std::string(HBG_SOURCE_DIR) + "/examples/collision_inelastic.hbg");
    model.compileMode("contact=on"); // not timed: the runs measure the remap
    struct Variant {
      const char *name;
      hbg::SimulationOptions::Remap remap;
      double factor;
    } variants[] = {{"exact", hbg::SimulationOptions::Remap::Exact, 0},
                    {"iterative 0.4", hbg::SimulationOptions::Remap::Iterative, 0.4},
                    {"iterative 0.1", hbg::SimulationOptions::Remap::Iterative, 0.1}};
    for (const Variant &v : variants) {
      hbg::SimulationOptions opts;
      opts.method = hbg::runtime::Method::DormandPrince; // the figures' method
      opts.tEnd = 0.4;
      opts.dtOut = 0.4;
      opts.remap = v.remap;
      opts.remapFactor = v.factor;
      std::vector<double> times, remaps;
      hbg::Result r;
      int runs = 200;
      for (int k = 0; k < repeat; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        double remap = 0;
        for (int j = 0; j < runs; ++j) {
          r = hbg::Simulation(model, opts).run();
          remap += r.remapSeconds;
        }
        times.push_back(seconds(std::chrono::steady_clock::now() - t0) / runs);
        remaps.push_back(remap / runs);
      }
      if (!r.ok() || r.events.size() != 1) {
        std::fprintf(stderr, "collision (%s): %s\n", v.name, r.error.c_str());
        return 1;
      }
      // The full state starts with bullet.p and wood.p.
      double p1 = r.events[0].after[0], p2 = r.events[0].after[1];
      double err = std::max(std::abs(p1 - 0.5), std::abs(p2 - 0.5));
      if (err > 1e-11) {
        std::fprintf(stderr, "collision (%s): p1 = %.17g, p2 = %.17g\n", v.name, p1, p2);
        return 1;
      }
      std::printf("remap %-14s %4zu iterations, |p - 0.5| = %.1e, remap %.2f us, whole run %.1f us\n",
                  v.name, r.events[0].remapIterations.size(), err, 1e6 * median(remaps),
                  1e6 * median(times));
    }
  }
  return 0;
}
