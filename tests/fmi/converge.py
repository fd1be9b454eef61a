#!/usr/bin/python3
"""converge.py REFERENCE COLUMN RESULT... : the results of one FMU by the
standard's example master loop (forward Euler, no event location), each
with half the step of the one before, against REFERENCE (hbgc run at a
tight tolerance). COLUMN's largest error, relative to its range in
REFERENCE, must at least roughly halve with each halving of the step
(first order: a ratio above 1.6) and be below 1% at the smallest step.
Prints the errors; exits 1 otherwise."""
import csv
import sys


def read(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def main():
    names, ref = read(sys.argv[1])
    column = names.index(sys.argv[2])
    by_time = {}
    for r in ref:
        by_time[r[0]] = r  # the last row at a time: after an event
    values = [r[column] for r in ref]
    span = max(values) - min(values)
    errors = []
    for path in sys.argv[3:]:
        got_names, got = read(path)
        if got_names != names:
            print("%s: columns %s, not %s" % (path, got_names, names))
            return 1
        worst = 0.0
        for r in got:
            match = by_time.get(r[0])
            if match is None:
                print("%s: no reference row at t = %r" % (path, r[0]))
                return 1
            worst = max(worst, abs(r[column] - match[column]) / span)
        errors.append(worst)
    print("  %s, largest error over its range: %s" %
          (sys.argv[2], ", ".join("%.3g" % e for e in errors)))
    ok = errors[-1] < 0.01 and all(a > 1.6 * b for a, b in zip(errors, errors[1:]))
    if not ok:
        print("  not first order, or too large")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
