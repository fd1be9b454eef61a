#!/usr/bin/env python3
"""Discrete values and sample clocks against their exact solutions.

check_sampled.py HBGC MODELS_DIR

- registers.hbg: counters, a unit delay, a wrapping counter and a
  sample-and-hold of sin with a clock that starts late, in closed form,
  and events at the ticks alone.
- buck_pi.hbg: a synchronous buck converter under a PI controller sampled
  at its switching frequency, against the exact sampled-data closed loop:
  per period, the controller's recurrence on the sampled output voltage,
  then the converter's linear dynamics under the period's duty, integrated
  exactly with matrix exponentials.

Both run at default options (their experiment blocks set t_end and the
output grid only).
"""
import csv
import io
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.linalg import expm


def run(hbgc, model, *extra):
    out = subprocess.run([hbgc, "run", model, *extra], check=True, capture_output=True, text=True)
    rows = list(csv.reader(io.StringIO(out.stdout)))
    header = rows[0]
    data = np.array([[float(v) for v in r] for r in rows[1:]])
    return header, data


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_registers(hbgc, models):
    header, d = run(hbgc, models + "/registers.hbg")
    col = {name: k for k, name in enumerate(header)}
    T = 0.1
    worst = 0.0
    for row in d:
        t = row[0]
        k = t / T
        kz = (t - 0.25) / T
        if abs(k - round(k)) < 1e-9 or abs(kz - round(kz)) < 1e-9:
            continue  # a tick: the rows before and after it differ
        n = math.floor(k)  # ticks so far: 0 .. n
        a = n + 2
        b = n + 1
        c = (n + 1) % 5
        # z's clock starts at 0.25: ticks at 0.25 + 0.1 j.
        j = math.floor((t - 0.25) / T + 1e-12)
        z = -1.0 if t < 0.25 else math.sin(2 * math.pi * (0.25 + j * T))
        for name, want in (("a", a), ("b", b), ("c", c)):
            if row[col[name]] != want:
                fail(f"registers: {name}({t}) = {row[col[name]]}, expected {want}")
        worst = max(worst, abs(row[col["z"]] - z))
    if worst > 1e-12:
        fail(f"registers: z differs from the held sine by {worst:.3g}")
    # Events at the ticks only: z's clock, which starts 2.5 periods into
    # the run, makes none at the integers its phase would cross below 0
    # (t = 0.05, 0.15). The tick at the start is held as the run starts.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.csv")
        run(hbgc, models + "/registers.hbg", "--events", path)
        with open(path) as f:
            times = sorted({float(r["time"]) for r in csv.DictReader(f)})
    ticks = sorted({round(0.1 * k, 12) for k in range(1, 11)} | {round(0.25 + 0.1 * k, 12) for k in range(8)})
    if len(times) != len(ticks) or any(abs(a - b) > 1e-12 for a, b in zip(times, ticks)):
        fail(f"registers: events at {times}, expected the ticks {ticks}")
    print(f"registers: counters exact, held sine within {worst:.2g}, "
          f"{len(times)} events, all at ticks")


def buck_reference(times, delay=0, Vin=12.0, L=100e-6, C=100e-6, R=5.0, fs=20e3, Vref=5.0,
                   Kp=0.02, Ki=100.0):
    """The exact closed loop at each of `times` (none on a tick). With
    delay = 1 the duty computed at a tick applies from the next one (0
    before), and the integral holds while the output is limited."""
    Ts = 1.0 / fs
    A = np.array([[0.0, -1.0 / L], [1.0 / C, -1.0 / (R * C)]])
    b = np.array([1.0 / L, 0.0])

    def flow(x, u, h):
        M = np.zeros((3, 3))
        M[:2, :2] = A
        M[:2, 2] = b * u
        E = expm(M * h)
        return E[:2, :2] @ x + E[:2, 2]

    x = np.zeros(2)
    xi = 0.0
    applied = 0.0
    out = []
    k = 0
    ti = 0
    times = list(times)
    while ti < len(times):
        e = Vref - x[1]
        free = Kp * e + xi + Ki * Ts * e
        if delay == 0 or 0 <= free <= 1:
            xi = xi + Ki * Ts * e
        computed = min(max(free, 0.0), 1.0)
        D = computed if delay == 0 else applied
        applied = computed
        t0 = k * Ts
        while ti < len(times) and times[ti] < t0 + Ts:
            h = times[ti] - t0
            y = flow(x, Vin, min(h, D * Ts))
            if h > D * Ts:
                y = flow(y, 0.0, h - D * Ts)
            out.append((y[0], y[1], D, xi))
            ti += 1
        x = flow(flow(x, Vin, D * Ts), 0.0, (1 - D) * Ts)
        k += 1
    return np.array(out)


