#!/usr/bin/python3
"""The electrical and thermal components of stdlib/ against exact solutions.

    check_electrical.py HBGC CASE [--lib-path DIR] [--keep DIR]
        Runs `HBGC run models/<model>.hbg -o out.csv --events ev.csv` at the
        model's defaults (the case's parameter overrides aside) and compares
        every output row with the case's reference, independent of hbg:
        - the switching circuits (reference.py): the exact piecewise
          solution, expm of each mode's linear system, its switching
          instants by root finding;
        - the heated resistor: the closed form (alpha = 0) or scipy's
          DOP853 at rtol 1e-12 (alpha != 0);
        - MSL's HeatingRectifier: the published MSL v4.0.0 reference
          result (Dymola, Dassl at tolerance 1e-6) and a scipy solution of
          the same equations at rtol 1e-12.
        Each output's worst error is printed, relative to its peak (or in
        its own unit where a case says so). Rows at a switching instant
        may take either side's value, and rows within the case's time
        tolerance of a reference event either side's value there. Every
        switching event of the reference must be an event of the run
        (within that tolerance), and the run must print no warning. Exit 1
        on any mismatch.

    check_electrical.py --self-test
        Checks reference.py against closed forms: the classic thyristor
        on an RL load, and the resistive rectifier's formula.
"""

import csv
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import integrate

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import reference as refmod  # noqa: E402

PI = math.pi


def read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array([[float(x) for x in r] for r in rows[1:]])


