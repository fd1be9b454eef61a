#!/usr/bin/python3
"""Boolean signals against closed forms.

    check_boolean.py HBGC CASE

  logic       models/logic.hbg: v = t, and every Boolean signal at each
              row against its condition evaluated here; the switching
              instants (t = 2 and t = 3) are events, with rows on both
              sides.
  thermostat  models/thermostat.hbg: a room heated through a switch that
              closes when `cold` and opens when `warm` (two Boolean
              signals in guards). Between switchings the temperature is
              T_inf + (T - T_inf) exp(-t G / C), T_inf = T_out + P / G
              heating, T_out cooling: the switching instants follow in
              closed form, and the run's events must match them. The
              room's state is its internal energy U = C T, near 2.9e6 J,
              held to the default rtol 1e-6: 0.3 mK, some 4 ms at the
              0.07 K/s the room warms by near Toff, and the drift this
              adds up over the switchings (< 1e-5 t).
  edge_count  models/edge_count.hbg: v = t; `high` (mod(v, 1) > 0.5)
              rises at t = k + 1/2, and discrete values on `edge(high)`
              count the rises and latch the time of the last: at every
              row, rises = floor(t + 1/2) and at = rises - 1/2 (-1 before
              the first), the rows at a rise on both sides of it.
  edge_switch models/edge_switch.hbg: the second rise (t = 1.5) closes a
              switch through a guard on the count in the same event;
              then v = 1 + exp(-(t - 1.5)) / 2 and the count stays 2.
              A simulator built with `hbgc build` prints the same rows.
"""

import csv
import io
import math
import subprocess
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(hbgc, *args):
    p = subprocess.run([hbgc] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("hbgc failed (%d): %s" % (p.returncode, p.stderr))
    return p.stdout, p.stderr


def logic(hbgc):
    out, _ = run(hbgc, "run", os.path.join(HERE, "models", "logic.hbg"))
    rows = list(csv.DictReader(io.StringIO(out)))
    bad = 0
    seen = {2.0: 0, 3.0: 0}
    for i, r in enumerate(rows):
        t, v = float(r["time"]), float(r["v"])
        if abs(v - t) > 1e-9 * max(1, t):
            print("t = %g: v = %r" % (t, v))
            bad += 1
        for edge in seen:
            if abs(t - edge) < 1e-9:
                seen[edge] += 1
        # At an event's two rows the condition is judged on the side the
        # row stands: the first row before the crossing, the second after.
        after = i + 1 < len(rows) and float(rows[i + 1]["time"]) == t
        side = -1e-12 if after else 0.0
        tt = t + side
        high = v + side > 2 if abs(v - 2) < 1e-9 else v > 2
        early = tt < 3
        want = {"high": high, "early": early, "both": high and early,
                "either": high or not early, "neither": not (high or early)}
        for name, w in want.items():
            if float(r[name]) != (1.0 if w else 0.0):
                print("t = %r: %s = %s, want %d" % (t, name, r[name], w))
                bad += 1
        y = 10 * v if want["both"] else -1
        if abs(float(r["y"]) - y) > 1e-9 * abs(y):
            print("t = %r: y = %s, want %r" % (t, r["y"], y))
            bad += 1
    for edge, n in seen.items():
        if n < 2:
            print("t = %g: %d rows, want 2 or more (an event)" % (edge, n))
            bad += 1
    print("logic: %d rows, %d wrong" % (len(rows), bad))
    return bad


def thermostat(hbgc):
    C, G, P, T_out, T0, Ton, Toff = 1e4, 20.0, 230.0 ** 2 / 52.9, 280.0, 288.0, 290.0, 295.0
    tau = C / G
    hot = T_out + P / G
    # Closed first at t = 0 (cold), heating to Toff; then cooling to Ton,
    # heating to Toff, and so on.
    times, t, T, heating = [], 0.0, T0, True
    while True:
        if heating:
            t += tau * math.log((hot - T) / (hot - Toff))
            T = Toff
        else:
            t += tau * math.log((T - T_out) / (Ton - T_out))
            T = Ton
        if t > 3000:
            break
        times.append((t, "closed -> open" if heating else "open -> closed"))
        heating = not heating
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.csv")
        run(hbgc, "run", os.path.join(HERE, "models", "thermostat.hbg"), "-o",
            os.path.join(tmp, "rows.csv"), "--events", path)
        with open(path) as f:
            events = [r for r in csv.DictReader(f) if r["phase"] == "before"]
    switched = [(float(r["time"]), r["transitions"]) for r in events if r["transitions"].startswith("sw:")]
    # The first: closing at t = 0, the room being cold.
    bad = 0
    if not switched or switched[0][0] != 0 or "open -> closed" not in switched[0][1]:
        print("no closing at t = 0: %r" % switched[:1])
        bad += 1
    switched = switched[1:]
    if len(switched) != len(times):
        print("%d switchings, want %d" % (len(switched), len(times)))
        bad += 1
    worst = 0.0
    for (t, text), (want, kind) in zip(switched, times):
        worst = max(worst, abs(t - want))
        if kind not in text or abs(t - want) > 1e-5 * want + 5e-3:
            print("switching at %r (%s), want %r (%s)" % (t, text, want, kind))
            bad += 1
    print("thermostat: %d switchings, worst |dt| %.2e s" % (len(times), worst))
    return bad


def rows_of(hbgc, model):
    out, _ = run(hbgc, "run", os.path.join(HERE, "models", model))
    return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(io.StringIO(out))]


