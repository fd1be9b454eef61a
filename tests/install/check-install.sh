#!/usr/bin/env bash
# Installs the build tree into a scratch prefix and moves the prefix
# elsewhere; builds the consumer project in tests/install/consumer against
# it with find_package(hbg), and runs it (a model importing the installed
# standard library, on tapes and LLVM-compiled, against its closed form);
# then checks that the installed hbgc finds its standard library and its
# LLVM backend in the prefix. The programs run with the source and build
# trees hidden (empty directories mounted over them in a private mount
# namespace), so that nothing is found there.
#
#   tests/install/check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/installed" > "$scratch/install.log"
mv "$scratch/installed" "$scratch/prefix" # a moved prefix
for f in bin/hbgc lib/hbg/libhbg_llvm.so lib/cmake/hbg/hbgConfig.cmake include/hbg/hbg.h \
         share/hbg/stdlib/electrical.hbg; do
  test -e "$scratch/prefix/$f" || { echo "missing in the installation: $f"; exit 1; }
done
cmake -S "$src/tests/install/consumer" -B "$scratch/consumer" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log" ||
  { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/consumer" -j2 > "$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
# Runs a command with the source and build trees out of reach.
mkdir -p "$scratch/empty"
hidden() {
  if unshare --user --map-root-user --mount true 2> /dev/null; then
    unshare --user --map-root-user --mount bash -c '
      mount --bind "$0" "$2" && mount --bind "$0" "$1" && shift 3 && "$@"' \
      "$scratch/empty" "$src" "$(cd "$build" && pwd)" -- "$@"
  else
    echo "check-install: no private mount namespace here; the trees stay visible"
    "$@"
  fi
}
hidden "$scratch/consumer/consumer"
hidden "$scratch/consumer/step"
# The installed hbgc, from a directory without the sources: the standard
# library and the backend come from the prefix (--tier jit needs the
# backend).
cd "$scratch"
printf 'import electrical;\nmodel R1 { VoltageSource s(V = 2); Resistor r(R = 4); Ground g;\n  0 a; 0 z; bond s.p -> a; bond a -> r.p; bond r.n -> z; bond z -> s.n; bond z -> g.p;\n  output i = r.i; }\n' > r1.hbg
hidden env HBG_PATH= "$scratch/prefix/bin/hbgc" run r1.hbg --t-end 1 --dt-out 1 --tier jit | tail -1 | grep -q '^1,0.5$' ||
  { echo "installed hbgc: unexpected output"; "$scratch/prefix/bin/hbgc" run r1.hbg --t-end 1 --dt-out 1 --tier jit; exit 1; }
# Only the embedding API's headers are installed, not the compiler's.
for d in syntax sema driver causality symbolic bondgraph flatten; do
  test ! -e "$scratch/prefix/include/hbg/$d" || { echo "installed: include/hbg/$d"; exit 1; }
done
# The installed hbgc builds a simulator and an FMU from the installed
# libraries, and both run.
hidden env HBG_PATH= "$scratch/prefix/bin/hbgc" build r1.hbg -o r1
hidden ./r1 --t-end 1 --dt-out 1 | tail -1 | grep -q '^1,0.5$' || { echo "installed build: bad output"; exit 1; }
hidden env HBG_PATH= "$scratch/prefix/bin/hbgc" build r1.hbg --fmu -o r1.fmu
python3 -m zipfile -l r1.fmu | grep -q 'binaries/x86_64-linux/R1.so' ||
  { echo "installed build: no FMU binary"; exit 1; }
# The installed Python module, when the build made one: it imports from
# the prefix's site-packages and finds the standard library there.
site=$(ls -d "$scratch"/prefix/lib/python3*/site-packages 2> /dev/null | head -1 || true)
if [ -n "$site" ] && [ -e "$site/hbg/__init__.py" ]; then
  out=$(hidden env HBG_PATH= PYTHONPATH="$site" /usr/bin/python3 -c '
import hbg
r = hbg.compile("r1.hbg").simulate(t_end=1, dt_out=1)
print(r["i"][-1])')
  [ "$out" = "0.5" ] || { echo "installed Python module: unexpected output: $out"; exit 1; }
  echo "installed Python module checked"
fi
echo "installation checked"
