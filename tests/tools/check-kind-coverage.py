#!/usr/bin/python3
"""check-kind-coverage.py DEF TESTS_DIR: every diagnostic kind has a test.

A test lists the kinds it shows on a line `// KIND: A, B` (`# KIND:` in .test
files). A C++ unit test (`*_test.cpp`) shows a kind by asserting it:
`CHECK(r.failure->kind == hbg::DiagKind::RunZeno)` (run-time, linearize and
steady-state kinds only, which no model may reach through the command line: a
singular remap, too many steps, a grazing event).
Run-time messages are matched after where the run was (`error: model `M` at
t = 0.5 in mode `m`: <message>`), and a message over several lines by its
first. This script fails when
  - a kind in DEF (DiagnosticKinds.def) is listed by no test under TESTS_DIR;
  - a test lists a kind that DEF does not have;
  - a test lists a kind but none of its CHECK lines shows that kind's message
    (`error: <message>` / `note: <message>`, the format's placeholders
    matching any text), so a listing cannot go stale silently;
  - a model test (.hbg) shows a message of some kind without listing it.
"""

import os
import re
import sys

DIAG = re.compile(r'^HBG_DIAG\((\w+),\s*(\w+),\s*"((?:[^"\\]|\\.)*)"\)', re.M)
KIND = re.compile(r"^\s*(?://|#)\s*KIND:\s*(.*)$")
# A FileCheck line: CHECK, or a prefix the test's RUN lines name.
CHECK = re.compile(r"^\s*(?://|#)\s*([A-Z][A-Z0-9_]*)(?:-NEXT|-SAME)?:(.*)$")
RUN = re.compile(r"^\s*(?://|#)\s*RUN:(.*)$")


WHERE = r"(?:model `[^`]*`(?: at t = [^ :]+)?(?: in mode `[^`]*`)?: )?"
ASSERTED = re.compile(r"\b(?:CHECK|REQUIRE)\(.*\bkind\s*==\s*(?:hbg::)?DiagKind::((?:Run|Linearize|Steady)\w+)")
PREFIXES = re.compile(r"--check-prefix(?:es)?[= ]([\w,-]+)")


def message_regex(severity, fmt):
    text = fmt.encode().decode("unicode_escape")
    several = "\n" in text
    parts = re.split(r"\{\d\}", text.split("\n")[0])
    body = "(.+?)".join(re.escape(p) for p in parts)
    return re.compile(r"(?:^|: )%s: %s%s%s" % (severity.lower(), WHERE, body, "" if several else "$"))


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    def_path, tests_dir = sys.argv[1], sys.argv[2]
    with open(def_path, encoding="utf-8") as f:
        kinds = {name: message_regex(sev, fmt) for name, sev, fmt in DIAG.findall(f.read())}
    if not kinds:
        print("no HBG_DIAG entries in %s" % def_path)
        return 1

    problems = []
    listed = {}
    for dirpath, dirnames, filenames in os.walk(tests_dir):
        dirnames.sort()
        for fn in sorted(filenames):
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, tests_dir)
            if fn.endswith("_test.cpp"):
                with open(path, encoding="utf-8") as f:
                    for k in ASSERTED.findall(f.read()):
                        if k not in kinds:
                            problems.append("%s: asserts `%s`, which DiagnosticKinds.def does not have"
                                            % (rel, k))
                        else:
                            listed.setdefault(k, []).append(rel)
                continue
            if not fn.endswith((".hbg", ".test")):
                continue
            claimed, lines, prefixes = [], [], {"CHECK"}
            with open(path, encoding="utf-8") as f:
                for line in f:
                    line = line.rstrip("\n")
                    lines.append(line)
                    m = KIND.match(line)
                    if m:
                        claimed += [k.strip() for k in m.group(1).split(",") if k.strip()]
                    m = RUN.match(line)
                    if m:
                        for p in PREFIXES.findall(m.group(1)):
                            prefixes.update(p.split(","))
            checks = [m.group(2) for m in map(CHECK.match, lines) if m and m.group(1) in prefixes]
            for k in claimed:
                if k not in kinds:
                    problems.append("%s: lists `%s`, which DiagnosticKinds.def does not have" % (rel, k))
                    continue
                listed.setdefault(k, []).append(rel)
                if not any(kinds[k].search(c) for c in checks):
                    problems.append("%s: lists `%s` but no CHECK line shows its message" % (rel, k))
            if fn.endswith(".hbg"):
                for c in checks:
                    shown = [k for k, rx in kinds.items() if rx.search(c)]
                    if shown and not set(shown) & set(claimed):
                        problems.append("%s: shows `%s` but lists none of %s in `KIND:`"
                                        % (rel, c, ", ".join(shown)))

    for k in kinds:
        if k not in listed:
            problems.append("`%s` has no test: add one under tests/ with `KIND: %s`" % (k, k))
    if problems:
        print("\n".join(problems))
        return 1
    print("%d diagnostic kinds, each shown by a test" % len(kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