def event_times(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return sorted(set(float(r["time"]) for r in rows))


# ---------------------------------------------------------------- the cases
#
# Each case: the model, its parameter overrides, and a function of the
# overrides giving (ref(t, side) -> {output: value}, reference events, time
# breakpoints that hbg may also log as events, tolerance per output (of the
# peak), tolerance on event times).


def diode_rectifier(p):
    """Closed form: no storage. Off: i = Goff v, so i = Goff Vs / (1 + RL
    Goff); on: v = Vk + Ron (i - Goff Vk), so i = (Vs - Vk + Ron Goff Vk) /
    (Ron + RL). Both switch where Vs = Vk (1 + RL Goff)."""
    Vm, f, RL = 10.0, 50.0, 100.0
    Ron, Goff, Vk = p.get("d.Ron", 0.5), p.get("d.Goff", 1e-3), 0.6
    w = 2 * PI * f
    th = Vk * (1 + RL * Goff)
    t1 = math.asin(th / Vm) / w
    t2 = (PI - math.asin(th / Vm)) / w
    events = [k / f + t for k in range(2) for t in (t1, t2)]

    def ref(t, side):
        vs = Vm * math.sin(w * t)
        ph = (t % (1 / f))
        on = t1 < ph < t2 or (side < 0 and ph == t2) or (side > 0 and ph == t1)
        i = (vs - Vk + Ron * Goff * Vk) / (Ron + RL) if on else Goff * vs / (1 + RL * Goff)
        vd = vs - RL * i
        return {"vd": vd, "i": i, "heat": vd * i}
    return ref, events, [], 1e-9, 1e-12


def traj_case(build, t_end, breakpoints, period, outputs, x0=None):
    """A reference from reference.Trajectory; outputs(e, cur, x, t) -> dict."""
    circ = build()
    # a little past t_end, so that a gate's switching at t_end is an event
    tr = refmod.Trajectory(circ, x0 if x0 is not None else np.zeros(circ.nx),
                           t_end + period / 1000, breakpoints, period)

    def ref(t, side):
        e, cur, x, mode = tr.values(t, side)
        return outputs(e, cur, x, t)
    ref.trajectory = tr
    return ref, [ev[0] for ev in tr.events], tr


def diode_rc_rectifier(p):
    Vm, f = 10.0, 50.0

    def build():
        c = refmod.Circuit(2 * PI * f)
        c.source("a", sin=Vm)
        c.device("d", "a", "b", "diode", Ron=0.2, Goff=1e-4, Vknee=0.7)
        c.capacitor("c", "b", 100e-6)
        c.resistor("load", "b", "gnd", 500.0)
        return c

    def out(e, cur, x, t):
        vd = e["a"] - e["b"]
        return {"vc": x["c"], "i": cur["d"], "heat": vd * cur["d"]}
    ref, events, _ = traj_case(build, 0.1, [], 1 / f, out)
    # Conducting, the diode's current is (vs - vc - Vknee) / Ron, roughly:
    # the capacitor's error at the default tolerance (rtol 1e-6 of 10 V)
    # divided by Ron = 0.2, 5e-5 A; its zero crossing past the crest moves
    # by that over its slope, (vs' - vc') / Ron = (-205 + 186) / 0.2 =
    # -95 A/s: 5e-7 s.
    return ref, events, [], {None: 2e-5, "i": 5e-4, "heat": 5e-4}, 1e-6


def pulses(t0, width, period, t_end):
    """The fire signal pulse(t0, width, period) and its switching times."""
    def fire(t):
        return 1.0 if t >= t0 and (t - t0) % period < width else 0.0
    bps = []
    k = 0
    while t0 + k * period < t_end + period:
        bps += [t0 + k * period, t0 + k * period + width]
        k += 1
    return fire, bps


def thyristor_r(p):
    Vm, f, alpha = 100.0, 50.0, PI / 3
    fire, bps = pulses(alpha / (2 * PI * f), 1e-3, 1 / f, 0.06)

    def build():
        c = refmod.Circuit(2 * PI * f)
        c.source("a", sin=Vm)
        c.device("th", "a", "b", "thyristor", Vknee=1.0, fire=fire)
        c.resistor("load", "b", "gnd", 10.0)
        return c

    def out(e, cur, x, t):
        vt = e["a"] - e["b"]
        return {"vt": vt, "i": cur["th"], "heat": vt * cur["th"]}
    ref, events, _ = traj_case(build, 0.06, bps, 1 / f, out)
    return ref, events, bps, 1e-8, 1e-10


def thyristor_rl_circuit(fire, Ron=1e-5, Goff=1e-5):
    def build():
        c = refmod.Circuit(2 * PI * 50.0)
        c.source("a", sin=100.0)
        c.device("th", "a", "b", "thyristor", Ron=Ron, Goff=Goff, fire=fire)
        c.resistor("load", "b", "m", 10.0)
        c.inductor("coil", "m", "gnd", 0.05)
        return c
    return build


def thyristor_rl(p):
    f, alpha = 50.0, PI / 4
    fire, bps = pulses(alpha / (2 * PI * f), 1e-3, 1 / f, 0.06)

    def out(e, cur, x, t):
        vt = e["a"] - e["b"]
        return {"vt": vt, "i": x["coil"], "heat": vt * cur["th"]}
    ref, events, tr = traj_case(thyristor_rl_circuit(fire), 0.06, bps, 1 / f, out)
    # conduction past the voltage's zero: each turn-off after the half period
    offs = [t for t, a, b in tr.events if a[0] and not b[0]]
    assert offs and all((t % (1 / f)) > 0.5 / f for t in offs), offs
    # Blocking in series with the coil, the thyristor's voltage is the
    # coil's leakage current over Goff = 1e-5: the coil's tolerance (rtol
    # 1e-6 of its ~5 A scale) times 1e5 V/A.
    return ref, events, bps, {None: 1e-5, "vt": 1e-2, "heat": 1e-2}, 1e-8


def gto_freewheel(p):
    f, alpha, beta = 50.0, PI / 6, 2 * PI / 3
    w = 2 * PI * f
    fire, bps = pulses(alpha / w, (beta - alpha) / w, 1 / f, 0.06)

    def build():
        c = refmod.Circuit(w)
        c.source("a", sin=100.0)
        c.device("gto", "a", "b", "gto", fire=fire)
        c.device("fw", "gnd", "b", "diode", Vknee=0.8, Ron=1e-3)
        c.resistor("load", "b", "m", 5.0)
        c.inductor("coil", "m", "gnd", 0.02)
        return c

    def out(e, cur, x, t):
        return {"i": x["coil"], "igto": cur["gto"], "ifw": cur["fw"], "vb": e["b"],
                "heat": (e["a"] - e["b"]) * cur["gto"] + (0 - e["b"]) * cur["fw"]}
    ref, events, _ = traj_case(build, 0.06, bps, 1 / f, out)
    # vb, blocked on both sides, is set by the leakage currents alone
    return ref, events, bps, {None: 1e-5, "vb": 5e-5}, 1e-8


def half_bridge(kind, Vdc, gates, devs, L, R, vload, t_end, period, bps, C_sink, T0):
    """A half bridge of two switches (IGBT: a GTO; MOSFET: a switch) with
    antiparallel diodes, an RL load from the middle to a node at vload, and
    the four devices' losses heating a heat capacitor C_sink from T0."""
    devices = []
    def build():
        c = refmod.Circuit(0.0)
        c.source("bus", dc=Vdc)
        if vload:
            c.source("hv", dc=vload)
        for name, hi, lo, gate in (("hi", "bus", "mid", gates[0]), ("lo", "mid", "gnd", gates[1])):
            sw, dd = devs
            devices.append(c.device(name + ".sw", hi, lo, kind, fire=gate, **sw))
            devices.append(c.device(name + ".d", lo, hi, "diode", **dd))
        c.inductor("coil", "mid", "m2", L)
        c.resistor("load", "m2", "hv" if vload else "gnd", R)
        return c
    def loss(e, cur, x):
        return sum((e[d.a] - e[d.b]) * cur[d.name] for d in devices)

    def out(e, cur, x, t):
        o = {"i": x["coil"], "vmid": e["mid"],
             "Tsink": T0 + ref.trajectory.integral(loss, t) / C_sink}
        for n in ("hi", "lo"):
            o["i" + n] = cur[n + ".sw"] - cur[n + ".d"]
        return o
    ref, events, tr = traj_case(build, t_end, bps, period, out)
    return ref, events, tr


def igbt_buck(p):
    Vdc, fs, D = 100.0, 2000.0, 0.4
    gate, bps = pulses(0.0, D / fs, 1 / fs, 0.01)
    ref, events, tr = half_bridge("gto", Vdc, (gate, lambda t: 0.0),
                                  (dict(Vknee=1.5, Ron=0.02), dict(Vknee=0.9, Ron=0.01)),
                                  5e-3, 4.0, 0.0, 0.01, 1 / fs, bps, 50.0, 300.0)
    return ref, events, bps, {None: 1e-5, "Tsink": 1e-6}, 1e-8


def mosfet_bridge(p):
    Vdc, fs, D, td = 48.0, 1000.0, 0.5, 2e-5
    ghi, b1 = pulses(0.0, D / fs, 1 / fs, 0.005)
    glo, b2 = pulses(D / fs + td, (1 - D) / fs - 2 * td, 1 / fs, 0.005)
    bps = sorted(b1 + b2)
    ref, events, tr = half_bridge("switch", Vdc, (ghi, glo),
                                  (dict(Ron=0.05), dict(Vknee=0.7, Ron=0.02)),
                                  2e-3, 1.0, Vdc / 2, 0.005, 1 / fs, bps, 10.0, 300.0)
    # the load current reverses, and both ways of conduction occur
    i = [tr.values(t)[2]["coil"] for t in np.linspace(0, 0.005, 501)]
    assert min(i) < -1 and max(i) > 1, (min(i), max(i))
    return ref, events, bps, {None: 1e-5, "Tsink": 1e-6}, 1e-8


def heating_resistor(p):
    """C dT/dt = V^2 / (R_ref (1 + alpha (T - T_ref))) - G (T - Ta). With
    alpha = 0 the closed form Ta + P / G + (T0 - Ta - P / G) exp(-G t / C);
    otherwise scipy's DOP853 at rtol 1e-12."""
    V, R_ref, T_ref = p.get("V", 10.0), 10.0, 300.15
    alpha = p.get("r.alpha", 0.0)
    C, G, T0, Ta = 100.0, 0.5, 293.15, 293.15
    if alpha == 0:
        P = V * V / R_ref

        def temp(t):
            return Ta + P / G + (T0 - Ta - P / G) * math.exp(-G * t / C)
    else:
        sol = integrate.solve_ivp(
            lambda t, T: [(V * V / (R_ref * (1 + alpha * (T[0] - T_ref))) - G * (T[0] - Ta)) / C],
            (0, 1000), [T0], method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)

        def temp(t):
            return float(sol.sol(t)[0])

    def ref(t, side):
        T = temp(t)
        R = R_ref * (1 + alpha * (T - T_ref))
        return {"T": T, "i": V / R, "Ra": R}
    # The default tolerance holds the absolute temperature (the state is
    # U = C T) to about rtol T, 1e-6 of 300 K, whatever the rise: 2 rtol T
    # = 0.6 mK. The mK case (a 2 mK rise) comes within 0.45 mK of it.
    return ref, [], [], {None: 1e-5, "T": 6e-4}, 0.0


def thermal_network(p):
    """C1 dT1/dt = Q step(10) - (T1 - T2) / R; C2 dT2/dt = (T1 - T2) / R -
    Gc(t) (T2 - Ta), Gc = 4 + 2 sin(0.01 t): scipy's DOP853 at rtol 1e-12,
    restarted at the heater's step."""
    C1, C2, R, Ta, Q = 100.0, 200.0, 0.5, 293.15, 50.0
    Gc = lambda t: 4 + 2 * math.sin(0.01 * t)

    def rhs(q):
        return lambda t, y: [(q - (y[0] - y[1]) / R) / C1,
                             ((y[0] - y[1]) / R - Gc(t) * (y[1] - Ta)) / C2]
    a = integrate.solve_ivp(rhs(0.0), (0, 10), [293.15, 300.0], method="DOP853", rtol=1e-12,
                            atol=1e-12, dense_output=True)
    b = integrate.solve_ivp(rhs(Q), (10, 1000), a.y[:, -1], method="DOP853", rtol=1e-12,
                            atol=1e-12, dense_output=True)

    def ref(t, side):
        T1, T2 = (a.sol(t) if t < 10 or (t == 10 and side < 0) else b.sol(t))
        return {"T1": T1, "T2": T2, "q_link": (T1 - T2) / R, "q_amb": Gc(t) * (T2 - Ta)}
    # Temperatures to 2 rtol T (0.6 mK, as for the heated resistor); the
    # heat flows are differences of temperatures, so to 1.2 mK over R
    # (2.4e-3 W of 55 W), and 0.6 mK times Gc <= 6 W/K (3.6e-3 W of 66 W).
    return ref, [], [10.0], {None: 1e-5, "T1": 6e-4, "T2": 6e-4, "q_link": 5e-5,
                             "q_amb": 6e-5}, 1e-12


# MSL's HeatingRectifier: the diode's law (Semiconductors.Diode with
# useTemperatureDependency, MSL 4.0.0's constants k and q) and the circuit.
HR = dict(Ids=1e-6, Maxexp=15.0, Rp=1e8, EG=1.11, N=1.0, TNOM=300.15, XTI=3.0,
          C=1.0, R=1.0, G=10.0, Ch=1.0, T0=293.15, k=1.380649e-23, q=1.602176634e-19)


def hr_current(v, T):
    h = HR
    vt = h["k"] * T / h["q"]
    x = v / (h["N"] * vt)
    ex = math.exp(h["Maxexp"]) * (1 + x - h["Maxexp"]) if x > h["Maxexp"] else math.exp(x)
    return (h["Ids"] * (ex - 1) * (T / h["TNOM"]) ** (h["XTI"] / h["N"])
            * math.exp((T / h["TNOM"] - 1) * h["EG"] / (h["N"] * vt)) + v / h["Rp"])


def hr_diode(t, vc, Tc):
    """The diode's voltage, temperature and current: its heat port's
    temperature Td = Tc + v i(v, Td) / G, solved by brentq."""
    from scipy import optimize
    v = math.sin(2 * PI * t) - vc
    g = lambda Td: Td - Tc - v * hr_current(v, Td) / HR["G"]
    hi = Tc + 1.0
    while g(hi) < 0:
        hi = Tc + 2 * (hi - Tc)
    Td = optimize.brentq(g, Tc - 1e-9, hi, xtol=1e-13, rtol=1e-15)
    return v, Td, hr_current(v, Td)


def heating_rectifier_scipy():
    """The same equations by scipy's DOP853 at rtol 1e-12, and the instants
    where the diode's exponent crosses Maxexp (its law's branch changes;
    value and slope are continuous there, and the error control sees the
    kink) by brentq on the dense output."""
    from scipy import optimize
    h = HR

    def rhs(t, y):
        v, Td, i = hr_diode(t, y[0], y[1])
        return [(i - y[0] / h["R"]) / h["C"], h["G"] * (Td - y[1]) / h["Ch"]]

    def exponent(t):
        vc, Tc = sol.sol(t)
        v, Td, i = hr_diode(t, vc, Tc)
        return v / (h["N"] * h["k"] * Td / h["q"]) - h["Maxexp"]
    sol = integrate.solve_ivp(rhs, (0, 5), [0.0, h["T0"]], method="DOP853", rtol=1e-12,
                              atol=1e-15, dense_output=True)
    assert sol.status == 0, sol.message
    grid = np.linspace(0, 5, 5001)
    x = [exponent(t) for t in grid]
    events = [optimize.brentq(exponent, a, b, xtol=1e-15)
              for a, b, xa, xb in zip(grid[:-1], grid[1:], x[:-1], x[1:]) if (xa > 0) != (xb > 0)]
    return (lambda t: sol.sol(t)), events


def heating_rectifier(p):
    at, events = heating_rectifier_scipy()

    def ref(t, side):
        vc, Tc = at(t)
        v, Td, i = hr_diode(t, vc, Tc)
        return {"vc": vc, "T": Tc, "Tdiode": Td, "i": i}
    return ref, events, [], {None: 2e-5, "T": 1e-4, "Tdiode": 1e-4}, 1e-5


def compare_msl(data, names):
    """hbg's rows on the reference's grid against MSL's published result."""
    path = os.path.join(HERE, "Inputs", "HeatingRectifier_MSL4.0.0.csv")
    with open(path) as fh:
        rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))]
    msl = {round(float(r[0]), 6): (float(r[1]), float(r[2])) for r in rows[1:]}
    worst = [0.0, 0.0]
    n = 0
    for row in data:
        key = round(row[0], 6)
        if key not in msl or abs(row[0] - key) > 1e-12:
            continue
        n += 1
        worst[0] = max(worst[0], abs(row[names.index("vc") + 1] - msl[key][0]))
        worst[1] = max(worst[1], abs(row[names.index("T") + 1] - msl[key][1]))
    # Dymola's result is accurate to its own tolerance (1e-6, relative)
    ok = n >= 500 and worst[0] < 1e-4 and worst[1] < 1e-4
    print("against MSL 4.0.0's reference result (Dymola 2020x, Dassl, tolerance 1e-6), %d rows:" % n)
    print("  capacitor voltage: worst error %.3e V; heat capacitor temperature: %.3e K (tolerance 1e-4)"
          % tuple(worst))
    if not ok:
        print("FAIL: hbg and MSL's reference result disagree")
    return ok


