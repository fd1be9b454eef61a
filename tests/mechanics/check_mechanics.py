#!/usr/bin/python3
"""Run the mechanical stdlib's components and compare with exact solutions.

    check_mechanics.py HBGC CASE [--lib-path DIR] [--keep DIR]

Runs `HBGC run models/<model>.hbg` at default options (only parameters
are set, with -p, so that the model and the reference share them), reads
the trajectory and the event log, and compares them with a reference
that does not use hbg:

- closed forms (a damped oscillation, constant accelerations between
  stick and slip);
- exact piecewise solutions: each regime of a contact is an affine ODE
  x' = A x + b, solved by the matrix exponential; the switching times are
  the roots of the regime's exit functions, bracketed on a fine grid and
  refined by Brent's method; impacts are the exact momentum balance;
- published results of the Modelica Standard Library's examples
  (MAP-LIB_ReferenceResults, Dymola 2020x, MSL v4.0.0-rc.1), for the
  translations of Rotational.Examples.Friction and .Backlash, with the
  sign mapping of stdlib/README.md ("Conventions against MSL").

Every case prints its worst errors, fails when one is past its
tolerance, when the events differ from the reference's (their number,
their times, the modes entered), or when hbgc warns. Exit 1 on failure.
"""

import atexit
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from scipy import integrate, linalg, optimize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# Options after `--` go to every run (a convergence check by hand,
# `-- --rtol 1e-10`); the tests run without any.
EXTRA = []


def scratch(keep):
    """`keep`, or a temporary directory removed at exit."""
    if keep:
        os.makedirs(keep, exist_ok=True)
        return keep
    path = tempfile.mkdtemp(prefix="hbg-mech-")
    atexit.register(shutil.rmtree, path, True)
    return path


# --- running hbgc -----------------------------------------------------------

class Run:
    """One hbgc run: columns by name, the events (time, mode after), stderr."""

    def __init__(self, hbgc, model, params, lib_path, keep, extra=()):
        workdir = scratch(keep)
        cmd = [hbgc, "run", os.path.join(HERE, "models", model + ".hbg"), "-q",
               "-o", "out.csv", "--events", "events.csv"]
        for k, v in params.items():
            cmd += ["-p", "%s=%r" % (k, v)]
        if lib_path:
            cmd += ["--lib-path", lib_path]
        cmd += list(extra) + EXTRA
        print("$ " + " ".join(cmd))
        proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
        self.stderr = proc.stderr.strip()
        if proc.returncode != 0:
            raise RuntimeError("hbgc run exited with %d:\n%s" % (proc.returncode, self.stderr))
        with open(os.path.join(workdir, "out.csv"), newline="") as fh:
            rows = list(csv.reader(fh))
        self.cols = {h: np.array([float(r[k]) for r in rows[1:]]) for k, h in enumerate(rows[0])}
        self.t = self.cols["time"]
        self.events = []
        path = os.path.join(workdir, "events.csv")
        if os.path.exists(path):
            with open(path, newline="") as fh:
                for r in csv.DictReader(fh):
                    if r["phase"] == "after":
                        self.events.append((float(r["time"]), r["mode"]))


class Case:
    """Collects the comparisons of one case and prints them."""

    def __init__(self, name):
        self.name = name
        self.ok = True

    def fail(self, msg):
        print("  FAIL: " + msg)
        self.ok = False

    def check(self, what, err, tol):
        flag = "" if err <= tol else "  MISMATCH"
        print("  %-44s worst error %.3g (tolerance %.1g)%s" % (what, err, tol, flag))
        if err > tol:
            self.ok = False

    def no_warnings(self, run):
        if "warning" in run.stderr:
            self.fail("hbgc warned:\n" + run.stderr)

    def events(self, run, expected, tol_t, skip=()):
        """expected: [(time, the mode entered: None, a substring of its
        text, or a list of them)]; skip: times of events the reference
        does not model (time events of the inputs)."""
        got = [e for e in run.events if not any(abs(e[0] - s) <= 1e-12 * max(1, s) for s in skip)]
        print("  events: %d (reference %d)" % (len(got), len(expected)))
        if len(got) != len(expected):
            self.fail("events at %s, expected at %s" % ([g[0] for g in got], [e[0] for e in expected]))
            return
        worst = 0.0
        for (tg, mg), (te, me) in zip(got, expected):
            worst = max(worst, abs(tg - te))
            for part in [] if me is None else [me] if isinstance(me, str) else me:
                if part not in mg:
                    self.fail("event at t = %.12g enters %s, expected %s" % (tg, mg, part))
        self.check("event times", worst, tol_t)

    def rows(self, run, what, col, ref, tol, scale=1.0, switch_times=(), window=1e-6):
        """Each row of `col` against ref(t), relative to `scale`; rows
        within `window` of the reference's switching times (a row before
        and after an event, located to the run's accuracy) may take either
        side's value."""
        worst, at = 0.0, None
        for t, y in zip(run.t, run.cols[col]):
            cands = [ref(t)]
            for s in switch_times:
                if abs(t - s) <= window * max(1.0, abs(s)):
                    cands += [ref(min(t, s) - 1e-12), ref(max(t, s) + 1e-12)]
            err = min(abs(y - c) for c in cands) / scale
            if err > worst:
                worst, at = err, t
        self.check("%s (%s)" % (what, col) + ("" if at is None else " at t=%.4g" % at), worst, tol)


