#!/usr/bin/python3
"""The reference for bench/stiff_bench.cpp's nonlinear ladder.

20 sections: node k's capacitance C_k = 10^(-6 (k-1)/19) F (1 F down to
1 uF), each section's conductor passing f = g (e + e^3) (g = 1 S) for the
voltage e across it, driven by v0 = sin(2 pi t) from rest to t = 10:

    C_k v_k' = i_k - i_{k+1},   i_k = g (d + d^3), d = v_{k-1} - v_k,

with i_21 = 0. Integrated by SciPy's Radau (order 5) and BDF at rtol
1e-12 with the analytic Jacobian; prints v(10) as C++ initialisers and
the two integrators' largest difference, the reference's accuracy.
"""
import numpy as np
from scipy.integrate import solve_ivp

N, G, T_END = 20, 1.0, 10.0
C = np.array([10.0 ** (-6.0 * k / (N - 1)) for k in range(N)])


def currents(t, v):
    left = np.concatenate(([np.sin(2 * np.pi * t)], v[:-1]))
    d = left - v
    return G * (d + d ** 3), G * (1 + 3 * d ** 2)


def rhs(t, v):
    i, _ = currents(t, v)
    out = i.copy()
    out[:-1] -= i[1:]
    return out / C


def jac(t, v):
    _, g = currents(t, v)
    j = np.zeros((N, N))
    for k in range(N):
        j[k, k] -= g[k]  # i_k falls as v_k rises
        if k > 0:
            j[k, k - 1] += g[k]
        if k + 1 < N:
            j[k, k] -= g[k + 1]  # i_{k+1} rises as v_k rises
            j[k, k + 1] += g[k + 1]
    return j / C[:, None]


runs = [solve_ivp(rhs, (0, T_END), np.zeros(N), method=m, jac=jac, rtol=1e-12,
                  atol=1e-14) for m in ("Radau", "BDF")]
for r in runs:
    assert r.success, r.message
ref = runs[0].y[:, -1]
print("// v(10), Radau at rtol 1e-12; BDF at rtol 1e-12 differs by at most %.1e"
      % np.abs(ref - runs[1].y[:, -1]).max())
print(",\n".join("%.17g" % v for v in ref))