CASES = {
    "diode_rectifier": ("diode_rectifier", {}, diode_rectifier),
    "diode_rectifier_ideal": ("diode_rectifier", {"d.Ron": 0.0, "d.Goff": 0.0}, diode_rectifier),
    "diode_rc_rectifier": ("diode_rc_rectifier", {}, diode_rc_rectifier),
    "thyristor_r": ("thyristor_r", {}, thyristor_r),
    "thyristor_rl": ("thyristor_rl", {}, thyristor_rl),
    "gto_freewheel": ("gto_freewheel", {}, gto_freewheel),
    "igbt_buck": ("igbt_buck", {}, igbt_buck),
    "mosfet_bridge": ("mosfet_bridge", {}, mosfet_bridge),
    "heating_resistor": ("heating_resistor", {}, heating_resistor),
    "heating_resistor_alpha": ("heating_resistor", {"r.alpha": 0.004}, heating_resistor),
    "heating_resistor_mK": ("heating_resistor", {"V": 0.1}, heating_resistor),
    "heating_rectifier": ("heating_rectifier", {}, heating_rectifier),
    "thermal_network": ("thermal_network", {}, thermal_network),
}


# ------------------------------------------------------------ the comparison

def run_hbgc(hbgc, model, params, libpath, workdir, extra=()):
    cmd = [hbgc, "run", model, "-o", "out.csv", "--events", "ev.csv", "-q"]
    for k, v in params.items():
        cmd += ["-p", "%s=%r" % (k, v)]
    if libpath:
        cmd += ["--lib-path", libpath]
    cmd += list(extra)
    print("$ " + " ".join(cmd) + "   (in %s)" % workdir)
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    ok = proc.returncode == 0
    if proc.stderr.strip():
        print(proc.stderr.rstrip())
        if "warning" in proc.stderr:
            print("FAIL: hbgc warned")
            ok = False
    if proc.returncode != 0:
        print("FAIL: hbgc run exited with %d" % proc.returncode)
    return ok