# --- exact piecewise-affine solutions ---------------------------------------

def affine_flow(A, b, x0, t):
    """x(t) of x' = A x + b, x(0) = x0, by the exponential of the augmented
    matrix [[A, b], [0, 0]]."""
    n = len(x0)
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = A
    M[:n, n] = b
    return (linalg.expm(M * t) @ np.append(x0, 1.0))[:n]


def affine_step(A, b, h):
    """The augmented matrix that advances (x, 1) by h along x' = A x + b."""
    n = len(b)
    M = np.zeros((n + 1, n + 1))
    M[:n, :n] = A
    M[:n, n] = b
    return linalg.expm(M * h)


class Piecewise:
    """A trajectory through regimes {name: (A, b, exits)}, exits a list of
    (g, next, jump): leave when g(x) turns positive, g an affine function
    given as (coefficients, constant), into `next` (or next(x), x where
    g turns), then x -> jump(x) (None: no jump).
    The first exit on a grid of `grid` points per unit time (and at least
    400 per regime) is bracketed and refined by Brent's method."""

    def __init__(self, regimes, start, x0, t_end, grid=20000.0, max_segments=10000):
        self.segments = []  # (t0, t1, regime, x0)
        self.switches = []  # (time, regime entered)
        t, x, reg = 0.0, np.array(x0, float), start
        while t < t_end and len(self.segments) < max_segments:
            A, b, exits = regimes[reg]
            span = t_end - t
            n = max(400, int(grid * span))
            ts = np.linspace(0.0, span, n + 1)
            # The grid by powers of one step's exponential (only to bracket
            # the roots; Brent's method refines them on the exact flow).
            step = affine_step(A, b, ts[1])
            xs = [np.append(x, 1.0)]
            for _ in range(n):
                xs.append(step @ xs[-1])
            xs = [xi[:-1] for xi in xs]
            hit = None
            for g, nxt, jump in exits:
                c, c0 = np.array(g[0], float), g[1]
                gv = [c @ xi + c0 for xi in xs]
                for k in range(1, len(ts)):
                    if gv[k] > 0 and gv[k - 1] <= 0:
                        exact = lambda s: c @ affine_flow(A, b, x, s) + c0
                        lo, hi = ts[k - 1], ts[k]
                        if exact(hi) <= 0:
                            continue  # the grid's rounding: no crossing on the exact flow
                        root = lo if exact(lo) >= 0 else optimize.brentq(
                            exact, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=200)
                        if hit is None or root < hit[0]:
                            hit = (root, nxt, jump)
                        break
            if hit is None:
                self.segments.append((t, t_end, reg, x))
                break
            root, nxt, jump = hit
            self.segments.append((t, t + root, reg, x))
            x = affine_flow(A, b, x, root)
            if callable(nxt):
                nxt = nxt(x)  # the regime entered may depend on the state there
            if jump is not None:
                x = jump(x)
            t += root
            reg = nxt
            self.switches.append((t, reg))
        self.regimes = regimes

    def state(self, t):
        for t0, t1, reg, x0 in self.segments:
            if t <= t1 or (t0, t1) == self.segments[-1][:2]:
                A, b, _ = self.regimes[reg]
                return affine_flow(A, b, x0, t - t0), reg
        raise ValueError(t)


# --- the cases ----------------------------------------------------------------

def damped(case, run, m, c, d, q0, v0, qcol, vcol, fcol, qoff, f_sign):
    """m q'' = -c q - d q' from (q0, v0): rows of q + qoff, q', the force."""
    A = np.array([[0.0, 1.0], [-c / m, -d / m]])
    ref = lambda t: affine_flow(A, np.zeros(2), np.array([q0, v0]), t)
    amp = max(abs(q0), abs(v0) / math.sqrt(c / m))
    # Several periods at the default rtol 1e-6: the global error is a few
    # times rtol.
    case.rows(run, "deflection", qcol, lambda t: ref(t)[0] + qoff, 1e-5, amp)
    case.rows(run, "speed", vcol, lambda t: ref(t)[1], 1e-5, amp * math.sqrt(c / m))
    case.rows(run, "force", fcol, lambda t: f_sign * (c * ref(t)[0] + d * ref(t)[1]), 1e-5, c * amp)
    return ref


def case_springdamper_rot(hbgc, lib, keep):
    case = Case("springdamper_rot")
    p = dict(J=2.0, c=8.0, d=1.6, phi_rel0=0.05, twist0=0.2, w0=1.0, angle0=0.5)
    run = Run(hbgc, "springdamper_rot", p, lib, keep)
    # The twist is the inertia's angle (the frame is still); the spring
    # is relaxed at phi_rel0, so its deflection q = phi - phi_rel0 obeys
    # J q'' = -c q - d q'.
    ref = damped(case, run, p["J"], p["c"], p["d"], p["twist0"] - p["phi_rel0"], p["w0"],
                 "phi", "w", "tau", p["phi_rel0"], 1.0)
    case.rows(run, "Inertia.phi = phi0 + integral of w", "angle",
              lambda t: p["angle0"] + ref(t)[0] - (p["twist0"] - p["phi_rel0"]), 1e-5, 1.0)
    case.no_warnings(run)
    return case


