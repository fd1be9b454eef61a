#!/usr/bin/python3
"""compare.py REFERENCE RESULT TOL: every row of RESULT at a time REFERENCE
also has (hbgc run's rows at output times; at an event it has two rows, the
one after the event counts) must agree in every column within TOL of the
column's largest magnitude in REFERENCE. Prints the largest error of each
column; exits 1 when one is above TOL or a time is missing."""
import csv
import sys


def read(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def main():
    ref_names, ref = read(sys.argv[1])
    names, got = read(sys.argv[2])
    tol = float(sys.argv[3])
    if len(names) != len(ref_names):
        print("columns differ: %s against %s" % (names, ref_names))
        return 1
    by_time = {}
    for r in ref:
        by_time[r[0]] = r  # the last row at a time: after an event
    scale = [max(abs(r[c]) for r in ref) or 1.0 for c in range(len(ref_names))]
    worst = [0.0] * len(names)
    for r in got:
        match = by_time.get(r[0])
        if match is None:
            close = [t for t in by_time if abs(t - r[0]) <= 1e-12 * max(1.0, abs(t))]
            if not close:
                print("time %.17g is not in the reference" % r[0])
                return 1
            match = by_time[close[0]]
        for c in range(1, len(names)):
            worst[c] = max(worst[c], abs(r[c] - match[c]) / scale[c])
    bad = False
    for c in range(1, len(names)):
        print("  %-24s largest error %.3g of its scale" % (names[c], worst[c]))
        bad = bad or worst[c] > tol
    print("%d rows compared" % len(got))
    return 1 if bad else 0


sys.exit(main())
