#!/usr/bin/env bash
# check-readme.sh HBGC_DIR SOURCE_DIR WORKDIR
#
# Runs every `sh` block of README.md that follows a line
# `<!-- run by tests/readme -->`, line by line, in a scratch directory
# where `hbgc` is the build's and `examples/` the source tree's; each line
# must succeed. A `python` block so marked runs whole, with the build's
# Python module (HBGC_DIR/../python) when it was built. Then checks that README.md's C++ embedding example is the
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
export PYTHONPATH="$bin/../python"
/usr/bin/python3 - "$src/README.md" "$src/tests/install/consumer/step.cpp" "$work" <<'PY'
import subprocess
import sys

readme, step, work = sys.argv[1:4]
lines = open(readme).read().splitlines()
blocks, scripts, cpp = [], [], None
for i, line in enumerate(lines):
    if line.strip() == "<!-- run by tests/readme -->" and lines[i + 1] == "```sh":
        end = lines.index("```", i + 2)
        blocks.append(lines[i + 2:end])
    if line.strip() == "<!-- run by tests/readme -->" and lines[i + 1] == "```python":
        end = lines.index("```", i + 2)
        scripts.append("\n".join(lines[i + 2:end]) + "\n")
    if line == "```cpp" and cpp is None:
        end = lines.index("```", i + 1)
        cpp = lines[i + 1:end]
if len(blocks) < 2:
    sys.exit("check-readme: fewer `sh` blocks marked for tests/readme than expected")
for block in blocks:
    for command in block:
        print("$ " + command, flush=True)
        subprocess.run(command, shell=True, cwd=work, check=True)
import os
# The compiled part, not the folder: a build configured once with the
# module and then without it (a sanitizer build) keeps the folder.
package = os.path.join(os.environ["PYTHONPATH"], "hbg")
built = os.path.isdir(package) and any(f.startswith("_hbg") for f in os.listdir(package))
for script in scripts:
    if not built:
        print("check-readme: the Python module was not built; its block is not run")
        break
    print(script, flush=True)
    subprocess.run([sys.executable, "-c", script], cwd=work, check=True)
code = open(step).read().splitlines()
begin = code.index("  // README: begin")
end = code.index("  // README: end")
shown = [l[2:] if l.startswith("  ") else l for l in code[begin + 1:end]]
if cpp != shown:
    sys.exit("check-readme: README.md's C++ example is not tests/install/consumer/step.cpp's")
print("check-readme: %d commands and %d Python blocks ran; the C++ example is step.cpp's" %
      (sum(map(len, blocks)), len(scripts) if built else 0))
PY
