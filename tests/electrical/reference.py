"""Exact piecewise solutions of switched linear circuits, independent of hbg.

A circuit is nodes joined by branches: resistors, inductors (a state each:
the current, with a series resistance), capacitors to ground (a state
each: the voltage), ideal semiconductors and switches with Modelica's
Ron/Goff/Vknee laws, and nodes whose voltage is given (ground, sources,
capacitors). Sources are constants and sinusoids of one angular frequency
w; gate signals are piecewise constant in time, with their switching
times given as breakpoints.

In each mode (the state of every device) the circuit is linear, so with
the augmented state z = [x, 1, sin(w t), cos(w t)] every voltage and
current is a linear function of z and dz/dt = M z. The trajectory over a
span is expm(M t) z0, exact to rounding; the instants where a device
switches are roots of its guard's margin along it (brentq to 1e-15 s).
Each device follows its state machine as written in Modelica's
Ideal.IdealSemiconductor and its subclasses:

    blocking (s < 0):    v = s + Vknee,        i = Goff v
    conducting:          v = Vknee + Ron s,    i = s + Goff Vknee
    diode:      on when v > Vknee, off when s = i - Goff Vknee < 0
    thyristor:  on when fire and v > Vknee, off when s < 0
    GTO:        on when fire and v > Vknee, off when s < 0 or not fire
    switch:     closed (v = Ron i) while gate, open (i = Goff v) otherwise
"""

import bisect
import math

import numpy as np
from scipy import linalg, optimize


class Device:
    """An ideal semiconductor or switch from node a to node b."""

    def __init__(self, name, a, b, kind, Ron=1e-5, Goff=1e-5, Vknee=0.0, fire=None):
        assert kind in ("diode", "thyristor", "gto", "switch")
        self.name, self.a, self.b, self.kind = name, a, b, kind
        self.Ron, self.Goff, self.Vknee = Ron, Goff, Vknee
        self.fire = fire or (lambda t: 1.0)

    def norton(self, on):
        """(g, j0): i = g v + j0 in the given state."""
        if not on:
            return self.Goff, 0.0
        if self.kind == "switch":
            return 1.0 / self.Ron, 0.0
        return 1.0 / self.Ron, self.Goff * self.Vknee - self.Vknee / self.Ron

    def s(self, on, v, i):
        """Modelica's position on the characteristic."""
        return v - self.Vknee if not on else i - self.Goff * self.Vknee

    def next_state(self, on, v, i, t, tol):
        """The state the device's first enabled transition leads to."""
        fired = self.fire(t) > 0.5
        if self.kind == "switch":
            return fired
        if not on:
            return fired and v - self.Vknee > tol
        s = i - self.Goff * self.Vknee
        if s < -tol:
            return False
        if self.kind == "gto" and not fired:
            return False
        return True

    def margin(self, on, t):
        """(which, sign): the quantity whose crossing of zero upwards
        (after multiplying by sign) switches the device within a span of
        constant gate signals, or None."""
        if self.kind == "switch":
            return None
        if not on:
            return ("v", 1.0) if self.fire(t) > 0.5 else None
        return ("s", -1.0)


