#!/usr/bin/env python3
"""hbgc sweep against separate runs, across threads and MPI ranks.

  check-sweep.py HBGC EXAMPLES WORK [MPIRUN]

- Each summary line (final value, minimum, maximum, events) equals what
  the CSV and event log of a separate `hbgc run` with the same parameters
  give, bit for bit; so does each trajectory written with --trajectories.
- --jobs 1 and --jobs 2, and `mpirun -n 2` (when MPIRUN is given), write
  the same bytes.
- --samples N by Latin hypercube puts one sample in each of the N strata of
  every range; the same seed gives the same sets, another seed others;
  Monte Carlo samples stay in their ranges.
- A run that fails is a line with its error in the status column, and the
  sweep exits 1.
"""
import csv
import io
import os
import subprocess
import sys

hbgc, examples, work = sys.argv[1:4]
mpirun = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(work, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(*args, check=True):
    p = subprocess.run([hbgc, *args], cwd=examples, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        fail("hbgc %s: %s" % (" ".join(args), p.stderr))
    return p


def table(text):
    return list(csv.DictReader(io.StringIO(text)))


# --- A switched model over a grid: each line is a separate run's.
grid = ["sweep", "bouncing_ball.hbg", "-p", "e=0.5:0.1:0.9", "-p", "h0=1,2", "--t-end", "3",
        "--outputs", "h,v"]
lines = table(run(*grid, "--jobs", "2", "--trajectories", os.path.join(work, "traj")).stdout)
if len(lines) != 10:
    fail("%d lines for a 5 x 2 grid" % len(lines))
for line in lines:
    args = ["run", "bouncing_ball.hbg", "--t-end", "3", "-p", "e=" + line["e"], "-p",
            "h0=" + line["h0"], "--events", "-"]
    out = run(*args).stdout
    trajectory, log = out.split("\nevent,", 1)
    rows = table(trajectory + "\n")
    for name in ("h", "v"):
        values = [float(r[name]) for r in rows]
        for what, v in (("final", values[-1]), ("min", min(values)), ("max", max(values))):
            if float(line[name + "." + what]) != v:
                fail("run %s: %s.%s %s, separate run %r" %
                     (line["run"], name, what, line[name + "." + what], v))
    events = len({r["event"] for r in table("event," + log)})
    if int(line["events"]) != events or line["status"] != "ok":
        fail("run %s: %s events, the log has %d" % (line["run"], line["events"], events))
    with open(os.path.join(work, "traj", "run_%s.csv" % line["run"])) as f:
        if f.read() != trajectory + "\n":
            fail("run %s: its trajectory differs from the separate run's CSV" % line["run"])
print("bouncing_ball grid: 10 runs, each summary and trajectory the separate run's, bit for bit")

# --- Threads and ranks write the same bytes.
one = run(*grid, "--jobs", "1").stdout
two = run(*grid, "--jobs", "2").stdout
if one != two:
    fail("--jobs 1 and --jobs 2 differ")
if mpirun:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    out = os.path.join(work, "mpi.csv")
    p = subprocess.run([mpirun, "-n", "2", hbgc, *grid, "-o", out], cwd=examples, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        fail("mpirun -n 2: %s" % p.stderr)
    with open(out) as f:
        if f.read() != one:
            fail("mpirun -n 2 wrote another summary than one process")
    print("threads and ranks: --jobs 1, --jobs 2 and mpirun -n 2 write the same bytes")
    # A failure on rank 0 alone (its output file) stops every rank: no hang.
    p = subprocess.run([mpirun, "-n", "2", hbgc, *grid, "-o", "/nonexistent/dir/x.csv"],
                       cwd=examples, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    if p.returncode == 0 or "cannot write `/nonexistent/dir/x.csv`" not in p.stderr:
        fail("mpirun -n 2 with an unwritable -o: exit %d, %r" % (p.returncode, p.stderr))
    # The model from standard input reaches rank 0 only: refused by all.
    with open(os.path.join(examples, "rlc.hbg")) as model:
        p = subprocess.run([mpirun, "-n", "2", hbgc, "sweep", "-", "-p", "R=1,2", "--t-end", "1"],
                           cwd=examples, env=env, stdin=model, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode == 0 or "standard input" not in p.stderr:
        fail("mpirun -n 2 with the model on stdin: exit %d, %r" % (p.returncode, p.stderr))
    print("MPI failures: an unwritable -o and a model on stdin end every rank, no hang")
else:
    print("threads: --jobs 1 and --jobs 2 write the same bytes (no MPI here)")

# --- Latin hypercube: one sample per stratum of each range.
lhs = ["sweep", "rlc.hbg", "-p", "R=0.5:2", "-p", "L=0.1:0.9", "--samples", "20", "--t-end",
       "1", "--outputs", "current"]
a = table(run(*lhs).stdout)
for name, lo, hi in (("R", 0.5, 2), ("L", 0.1, 0.9)):
    strata = sorted(int((float(r[name]) - lo) / (hi - lo) * 20) for r in a)
    if strata != list(range(20)):
        fail("Latin hypercube: strata of %s are %r" % (name, strata))
if table(run(*lhs).stdout) != a:
    fail("the same seed gave other samples")
if table(run(*lhs, "--seed", "7").stdout) == a:
    fail("another seed gave the same samples")
mc = table(run(*lhs[:-2], "--sampling", "mc", "--outputs", "current").stdout)
if not all(0.5 <= float(r["R"]) <= 2 and 0.1 <= float(r["L"]) <= 0.9 for r in mc):
    fail("Monte Carlo samples out of their ranges")
print("samples: a Latin hypercube stratum each, reproducible by seed; Monte Carlo in range")

# --- A failed run: its line says why, the sweep exits 1.
models = os.path.join(os.path.dirname(examples), "tests", "models")
p = subprocess.run([hbgc, "sweep", "rc_experiment.hbg", "-p", "tau=-1,1"], cwd=models,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
lines = table(p.stdout)
if p.returncode != 1 or lines[0]["status"] == "ok" or lines[1]["status"] != "ok" or \
        "1 of 2 runs failed" not in p.stderr:
    fail("a failing run: exit %d, %r, %r" % (p.returncode, lines, p.stderr))
print("failure: `%s` in the status column, exit status 1" % lines[0]["status"][:60])