def tolerance(rtol, name):
    """A case's tolerance: one for all outputs, or a dict with a default
    under None."""
    return rtol.get(name, rtol[None]) if isinstance(rtol, dict) else rtol


def compare(names, data, ref, ref_events, breakpoints, rtol, tol_t, hbg_events):
    """Every row against the reference; the events both ways."""
    ok = True
    times = data[:, 0]
    refs = [ref(t, -1) for t in times]
    # an absolute temperature (an output named T...) is judged in K, not
    # against its ~300 K
    peak = {n: 1.0 if n.startswith("T") else max(max(abs(r[n]) for r in refs), 1e-300)
            for n in names}
    worst = {n: (0.0, None) for n in names}
    bad = 0
    for row, t, r in zip(data, times, refs):
        cands = [r, ref(t, +1)]
        for te in ref_events:
            if abs(t - te) <= tol_t:
                cands += [ref(te, -1), ref(te, +1)]
        for k, n in enumerate(names):
            err = min(abs(row[k + 1] - c[n]) for c in cands) / peak[n]
            if err > worst[n][0]:
                worst[n] = (err, t)
            if err > tolerance(rtol, n):
                bad += 1
                if bad <= 10:
                    print("  row t=%.17g %s: hbg %.17g, reference %.17g (error %.3g)"
                          % (t, n, row[k + 1], cands[0][n], err))
    if bad:
        print("FAIL: %d values beyond their tolerance" % bad)
        ok = False
    print("%-8s %12s %14s %10s %12s" % ("output", "peak", "worst error", "tolerance", "at t"))
    print("(temperatures T...: errors in K)")
    for n in names:
        print("%-8s %12.6g %14.3e %10.1e %12.6g"
              % (n, peak[n], worst[n][0], tolerance(rtol, n), worst[n][1] or 0.0))

    # events: each of the reference's is one of the run's, and each of the
    # run's is one of the reference's or a gate signal's breakpoint
    worst_t = 0.0
    t_end = times[-1]
    for te in ref_events:
        if te > t_end:
            continue
        d = min((abs(te - th) for th in hbg_events), default=math.inf)
        worst_t = max(worst_t, d)
        if d > tol_t:
            print("FAIL: reference event at t=%.17g missing from the run (nearest %.3g away)" % (te, d))
            ok = False
    for th in hbg_events:
        d = min((abs(te - th) for te in list(ref_events) + list(breakpoints)), default=math.inf)
        if d > tol_t:
            print("FAIL: the run has an event at t=%.17g that the reference has not" % th)
            ok = False
    print("events: %d in the reference, %d in the run; worst time error %.3e s (tolerance %.1e)"
          % (len([te for te in ref_events if te <= t_end]), len(hbg_events), worst_t, tol_t))
    return ok