def case_springdamper_trans(hbgc, lib, keep):
    case = Case("springdamper_trans")
    p = dict(m=1.0, c=4.0, d=0.4, x_rel0=-0.1, x0=0.3, v0=-0.5)
    run = Run(hbgc, "springdamper_trans", p, lib, keep)
    damped(case, run, p["m"], p["c"], p["d"], p["x0"] - p["x_rel0"], p["v0"], "x", "v", "f",
           p["x_rel0"], 1.0)
    case.no_warnings(run)
    return case


def case_inertia_angle(hbgc, lib, keep):
    case = Case("inertia_angle")
    p = dict(J=0.5, T=2.0, w0=-3.0, angle0=1.0)
    run = Run(hbgc, "inertia_angle", p, lib, keep)
    a = p["T"] / p["J"]
    case.rows(run, "w = w0 + T t / J", "w", lambda t: p["w0"] + a * t, 1e-9, 10.0)
    case.rows(run, "phi = phi0 + w0 t + T t^2 / 2J", "angle",
              lambda t: p["angle0"] + p["w0"] * t + a * t * t / 2, 1e-9, 10.0)
    case.no_warnings(run)
    return case


def brake_case(hbgc, lib, keep, name, sign, peak, release=None):
    """J = 1 spinning at sign 10 under Tk = mu fn_max = 2: w = sign (10 - 2 t)
    to rest at t = 5; held while the ramp sign max(0, t - 6) stays within
    peak Tk; then it slips with J w' = ramp - sign Tk; released (fn = 0)
    at `release`, J w' = ramp."""
    case = Case(name)
    p = dict(J=1.0, w0=10.0 * sign, fn_max=4.0, mu=0.5, peak=peak, t_ramp=6.0, slope=float(sign))
    if release is not None:
        p["t_release"] = release
    run = Run(hbgc, "brake", p, lib, keep)
    Tk = p["mu"] * p["fn_max"]
    tb = p["t_ramp"] + peak * Tk  # breakaway
    t8 = p["t_ramp"] + Tk  # where the ramp equals Tk
    tr = release if release is not None else math.inf
    assert tr > tb

    def slip(t):
        # J w' = (t - 6) - Tk from tb: w = ((t - t8)^2 - (tb - t8)^2) / 2
        return ((t - t8) ** 2 - (tb - t8) ** 2) / 2

    def w(t):
        if t < 0:
            return sign * 10.0
        if t < 5:
            return sign * (10 - Tk * t)
        if t < tb:
            return 0.0
        if t < tr:
            return sign * slip(t)
        return sign * (slip(tr) + ((t - p["t_ramp"]) ** 2 - (tr - p["t_ramp"]) ** 2) / 2)

    def tau(t):
        if t < 0 or t >= tr:
            return 0.0  # released: until the initial event, and from tr
        if t < 5 or t >= tb:
            return sign * Tk
        return sign * max(0.0, t - p["t_ramp"])

    def slipping(t):
        if t < 0 or t >= tr:
            return 0
        return sign * (1 if (t < 5 or t >= tb) else 0)

    entered = "brake.slip=" + ("forward" if sign > 0 else "backward")
    expected = [(0.0, entered), (5.0, "brake.slip=stuck"), (tb, entered)]
    if release is not None:
        expected.append((tr, "brake.slip=free"))
    case.events(run, expected, 1e-8, skip=[p["t_ramp"]])
    sw = [0.0, 5.0, p["t_ramp"], tb, tr]
    case.rows(run, "speed", "w", w, 1e-8, 10.0, sw)
    case.rows(run, "brake torque", "tau", tau, 1e-8, 10.0, sw)
    case.rows(run, "slipping", "slipping", slipping, 0.0, 1.0, sw)
    case.no_warnings(run)
    return case


def case_brake_table(hbgc, lib, keep):
    """mu = 0.3 + 0.02 |w| (a two-point table): slipping forward from w0 =
    8, J w' = -fn_max (0.3 + 0.02 w), so w = (w0 + 15) exp(-0.08 t) - 15
    to rest at t = ln(23 / 15) / 0.08; then held, tau = 0 (nothing drives
    it), mu = 0.3."""
    case = Case("brake_table")
    run = Run(hbgc, "brake_table", {}, lib, keep)
    ts = math.log(23.0 / 15.0) / 0.08

    def w(t):
        return (8.0 + 15.0) * math.exp(-0.08 * t) - 15.0 if t < ts else 0.0

    # The table's kink at w = 0 (abs) comes a rounding error before the
    # stop. At the defaults, w is held to some 5e-7 near rest, where it
    # falls at 1.2 rad/s^2: the stop is found to 1e-6 s.
    case.events(run, [(0.0, "brake.slip=forward"), (ts, None), (ts, "brake.slip=stuck")], 1e-6)
    sw = [0.0, ts]
    case.rows(run, "speed", "w", w, 1e-7, 8.0, sw)
    # Free before the start's event: no torque.
    case.rows(run, "brake torque", "tau",
              lambda t: 4 * (0.3 + 0.02 * w(t)) if 0 <= t < ts else 0.0, 1e-7, 2.0, sw)
    case.rows(run, "mu", "mu", lambda t: 0.3 + 0.02 * w(t), 1e-7, 0.5, sw)
    case.no_warnings(run)
    return case


