#!/usr/bin/env python3
"""hbgc sweep --steady: periodic steady states over parameter sets.

  check-sweep-steady.py HBGC STEADY_MODELS WORK [MPIRUN]

- The buck of tests/steady in continuous conduction over its duty cycle
  and over its load: each line's mean output is the closed form D Vin (and
  the coil's mean current D Vin / R) to 1e-9, its modes the two switch
  states, its residual below the analysis's 1e-11.
- Each line's figures equal, bit for bit, those `hbgc steady --stats`
  writes for the same parameters; --trajectories writes the period's rows
  `hbgc steady` writes.
- --jobs 1 and --jobs 2, and `mpirun -n 2` (when MPIRUN is given), write
  the same bytes.
- A set without a periodic steady state (the buck-boost with its switch
  always closed: the coil integrates the supply) has its error in its
  line, and the sweep exits 1; the other sets are unaffected.
"""
import csv
import io
import os
import subprocess
import sys

hbgc, models, work = sys.argv[1:4]
mpirun = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(work, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(*args, check=True, env=None, prefix=()):
    p = subprocess.run([*prefix, hbgc, *args], cwd=models, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    if check and p.returncode != 0:
        fail("hbgc %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def table(text):
    return list(csv.DictReader(io.StringIO(text)))


def close(a, b, tol):
    return abs(a - b) <= tol * abs(b)


MODES = "switch.j=closed, diode.j=blocking | switch.j=open, diode.j=conducting"
VIN = 12.0

# --- Over the duty cycle, then the load: the closed form, line by line.
duty = ["sweep", "buck_ccm.hbg", "-p", "D=0.2:0.1:0.7", "--steady"]
out = run(*duty, "--trajectories", os.path.join(work, "traj")).stdout
lines = table(out)
header = out.split("\n", 1)[0]
if header != ("run,D,status,vout.mean,vout.rms,vout.min,vout.max,vout.peak_to_peak,il.mean,"
              "il.rms,il.min,il.max,il.peak_to_peak,period,residual,iterations,modes"):
    fail("header %r" % header)
if [l["D"] for l in lines] != ["0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]:
    fail("the duty cycles %r" % [l["D"] for l in lines])
for l in lines:
    D = float(l["D"])
    if l["status"] != "ok" or l["modes"] != MODES or float(l["residual"]) > 1e-11 or \
            float(l["period"]) != 5e-05 or int(l["iterations"]) < 1:
        fail("D = %s: %r" % (l["D"], l))
    if not close(float(l["vout.mean"]), D * VIN, 1e-9) or \
            not close(float(l["il.mean"]), D * VIN / 10, 1e-9):
        fail("D = %s: mean vout %s, il %s; D Vin = %r" % (l["D"], l["vout.mean"], l["il.mean"],
                                                          D * VIN))
    if float(l["vout.peak_to_peak"]) != float(l["vout.max"]) - float(l["vout.min"]):
        fail("D = %s: peak to peak is not max - min" % l["D"])
print("duty cycle: mean vout = D Vin to 1e-9 for D = 0.2 ... 0.7, two modes a period")

load = table(run("sweep", "buck_ccm.hbg", "-p", "R=5,10,20,40", "--steady", "--jobs", "2").stdout)
for l in load:
    R = float(l["R"])
    if l["status"] != "ok" or not close(float(l["vout.mean"]), 0.4 * VIN, 1e-9) or \
            not close(float(l["il.mean"]), 0.4 * VIN / R, 1e-9):
        fail("R = %s: %r" % (l["R"], l))
print("load: mean vout = D Vin and mean il = D Vin / R to 1e-9 for R = 5 ... 40")

# --- Each line is what `hbgc steady` finds for its parameters, bit for bit.
for l in lines[::2]:
    stats = os.path.join(work, "stats.csv")
    period = run("steady", "buck_ccm.hbg", "-p", "D=" + l["D"], "-q", "--stats", stats).stdout
    with open(stats) as f:
        for s in table(f.read()):
            for what in ("mean", "rms", "min", "max", "peak_to_peak"):
                if float(l[s["output"] + "." + what]) != float(s[what]):
                    fail("D = %s: %s.%s %s, hbgc steady %s" % (l["D"], s["output"], what,
                                                               l[s["output"] + "." + what],
                                                               s[what]))
    with open(os.path.join(work, "traj", "run_%s.csv" % l["run"])) as f:
        if table(f.read()) != table(period):
            fail("D = %s: its trajectory is not the period `hbgc steady` writes" % l["D"])
print("each line's figures and period those of `hbgc steady` for its parameters, bit for bit")

# --- Threads and ranks write the same bytes.
two = run(*duty, "--jobs", "2").stdout
one = run(*duty, "--jobs", "1").stdout
if one != two or one != out:
    fail("--jobs 1 and --jobs 2 differ")
if mpirun:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    target = os.path.join(work, "mpi.csv")
    run(*duty, "-o", target, env=env, prefix=(mpirun, "-n", "2"))
    with open(target) as f:
        if f.read() != one:
            fail("mpirun -n 2 wrote another summary than one process")
    print("threads and ranks: --jobs 1, --jobs 2 and mpirun -n 2 write the same bytes")
else:
    print("threads: --jobs 1 and --jobs 2 write the same bytes (no MPI here)")

# --- A set without a steady state: its line says why, the sweep exits 1.
p = run("sweep", "buck_boost.hbg", "-p", "D=0.4,1", "--steady", "--outputs", "vout",
        check=False)
bad = table(p.stdout)
if p.returncode != 1 or len(bad) != 2 or bad[0]["status"] != "ok" or \
        "no periodic steady state" not in bad[1]["status"] or bad[1]["vout.mean"] != "" or \
        "1 of 2 steady states failed" not in p.stderr:
    fail("a set without a steady state: exit %d, %r, %r" % (p.returncode, bad, p.stderr))
print("failure: `%s` in the status column, exit status 1" % bad[1]["status"][:70])