def check_case(hbgc, name, libpath, keep):
    model, params, fn = CASES[name]
    workdir = keep or tempfile.mkdtemp(prefix="hbg-electrical-")
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(HERE, "models", model + ".hbg")
    if not run_hbgc(hbgc, path, params, libpath, workdir):
        return False
    header, data = read_csv(os.path.join(workdir, "out.csv"))
    hbg_events = event_times(os.path.join(workdir, "ev.csv"))
    ref, ref_events, bps, rtol, tol_t = fn(params)
    print("case %s: %d rows; errors relative to each output's peak" % (name, len(data)))
    ok = compare(header[1:], data, ref, ref_events, bps, rtol, tol_t, hbg_events)
    if name == "heating_rectifier":
        ok &= compare_msl(data, header[1:])
    return ok


# ------------------------------------------------------------- self-test

def self_test():
    """reference.py against closed forms."""
    ok = True
    # The classic thyristor on an RL load, fired at alpha, nearly ideal:
    # i = Vm / Z (sin(w t - phi) - sin(alpha - phi) exp(-(w t - alpha) / tan(phi))).
    f, alpha, R, L, Vm = 50.0, PI / 4, 10.0, 0.05, 100.0
    w = 2 * PI * f
    fire, bps = pulses(alpha / w, 1e-3, 1 / f, 0.02)
    build = thyristor_rl_circuit(fire, Ron=1e-12, Goff=1e-12)
    tr = refmod.Trajectory(build(), [0.0], 0.02, bps, 1 / f)
    Z, phi = math.hypot(R, w * L), math.atan2(w * L, R)

    def classic(t):
        if t < alpha / w:
            return 0.0
        v = Vm / Z * (math.sin(w * t - phi) - math.sin(alpha - phi) * math.exp(-(w * t - alpha) / math.tan(phi)))
        return max(v, 0.0)
    err = max(abs(tr.values(t)[2]["coil"] - classic(t)) for t in np.linspace(0, 0.02, 2001))
    beta = [t for t, a, b in tr.events if a[0] and not b[0]][0] * w
    beta_exact = alpha + optimize_root(lambda x: classic((alpha + x) / w) if x < 1 else
                                       Vm / Z * (math.sin(alpha + x - phi) - math.sin(alpha - phi)
                                                 * math.exp(-x / math.tan(phi))), 1.0, 2 * PI - 0.1)
    print("self-test: thyristor on RL against the classic closed form: current %.3e A, "
          "extinction angle %.3e rad" % (err, abs(beta - beta_exact)))
    ok &= err < 1e-8 and abs(beta - beta_exact) < 1e-8

    # The resistive rectifier: the engine against the closed form.
    ref, events, _, _, _ = diode_rectifier({})

    def build2():
        c = refmod.Circuit(2 * PI * 50)
        c.source("a", sin=10.0)
        c.device("d", "a", "b", "diode", Ron=0.5, Goff=1e-3, Vknee=0.6)
        c.resistor("load", "b", "gnd", 100.0)
        return c
    tr2 = refmod.Trajectory(build2(), [], 0.04, [], 0.02)
    err2 = max(abs(tr2.values(t)[1]["d"] - ref(t, 1)["i"]) for t in np.linspace(0, 0.04, 999))
    errt = max(abs(a - b[0]) for a, b in zip(events, tr2.events))
    print("self-test: resistive rectifier, engine against closed form: current %.3e A, "
          "event times %.3e s" % (err2, errt))
    ok &= err2 < 1e-12 and errt < 1e-13 and len(events) == len(tr2.events)
    print("OK" if ok else "FAIL")
    return ok


def optimize_root(fn, a, b):
    from scipy import optimize
    return optimize.brentq(fn, a, b, xtol=1e-15)


def main(argv):
    if argv[:1] == ["--self-test"]:
        return 0 if self_test() else 1
    hbgc, name = argv[0], argv[1]
    libpath = keep = None
    rest = argv[2:]
    while rest:
        if rest[0] == "--lib-path":
            libpath, rest = rest[1], rest[2:]
        elif rest[0] == "--keep":
            keep, rest = rest[1], rest[2:]
        else:
            print("unknown argument %s" % rest[0])
            return 2
    if name not in CASES:
        print("unknown case %s; cases: %s" % (name, ", ".join(CASES)))
        return 2
    ok = check_case(hbgc, name, libpath, keep)
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