def after_event(rows, i, at):
    """Whether row i, at the instant `at` (to 1e-9), is the last row there:
    the rows at an event show it before, then after."""
    t = rows[i]["time"]
    if abs(t - at) > 1e-9:
        return t > at
    return i + 1 == len(rows) or abs(rows[i + 1]["time"] - at) > 1e-9


def edge_count(hbgc):
    rows = rows_of(hbgc, "edge_count.hbg")
    bad = 0
    for i, r in enumerate(rows):
        n = sum(after_event(rows, i, k + 0.5) for k in range(4))
        want = {"rises": n, "at": n - 0.5 if n > 0 else -1.0}
        for name in ("rises", "at"):
            if abs(r[name] - want[name]) > 1e-9:
                print("t = %r: %s = %r, want %r" % (r["time"], name, r[name], want[name]))
                bad += 1
    rises = [r["time"] for i, r in enumerate(rows[1:], 1) if r["rises"] != rows[i - 1]["rises"]]
    want = [0.5, 1.5, 2.5]
    if len(rises) != len(want) or any(abs(a - b) > 1e-9 for a, b in zip(rises, want)):
        print("rises at %r, want %r" % (rises, want))
        bad += 1
    print("edge_count: %d rows, rises at %s, %d wrong" % (len(rows), rises, bad))
    return bad


def edge_switch(hbgc):
    rows = rows_of(hbgc, "edge_switch.hbg")
    bad, worst = 0, 0.0
    for i, r in enumerate(rows):
        t = r["time"]
        closed = after_event(rows, i, 1.5)
        v = 1 + 0.5 * math.exp(-(t - 1.5)) if closed else t
        n = 2 if closed else int(after_event(rows, i, 0.5))
        err = abs(r["v"] - v)
        worst = max(worst, err)
        # rtol 1e-6 of the charge, as the default tolerance holds it.
        if err > 1e-5 or r["rises"] != n:
            print("t = %r: v = %r (want %r), rises = %r (want %d)" % (t, r["v"], v, r["rises"], n))
            bad += 1
    with tempfile.TemporaryDirectory() as tmp:
        sim = os.path.join(tmp, "edge_switch")
        run(hbgc, "build", os.path.join(HERE, "models", "edge_switch.hbg"), "-o", sim)
        built = subprocess.run([sim], capture_output=True, text=True, check=True).stdout
    same = built == run(hbgc, "run", os.path.join(HERE, "models", "edge_switch.hbg"))[0]
    bad += not same
    print("edge_switch: %d rows, worst |dv| %.2e, %d wrong; the built simulator's rows %s" %
          (len(rows), worst, bad, "the same" if same else "DIFFER"))
    return bad


def main():
    hbgc, case = sys.argv[1:]
    cases = {"logic": logic, "thermostat": thermostat, "edge_count": edge_count,
             "edge_switch": edge_switch}
    sys.exit(1 if cases[case](hbgc) else 0)


if __name__ == "__main__":
    main()
