#!/usr/bin/python3
"""check_ac.py HBGC: `hbgc ac` on the ideal buck of models/buck_ccm.hbg
against two independent references.

1. The averaged model's control-to-output transfer function
   Gvd(s) = Vin / (1 + s L / R + s^2 L C), which is exact where the
   switching ripple's sidebands do not reach: below fs / 20, the response
   to the duty must agree within 1 % in magnitude and 1 degree in phase.
2. Brute-force injection, computed here without hbg: the duty gets a
   small sinusoid at fm, each switching period's falling edge is where
   fs (t - k/fs) = D + eps sin(2 pi fm t) (brentq), the circuit's two
   linear modes are integrated exactly between edges (matrix
   exponentials) from the averaged operating point for 60 ms (thirty
   times the filter's 2 RC: what is left of the start-up is 1e-13 of
   it), and the output's
   Fourier coefficient c at fm over the next whole period of both fm and
   fs (Gauss-Legendre on the exact solution) gives the response 2j c /
   eps. At fs / 50, fs / 10 and fs / 3 it must agree with `hbgc ac`
   within 1 % (complex difference over magnitude). eps is 1e-4: the
   response to the duty is linear only in the limit, and at fs / 3 its
   second-order part, which the switching folds back onto fm, is about
   1.6 eps of it.
Exit 1 on any mismatch.
"""

import math
import os
import re
import subprocess
import sys

import numpy as np
from scipy.linalg import expm
from scipy.optimize import brentq

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "models", "buck_ccm.hbg")


def params(text):
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"parameter\s+(\w+)\s*=\s*([-+0-9.eE]+)\s*;", text)}


def read_csv(text):
    lines = [l for l in text.strip().split("\n") if l]
    head = lines[0].split(",")
    rows = np.array([[float(v) for v in l.split(",")] for l in lines[1:]])
    return head, rows


def ac(hbgc, freqs, extra=()):
    out = subprocess.run([hbgc, "ac", MODEL, "--input", "D", "--output", "vout",
                          "--freq", ",".join("%.17g" % f for f in freqs), *extra],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("hbgc ac failed:\n" + out.stderr)
    head, rows = read_csv(out.stdout)
    mag = rows[:, head.index("vout_magnitude")]
    phase = rows[:, head.index("vout_phase")]
    return mag * np.exp(1j * np.radians(phase))


def injected(Vin, L, C, R, fs, D, eps, fm, settle):
    """The response of vout at fm to a sinusoid eps sin(2 pi fm t) on the
    duty, from an exact piecewise simulation of the ideal buck in
    continuous conduction (states: coil current, capacitor voltage)."""
    # x' = A x + b per mode, as the augmented [[A, b], [0, 0]].
    on = np.array([[0, -1 / L, Vin / L], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
    off = np.array([[0, -1 / L, 0], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
    T = 1 / fs
    x = np.array([D * Vin / R, D * Vin, 1.0])  # near the operating point: no start-up in DCM
    nodes, weights = np.polynomial.legendre.leggauss(20)
    w = 2 * np.pi * fm
    window = round(fs / fm) * T if abs(fs / fm - round(fs / fm)) < 1e-9 else 3 * T
    settled = int(round(settle / T))
    periods = settled + int(round(window / T))
    coefficient = 0j
    for k in range(periods):
        t0 = k * T
        edge = brentq(lambda t: fs * (t - t0) - D - eps * math.sin(w * t), t0, t0 + T, xtol=1e-15, rtol=1e-15)
        for (a, b, mode) in ((t0, edge, on), (edge, t0 + T, off)):
            if k >= settled:
                # The exact solution at Gauss nodes of [a, b].
                for s_, wt in zip(nodes, weights):
                    tau = 0.5 * (a + b) + 0.5 * (b - a) * s_
                    v = (expm(mode * (tau - a)) @ x)[1]
                    coefficient += 0.5 * (b - a) * wt * v * np.exp(-1j * w * tau)
            x = expm(mode * (b - a)) @ x
            if x[0] < 0:
                sys.exit("the injected buck left continuous conduction")
    coefficient /= window
    return 2j * coefficient / eps


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    hbgc = sys.argv[1]
    text = open(MODEL).read()
    p = params(text)
    Vin, L, C, R, fs, D = p["Vin"], p["L"], p["C"], p["R"], p["fs"], p["D"]
    bad = 0

    # 1. The averaged model below fs / 20.
    freqs = np.logspace(1, math.log10(fs / 20), 25)
    H = ac(hbgc, freqs)
    s = 2j * np.pi * freqs
    G = Vin / (1 + s * L / R + s * s * L * C)
    print("averaged model, below fs/20 = %g Hz:" % (fs / 20))
    print("%12s %14s %14s %10s %10s %10s" % ("f", "|H| hbg", "|G| averaged", "dmag %", "phase hbg", "dphase"))
    for f, h, g in zip(freqs, H, G):
        dm = 100 * (abs(h) / abs(g) - 1)
        dp = math.degrees(np.angle(h / g))
        flag = abs(dm) > 1 or abs(dp) > 1
        bad += flag
        print("%12.6g %14.8g %14.8g %10.4f %10.4f %10.4f%s" % (f, abs(h), abs(g), dm, math.degrees(np.angle(h)), dp,
                                                          "  MISMATCH" if flag else ""))

    # 2. Brute-force injection on the duty, exactly piecewise.
    eps = 1e-4
    settle = 60e-3
    print("\nbrute-force injection (eps = %g on D = %g):" % (eps, D))
    print("%12s %26s %26s %10s" % ("fm", "hbg ac", "injected", "diff %"))
    for ratio in (50, 10, 3):
        fm = fs / ratio
        measured = injected(Vin, L, C, R, fs, D, eps, fm, settle)
        h = ac(hbgc, [fm])[0]
        diff = 100 * abs(h - measured) / abs(measured)
        flag = diff > 1
        bad += flag
        print("%12.6g %12.6g%+12.6gj %12.6g%+12.6gj %10.4f%s" % (fm, h.real, h.imag, measured.real, measured.imag,
                                                              diff, "  MISMATCH" if flag else ""))
    print("\n%s" % ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
