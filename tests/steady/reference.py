#!/usr/bin/python3
"""Exact periodic steady states of the models in tests/steady/.

Independent of hbg: each converter is written as its piecewise-linear ODE
per switch state, solved with matrix exponentials of the affine system
(augmented with a constant 1, so sources are part of the matrix); the
ball on the vibrating table is solved in closed form.

    reference.py NAME                 JSON: period, outputs, stats, modes, events
    reference.py NAME --at T1,T2,...  also the outputs at those phases
                                      (both one-sided limits)
    reference.py --list               the model names

Phase origin: t = 0 starts a PWM period (pwm(fs, D) is 1 over [0, D T));
for the ball, t = 0 is the table's t = 0 (z = A sin(w t)).

Used as a module by check_steady.py: reference(NAME) returns a Reference.
"""

import json
import math
import os
import re
import sys
import warnings

import numpy as np
from scipy import integrate, linalg, optimize

HERE = os.path.dirname(os.path.abspath(__file__))

# The parameters each reference is computed for: the models' defaults.
# check_steady.py compares them with the `parameter` lines of the .hbg files.
PARAMS = {
    "buck_ccm": dict(Vin=12.0, D=0.4, fs=20e3, L=1e-3, C=1e-4, R=10.0),
    "buck_dcm": dict(Vin=12.0, D=0.4, fs=20e3, L=1e-4, C=1e-5, R=50.0),
    "boost": dict(Vin=12.0, D=0.4, fs=20e3, L=1e-3, C=1e-4, R=20.0),
    "buck_boost": dict(Vin=12.0, D=0.4, fs=20e3, L=1e-3, C=1e-4, R=10.0),
    "table_ball": dict(m=1.0, g=9.81, f=5.0, A=0.013, e=0.5, h0=0.05, v0=1.0,
                       vrest=1e-5),
}

MODELS = list(PARAMS)


class Reference:
    """A periodic solution made of smooth segments.

    segments: list of (t0, t1, fn) where fn(t) gives the output vector for
    t in the closed interval [t0, t1] (its one-sided limits at the ends).
    """

    def __init__(self, name, period, outputs, segments, modes, events, extra=None):
        self.name = name
        self.period = period
        self.outputs = outputs
        self.segments = segments
        self.modes = modes
        self.events = events
        self.extra = extra or {}
        self._stats = None

    def breakpoints(self):
        return [s[0] for s in self.segments] + [self.segments[-1][1]]

    def eval(self, t, side="right"):
        """Outputs at phase t in [0, T]; side picks the limit at a breakpoint."""
        T = self.period
        if t < 0 or t > T:
            t = t - math.floor(t / T) * T
        segs = self.segments
        if side == "right":
            if t >= T:  # right limit at T is the right limit at 0
                return segs[0][2](0.0)
            for (a, b, fn) in segs:
                if a <= t < b:
                    return fn(t)
            return segs[-1][2](t)
        else:
            if t <= 0:  # left limit at 0 is the left limit at T
                return segs[-1][2](T)
            for (a, b, fn) in segs:
                if a < t <= b:
                    return fn(t)
            return segs[0][2](t)

    def eval_both(self, t):
        return self.eval(t, "left"), self.eval(t, "right")

    def stats(self):
        if self._stats is None:
            self._stats = self._compute_stats()
        return self._stats

    def _compute_stats(self):
        n = len(self.outputs)
        T = self.period
        integ = np.zeros(n)
        integ2 = np.zeros(n)
        lo = np.full(n, np.inf)
        hi = np.full(n, -np.inf)
        for (a, b, fn) in self.segments:
            if b <= a:
                continue
            for k in range(n):
                f = lambda t, k=k: fn(t)[k]
                integ[k] += _quad(f, a, b)
                integ2[k] += _quad(lambda t: f(t) ** 2, a, b)
                m, M = _extrema(f, a, b)
                lo[k] = min(lo[k], m)
                hi[k] = max(hi[k], M)
        exact_mean = self.extra.get("exact_integrals")
        out = {}
        for k, name in enumerate(self.outputs):
            mean = integ[k] / T
            if exact_mean is not None:
                mean = exact_mean[k] / T
            out[name] = dict(mean=mean, rms=math.sqrt(max(integ2[k], 0.0) / T),
                             min=lo[k], max=hi[k], peak_to_peak=hi[k] - lo[k])
        return out

    def to_json(self, at=None):
        d = dict(model=self.name, period=self.period, outputs=self.outputs,
                 parameters=PARAMS[self.name], stats=self.stats(),
                 modes=self.modes, events=self.events)
        for k, v in self.extra.items():
            if k != "exact_integrals":
                d[k] = v
        if at is not None:
            rows = []
            for t in at:
                l, r = self.eval_both(t)
                rows.append(dict(t=t, left=dict(zip(self.outputs, map(float, l))),
                                 right=dict(zip(self.outputs, map(float, r)))))
            d["values"] = rows
        return d


