#!/usr/bin/env bash
# Builds hbg with AddressSanitizer and UBSan into build-asan/ and runs every
# test there. Slower than scripts/test.sh (about 10 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHBG_SANITIZE=ON
cmake --build build-asan -j"$jobs"
cd build-asan
# LLVM and the ANTLR runtime keep caches for the process lifetime: leaks are
# not what this run looks for. UBSan reports fail the run.
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure -j"$jobs"
