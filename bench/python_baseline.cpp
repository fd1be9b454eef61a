//===- bench/python_baseline.cpp - The C++ side of bench/python.py -------===//
//
//   hbg_bench_python_baseline EXAMPLES_DIR [--runs N] [--steps M]
//
// The calls bench/python.py makes through the Python module, made through
// the C++ embedding API in one process: N runs of examples/rlc.hbg to t =
// 1 (100 rows), and M steps of examples/dc_motor_speed.hbg driven as a
// controller drives it (set the input, advance 1 ms, read the speed).
// Prints the mean time of a run and of a step, in microseconds.
//
//===----------------------------------------------------------------------===//

#include "hbg/hbg.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hbg_bench_python_baseline EXAMPLES_DIR [--runs N] [--steps M]\n");
    return 2;
  }
  std::string dir = argv[1];
  int runs = 2000, steps = 20000;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--runs")
      runs = std::atoi(argv[i + 1]);
    else if (a == "--steps")
      steps = std::atoi(argv[i + 1]);
  }
  using Clock = std::chrono::steady_clock;
  hbg::Model rlc = hbg::Compiler().compileFile(dir + "/rlc.hbg");
  hbg::SimulationOptions o;
  o.tEnd = 1;
  double sum = 0;
  for (int k = 0; k < 20; ++k) // warm: the code tiers settle
    sum += hbg::Simulation(rlc, o).run().columns[1].back();
  auto t0 = Clock::now();
  for (int k = 0; k < runs; ++k)
    sum += hbg::Simulation(rlc, o).run().columns[1].back();
  double runUs = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / runs;

  hbg::Model motor = hbg::Compiler().compileFile(dir + "/dc_motor_speed.hbg");
  hbg::SimulationOptions so;
  so.tEnd = 1e9;
  hbg::Simulation sim(motor, so);
  sim.start();
  double integral = 0;
  auto step = [&](int k) {
    double e = 20.0 - sim.output("omega");
    integral += 1e-3 * e;
    sim.setInput("V", 2.0 * e + 30.0 * integral);
    sim.advance((k + 1) * 1e-3);
  };
  for (int k = 0; k < 200; ++k)
    step(k);
  auto t1 = Clock::now();
  for (int k = 200; k < 200 + steps; ++k)
    step(k);
  double stepUs = std::chrono::duration<double, std::micro>(Clock::now() - t1).count() / steps;
  std::printf("simulate_us %.3f\nadvance_us %.3f\nchecksum %.6g\n", runUs, stepUs,
              sum + sim.output("omega"));
  return 0;
}
