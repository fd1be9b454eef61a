#!/usr/bin/env bash
# check-readme.sh HBGC_DIR SOURCE_DIR WORKDIR
#
# Runs every `sh` block of README.md that follows a line
# `<!-- run by tests/readme -->`, line by line, in a scratch directory
# where `hbgc` is the build's and `examples/` the source tree's; each line
# must succeed. Then checks that README.md's C++ embedding example is the
# code between `README: begin` and `README: end` in
# tests/install/consumer/step.cpp (which install_consumer builds and runs).
set -euo pipefail
bin="$1"
src="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
ln -s "$src/examples" "$work/examples"
export PATH="$bin:$PATH"
python3 - "$src/README.md" "$src/tests/install/consumer/step.cpp" "$work" <<'PY'
import subprocess
import sys

readme, step, work = sys.argv[1:4]
lines = open(readme).read().splitlines()
blocks, cpp = [], None
for i, line in enumerate(lines):
    if line.strip() == "<!-- run by tests/readme -->" and lines[i + 1] == "```sh":
        end = lines.index("```", i + 2)
        blocks.append(lines[i + 2:end])
    if line == "```cpp" and cpp is None:
        end = lines.index("```", i + 1)
        cpp = lines[i + 1:end]
if len(blocks) < 2:
    sys.exit("check-readme: fewer `sh` blocks marked for tests/readme than expected")
for block in blocks:
    for command in block:
        print("$ " + command, flush=True)
        subprocess.run(command, shell=True, cwd=work, check=True)
code = open(step).read().splitlines()
begin = code.index("  // README: begin")
end = code.index("  // README: end")
shown = [l[2:] if l.startswith("  ") else l for l in code[begin + 1:end]]
if cpp != shown:
    sys.exit("check-readme: README.md's C++ example is not tests/install/consumer/step.cpp's")
print("check-readme: %d commands ran; the C++ example is step.cpp's" % sum(map(len, blocks)))
PY
