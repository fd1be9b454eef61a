#!/usr/bin/env python3
"""Long runs: rows streamed, Ctrl-C, the progress bar.

  check-long-runs.py HBGC EXAMPLES WORK

- Memory: a run of 2,000,000 rows peaks at the memory of a run of 10,000
  (kept, the rows would take 48 MB more).
- Ctrl-C: SIGINT a second into a long run (hbgc run, and a simulator built
  by hbgc build; CSV and MAT): exit status 130, a message with the time
  and the row count, and the file holds exactly those rows, complete and
  in order (the MAT file read back by SciPy).
- Progress: under a terminal (script(1) gives one) the bar is drawn on
  stderr; --quiet, or stderr not a terminal, draws nothing.
"""
import csv
import os
import re
import resource
import signal
import subprocess
import sys
import time

import scipy.io

hbgc, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def peak_kib(cmd):
    """The peak resident memory of `cmd`, in a fresh interpreter."""
    probe = ("import resource, subprocess, sys\n"
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], cwd=examples, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return int(out)


# Both compiled by LLVM before the run (a short run may end before the
# background compilation, which takes memory of its own).
small = peak_kib([hbgc, "run", "rlc.hbg", "--tier", "jit", "--t-end", "1", "--dt-out", "1e-4"])
large = peak_kib([hbgc, "run", "rlc.hbg", "--tier", "jit", "--t-end", "200", "--dt-out", "1e-4"])
if large - small > 8 * 1024:
    fail("2,000,000 rows took %d KiB more than 10,000" % (large - small))
print("memory: 10,000 rows %d KiB, 2,000,000 rows %d KiB" % (small, large))


def interrupt(cmd, out, fmt):
    p = subprocess.Popen(cmd + ["--t-end", "1e7", "--dt-out", "0.05", "--max-step", "1e-3", "-o", out,
                                "--format", fmt], cwd=examples, stderr=subprocess.PIPE, text=True)
    time.sleep(0.7)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    if p.returncode != 130:
        fail("%s: exit status %s after SIGINT: %s" % (cmd[0], p.returncode, err))
    m = re.search(r"interrupted: model `\w+` at t = ([^ :]+)(?: in mode `[^`]*`)?: stopped; "
                  r"the (\d+) rows computed", err)
    if not m:
        fail("%s: no interruption message: %r" % (cmd[0], err))
    t_stop, rows = float(m.group(1)), int(m.group(2))
    if not 0 < t_stop < 1e7 or rows < 10:
        fail("%s: stopped at t = %g after %d rows" % (cmd[0], t_stop, rows))
    if fmt == "csv":
        with open(out) as f:
            table = list(csv.reader(f))
        times = [float(r[0]) for r in table[1:]]
        if table[0] != ["time", "capacitor.q", "current"] or len(times) != rows or \
                any(len(r) != 3 for r in table[1:]):
            fail("%s: CSV of %d rows, %d promised" % (cmd[0], len(times), rows))
    else:
        m = scipy.io.loadmat(out)
        times = list(m["data_2"][0])
        if m["data_2"].shape != (3, rows) or list(m["data_1"][0]) != [times[0], times[-1]]:
            fail("%s: MAT data_2 %s, %d rows promised" % (cmd[0], m["data_2"].shape, rows))
    if any(b < a for a, b in zip(times, times[1:])) or times[-1] > t_stop:
        fail("%s: times out of order or past the stop" % cmd[0])
    print("%s --format %s: SIGINT at t = %g, exit 130, %d rows written and read back" %
          (os.path.basename(cmd[0]), fmt, t_stop, rows))


interrupt([hbgc, "run", "rlc.hbg"], os.path.join(work, "stopped.csv"), "csv")
interrupt([hbgc, "run", "rlc.hbg"], os.path.join(work, "stopped.mat"), "mat")
sim = os.path.join(work, "rlc")
subprocess.run([hbgc, "build", "rlc.hbg", "-o", sim], cwd=examples, check=True)
interrupt([sim], os.path.join(work, "sim-stopped.csv"), "csv")


def under_terminal(args):
    """stdout and stderr of `hbgc run rlc.hbg ARGS` under a pseudo-terminal."""
    line = " ".join([hbgc, "run", "rlc.hbg", "-o", "/dev/null"] + args)
    return subprocess.run(["script", "-qec", line, "/dev/null"], cwd=examples, check=True,
                          stdout=subprocess.PIPE, stdin=subprocess.DEVNULL).stdout.decode()


# Long enough (about a second, six million rows) for the bar, which is
# drawn every 100 ms, to show on a fast machine.
args = ["--t-end", "600", "--dt-out", "1e-4"]
shown = under_terminal(args)
if "\r\x1b[K" not in shown or not re.search(r"t = \S+ of 600 \[[#.]{20}\] +\d+%  \d+ steps", shown):
    fail("no progress bar on a terminal: %r" % shown[:300])
if under_terminal(args + ["--quiet"]).strip():
    fail("--quiet still draws")
err = subprocess.run([hbgc, "run", "rlc.hbg", "-o", "/dev/null"] + args, cwd=examples,
                     stderr=subprocess.PIPE, text=True, check=True).stderr
if err:
    fail("a progress bar on a stderr that is not a terminal: %r" % err[:200])
print("progress: drawn on a terminal, not with --quiet, not into a file")