def case_brake(hbgc, lib, keep):
    return brake_case(hbgc, lib, keep, "brake", 1, 1.5)


def case_brake_backward(hbgc, lib, keep):
    return brake_case(hbgc, lib, keep, "brake_backward", -1, 1.5)


def case_brake_peak1(hbgc, lib, keep):
    # Static = kinetic: the breakaway is tangential (w'' > 0, w' = 0 there),
    # where a stick-slip law without hysteresis can cycle.
    return brake_case(hbgc, lib, keep, "brake_peak1", 1, 1.0)


def case_brake_release(hbgc, lib, keep):
    # fn falls to 0 while it slips: free, the ramp alone accelerates it.
    return brake_case(hbgc, lib, keep, "brake_release", 1, 1.5, release=10.0)


def case_brake_cycle(hbgc, lib, keep):
    """T = 1 on J = 1, Tk = 2, peak Tk = 3; fn = 1 over [1, 4) and from 6:
    free, w = t; slipping from t = 1, w = 1 - (t - 1), to rest at 2; held
    (tau = T); free at 4, w = t - 4; slipping from 6 at w = 2, at rest at
    8 and held."""
    case = Case("brake_cycle")
    p = dict(J=1.0, T=1.0, fn_max=4.0, peak=1.5)
    run = Run(hbgc, "brake_cycle", p, lib, keep)

    def ref(t):  # w, tau, slipping
        if t < 1:
            return t, 0.0, 0
        if t < 2:
            return 1 - (t - 1), 2.0, 1
        if t < 4:
            return 0.0, 1.0, 0
        if t < 6:
            return t - 4, 0.0, 0
        if t < 8:
            return 2 - (t - 6), 2.0, 1
        return 0.0, 1.0, 0

    sw = [1.0, 2.0, 4.0, 6.0, 8.0]
    case.rows(run, "speed", "w", lambda t: ref(t)[0], 1e-8, 2.0, sw)
    case.rows(run, "brake torque", "tau", lambda t: ref(t)[1], 1e-8, 2.0, sw)
    case.rows(run, "slipping", "slipping", lambda t: ref(t)[2], 0.0, 1.0, sw)
    case.events(run, [(1.0, "brake.slip=forward"), (2.0, "brake.slip=stuck"),
                      (4.0, "brake.slip=free"), (6.0, "brake.slip=forward"),
                      (8.0, "brake.slip=stuck")], 1e-8)
    case.no_warnings(run)
    return case


def case_elastobacklash_b0(hbgc, lib, keep):
    # No backlash (b <= 1e-10): MSL's plain spring-damper, which may pull.
    case = Case("elastobacklash_b0")
    p = dict(J=0.5, w0=2.0, c=400.0, d=6.0, b=0.0, phi_rel0=0.05, twist0=0.0)
    run = Run(hbgc, "elastobacklash", p, lib, keep)
    damped(case, run, p["J"], p["c"], p["d"], p["twist0"] - p["phi_rel0"], p["w0"], "phi", "w",
           "tau", p["phi_rel0"], 1.0)
    if run.events:
        case.fail("events at %s in a plain spring-damper" % [e[0] for e in run.events])
    case.no_warnings(run)
    return case


def gap_regimes(m, c, d, sides, pos, w_ix=1):
    """The regimes of an elastic, damped contact that cannot pull, for a
    body of mass m on it, state x = (twist, speed). sides: {s: limit}, the
    contact of side s = +1 (-1) active where s (x0 - pos) > limit, with
    the spring's force tc = c (x0 - pos - s limit). The damper's d w is
    clipped to [-|tc|, |tc|]: `U` (at +|tc|), `M` (unclipped), `L`."""
    R = {}
    R["free"] = (np.array([[0, 1], [0, 0]], float), np.zeros(2), [])
    for s, lim in sides.items():
        # tc = c x0 - c (pos + s lim); |tc| = s tc
        k0 = -c * (pos + s * lim)

        def force(mode, s=s, k0=k0):
            # tau = tc + clip: U: tc + s tc, L: tc - s tc, M: tc + d w
            if mode == "U":
                return (1 + s) * c, 0.0, (1 + s) * k0
            if mode == "L":
                return (1 - s) * c, 0.0, (1 - s) * k0
            return c, d, k0

        for mode in "UML":
            kx, kw, k = force(mode)
            A = np.array([[0, 1], [-kx / m, -kw / m]], float)
            b = np.array([0, -k / m], float)
            # d w - s tc > 0: above the upper limit; d w + s tc < 0: below.
            up = ([-s * c, d], -s * k0)
            down = ([-s * c, -d], -s * k0)
            leave = ([-s, 0], s * pos + lim)  # s (x0 - pos) < lim
            exits = [(leave, "free", None)]
            if mode == "U":
                exits.append((([s * c, -d], s * k0), "M%+d" % s, None))
            elif mode == "M":
                exits += [(up, "U%+d" % s, None), (down, "L%+d" % s, None)]
            else:
                exits.append((([s * c, d], s * k0), "M%+d" % s, None))
            R["%s%+d" % (mode, s)] = (A, b, exits)
        enter = ([s, 0], -s * pos - lim)
        R["free"][2].append((enter, ("U%+d" if s > 0 else "L%+d") % s, None))
    return R