class Circuit:
    """Nodes, branches and states; see the module's docstring."""

    def __init__(self, w=0.0):
        self.w = w
        self.nx = 0
        self.state_names = []
        self.known = {"gnd": {}}     # node -> {z index or '1'/'sin'/'cos': coefficient}
        self.resistors = []          # (name, a, b, R)
        self.inductors = []          # (name, a, b, L, Rs, k)
        self.capacitors = []         # (name, node, C, k)
        self.devices = []
        self.nodes = ["gnd"]

    # -- construction
    def node(self, name):
        if name not in self.nodes:
            self.nodes.append(name)

    def source(self, node, dc=0.0, sin=0.0, cos=0.0):
        self.node(node)
        self.known[node] = {"1": dc, "sin": sin, "cos": cos}

    def state(self, name):
        self.state_names.append(name)
        self.nx += 1
        return self.nx - 1

    def resistor(self, name, a, b, R):
        self.node(a), self.node(b)
        self.resistors.append((name, a, b, R))

    def inductor(self, name, a, b, L, Rs=0.0, i0=0.0):
        self.node(a), self.node(b)
        k = self.state(name)
        self.inductors.append((name, a, b, L, Rs, k))
        return k

    def capacitor(self, name, node, C, v0=0.0):
        self.node(node)
        k = self.state(name)
        self.capacitors.append((name, node, C, k))
        self.known[node] = {k: 1.0}
        return k

    def device(self, *args, **kw):
        d = Device(*args, **kw)
        self.node(d.a), self.node(d.b)
        self.devices.append(d)
        return d

    # -- linear algebra over z
    @property
    def nz(self):
        return self.nx + 3

    def vec(self, coeffs):
        v = np.zeros(self.nz)
        for key, c in coeffs.items():
            idx = {"1": self.nx, "sin": self.nx + 1, "cos": self.nx + 2}.get(key, key)
            v[idx] += c
        return v

    def solve(self, mode):
        """Linear maps (rows over z) of every node voltage and branch
        current in `mode` (a tuple of device states), and the matrix M."""
        unknown = [n for n in self.nodes if n not in self.known]
        ui = {n: k for k, n in enumerate(unknown)}
        nu = len(unknown)
        G = np.zeros((nu, nu))
        rhs = np.zeros((nu, self.nz))
        e = {n: self.vec(c) for n, c in self.known.items()}

        # Branches as (a, b, g, j-row): current a -> b is g (e_a - e_b) + j.
        branches = []
        for name, a, b, R in self.resistors:
            branches.append((a, b, 1.0 / R, np.zeros(self.nz)))
        for d, on in zip(self.devices, mode):
            g, j0 = d.norton(on)
            branches.append((d.a, d.b, g, j0 * self.vec({"1": 1.0})))
        for name, a, b, L, Rs, k in self.inductors:
            branches.append((a, b, 0.0, self.vec({k: 1.0})))
        for a, b, g, j in branches:
            # current leaving a: g e_a - g e_b + j; leaving b: the negative.
            for node, sgn in ((a, 1.0), (b, -1.0)):
                if node not in ui:
                    continue
                r = ui[node]
                for other, coef in ((a, g), (b, -g)):
                    if other in ui:
                        G[r, ui[other]] += sgn * coef
                    else:
                        rhs[r] -= sgn * coef * e[other]
                rhs[r] -= sgn * j
        if nu:
            sol = np.linalg.solve(G, rhs)
            for n, k in ui.items():
                e[n] = sol[k]

        cur = {}
        for (a, b, g, j), name in zip(branches, [r[0] for r in self.resistors] +
                                      [d.name for d in self.devices] +
                                      [l[0] for l in self.inductors]):
            cur[name] = g * (e[a] - e[b]) + j
        M = np.zeros((self.nz, self.nz))
        for name, a, b, L, Rs, k in self.inductors:
            M[k] = (e[a] - e[b] - Rs * cur[name]) / L
        for name, node, C, k in self.capacitors:
            into = np.zeros(self.nz)
            for (a, b, g, j), bname in zip(branches, cur):
                if b == node:
                    into += cur[bname]
                if a == node:
                    into -= cur[bname]
            M[k] = into / C
        s, c = self.nx + 1, self.nx + 2
        M[s, c] = self.w
        M[c, s] = -self.w
        return e, cur, M