def check_buck(hbgc, models, name="buck_pi", delay=0, xi_scale=1.0, Kp=0.02, Ki=100.0):
    Ts = 1 / 20e3
    # A grid that falls between ticks: the duty and the integral state are
    # those of the period the row is in.
    header, d = run(hbgc, f"{models}/{name}.hbg", "--dt-out", str(Ts * 2.3))
    col = {name: k for k, name in enumerate(header)}
    keep = [r for r in d if abs(r[0] / Ts - round(r[0] / Ts)) > 1e-6]
    t = np.array([r[0] for r in keep])
    ref = buck_reference(t, delay, Kp=Kp, Ki=Ki)
    got = np.array([[r[col["iL"]], r[col["vout"]], r[col["D"]], r[col["xi"]] * xi_scale]
                    for r in keep])
    # The controller's values are exact up to rounding of the sampled
    # voltage; the states to the integrator's tolerance (rtol 1e-6).
    err_v = np.max(np.abs(got[:, 1] - ref[:, 1]))
    err_i = np.max(np.abs(got[:, 0] - ref[:, 0]))
    err_d = np.max(np.abs(got[:, 2] - ref[:, 2]))
    err_x = np.max(np.abs(got[:, 3] - ref[:, 3]))
    print(f"{name}: {len(keep)} rows; max |dv| {err_v:.3g} V, |di| {err_i:.3g} A, "
          f"|dD| {err_d:.3g}, |dxi| {err_x:.3g}; final vout {got[-1, 1]:.6f} (Vref 5)")
    if err_v > 1e-3 or err_i > 1e-2 or err_d > 1e-4 or err_x > 1e-4:
        fail(f"{name} differs from the exact sampled-data closed loop")
    if abs(got[-1, 1] - 5.0) > 0.05:
        fail(f"{name} does not settle at Vref")


def check_blocks(hbgc, models):
    """ZeroOrderHold, UnitDelay, Mean, DiscretePI and DiscreteIntegrator
    in closed form."""
    header, d = run(hbgc, models + "/blocks.hbg")
    col = {name: k for k, name in enumerate(header)}
    worst = {"hold.y": 0.0, "delay.y": 0.0, "mean.y": 0.0}
    for row in d:
        t = row[0]
        k = t / 0.1
        if abs(k - round(k)) < 1e-9:
            continue
        n = math.floor(k)
        hold = math.sin(2 * math.pi * n * 0.1)
        delay = -1.0 if n == 0 else math.sin(2 * math.pi * (n - 1) * 0.1)
        # Mean over periods of 0.2 ending at 0.2 j: f times the integral.
        j = math.floor(t / 0.2 + 1e-12)
        if j == 0:
            mean = 0.0
        else:
            a = 2 * math.pi * 3
            mean = 5 * (math.cos(a * (j - 1) * 0.2) - math.cos(a * j * 0.2)) / a
        for name, want in (("hold.y", hold), ("delay.y", delay), ("mean.y", mean)):
            worst[name] = max(worst[name], abs(row[col[name]] - want))
        # PI on a constant error 1: x grows by T / Ti = 0.2 a tick while
        # y = 0.5 (1 + x + 0.2) stays within [-1, 1.45], then holds.
        x, y = 0.0, 0.0
        for _ in range(n + 1):
            free = 0.5 * (1 + x + 0.2)
            if -1 <= free <= 1.45:
                x += 0.2
            y = min(max(free, -1), 1.45)
        if abs(row[col["ctl.x"]] - x) > 1e-12 or abs(row[col["ctl.y"]] - y) > 1e-12:
            fail(f"blocks: DiscretePI at {t}: x {row[col['ctl.x']]} y {row[col['ctl.y']]}, "
                 f"expected {x} and {y}")
        # DiscreteIntegrator: y0 = 1 grows by k T u = 0.2 a tick, ticks 0
        # to 9; `clear` holds at the tick at 1.0 alone, which resets it.
        acc = 1 + 0.2 * (n + 1) if n < 10 else 1 + 0.2 * (n - 10)
        if abs(row[col["acc.y"]] - acc) > 1e-12:
            fail(f"blocks: DiscreteIntegrator at {t}: {row[col['acc.y']]}, expected {acc}")
    # The hold and the delay read sin at tick times the run lands on to a
    # few ulps; the mean's integral is the integrator's (rtol 1e-6).
    print("blocks: worst " + ", ".join(f"{k} {v:.2g}" for k, v in worst.items()))
    if worst["hold.y"] > 1e-12 or worst["delay.y"] > 1e-12 or worst["mean.y"] > 1e-5:
        fail("blocks differ from their closed forms")


def main():
    hbgc, models = sys.argv[1], sys.argv[2]
    check_registers(hbgc, models)
    check_blocks(hbgc, models)
    check_buck(hbgc, models)
    # The same loop from the standard library's blocks: the duty applies
    # one period late, and the integral is the DiscretePI's x = xi / Kp.
    check_buck(hbgc, models, "buck_blocks", delay=1, xi_scale=0.005, Kp=0.005, Ki=50.0)


if __name__ == "__main__":
    main()
