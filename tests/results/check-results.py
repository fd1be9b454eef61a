#!/usr/bin/env python3
"""Reads back what `hbgc run` writes, with readers hbg does not provide.

  check-results.py HBGC EXAMPLES WORK

CSV: an output whose name holds a comma is one quoted column (RFC 4180),
read by Python's csv module. MAT: `--format mat` read by SciPy's loadmat,
decoded as Modelica tools decode the result format (binTrans: each name a
column of the text matrices; dataInfo says where each variable is), holds
the CSV's names and values exactly, and the parameters' values with the
overrides given.
"""
import csv
import io
import os
import subprocess
import sys

import numpy as np
import scipy.io

hbgc, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def run(model, *args, binary=False):
    out = subprocess.run([hbgc, "run", model, *args], cwd=examples, check=True,
                         stdout=subprocess.PIPE)
    return out.stdout if binary else out.stdout.decode()


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


# --- CSV quoting: `max(capacitor.q, inductor.f)` is one column.
with open(os.path.join(examples, "rlc.hbg")) as f:
    text = f.read()
text = text.replace("output capacitor.q, current = inductor.f;",
                    "output capacitor.q, current = inductor.f, max(capacitor.q, inductor.f);")
model = os.path.join(work, "rlc_max.hbg")
with open(model, "w") as f:
    f.write(text)
rows = list(csv.reader(io.StringIO(run(model, "--t-end", "0.5", "--dt-out", "0.1"))))
header = rows[0]
if header != ["time", "capacitor.q", "current", "max(capacitor.q, inductor.f)"]:
    fail("CSV header read as %r" % header)
for r in rows[1:]:
    if len(r) != 4 or float(r[3]) != max(float(r[1]), float(r[2])):
        fail("CSV row %r" % r)
print("csv: an output named with a comma is one quoted column; %d rows" % (len(rows) - 1))


# --- MAT: every variable where dataInfo says, equal to the CSV.
def strings(matrix):
    """binTrans text: one string per column."""
    return ["".join(matrix[:, j]).rstrip() for j in range(matrix.shape[1])]


def check_mat(name, args, parameters):
    csv_rows = list(csv.reader(io.StringIO(run(name, *args))))
    names_csv = csv_rows[0]
    values = np.array([[float(v) for v in r] for r in csv_rows[1:]])
    path = os.path.join(work, name.replace(".hbg", ".mat"))
    with open(path, "wb") as f:
        f.write(run(name, *args, "--format=mat", binary=True))
    m = scipy.io.loadmat(path, chars_as_strings=False)
    aclass = ["".join(row).rstrip() for row in m["Aclass"]]
    if aclass != ["Atrajectory", "1.1", "", "binTrans"]:
        fail("%s: Aclass %r" % (name, aclass))
    names = strings(m["name"])
    descriptions = strings(m["description"])
    info = m["dataInfo"]
    if info.dtype != np.int32 or info.shape != (4, len(names)) or len(descriptions) != len(names):
        fail("%s: dataInfo %s %s" % (name, info.dtype, info.shape))
    if names[:len(names_csv)] != names_csv:
        fail("%s: names %r, CSV %r" % (name, names, names_csv))
    data1, data2 = m["data_1"].T, m["data_2"].T  # binTrans: rows are samples
    if data2.shape != values.shape:
        fail("%s: data_2 %s, CSV %s" % (name, data2.shape, values.shape))
    for j, var in enumerate(names):
        matrix, column, _, extrapolation = (int(v) for v in info[:, j])
        if var in names_csv:
            k = names_csv.index(var)
            source = data2 if matrix in (0, 2) else None
            if source is None or (matrix == 0) != (var == "time") or extrapolation != -1:
                fail("%s: %s has dataInfo %r" % (name, var, list(info[:, j])))
            if not np.array_equal(source[:, column - 1], values[:, k]):
                fail("%s: %s differs from the CSV" % (name, var))
        else:
            if matrix != 1 or extrapolation != 0:
                fail("%s: parameter %s has dataInfo %r" % (name, var, list(info[:, j])))
            start, end = data1[:, column - 1]
            if start != end or (var in parameters and start != parameters[var]):
                fail("%s: parameter %s = %r, %r" % (name, var, start, end))
    if list(data1[:, 0]) != [values[0, 0], values[-1, 0]]:
        fail("%s: data_1's time %r" % (name, list(data1[:, 0])))
    missing = set(parameters) - set(names)
    if missing:
        fail("%s: parameters %r missing" % (name, missing))
    print("mat %s %s: %d variables, %d samples, as the CSV; parameters %r" %
          (name, " ".join(args), len(names), len(values), parameters))


check_mat("rlc.hbg", ["--t-end", "2", "-p", "R=0.5"], {"V": 1.0, "R": 0.5, "L": 0.5, "C": 0.1})
check_mat("bouncing_ball.hbg", ["--t-end", "3"], {"g": 9.81, "e": 0.8, "h0": 1.0})
check_mat("mass_chain.hbg", ["--t-end", "1", "--dt-out", "0.01"], {})
print("result files read back as written")
