#!/usr/bin/env bash
# Wall time of `hbgc run` on a small model, process start to exit, with
# each tier: the median of N runs (default 21) of
#   hbgc run examples/rlc.hbg --t-end 0.01 --tier T
# tiered (the default) runs on tapes while LLVM loads in the background,
# and exits without waiting for it; jit loads LLVM and compiles first.
# Usage: bench/startup.sh [BUILD_DIR] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-21}
hbgc="$build/bin/hbgc"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
expected=$("$hbgc" run examples/rlc.hbg --t-end 0.01 --tier jit | tail -1)
for tier in tiered tape jit; do
  times=()
  for ((k = 0; k < n; ++k)); do
    start=$(date +%s%N)
    "$hbgc" run examples/rlc.hbg --t-end 0.01 --tier "$tier" > "$out"
    end=$(date +%s%N)
    last=$(tail -1 "$out")
    if [[ "$last" != "$expected" ]]; then
      echo "startup: --tier $tier gave the last row $last, --tier jit $expected" >&2
      exit 1
    fi
    times+=($(((end - start) / 1000)))
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((n + 1) / 2))p")
  awk -v t="$tier" -v m="$median" -v n="$n" \
    'BEGIN { printf "hbgc run rlc.hbg --tier %-6s median %6.1f ms of %d runs\n", t, m / 1000, n }'

done
