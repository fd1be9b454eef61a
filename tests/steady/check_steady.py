#!/usr/bin/python3
"""Compare `hbgc steady` with the exact periodic steady states of reference.py.

    check_steady.py HBGC MODEL.hbg NAME [--rtol R] [--keep DIR] [-- EXTRA...]
        Runs `HBGC steady MODEL.hbg -o period.csv --stats stats.csv EXTRA...`
        in a temporary directory and compares:
        - stats.csv (header `output,mean,rms,min,max,peak_to_peak`): each
          figure within R (default 1e-8) of the output's peak magnitude;
        - period.csv (header `time,<outputs>`, time over [0, T], a row
          before and a row after each event): every row against the exact
          solution at its time (at an event: either side's value), its
          span against the period, and each event of the reference
          against a doubled row.
        Exit 1 on any mismatch.

    check_steady.py --transient HBGC MODEL.hbg NAME [--periods N] [--rtol R]
        Runs `HBGC run` from the model's initial state for N periods at
        default options and compares the rows of the last period with the
        exact steady state (a report; exit 1 beyond R, default 1e-4).

    check_steady.py --self-test [NAME...]
        Checks reference.py against a brute-force transient of its own:
        scipy's solve_ivp (DOP853, tolerances 1e-12) with the switches and
        diodes as events, from the model's initial state over many periods;
        the last period against the reference's values and statistics.
        Independent of hbg.
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
import reference as refmod  # noqa: E402

FIGURES = ["mean", "rms", "min", "max", "peak_to_peak"]


def peak(ref, name):
    s = ref.stats()[name]
    return max(abs(s["min"]), abs(s["max"]), 1e-300)


def read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def compare_rows(ref, names, times, values, rtol, label):
    """Every row against the exact solution; returns (ok, worst per output)."""
    T = ref.period
    bps = ref.breakpoints() + list(ref.events)
    tol_t = max(10 * rtol, 1e-9) * T
    worst = {n: (0.0, None) for n in names}
    bad = 0
    for t, row in zip(times, values):
        cands = list(ref.eval_both(t))
        for bp in bps:
            if abs(t - bp) <= tol_t:
                cands += list(ref.eval_both(bp))
        for k, n in enumerate(names):
            j = ref.outputs.index(n)
            err = min(abs(row[k] - c[j]) for c in cands) / peak(ref, n)
            if err > worst[n][0]:
                worst[n] = (err, t)
            if err > rtol:
                bad += 1
                if bad <= 10:
                    print("  %s row t=%.17g %s: hbg %.17g, reference %s (error %.3g of peak)"
                          % (label, t, n, row[k], " / ".join("%.17g" % c[j] for c in cands[:2]), err))
    if bad > 10:
        print("  ... %d mismatching values in all" % bad)
    return bad == 0, worst


def check_steady(hbgc, model, name, rtol, keep, extra):
    ref = refmod.reference(name)
    check_parameters(model, name)
    T = ref.period
    ok = True
    workdir = keep or tempfile.mkdtemp(prefix="hbg-steady-")
    os.makedirs(workdir, exist_ok=True)
    cmd = [hbgc, "steady", os.path.abspath(model), "-o", "period.csv", "--stats", "stats.csv"] + extra
    print("$ " + " ".join(cmd) + "   (in %s)" % workdir)
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if proc.stdout.strip():
        print(proc.stdout.rstrip())
    if proc.stderr.strip():
        print(proc.stderr.rstrip())
    if proc.returncode != 0:
        print("FAIL: hbgc steady exited with %d" % proc.returncode)
        return False

    # --- stats.csv
    header, rows = read_csv(os.path.join(workdir, "stats.csv"))
    if header != ["output"] + FIGURES:
        print("FAIL: stats.csv header %r, expected %r" % (header, ["output"] + FIGURES))
        return False
    got = {r[0]: [float(x) for x in r[1:]] for r in rows}
    print("\nmodel %s, period %.17g s; stats (tolerance %.1e of each output's peak)" % (name, T, rtol))
    print("%-8s %-13s %24s %24s %10s" % ("output", "figure", "hbg", "reference", "err/peak"))
    worst_stat = (0.0, "")
    for n in ref.outputs:
        if n not in got:
            print("FAIL: output %s missing from stats.csv" % n)
            ok = False
            continue
        s = ref.stats()[n]
        for k, fig in enumerate(FIGURES):
            err = abs(got[n][k] - s[fig]) / peak(ref, n)
            flag = "" if err <= rtol else "  MISMATCH"
            ok &= err <= rtol
            if err >= worst_stat[0]:
                worst_stat = (err, "%s %s" % (n, fig))
            print("%-8s %-13s %24.17g %24.17g %10.2e%s" % (n, fig, got[n][k], s[fig], err, flag))
    for n in got:
        if n not in ref.outputs:
            print("note: stats.csv has an output %s the reference does not know" % n)

    # --- period.csv
    header, rows = read_csv(os.path.join(workdir, "period.csv"))
    if not header or header[0] != "time":
        print("FAIL: period.csv header %r does not start with `time`" % header)
        return False
    names = [h for h in header[1:] if h in ref.outputs]
    missing = [n for n in ref.outputs if n not in header]
    if missing:
        print("FAIL: period.csv lacks outputs %s" % missing)
        ok = False
    cols = [header.index(n) for n in names]
    times = np.array([float(r[0]) for r in rows])
    values = np.array([[float(r[c]) for c in cols] for r in rows])
    tol_t = max(10 * rtol, 1e-9) * T
    print("\nperiod.csv: %d rows, time %.17g .. %.17g" % (len(rows), times[0], times[-1]))
    if abs(times[0]) > tol_t or abs(times[-1] - T) > tol_t:
        print("FAIL: the rows do not cover [0, T] = [0, %.17g]" % T)
        ok = False
    if np.any(np.diff(times) < 0):
        print("FAIL: period.csv times decrease")
        ok = False
    rows_ok, worst = compare_rows(ref, names, times, values, rtol, "period.csv")
    ok &= rows_ok
    for n in names:
        print("  %-6s worst row error %.2e of peak %.6g (at t = %s)"
              % (n, worst[n][0], peak(ref, n), "%.17g" % worst[n][1] if worst[n][1] is not None else "-"))

    # --- events: doubled rows
    doubled = sorted(set(times[1:][np.diff(times) == 0]))
    print("  doubled rows (events) at: %s" % ", ".join("%.17g" % t for t in doubled))
    for te in ref.events:
        near = [t for t in doubled if abs(t - te) <= tol_t]
        if not near:
            print("FAIL: no event row near the reference's event at t = %.17g" % te)
            ok = False
        else:
            print("  event t = %.17g: hbg %.17g (difference %.2e of T)"
                  % (te, near[0], abs(near[0] - te) / T))
    for t in doubled:
        if t > tol_t and t < T - tol_t and not any(abs(t - te) <= tol_t for te in ref.events):
            print("  warning: an event at t = %.17g that the reference does not have" % t)

    print("\nworst stats error: %.2e of peak (%s)" % worst_stat)
    print("%s: %s" % ("PASS" if ok else "FAIL", name))
    return ok


def check_parameters(model, name):
    got = refmod.model_parameters(model)
    for k, v in refmod.PARAMS[name].items():
        if k not in got:
            raise SystemExit("model %s has no numeric parameter %s (reference assumes %g)" % (model, k, v))
        if got[k] != v:
            raise SystemExit("model %s: parameter %s = %g, the reference assumes %g" % (model, k, got[k], v))


# ---------------------------------------------------------------- transient

def check_transient(hbgc, model, name, periods, rtol):
    ref = refmod.reference(name)
    check_parameters(model, name)
    T = ref.period
    with tempfile.TemporaryDirectory(prefix="hbg-transient-") as d:
        out = os.path.join(d, "run.csv")
        n_out = periods * 200
        cmd = [hbgc, "run", os.path.abspath(model), "--t-end", repr(periods * T),
               "--dt-out", repr(periods * T / n_out), "-o", out, "-q"]
        print("$ " + " ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr)
            print("FAIL: hbgc run exited with %d" % proc.returncode)
            return False
        header, rows = read_csv(out)
    names = [h for h in header[1:] if h in ref.outputs]
    cols = [header.index(n) for n in names]
    t0 = (periods - 1) * T
    sel = [r for r in rows if float(r[0]) >= t0 - 1e-9 * T]
    times = np.array([float(r[0]) - t0 for r in sel])
    values = np.array([[float(r[c]) for c in cols] for r in sel])
    print("last period: %d rows from t = %.17g" % (len(sel), t0))
    ok, worst = compare_rows(ref, names, times, values, rtol, "transient")
    for n in names:
        print("  %-6s worst error %.2e of peak %.6g (phase %.6g)" % (n, worst[n][0], peak(ref, n),
                                                                      worst[n][1] or 0))
    print("%s: %s transient, last of %d periods, within %.1e" % ("PASS" if ok else "FAIL", name,
                                                                  periods, rtol))
    return ok


# ---------------------------------------------------------------- self-test
#
# A brute-force transient written from the circuit equations directly (not
# from reference.py's matrices), integrated by solve_ivp across events.

def converter_equations(name, p):
    Vin, L, C, R = p["Vin"], p["L"], p["C"], p["R"]

    def rhs(x, sw, cond):
        il, v = x
        if name in ("buck_ccm", "buck_dcm"):
            if sw:
                return [(Vin - v) / L, (il - v / R) / C]
            if cond:
                return [-v / L, (il - v / R) / C]
            return [0.0, -v / (R * C)]
        if name == "boost":
            if sw:
                return [Vin / L, -v / (R * C)]
            if cond:
                return [(Vin - v) / L, (il - v / R) / C]
            return [0.0, -v / (R * C)]
        if name == "buck_boost":
            if sw:
                return [Vin / L, -v / (R * C)]
            if cond:
                return [v / L, (-il - v / R) / C]
            return [0.0, -v / (R * C)]
        raise KeyError(name)

    def forward(x, sw):
        """Voltage across the blocking diode (anode minus cathode)."""
        il, v = x
        if name in ("buck_ccm", "buck_dcm"):
            return -(Vin if sw else v)
        if name == "boost":
            return (0.0 if sw else Vin) - v
        return v - (Vin if sw else 0.0)

    return rhs, forward


def simulate_converter(name, periods):
    p = refmod.PARAMS[name]
    T = 1.0 / p["fs"]
    DT = p["D"] * T
    rhs, forward = converter_equations(name, p)
    x = np.array([0.0, 0.0])
    cond = False
    tol = dict(method="DOP853", rtol=1e-12, atol=1e-13, dense_output=True)
    last = []          # pieces of the last period: (t0, t1, dense, integrals)
    events = []
    prev_start = None
    for k in range(periods):
        start_state = x.copy()
        for (a, b, sw) in ((k * T, k * T + DT, True), (k * T + DT, (k + 1) * T, False)):
            if sw:
                cond = False
                assert forward(x, True) <= 0
            elif x[0] > 0:
                cond = True      # the coil's current forces the diode on
            if not sw and k == periods - 1:
                events.append(a - k * T)
            t = a
            while t < b - 1e-15 * T:
                def f(tt, y, sw=sw, c=cond):
                    d = rhs(y[:2], sw, c)
                    il, v = y[0], y[1]
                    return d + [v, il, v * v, il * il]
                evs = []
                if not sw and cond:
                    ev = lambda tt, y: y[0]
                    ev.terminal, ev.direction = True, -1
                    evs.append(ev)
                if not sw and not cond:
                    ev = lambda tt, y: forward(y[:2], False)
                    ev.terminal, ev.direction = True, 1
                    evs.append(ev)
                sol = integrate.solve_ivp(f, (t, b), list(x) + [0, 0, 0, 0], events=evs or None, **tol)
                t1 = sol.t[-1]
                y1 = sol.y[:, -1]
                if k == periods - 1:
                    last.append((t - k * T, t1 - k * T, sol.sol, y1[2:], (sw, cond)))
                x = y1[:2].copy()
                if evs and sol.status == 1:
                    if cond:
                        x[0] = 0.0
                        cond = False
                    else:
                        cond = True
                    if k == periods - 1:
                        events.append(t1 - k * T)
                t = t1
        prev_start = start_state
    change = np.abs(x - prev_start)
    return T, last, events, change


def simulate_ball(periods):
    p = refmod.PARAMS["table_ball"]
    g, A, e, f = p["g"], p["A"], p["e"], p["f"]
    T, w = 1.0 / f, 2 * math.pi * f
    z = lambda t: A * math.sin(w * t)
    y, v = p["h0"], p["v0"]
    t = 0.0
    last, events = [], []
    impacts = []
    t_end = periods * T
    t_last = (periods - 1) * T
    while t < t_end - 1e-15:
        def rhs(tt, s):
            gap = s[0] - z(tt)
            return [s[1], -g, s[0], s[1], gap, s[0] ** 2, s[1] ** 2, gap ** 2]
        ev = lambda tt, s: s[0] - z(tt)
        ev.terminal, ev.direction = True, -1
        stop = t_last if t < t_last - 1e-15 else t_end
        sol = integrate.solve_ivp(rhs, (t, stop), [y, v] + [0] * 6, events=ev, method="DOP853",
                                  rtol=1e-13, atol=1e-15, dense_output=True)
        t1 = sol.t[-1]
        y, v = sol.y[0, -1], sol.y[1, -1]
        if t >= t_last - 1e-15:
            last.append((t - t_last, t1 - t_last, sol.sol, sol.y[2:, -1], None))
        if sol.status == 1:
            vt = A * w * math.cos(w * t1)
            rel = vt - v
            if rel <= p["vrest"]:
                raise RuntimeError("ball came to rest at t = %g" % t1)
            y = z(t1)
            v = vt - e * (v - vt)
            impacts.append(t1)
            if t1 >= t_last:
                events.append(t1 - t_last)
        t = t1
    # Change of the impact phase over the last periods (convergence).
    ph = [ti - math.floor(ti / T) * T for ti in impacts[-5:]]
    return T, last, events, np.array([abs(ph[-1] - ph[-2])]), impacts


def self_test_one(name):
    ref = refmod.reference(name)
    check_parameters(os.path.join(HERE, "models", name + ".hbg"), name)
    if name == "table_ball":
        periods = 100
        T, last, events, change, impacts = simulate_ball(periods)
        idx = {"y": 0, "v": 1, "gap": None}
        ball = True
        per_period = [sum(1 for ti in impacts if k * T <= ti < (k + 1) * T) for k in range(periods)]
        print("  impacts per period over the last 50 periods: %s" % sorted(set(per_period[-50:])))
    else:
        periods = {"buck_ccm": 1500, "buck_dcm": 800, "boost": 2500, "buck_boost": 1500}[name]
        T, last, events, change = simulate_converter(name, periods)
        ball = False
    print("  %s: %d periods from the model's initial state; last period's start moved by %s"
          % (name, periods, np.array2string(change, precision=3)))
    # values at many phases of the last period
    worst = 0.0
    names = ref.outputs
    bps = ref.breakpoints() + list(ref.events)

    def snap(t):
        # a piece's end is the reference's breakpoint there, to 1e-9 T
        near = [bp for bp in bps if abs(bp - t) <= 1e-9 * T]
        return near[0] if near else t

    for (a, b, dense, _, _) in last:
        for t in np.linspace(a, b, 101):
            tt = min(max(t, a), b)
            s = dense(tt + (periods - 1) * T)
            if ball:
                gap = s[0] - refmod.PARAMS["table_ball"]["A"] * math.sin(
                    2 * math.pi * refmod.PARAMS["table_ball"]["f"] * (tt + (periods - 1) * T))
                got = [s[0], s[1], gap]
            else:
                got = [s[1], s[0]]
            side = "left" if tt == b else "right"
            want = ref.eval(snap(tt) if tt in (a, b) else tt, side)
            for k, n in enumerate(names):
                worst = max(worst, abs(got[k] - want[k]) / peak(ref, n))
    print("  values: worst difference %.2e of peak" % worst)
    ok = worst < 1e-8
    # events
    for te, tr in zip(events, ref.events):
        d = abs(te - tr) / T
        print("  event: brute force %.17g, reference %.17g (%.1e of T)" % (te, tr, d))
        ok &= d < 1e-8
    if len(events) != len(ref.events):
        print("  events differ in number: brute force %s, reference %s" % (events, ref.events))
        ok = False
    # stats from the brute force: integrals carried as extra states
    ints = sum(piece[3] for piece in last)
    if ball:
        means = ints[0:3] / T
        rms = np.sqrt(ints[3:6] / T)
    else:
        means = np.array([ints[0], ints[1]]) / T
        rms = np.sqrt(np.array([ints[2], ints[3]]) / T)
    grid = []
    for (a, b, dense, _, _) in last:
        ts = np.linspace(a, b, 20001)
        for t in ts:
            s = dense(t + (periods - 1) * T)
            if ball:
                gap = s[0] - refmod.PARAMS["table_ball"]["A"] * math.sin(
                    2 * math.pi * refmod.PARAMS["table_ball"]["f"] * (t + (periods - 1) * T))
                grid.append([s[0], s[1], gap])
            else:
                grid.append([s[1], s[0]])
    grid = np.array(grid)
    print("  %-6s %-6s %22s %22s %10s" % ("output", "figure", "brute force", "reference", "err/peak"))
    for k, n in enumerate(names):
        s = ref.stats()[n]
        bf = dict(mean=means[k], rms=rms[k], min=grid[:, k].min(), max=grid[:, k].max())
        bf["peak_to_peak"] = bf["max"] - bf["min"]
        for fig in FIGURES:
            err = abs(bf[fig] - s[fig]) / peak(ref, n)
            # min/max from a grid of 20001 points a segment: 1e-9 of peak
            lim = 1e-10 if fig in ("mean", "rms") else 1e-8
            ok &= err < lim
            print("  %-6s %-6s %22.15g %22.15g %10.2e%s" % (n, fig, bf[fig], s[fig], err,
                                                          "" if err < lim else "  MISMATCH"))
    print("  %s: %s reference against brute force" % ("PASS" if ok else "FAIL", name))
    return ok


def self_test(names):
    ok = True
    for n in names or refmod.MODELS:
        print("self-test %s" % n)
        ok &= self_test_one(n)
    print("self-test: %s" % ("PASS" if ok else "FAIL"))
    return ok


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    if args[0] == "--self-test":
        return 0 if self_test(args[1:]) else 1
    extra = []
    if "--" in args:
        i = args.index("--")
        args, extra = args[:i], args[i + 1:]

    def opt(flag, default, conv):
        if flag in args:
            i = args.index(flag)
            val = conv(args[i + 1])
            del args[i:i + 2]
            return val
        return default

    if args[0] == "--transient":
        rtol = opt("--rtol", 1e-4, float)
        periods = opt("--periods", 2000, int)
        hbgc, model, name = args[1:4]
        return 0 if check_transient(hbgc, model, name, periods, rtol) else 1
    rtol = opt("--rtol", 1e-8, float)
    keep = opt("--keep", None, str)
    if len(args) != 3:
        print(__doc__)
        return 2
    hbgc, model, name = args
    return 0 if check_steady(hbgc, model, name, rtol, keep, extra) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
