#!/usr/bin/env python3
"""Plots read back: the SVG's points are the run's rows.

  check-plots.py HBGC EXAMPLES WORK

Each panel carries its axes' ranges (data-t0/t1/y0/y1) and place
(data-x/y/width/height); with them every polyline point is mapped back to
(time, value) and must be a row of the CSV of the same run, and the
smallest and largest values of each output must be drawn (to the pixel).
Event lines and mode bands must be the event log's; `hbgc plot` of the CSV
and the log must draw the same SVG as `hbgc run --plot`; a long run's
drawing stays small.
"""
import csv
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

hbgc, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(*args):
    subprocess.run([hbgc, *args], cwd=examples, check=True, stderr=subprocess.DEVNULL)


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def check(model, args, name):
    svg_path, csv_path, log_path = (os.path.join(work, name + ext)
                                    for ext in (".svg", ".csv", ".events"))
    run("run", model, *args, "--plot", svg_path, "-o", csv_path, "--events", log_path)
    header, rows = read_csv(csv_path)
    root = ET.parse(svg_path).getroot()
    panels = [g for g in root.iter(NS + "g") if g.get("class") == "panel"]
    if [p.get("data-output") for p in panels] != header[1:]:
        fail("%s: panels %r, outputs %r" % (name, [p.get("data-output") for p in panels], header[1:]))
    for k, p in enumerate(panels):
        t0, t1, y0, y1 = (float(p.get("data-" + a)) for a in ("t0", "t1", "y0", "y1"))
        x, y, w, h = (float(p.get("data-" + a)) for a in ("x", "y", "width", "height"))
        (line,) = [l for l in p.iter(NS + "polyline") if l.get("class") == "series"]
        pts = [tuple(map(float, q.split(","))) for q in line.get("points").split()]
        tx, vy = (t1 - t0) / w, (y1 - y0) / h  # one pixel, in time and in value
        column = [(r[0], r[k + 1]) for r in rows]
        for px, py in pts:
            t, v = t0 + (px - x) * tx, y0 + (y + h - py) * vy
            if not any(abs(t - rt) <= 0.01 * tx and abs(v - rv) <= 0.01 * vy for rt, rv in column):
                fail("%s %s: drawn point (%g, %g) is no row" % (name, header[k + 1], t, v))
        for target in (min(v for _, v in column), max(v for _, v in column)):
            if not any(abs(y0 + (y + h - py) * vy - target) <= 0.01 * vy for _, py in pts):
                fail("%s %s: extreme %g not drawn" % (name, header[k + 1], target))
    with open(log_path) as f:
        log = list(csv.DictReader(f))
    after = [r for r in log if r["phase"] == "after"]
    lines = [l for l in panels[0].iter(NS + "line") if l.get("class") == "event"]
    if len(lines) != len(after):
        fail("%s: %d event lines, %d events" % (name, len(lines), len(after)))
    # Mode bands: the modes in order, each change of mode starting a band.
    modes = []
    if log:
        modes = [next(r["mode"] for r in log if r["phase"] == "before")]
        for r in after:
            if r["mode"] != modes[-1]:
                modes.append(r["mode"])
    bands = [r.get("data-mode") for r in panels[0].iter(NS + "rect") if r.get("class") == "mode"]
    if bands != modes:
        fail("%s: bands %r, modes %r" % (name, bands, modes))
    # hbgc plot of the same CSV and log: the same drawing.
    title = root.find(NS + "text").text
    again = os.path.join(work, name + ".again.svg")
    run("plot", csv_path, "--events", log_path, "--title", title, "-o", again)
    with open(svg_path, "rb") as a, open(again, "rb") as b:
        if a.read() != b.read():
            fail("%s: hbgc plot draws another SVG than hbgc run --plot" % name)
    print("%s: %d panels, %d rows, every point a row, extremes drawn, %d events, %d mode bands; "
          "hbgc plot draws the same" % (name, len(panels), len(rows), len(after), len(bands)))


check("rectifier.hbg", ["--t-end", "0.06"], "rectifier")
check("bouncing_ball.hbg", ["--t-end", "3", "--dt-out", "0.001"], "bouncing_ball")
check("rlc.hbg", ["--t-end", "5"], "rlc")

# A long run: 1,000,000 rows drawn in a bounded SVG, its peak kept.
svg_path = os.path.join(work, "long.svg")
run("run", "rlc.hbg", "--t-end", "10", "--dt-out", "1e-5", "--plot", svg_path, "-o", "/dev/null")
size = os.path.getsize(svg_path)
if size > 200_000:
    fail("1,000,000 rows drew %d bytes" % size)
print("1,000,000 rows: %d bytes of SVG" % size)

# One panel for all outputs.
run("run", "rlc.hbg", "--t-end", "5", "--plot", svg_path, "--plot-together", "-o", "/dev/null")
root = ET.parse(svg_path).getroot()
panels = [g for g in root.iter(NS + "g") if g.get("class") == "panel"]
series = [l for l in root.iter(NS + "polyline") if l.get("class") == "series"]
if len(panels) != 1 or len(series) != 2:
    fail("--plot-together: %d panels, %d series" % (len(panels), len(series)))
print("--plot-together: one panel, two series")