def contact_case(case, run, piece, cols, tol, tol_t):
    """Rows and events against a piecewise reference: at default options
    the contact's dynamics are integrated to rtol 1e-6, and its regime
    changes located on that trajectory, so to about 1e-6 of the contact's
    time scale (at --rtol 1e-10, 1e-11)."""
    sw = [s[0] for s in piece.switches]
    for what, col, f, scale in cols:
        case.rows(run, what, col, f, tol, scale, sw, window=tol_t)
    case.events(run, [(t, None) for t in sw], tol_t)


def elasto_force(piece, c, d, pos, lim, two_sided=True):
    def tau(t):
        x, _ = piece.state(t)
        q = x[0] - pos
        if abs(q) <= lim or (q < 0 and not two_sided):
            return 0.0
        tc = c * (q - math.copysign(lim, q))
        return tc + max(-abs(tc), min(abs(tc), d * x[1]))
    return tau


def case_elastogap(hbgc, lib, keep):
    case = Case("elastogap")
    p = dict(m=1.0, v0=1.0, c=100.0, d=4.0, s_rel0=0.02, s0=0.12)
    run = Run(hbgc, "elastogap", p, lib, keep)
    # x = (penetration s_rel0 - s_rel, v): one side, touching where x > 0.
    R = gap_regimes(p["m"], p["c"], p["d"], {1: 0.0}, 0.0)
    piece = Piecewise(R, "free", [p["s_rel0"] - p["s0"], p["v0"]], 1.0)
    print("  reference regimes: " + ", ".join("%.10g %s" % s for s in piece.switches))
    f = elasto_force(piece, p["c"], p["d"], 0.0, 0.0, two_sided=False)
    contact_case(case, run, piece, [
        ("speed", "v", lambda t: piece.state(t)[0][1], 1.0),
        ("distance s_rel", "s", lambda t: p["s_rel0"] - piece.state(t)[0][0], 0.1),
        ("contact force", "f", f, 10.0),
        ("contact", "contact", lambda t: 1.0 if piece.state(t)[0][0] > 0 else 0.0, 1.0),
    ], 1e-5, 1e-6)
    case.no_warnings(run)
    return case


def elastogap_nonlinear(m, c, d, n, x0, v0, t_end):
    """The ElastoGap's regimes with f_c = c x^n, x the penetration, solved
    by SciPy's DOP853 (rtol 1e-13) from regime to regime, each switch an
    event of the solver located to 1e-15: (switch times, t -> (x, v, f))."""
    fc = lambda x: c * max(x, 0.0) ** n
    force = {"free": lambda x, v: 0.0, "U": lambda x, v: 2 * fc(x),
             "M": lambda x, v: fc(x) + d * v, "L": lambda x, v: 0.0}
    exits = {"free": [(lambda x, v: x, "U")],
             "U": [(lambda x, v: fc(x) - d * v, "M"), (lambda x, v: -x, "free")],
             "M": [(lambda x, v: d * v - fc(x), "U"), (lambda x, v: -fc(x) - d * v, "L")],
             "L": [(lambda x, v: d * v + fc(x), "M"), (lambda x, v: -x, "free")]}
    t, y, reg = 0.0, [x0, v0], "free" if x0 <= 0 else "M"
    pieces, switches = [], []
    while t < t_end:
        evs = []
        for g, _ in exits[reg]:
            ev = (lambda g: lambda s, y: g(y[0], y[1]))(g)
            ev.terminal, ev.direction = True, 1
            evs.append(ev)
        sol = integrate.solve_ivp(lambda s, y, reg=reg: [y[1], -force[reg](y[0], y[1]) / m],
                                  (t, t_end), y, method="DOP853", rtol=1e-13, atol=1e-15,
                                  events=evs, dense_output=True)
        pieces.append((t, sol.t[-1], reg, sol.sol))
        if sol.status != 1:
            break
        k = next(i for i, te in enumerate(sol.t_events) if len(te))
        t, y = sol.t_events[k][0], sol.y_events[k][0]
        reg = exits[reg][k][1]
        switches.append(t)

    def at(s):
        for t0, t1, r, f in pieces:
            if s <= t1 or t1 == pieces[-1][1]:
                x, v = f(min(max(s, t0), t1))
                return x, v, force[r](x, v)
    return switches, at


