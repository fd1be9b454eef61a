#!/usr/bin/env python3
"""Renders every example's drawing with Graphviz and checks the SVG.

  check-svg.py HBGC EXAMPLES WORK

For each examples/*.hbg: `hbgc dot` piped through Graphviz's `dot -Tsvg`
(Debian's graphviz), and `hbgc dot --svg` (which runs it itself) must give
an SVG that parses and draws the bond graph `hbgc run --emit=bondgraph`
lists: a node per element (its name as the node's tooltip), an edge per
bond between the right elements, each with a half-arrow at its head and
exactly one causal stroke (the tee, a filled rectangle) at one end.
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

hbgc, examples, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def graph_of(model):
    """Element names and bonds (from, to) of `hbgc run --emit=bondgraph`."""
    dump = subprocess.run([hbgc, "run", model, "--emit=bondgraph"], cwd=examples, check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    elements, bonds = [], []
    for line in dump.splitlines():
        m = re.match(r"  bond \S+: (\S+) -> (\S+)$", line)
        if m:
            bonds.append((m.group(1), m.group(2)))
            continue
        m = re.match(r"  (Se|Sf|MSe|MSf|C|I|R|TF|GY|MTF|MGY|0|1) (\S+)", line)
        if m:
            elements.append(m.group(2))
    return elements, bonds


def points(el):
    return [tuple(map(float, p.split(","))) for p in el.get("points").split()]


def is_stroke(pts):
    """The tee: a filled rectangle (5 points, closed)."""
    return len(pts) == 5 and pts[0] == pts[-1]


count = 0
for name in sorted(os.listdir(examples)):
    if not name.endswith(".hbg"):
        continue
    elements, bonds = graph_of(name)
    dot_text = subprocess.run([hbgc, "dot", name], cwd=examples, check=True,
                              stdout=subprocess.PIPE).stdout
    piped = subprocess.run(["dot", "-Tsvg"], input=dot_text, check=True,
                           stdout=subprocess.PIPE).stdout
    out = os.path.join(work, name.replace(".hbg", ".svg"))
    subprocess.run([hbgc, "dot", name, "--svg", "-o", out], cwd=examples, check=True)
    with open(out, "rb") as f:
        if f.read() != piped:
            fail("%s: `hbgc dot --svg` differs from `hbgc dot | dot -Tsvg`" % name)
    root = ET.fromstring(piped)
    ids = {}
    for g in root.iter(SVG + "g"):
        if g.get("class") == "node":
            title = g.find(SVG + "title").text
            a = g.find(".//" + SVG + "a")
            ids[title] = a.get(XLINK + "title") if a is not None else None
    if sorted(ids.values()) != sorted(elements):
        fail("%s: nodes %r, elements %r" % (name, sorted(ids.values()), sorted(elements)))
    drawn = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "edge":
            continue
        a, b = g.find(SVG + "title").text.split("->")
        drawn.append((ids[a], ids[b]))
        polys = [points(p) for p in g.iter(SVG + "polygon")]
        strokes = [p for p in polys if is_stroke(p)]
        arrows = [p for p in polys if not is_stroke(p)]
        if len(strokes) != 1 or len(arrows) != 1:
            fail("%s: bond %s -> %s has %d causal strokes and %d arrowheads" %
                 (name, ids[a], ids[b], len(strokes), len(arrows)))
        # The half-arrow: its barb lies on one side of the bond's line only.
        tip, barb = arrows[0][0], arrows[0][1]
        if tip == barb:
            fail("%s: bond %s -> %s: degenerate arrowhead" % (name, ids[a], ids[b]))
    if sorted(drawn) != sorted(bonds):
        fail("%s: edges %r, bonds %r" % (name, sorted(drawn), sorted(bonds)))
    print("%s: %d elements, %d bonds, each with a half-arrow and one causal stroke" %
          (name, len(elements), len(bonds)))
    count += 1
print("all %d examples drawn" % count)
