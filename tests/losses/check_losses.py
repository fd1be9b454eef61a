#!/usr/bin/python3
"""Mean powers and losses of hbgc against numbers computed without hbg.

    check_losses.py HBGC CASE [--rtol R]

CASE is one of:

  buck          models/lossy_buck.hbg under `hbgc steady --losses`: every
                element's mean power and the efficiency load.r / supply.s
                against the periodic steady state computed here from
                matrix exponentials per switch state (conduction losses
                R mean(i^2) per branch, Vf mean(i_diode));
  switched_cap  models/switched_cap.hbg under `hbgc steady --losses`: the
                loss at events against f C dV^2 / 2, the resistor's and
                the source's powers in closed form;
  rc_sine       models/rc_sine.hbg under `hbgc steady --losses`: the
                resistor's mean power against Vm^2 R / (2 |Z|^2);
  switched_cap_heat
                models/switched_cap_heat.hbg, the same with the resistor
                heating a thermal network: the same figures, and no
                thermal element listed (exactly these elements);
  rc_window     models/rc_charge.hbg under `hbgc run --window`: the
                resistor's and the source's mean powers over the window
                in closed form;
  rc_window_parallel
                the same with the capacitor split in two in parallel (one
                of them dependent storage, in a model without events).

Prints each figure with its reference and exits 1 when one differs by more
than the relative tolerance (of the largest power of the case).
"""

import csv
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import integrate, linalg

HERE = os.path.dirname(os.path.abspath(__file__))


def run_hbgc(hbgc, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "losses.csv")
        cmd = [hbgc] + args + ["--losses-csv", out, "-o", os.path.join(tmp, "rows.csv")]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("hbgc failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
        with open(out) as f:
            rows = list(csv.DictReader(f))
    return {r["element"]: float(r["mean_power"]) for r in rows}, p.stderr


def buck():
    Vin, D, fs, L, C, R = 12.0, 0.4, 20e3, 1e-3, 1e-4, 10.0
    Ron, Rd, Vf, RL = 0.1, 0.05, 0.7, 0.2
    T = 1 / fs
    # z = [iL, vC, 1]
    on = np.array([[-(Ron + RL) / L, -1 / L, Vin / L], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
    off = np.array([[-(Rd + RL) / L, -1 / L, -Vf / L], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
    t_on, t_off = D * T, (1 - D) * T
    M = linalg.expm(off * t_off) @ linalg.expm(on * t_on)
    x = np.linalg.solve(np.eye(2) - M[:2, :2], M[:2, 2])
    z0 = np.array([x[0], x[1], 1.0])
    z1 = linalg.expm(on * t_on) @ z0

    def integral(A, z, h, f):
        v, _ = integrate.quad_vec(lambda t: f(linalg.expm(A * t) @ z), 0, h, epsabs=0,
                                  epsrel=1e-13)
        return v

    sq = lambda z: np.array([z[0] ** 2, z[1] ** 2, z[0]])
    I_on, I_off = integral(on, z0, t_on, sq), integral(off, z1, t_off, sq)
    # The coil's current stays positive: the diode conducts all the off time.
    ts = np.linspace(0, t_off, 201)
    assert min((linalg.expm(off * t) @ z1)[0] for t in ts) > 0, "not in continuous conduction"
    ref = {
        "supply.s": Vin * I_on[2] / T,
        "ron.r": Ron * I_on[0] / T,
        "rd.r": Rd * I_off[0] / T,
        "diode.drop": -Vf * I_off[2] / T,
        "rl.r": RL * (I_on[0] + I_off[0]) / T,
        "load.r": (I_on[1] + I_off[1]) / (R * T),
        "events": 0.0,
    }
    return ref, ["steady", os.path.join(HERE, "models", "lossy_buck.hbg"),
                 "--efficiency", "load.r/supply.s"]


def switched_cap():
    V, C, R, f, D = 10.0, 1e-6, 1e3, 1e3, 0.5
    T, tau = 1 / f, R * C
    v1 = V * math.exp(-(1 - D) * T / tau)
    ref = {
        "events": f * C * (V - v1) ** 2 / 2,
        "r.r": f * (V ** 2 / R * D * T + C * (V ** 2 - v1 ** 2) / 2),
        "supply.s": f * (V ** 2 / R * D * T + V * C * (V - v1)),
    }
    return ref, ["steady", os.path.join(HERE, "models", "switched_cap.hbg")]


def switched_cap_heat():
    ref, _ = switched_cap()
    ref["gnd.zero"] = 0.0  # the ground's Se(0)
    return ref, ["steady", os.path.join(HERE, "models", "switched_cap_heat.hbg")]


def rc_sine():
    Vm, f, R, C = 5.0, 50.0, 100.0, 20e-6
    z2 = R ** 2 + 1 / (2 * math.pi * f * C) ** 2
    p = Vm ** 2 * R / (2 * z2)
    return {"r": p, "src": p, "events": 0.0}, [
        "steady", os.path.join(HERE, "models", "rc_sine.hbg")]


def rc_window(model="rc_charge.hbg"):
    V, R, C = 5.0, 1e3, 1e-3
    tau = R * C
    t0, t1 = 0.5, 2.0
    er = V ** 2 * tau * (math.exp(-2 * t0 / tau) - math.exp(-2 * t1 / tau)) / (2 * R)
    es = V ** 2 * C * (math.exp(-t0 / tau) - math.exp(-t1 / tau))
    return {"r": er / (t1 - t0), "src": es / (t1 - t0), "events": 0.0}, [
        "run", os.path.join(HERE, "models", model), "--t-end", "3",
        "--rtol", "1e-10", "--window", "%g:%g" % (t0, t1)]


CASES = {"buck": buck, "switched_cap": switched_cap, "switched_cap_heat": switched_cap_heat,
         "rc_sine": rc_sine,
         "rc_window": rc_window,
         "rc_window_parallel": lambda: rc_window("rc_charge_parallel.hbg")}


def main():
    args = sys.argv[1:]
    rtol = 1e-6
    if "--rtol" in args:
        i = args.index("--rtol")
        rtol = float(args[i + 1])
        del args[i:i + 2]
    hbgc, case = args
    ref, cmd = CASES[case]()
    got, report = run_hbgc(hbgc, cmd)
    scale = max(abs(v) for v in ref.values())
    bad = 0
    for name, want in ref.items():
        have = got.get(name)
        if have is None:
            print("%-12s missing from hbgc's CSV" % name)
            bad += 1
            continue
        err = abs(have - want) / scale
        flag = "" if err <= rtol else "   <-- differs"
        bad += err > rtol
        print("%-12s hbg %.12g  reference %.12g  error %.2e%s" % (name, have, want, err, flag))
    if case == "switched_cap_heat":
        extra = sorted(set(got) - set(ref))
        bad += bool(extra)
        print("elements beyond the reference's: %s" % (", ".join(extra) or "none"))
    if case == "buck":
        eff = ref["load.r"] / ref["supply.s"]
        line = [l for l in report.splitlines() if l.startswith("efficiency ")]
        have = float(line[0].split(": ")[1].split()[0]) if line else float("nan")
        err = abs(have - eff)
        bad += not err <= rtol
        print("%-12s hbg %.12g  reference %.12g  error %.2e" % ("efficiency", have, eff, err))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
