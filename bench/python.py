#!/usr/bin/python3
"""What a run costs through Python against the same run through C++.

    PYTHONPATH=build/python python3 bench/python.py build/bin/hbg_bench_python_baseline \\
        [--runs N] [--steps M]

Times, in one process each, N runs of examples/rlc.hbg to t = 1 (100
rows) and M steps of examples/dc_motor_speed.hbg driven as a controller
drives it (set the input, advance 1 ms, read the speed): through the
Python module, and through the C++ embedding API
(bench/python_baseline.cpp, run here). Prints each mean time and the
binding's overhead per call (docs/performance.md, "Python").
"""
import os
import subprocess
import sys
import time

import hbg

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def main():
    args = sys.argv[1:]
    baseline = args[0]
    runs, steps = 2000, 20000
    if "--runs" in args:
        runs = int(args[args.index("--runs") + 1])
    if "--steps" in args:
        steps = int(args[args.index("--steps") + 1])

    rlc = hbg.compile(os.path.join(EXAMPLES, "rlc.hbg"))
    for _ in range(20):
        rlc.simulate(t_end=1)
    t0 = time.perf_counter()
    for _ in range(runs):
        rlc.simulate(t_end=1)["current"][-1]
    py_run = (time.perf_counter() - t0) / runs * 1e6

    motor = hbg.compile(os.path.join(EXAMPLES, "dc_motor_speed.hbg"))
    sim = motor.simulation(t_end=1e9)
    integral = 0.0

    def step(k):
        nonlocal integral
        e = 20.0 - sim.output("omega")
        integral += 1e-3 * e
        sim.set_input("V", 2.0 * e + 30.0 * integral)
        sim.advance((k + 1) * 1e-3)

    for k in range(200):
        step(k)
    t1 = time.perf_counter()
    for k in range(200, 200 + steps):
        step(k)
    py_step = (time.perf_counter() - t1) / steps * 1e6

    out = subprocess.run([baseline, EXAMPLES, "--runs", str(runs), "--steps", str(steps)],
                         capture_output=True, text=True, check=True).stdout
    cpp = dict(line.split()[:2] for line in out.splitlines())
    cpp_run, cpp_step = float(cpp["simulate_us"]), float(cpp["advance_us"])
    print("%-36s %10s %10s %10s %7s" % ("call", "C++ (us)", "Python (us)", "overhead", "ratio"))
    for what, c, p in (("simulate (RLC, 100 rows)", cpp_run, py_run),
                       ("set_input + advance + output", cpp_step, py_step)):
        print("%-36s %10.2f %10.2f %10.2f %7.2f" % (what, c, p, p - c, p / c))


if __name__ == "__main__":
    main()