class Trajectory:
    """The exact trajectory of a Circuit from z0 over [0, t_end]."""

    def __init__(self, circuit, x0, t_end, breakpoints=(), period=None, mode0=None):
        self.c = circuit
        c = circuit
        z = np.concatenate([np.asarray(x0, float), [1.0, 0.0, 1.0]])
        mode = tuple(mode0) if mode0 else tuple(False for _ in c.devices)
        self.cache = {}
        self.segments = []           # (t0, t1, mode, z0)
        self.events = []             # (t, mode before, mode after)
        bps = sorted(set([0.0] + [b for b in breakpoints if 0 < b < t_end] + [t_end]))
        hmax = (period or t_end) / 400.0
        # Gate signals are constant between breakpoints: judge them at the
        # middle of each span, never at a breakpoint itself.
        for t0, t1 in zip(bps[:-1], bps[1:]):
            tg = 0.5 * (t0 + t1)
            new = self.settle(mode, z, t0, tg)
            if new != mode:
                if t0 == 0:
                    self.segments.append((0.0, 0.0, mode, z.copy()))  # the initial mode
                self.events.append((t0, mode, new))
            mode = new
            t = t0
            while t < t1:
                e, cur, M = self.analysis(mode)
                margins = self.margins(mode, e, cur, tg)
                h = min(hmax, t1 - t)
                Eh = linalg.expm(M * h)
                z1 = Eh @ z
                hit = None
                for k, (name, row) in enumerate(margins):
                    if row @ z1 > 0 >= row @ z:
                        f = lambda tau, row=row: row @ (linalg.expm(M * tau) @ z)
                        tau = optimize.brentq(f, 0.0, h, xtol=1e-16, rtol=1e-15, maxiter=200)
                        # the first double past the root, where the margin is > 0
                        for _ in range(64):
                            if f(tau) > 0 or tau >= h:
                                break
                            tau = np.nextafter(t + tau, math.inf) - t
                        if hit is None or tau < hit[0]:
                            hit = (tau, k)
                if hit is None:
                    self.segments.append((t, t + h, mode, z.copy()))
                    z, t = z1, t + h
                    continue
                tau, k = hit
                self.segments.append((t, t + tau, mode, z.copy()))
                z = linalg.expm(M * tau) @ z
                t = t + tau
                flipped = list(mode)
                flipped[k] = not flipped[k]
                new = self.settle(tuple(flipped), z, t, tg)
                self.events.append((t, mode, new))
                mode = new
            t = t1
        self.segments.append((t_end, t_end, mode, z.copy()))
        self.starts = [s[0] for s in self.segments]
        self.integrals = {}

    def integral(self, fn, t):
        """The integral of fn(node voltages, branch currents, states) from 0
        to t: 20-point Gauss-Legendre on every span, where the trajectory
        is a sum of exponentials and sinusoids over at most 1/400 of a
        period (exact to rounding)."""
        if fn not in self.integrals:
            cum = [0.0]
            for t0, t1, mode, z0 in self.segments[:-1]:
                cum.append(cum[-1] + self._span(fn, t0, t1, mode, z0))
            self.integrals[fn] = cum
        cum = self.integrals[fn]
        k = max(bisect.bisect_right(self.starts, t) - 1, 0)
        k = min(k, len(self.segments) - 1)
        t0, t1, mode, z0 = self.segments[k]
        return cum[k] + (self._span(fn, t0, t, mode, z0) if t > t0 else 0.0)

    def _span(self, fn, t0, t1, mode, z0):
        if t1 <= t0:
            return 0.0
        x, wq = np.polynomial.legendre.leggauss(20)
        e, cur, M = self.analysis(mode)
        total = 0.0
        for xi, wi in zip(x, wq):
            tau = 0.5 * (t1 - t0) * (xi + 1)
            z = linalg.expm(M * tau) @ z0
            total += wi * fn({n: r @ z for n, r in e.items()}, {n: r @ z for n, r in cur.items()},
                             {name: z[k] for k, name in enumerate(self.c.state_names)})
        return 0.5 * (t1 - t0) * total

    def analysis(self, mode):
        if mode not in self.cache:
            self.cache[mode] = self.c.solve(mode)
        return self.cache[mode]

    def margins(self, mode, e, cur, t):
        out = []
        for k, (d, on) in enumerate(zip(self.c.devices, mode)):
            m = d.margin(on, t)
            if m is None:
                out.append((d.name, np.zeros(self.c.nz)))
                continue
            which, sign = m
            if which == "v":
                row = e[d.a] - e[d.b] - d.Vknee * self.c.vec({"1": 1.0})
            else:
                row = cur[d.name] - d.Goff * d.Vknee * self.c.vec({"1": 1.0})
            out.append((d.name, sign * row))
        return out

    def settle(self, mode, z, t, tg):
        """Mode iteration: every device takes its enabled transition, all at
        once, until none is enabled (values judged in the candidate mode)."""
        seen = set()
        while True:
            e, cur, M = self.analysis(mode)
            new = []
            for d, on in zip(self.c.devices, mode):
                v = (e[d.a] - e[d.b]) @ z
                i = cur[d.name] @ z
                new.append(d.next_state(on, v, i, tg, 1e-11 * (abs(v) + abs(i) + abs(d.Vknee)) + 1e-14))
            new = tuple(new)
            if new == mode:
                return mode
            if new in seen:
                raise RuntimeError("reference: modes cycle at t = %r" % t)
            seen.add(mode)
            mode = new

    def values(self, t, side=+1):
        """(node voltages, branch currents, mode) at t; side -1 takes the
        limit from the left at an event."""
        k = bisect.bisect_right(self.starts, t) - 1
        if side < 0:
            while k > 0 and self.segments[k][0] >= t:
                k -= 1
        t0, t1, mode, z0 = self.segments[k]
        e, cur, M = self.analysis(mode)
        z = linalg.expm(M * (t - t0)) @ z0
        return ({n: r @ z for n, r in e.items()}, {n: r @ z for n, r in cur.items()},
                {name: z[k] for k, name in enumerate(self.c.state_names)}, mode)