def case_elastogap_n(hbgc, lib, keep):
    # The nonlinear spring f_c = c x^n of MSL's ElastoGap, n = 1.5.
    case = Case("elastogap_n")
    p = dict(m=1.0, v0=1.0, c=2000.0, d=4.0, s_rel0=0.02, s0=0.12)
    n = 1.5
    run = Run(hbgc, "elastogap", p, lib, keep, extra=["-p", "stop.n=%r" % n])
    sw, at = elastogap_nonlinear(p["m"], p["c"], p["d"], n, p["s_rel0"] - p["s0"], p["v0"], 1.0)
    print("  reference switches: " + ", ".join("%.10g" % t for t in sw))
    # x^1.5 has no second derivative at first touch, which costs the steps
    # there their order: at the default rtol 1e-6 the speed leaves the
    # contact 1e-5 off, and the flight after it carries that (at --rtol
    # 1e-10, 1e-8).
    case.rows(run, "speed", "v", lambda t: at(t)[1], 1e-4, 1.0, sw, window=1e-6)
    case.rows(run, "distance s_rel", "s", lambda t: p["s_rel0"] - at(t)[0], 1e-4, 0.1, sw,
              window=1e-6)
    case.rows(run, "contact force", "f", lambda t: at(t)[2], 1e-4, 10.0, sw, window=1e-6)
    case.events(run, [(t, None) for t in sw], 1e-6)
    case.no_warnings(run)
    return case


def case_elastobacklash(hbgc, lib, keep):
    case = Case("elastobacklash")
    p = dict(J=0.5, w0=2.0, c=400.0, d=6.0, b=0.4, phi_rel0=0.05, twist0=0.0)
    run = Run(hbgc, "elastobacklash", p, lib, keep)
    lim = p["b"] / 2
    R = gap_regimes(p["J"], p["c"], p["d"], {1: lim, -1: lim}, p["phi_rel0"])
    piece = Piecewise(R, "free", [p["twist0"], p["w0"]], 2.0)
    print("  reference regimes: " + ", ".join("%.10g %s" % s for s in piece.switches))
    tau = elasto_force(piece, p["c"], p["d"], p["phi_rel0"], lim)
    contact_case(case, run, piece, [
        ("speed", "w", lambda t: piece.state(t)[0][1], 2.0),
        ("twist", "phi", lambda t: piece.state(t)[0][0], 0.5),
        ("torque", "tau", tau, 40.0),
    ], 1e-4, 1e-5)  # two contacts apart: a speed error of rtol becomes a time error
    case.no_warnings(run)
    return case


def backlash_case(hbgc, lib, keep, name, wrest):
    """A driver J1 under the torque T > 0 strikes a free load J2 across the
    gap b: between impacts the load coasts; each impact keeps the momentum
    and reverses the relative speed times e. Met at a relative speed of at
    most wrest, they take one speed (the momentum kept) and rest against
    the end, turning together, while the torque that holds them there,
    J2 T / (J1 + J2) > 0, pushes: at the upper end for good, at the lower
    end not at all (they part at once, at one speed)."""
    case = Case(name)
    p = dict(J1=1.0, J2=3.0, w1=2.0, b=0.4, e=0.5, T=0.5, wrest=wrest)
    run = Run(hbgc, "backlash", p, lib, keep)
    J1, J2, e, lim = p["J1"], p["J2"], p["e"], p["b"] / 2

    def impact(x):
        phi, w1, w2 = x
        P, rel = J1 * w1 + J2 * w2, w1 - w2
        if abs(rel) <= wrest:  # resting: one speed, the momentum kept
            return np.array([phi, P / (J1 + J2), P / (J1 + J2)])
        return np.array([phi, (P - J2 * e * rel) / (J1 + J2), (P + J1 * e * rel) / (J1 + J2)])

    def entered(x):
        return "rest" if abs(x[1] - x[2]) <= wrest and x[0] > 0 else "apart"

    A = np.array([[0, 1, -1], [0, 0, 0], [0, 0, 0]], float)
    b = np.array([0, p["T"] / J1, 0])
    # Resting, the pair accelerates together; the end carries J2 T / (J1 + J2),
    # which never pulls.
    A_rest = np.zeros((3, 3))
    b_rest = np.array([0, p["T"] / (J1 + J2), p["T"] / (J1 + J2)])
    R = {"apart": (A, b, [(([1, 0, 0], -lim), entered, impact),
                          (([-1, 0, 0], -lim), entered, impact)]),
         "rest": (A_rest, b_rest, [])}
    piece = Piecewise(R, "apart", [0.0, p["w1"], 0.0], 3.0)
    print("  reference impacts: " + ", ".join("%.10g %s" % s for s in piece.switches))
    sw = [s[0] for s in piece.switches]
    for what, col, k, scale in [("driver speed", "w1", 1, 2.0), ("load speed", "w2", 2, 2.0),
                                ("twist", "phi", 0, 0.4)]:
        case.rows(run, what, col, lambda t, k=k: piece.state(t)[0][k], 1e-7, scale, sw)
    case.events(run, [(t, "lash.touch=" + ("rest_a" if r == "rest" else "apart"))
                      for t, r in piece.switches], 1e-8)
    case.no_warnings(run)
    return case


def case_backlash(hbgc, lib, keep):
    return backlash_case(hbgc, lib, keep, "backlash", 0.0)


