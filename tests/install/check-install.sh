#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds the consumer
# project in tests/install/consumer against it with find_package(hbg), and
# runs it (a model importing the installed standard library, against its
# closed form); then checks that the installed hbgc finds its standard
# library and its LLVM backend in the prefix.
#
#   tests/install/check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log"
for f in bin/hbgc lib/hbg/libhbg_llvm.so lib/cmake/hbg/hbgConfig.cmake include/hbg/hbg.h \
         share/hbg/stdlib/electrical.hbg; do
  test -e "$scratch/prefix/$f" || { echo "missing in the installation: $f"; exit 1; }
done
cmake -S "$src/tests/install/consumer" -B "$scratch/consumer" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log" ||
  { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/consumer" -j2 > "$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
"$scratch/consumer/consumer"
"$scratch/consumer/step"
# The installed hbgc, from a directory without the sources: the standard
# library and the backend come from the prefix (--tier jit needs the
# backend).
cd "$scratch"
printf 'import electrical;\nmodel R1 { VoltageSource s(V = 2); Resistor r(R = 4); Ground g;\n  0 a; 0 z; bond s.p -> a; bond a -> r.p; bond r.n -> z; bond z -> s.n; bond z -> g.p;\n  output i = r.i; }\n' > r1.hbg
HBG_PATH= "$scratch/prefix/bin/hbgc" run r1.hbg --t-end 1 --dt-out 1 --tier jit | tail -1 | grep -q '^1,0.5$' ||
  { echo "installed hbgc: unexpected output"; "$scratch/prefix/bin/hbgc" run r1.hbg --t-end 1 --dt-out 1 --tier jit; exit 1; }
# Only the embedding API's headers are installed, not the compiler's.
for d in syntax sema driver causality symbolic bondgraph flatten; do
  test ! -e "$scratch/prefix/include/hbg/$d" || { echo "installed: include/hbg/$d"; exit 1; }
done
# The installed hbgc builds a simulator and an FMU from the installed
# libraries, and both run.
HBG_PATH= "$scratch/prefix/bin/hbgc" build r1.hbg -o r1
./r1 --t-end 1 --dt-out 1 | tail -1 | grep -q '^1,0.5$' || { echo "installed build: bad output"; exit 1; }
HBG_PATH= "$scratch/prefix/bin/hbgc" build r1.hbg --fmu -o r1.fmu
python3 -m zipfile -l r1.fmu | grep -q 'binaries/x86_64-linux/R1.so' ||
  { echo "installed build: no FMU binary"; exit 1; }
echo "installation checked"