def _quad(f, a, b):
    # Relative accuracy 2e-14, or 1e-16 of the integrand's scale over the
    # interval where the integral itself is near zero (a velocity's mean).
    scale = max(abs(f(a)), abs(f(b)), abs(f(0.5 * (a + b))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        val, err = integrate.quad(f, a, b, epsabs=1e-16 * scale * (b - a) + 1e-300,
                                  epsrel=2e-14, limit=400)
    return val


def _extrema(f, a, b, n=400):
    """Min and max of a smooth f on [a, b], ends included."""
    ts = np.linspace(a, b, n + 1)
    ys = np.array([f(t) for t in ts])
    lo, hi = min(ys[0], ys[-1]), max(ys[0], ys[-1])
    for sgn in (1.0, -1.0):
        i = int(np.argmin(sgn * ys))
        if 0 < i < n:
            r = optimize.minimize_scalar(lambda t: sgn * f(t), bounds=(ts[i - 1], ts[i + 1]),
                                         method="bounded",
                                         options=dict(xatol=1e-15 * max(1.0, abs(b)), maxiter=500))
            v = min(sgn * ys[i], r.fun) * sgn
        else:
            v = ys[i]
        if sgn > 0:
            lo = min(lo, v)
        else:
            hi = max(hi, v)
    return lo, hi


# ---------------------------------------------------------------- converters
#
# State z = [il, vout, 1]; dz/dt = M z with the last row zero. A mode is
# (switch closed?, diode conducting?); with both off, il = 0 (the coil has
# no path) and only the capacitor discharges into the load.

def converter_matrices(name, p):
    Vin, L, C, R = p["Vin"], p["L"], p["C"], p["R"]
    def M(a):
        return np.array(a, dtype=float)
    if name.startswith("buck") and name != "buck_boost":
        # il from the switching node to the output node.
        on = M([[0, -1 / L, Vin / L], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
        free = M([[0, -1 / L, 0], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
    elif name == "boost":
        # il from the supply into the switching node.
        on = M([[0, 0, Vin / L], [0, -1 / (R * C), 0], [0, 0, 0]])
        free = M([[0, -1 / L, Vin / L], [1 / C, -1 / (R * C), 0], [0, 0, 0]])
    elif name == "buck_boost":
        # il from the switching node to ground; vout < 0.
        on = M([[0, 0, Vin / L], [0, -1 / (R * C), 0], [0, 0, 0]])
        free = M([[0, 1 / L, 0], [-1 / C, -1 / (R * C), 0], [0, 0, 0]])
    else:
        raise KeyError(name)
    idle = M([[0, 0, 0], [0, -1 / (R * C), 0], [0, 0, 0]])
    return on, free, idle


def _exact_integral(Mz, z0, h):
    """Integral over [0, h] of expm(Mz s) z0, from one larger exponential."""
    n = Mz.shape[0]
    big = np.zeros((2 * n, 2 * n))
    big[:n, :n] = Mz
    big[:n, n:] = np.eye(n)
    E = linalg.expm(big * h)
    return E[:n, n:] @ z0


def _vout_il(z, clamp):
    return np.array([z[1], max(z[0], 0.0) if clamp else z[0]])


def converter(name):
    p = PARAMS[name]
    T = 1.0 / p["fs"]
    DT = p["D"] * T
    on, free, idle = converter_matrices(name, p)
    Eon = linalg.expm(on * DT)
    Efree = linalg.expm(free * (T - DT))
    # Mode texts as hbg's event log writes them.
    MODE_ON = "switch.j=closed, diode.j=blocking"
    MODE_FREE = "switch.j=open, diode.j=conducting"
    MODE_IDLE = "switch.j=open, diode.j=blocking"

    if name != "buck_dcm":
        # CCM: z(T) = Efree Eon z(0) = [[Phi, g], [0, 1]] z(0).
        P = Efree @ Eon
        Phi, gvec = P[:2, :2], P[:2, 2]
        x0 = np.linalg.solve(np.eye(2) - Phi, gvec)
        z0 = np.append(x0, 1.0)
        z1 = Eon @ z0
        pieces = [(0.0, DT, on, z0, MODE_ON), (DT, T, free, z1, MODE_FREE)]
        monodromy = Phi
    else:
        # DCM: il(0) = 0; the diode stops conducting at tz where il = 0,
        # then il stays 0 and vout decays. Fixed point in vout(0).
        def after_on(v0):
            return Eon @ np.array([0.0, v0, 1.0])

        def turn_off(z1):
            il = lambda s: (linalg.expm(free * s) @ z1)[0]
            smax = T - DT
            if il(smax) > 0:
                raise RuntimeError("buck_dcm: the coil's current does not reach zero (CCM)")
            return optimize.brentq(il, 0.0, smax, xtol=1e-18, rtol=4 * np.finfo(float).eps,
                                   maxiter=500)

        def period_map(v0):
            z1 = after_on(v0)
            s = turn_off(z1)
            z2 = linalg.expm(free * s) @ z1
            z2 = np.array([0.0, z2[1], 1.0])
            return (linalg.expm(idle * (T - DT - s)) @ z2)[1]

        # Bracket around the small-ripple estimate M Vin of the output.
        Vin, D = p["Vin"], p["D"]
        K = 2 * p["L"] * p["fs"] / p["R"]
        est = Vin * 2 / (1 + math.sqrt(1 + 4 * K / D ** 2))
        v0 = optimize.brentq(lambda v: period_map(v) - v, 0.7 * est, min(1.2 * est, 0.5 * (est + Vin)),
                             xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=500)
        z0 = np.array([0.0, v0, 1.0])
        z1 = after_on(v0)
        s = turn_off(z1)
        tz = DT + s
        z2 = linalg.expm(free * s) @ z1
        z2 = np.array([0.0, z2[1], 1.0])
        pieces = [(0.0, DT, on, z0, MODE_ON), (DT, tz, free, z1, MODE_FREE),
                  (tz, T, idle, z2, MODE_IDLE)]
        # Sensitivity of the period map (only vout is free in DCM).
        h = 1e-6 * v0
        monodromy = np.array([[(period_map(v0 + h) - period_map(v0 - h)) / (2 * h)]])

    segments = []
    integrals = np.zeros(2)
    for (a, b, Mz, za, m) in pieces:
        # outputs in the models' order: vout, il
        # (in DCM the current ends its conducting segment at zero; the
        # exponential gives it to ~1e-14 either side, clamped to 0)
        clamp = name == "buck_dcm" and m == MODE_FREE
        segments.append((a, b, lambda t, Mz=Mz, za=za, a=a, clamp=clamp:
                         _vout_il(linalg.expm(Mz * (t - a)) @ za, clamp)))
        integrals += _exact_integral(Mz, za, b - a)[[1, 0]]
    modes = [dict(start=a, end=b, mode=m) for (a, b, _, _, m) in pieces]
    events = [b for (_, b, _, _, _) in pieces[:-1]]
    ref = Reference(name, T, ["vout", "il"], segments, modes, events,
                    extra=dict(exact_integrals=integrals,
                               state_at_0=dict(vout=float(pieces[0][3][1]), il=float(pieces[0][3][0])),
                               monodromy_eigenvalues=[abs(complex(x)) for x in np.linalg.eigvals(monodromy)]))
    _check_converter(ref, name, p)
    return ref


def _check_converter(ref, name, p):
    """The assumed diode states must be the ones the ideal diode takes."""
    for m in ref.modes:
        a, b = m["start"], m["end"]
        ts = np.linspace(a, b, 201)[1:-1]
        xs = np.array([ref.eval(t) for t in ts])
        vout, il = xs[:, 0], xs[:, 1]
        if m["mode"].endswith("diode.j=conducting"):
            assert il.min() > 0, (name, "diode current reverses", m)
        else:
            # blocking: the voltage across the diode must not be positive
            if name.startswith("buck") and name != "buck_boost":
                vd = -(p["Vin"] if "closed" in m["mode"] else vout)  # anode at ground
            elif name == "boost":
                vd = (0.0 if "closed" in m["mode"] else p["Vin"]) - vout
            else:
                vd = vout - (p["Vin"] if "closed" in m["mode"] else 0.0)
            assert np.max(vd) < 0, (name, "diode forward biased while blocking", m)


# ---------------------------------------------------------------- ball

def ball_orbit(p):
    """Period-1 orbit: impact phase, take-off speed and linearised map."""
    g, f, A, e = p["g"], p["f"], p["A"], p["e"]
    T = 1.0 / f
    w = 2 * math.pi * f
    u = g * T / 2                              # take-off velocity
    vt = g * T * (1 - e) / (2 * (1 + e))       # table velocity at impact
    c = vt / (A * w)
    if not abs(c) < 1:
        raise RuntimeError("table_ball: no period-1 orbit (A w < vt)")
    out = []
    for phi in (math.acos(c), -math.acos(c)):
        ti = phi / w
        out.append((ti, _ball_map_jacobian(p, ti, u, T)))
    return T, w, u, vt, out


def _ball_map_jacobian(p, t0, v0, tau):
    """Jacobian of the impact map (t_k, v_k+) -> (t_k+1, v_k+1+) at a point."""
    g, A, e = p["g"], p["A"], p["e"]
    w = 2 * math.pi * p["f"]
    zd = lambda t: A * w * math.cos(w * t)
    zdd = lambda t: -A * w * w * math.sin(w * t)
    t1 = t0 + tau
    vm = v0 - g * tau
    # F(tau; t0, v0) = z(t0) + v0 tau - g tau^2 / 2 - z(t0 + tau) = 0
    Ftau = vm - zd(t1)
    Ft0 = zd(t0) - zd(t1)
    Fv0 = tau
    dtau = np.array([-Ft0 / Ftau, -Fv0 / Ftau])
    dt1 = np.array([1.0, 0.0]) + dtau
    # v1+ = (1 + e) z'(t1) - e (v0 - g tau)
    dv1 = (1 + e) * zdd(t1) * dt1 + np.array([0.0, -e]) + e * g * dtau
    return np.array([dt1, dv1])


def table_ball():
    p = PARAMS["table_ball"]
    g, A = p["g"], p["A"]
    T, w, u, vt, roots = ball_orbit(p)
    stable = [(ti, J) for (ti, J) in roots if max(abs(np.linalg.eigvals(J))) < 1]
    if len(stable) != 1:
        raise RuntimeError("table_ball: expected exactly one stable period-1 orbit")
    ti, J = stable[0]
    if ti < 0:
        ti += T
    zi = A * math.sin(w * ti)

    def flight(t0):
        def fn(t):
            s = t - t0
            y = zi + u * s - 0.5 * g * s * s
            return np.array([y, u - g * s, y - A * math.sin(w * t)])
        return fn

    segments = [(0.0, ti, flight(ti - T)), (ti, T, flight(ti))]
    # The ball must stay above the table between impacts.
    s = np.linspace(0, T, 20001)[1:-1]
    gap = zi + u * s - 0.5 * g * s * s - A * np.sin(w * (ti + s))
    assert gap.min() > 0, "table_ball: the flight meets the table before a period"
    ref = Reference("table_ball", T, ["y", "v", "gap"], segments,
                    [dict(start=0.0, end=T, mode="floor.touch=apart")], [ti],
                    extra=dict(impact_time=ti, impact_phase_rad=w * ti, takeoff_velocity=u,
                               table_velocity_at_impact=vt,
                               impact_height=zi, apex_above_impact=u * u / (2 * g),
                               map_eigenvalue_moduli=[float(abs(x)) for x in np.linalg.eigvals(J)],
                               other_root_eigenvalue_moduli=[
                                   float(abs(x)) for (t, Jo) in roots if Jo is not J
                                   for x in np.linalg.eigvals(Jo)]))
    return ref


def reference(name):
    if name == "table_ball":
        return table_ball()
    if name in PARAMS:
        return converter(name)
    raise KeyError("unknown model %r (one of %s)" % (name, ", ".join(MODELS)))


def model_parameters(path):
    """The numeric `parameter X = number;` defaults of an .hbg file."""
    out = {}
    num = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
    for line in open(path):
        line = line.split("//")[0]
        m = re.match(r"\s*parameter\s+(\w+)\s*=\s*(" + num + r")\s*;", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def _json_default(o):
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o))


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    if argv[1] == "--list":
        print("\n".join(MODELS))
        return 0
    at = None
    if len(argv) >= 4 and argv[2] == "--at":
        at = [float(x) for x in argv[3].split(",") if x]
    ref = reference(argv[1])
    print(json.dumps(ref.to_json(at), indent=2, default=_json_default))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