def case_backlash_rest(hbgc, lib, keep):
    return backlash_case(hbgc, lib, keep, "backlash_rest", 1.0)


def case_oneway_friction(hbgc, lib, keep):
    case = Case("oneway_friction")
    p = dict(J1=1.0, J2=2.0, w2=6.0, fn_max=3.0, mu=0.5, peak=2.0, t1=3.0, T1=3.0, t2=5.0,
             slope=2.0)
    run = Run(hbgc, "oneway_friction", p, lib, keep)
    J1, J2, Tk = p["J1"], p["J2"], p["mu"] * p["fn_max"]
    Ts = p["peak"] * Tk
    # Overrun: the drag -Tk speeds the driver up and slows the load until
    # the speeds meet at te; locked, the pair carries the drive; the
    # braking ramp u = -slope (t - t2) pulls through tau = J2 u / (J1 + J2)
    # until tau = -Ts at tb; then free, dragged again.
    te = p["w2"] / (Tk / J1 + Tk / J2)
    we = Tk / J1 * te
    t1, t2, T1, k = p["t1"], p["t2"], p["T1"], p["slope"]
    tb = t2 + Ts * (J1 + J2) / (J2 * k)

    def w_locked(t):
        w = we + T1 * (min(t, t2) - t1) / (J1 + J2) if t > t1 else we
        if t > t2:
            w -= k * (t - t2) ** 2 / 2 / (J1 + J2)
        return w

    wb = w_locked(tb)

    def ref(t):
        if t < te:
            return Tk / J1 * t, p["w2"] - Tk / J2 * t, -Tk, 0.0
        if t < tb:
            u = T1 if t1 <= t < t2 else (-k * (t - t2) if t >= t2 else 0.0)
            return w_locked(t), w_locked(t), J2 * u / (J1 + J2), 1.0
        w1 = wb - k * ((t - t2) ** 2 - (tb - t2) ** 2) / 2 / J1 + Tk * (t - tb) / J1
        return w1, wb - Tk * (t - tb) / J2, -Tk, 0.0

    sw = [te, t1, t2, tb]
    for what, col, i, scale in [("driver speed", "w1", 0, 6.0), ("load speed", "w2", 1, 6.0),
                                ("clutch torque", "tau", 2, 3.0), ("locked", "locked", 3, 1.0)]:
        case.rows(run, what, col, lambda t, i=i: ref(t)[i], 1e-8 if col != "locked" else 0.0,
                  scale, sw)
    case.events(run, [(te, "clutch.slip=engaged"), (tb, "clutch.slip=free")], 1e-8,
                skip=[t1, t2])
    case.no_warnings(run)
    return case


def msl_rows(case, run, columns, rows, names, tol):
    """The published rows against the run's rows at the same times (both
    every 0.0005 s; the reference's rows at events are left out), each
    column relative to its largest magnitude in the reference."""
    at = {round(t, 9): i for i, t in enumerate(run.t)}
    for msl, col in names.items():
        k = columns.index(msl)
        scale = max(abs(r[k]) for r in rows)
        worst, where, n = 0.0, None, 0
        for r in rows:
            i = at.get(round(r[0], 9))
            if i is None:
                continue
            n += 1
            err = abs(run.cols[col][i] - r[k]) / scale
            if err > worst:
                worst, where = err, r[0]
        if n < len(rows) // 2:
            case.fail("only %d of %d published rows have a row of the run at their time" % (n, len(rows)))
        case.check("MSL %s (%s) at t=%.4g" % (msl, col, where or 0), worst, tol)


def case_msl_backlash(hbgc, lib, keep):
    import msl_reference as msl
    case = Case("msl_backlash")
    J, c, d, b, phi = 5.0, 20e3, 50.0, math.pi / 4, math.pi / 2
    run = Run(hbgc, "msl_backlash", {}, lib, keep)
    # Published: MSL's phi_rel, w_rel are minus the stdlib's twist, slip.
    msl_rows(case, run, msl.BACKLASH_COLUMNS, msl.BACKLASH_ROWS, {
        "elastoBacklash.phi_rel": "elastoBacklash_phi_rel",
        "elastoBacklash.w_rel": "elastoBacklash_w_rel",
        "springDamper.phi_rel": "springDamper_phi_rel",
        "springDamper.w_rel": "springDamper_w_rel"}, 1e-4)
    # Exact: the stdlib's twist starts at -phi, pressed into the lower end
    # of the gap; the damper's torque is within the spring's at rest.
    R = gap_regimes(J, c, d, {1: b / 2, -1: b / 2}, 0.0)
    piece = Piecewise(R, "M-1", [-phi, 0.0], 1.0)
    print("  exact: %d changes of regime" % len(piece.switches))
    sw = [t for t, _ in piece.switches]
    case.rows(run, "exact twist", "elastoBacklash_phi_rel", lambda t: -piece.state(t)[0][0], 1e-4,
              phi, sw, window=1e-5)
    case.rows(run, "exact slip", "elastoBacklash_w_rel", lambda t: -piece.state(t)[0][1], 1e-4,
              70.0, sw, window=1e-5)
    case.rows(run, "Inertia.phi = phi0 + integral of w", "inertia2_phi",
              lambda t: -piece.state(t)[0][0], 1e-4, phi, sw, window=1e-5)
    A = np.array([[0.0, 1.0], [-c / J, -d / J]])
    case.rows(run, "exact spring-damper", "springDamper_phi_rel",
              lambda t: -affine_flow(A, np.zeros(2), np.array([-phi, 0.0]), t)[0], 1e-5, phi)
    case.events(run, [(t, None) for t in sw], 1e-5)
    case.no_warnings(run)
    return case


def case_msl_friction(hbgc, lib, keep):
    import msl_reference as msl
    case = Case("msl_friction")
    run = Run(hbgc, "msl_friction", {}, lib, keep)
    names = {"clutch.phi_rel": "clutch_phi_rel", "clutch.w_rel": "clutch_w_rel",
             "inertia3.phi": "inertia3_phi", "inertia3.w": "inertia3_w",
             "spring.phi_rel": "spring_phi_rel", "spring.w_rel": "spring_w_rel"}
    msl_rows(case, run, msl.FRICTION_COLUMNS, msl.FRICTION_ROWS, names, 1e-4)
    # The modes at every published row, exactly: MSL's brake.mode (2 free,
    # 1 forward, 0 stuck, -1 backward) and clutch.mode, whose w_rel is
    # minus the stdlib's slip.
    msl_rows(case, run, msl.FRICTION_COLUMNS, msl.FRICTION_ROWS,
             {"brake.mode": "brake_mode", "clutch.mode": "clutch_mode"}, 0.0)
    brake = {2.0: "brake.slip=free", 1.0: "brake.slip=forward", 0.0: "brake.slip=stuck",
             -1.0: "brake.slip=backward"}
    clutch = {0.0: "clutch.slip=locked", -1.0: "clutch.slip=forward", 1.0: "clutch.slip=backward"}
    # The clutch settles into slipping at t = 0 (an event of hbg's, MSL's
    # initial mode); the published event times are Dymola's, to its
    # tolerance.
    expected = [(0.0, [brake[2.0], clutch[-1.0]])]
    expected += [(t, [brake[bm], clutch[cm]]) for t, bm, cm in msl.FRICTION_MODE_CHANGES]
    case.events(run, expected, 1e-5)
    case.no_warnings(run)
    return case


def case_drivetrain_dot(hbgc, lib, keep):
    """Every new component in one model: it runs at default options
    without warnings, and `hbgc dot --svg` draws each instance as a
    cluster named by its component, the switched junctions boxed."""
    case = Case("drivetrain_dot")
    run = Run(hbgc, "drivetrain", {}, lib, keep)
    if not len(run.t) or not all(np.all(np.isfinite(v)) for v in run.cols.values()):
        case.fail("the run's outputs are not finite")
    case.no_warnings(run)
    workdir = scratch(keep)
    svg = os.path.join(workdir, "drivetrain.svg")
    cmd = [hbgc, "dot", os.path.join(HERE, "models", "drivetrain.hbg"), "--svg", "-o", svg]
    cmd += ["--lib-path", lib] if lib else []
    print("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        case.fail("hbgc dot exited with %d:\n%s" % (proc.returncode, proc.stderr))
        return case
    text = open(svg).read()
    for label in ["freewheel: OneWayClutch", "lash: ElastoBacklash", "play: Backlash",
                  "brake: Brake", "mount: RotationalSpringDamper", "stop: ElastoGap",
                  "buffer: SpringDamper", "1:slip", "[free]", "0:touch", "[apart]"]:
        if label not in text:
            case.fail("the drawing lacks `%s`" % label)
    print("  drawing: %d bytes of SVG, every instance and switched junction named" % len(text))
    return case


CASES = {f.__name__[5:]: f for f in [
    case_springdamper_rot, case_springdamper_trans, case_inertia_angle, case_brake,
    case_brake_backward, case_brake_peak1, case_brake_release, case_brake_cycle, case_brake_table,
    case_elastogap,
    case_elastogap_n, case_elastobacklash_b0, case_elastobacklash, case_backlash, case_backlash_rest,
    case_oneway_friction, case_msl_backlash, case_msl_friction, case_drivetrain_dot]}


def main(argv):
    args = list(argv)
    lib = keep = None
    if "--lib-path" in args:
        i = args.index("--lib-path")
        lib = args[i + 1]
        del args[i:i + 2]
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    if "--" in args:
        i = args.index("--")
        EXTRA.extend(args[i + 1:])
        del args[i:]
    if len(args) < 2:
        print(__doc__)
        return 2
    hbgc, names = args[0], args[1:]
    if names == ["all"]:
        names = list(CASES)
    ok = True
    for name in names:
        if name not in CASES:
            print("unknown case %s; cases: %s" % (name, ", ".join(CASES)))
            return 2
        print("\n== " + name)
        try:
            case = CASES[name](hbgc, lib, keep)
        except RuntimeError as err:
            print("  FAIL: %s" % err)
            ok = False
            continue
        print("  %s" % ("ok" if case.ok else "FAILED"))
        ok &= case.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
