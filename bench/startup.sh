#!/usr/bin/env bash
# Wall time of `hbgc run` on a small model, process start to exit, with
# each tier: the median of N runs (default 21) of
#   hbgc run examples/rlc.hbg --t-end 0.01 --tier T
# tiered (the default) runs on tapes while LLVM loads in the background,
# and exits without waiting for it; jit loads LLVM and compiles first.
# Then the simulator `hbgc build examples/rlc.hbg` writes, run the same
# way (it must print the same rows as hbgc run), against the hand-written
# C program bench/rlc_baseline.c, process start to exit too.
# Times come from bash's $EPOCHREALTIME (microseconds, no process of its
# own). Usage: bench/startup.sh [BUILD_DIR] [N]
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
    start=${EPOCHREALTIME/./}
    "$hbgc" run examples/rlc.hbg --t-end 0.01 --tier "$tier" > "$out"
    end=${EPOCHREALTIME/./}
    last=$(tail -1 "$out")
    if [[ "$last" != "$expected" ]]; then
      echo "startup: --tier $tier gave the last row $last, --tier jit $expected" >&2
      exit 1
    fi
    times+=($((end - start)))
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((n + 1) / 2))p")
  awk -v t="$tier" -v m="$median" -v n="$n" \
    'BEGIN { printf "hbgc run rlc.hbg --tier %-6s median %6.1f ms of %d runs\n", t, m / 1000, n }'

done

# A simulator built ahead of time, against the hand-written baseline.
dir=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$dir"' EXIT
"$hbgc" build examples/rlc.hbg -o "$dir/rlc"
"$hbgc" run examples/rlc.hbg --t-end 0.01 > "$dir/run.csv"
"$dir/rlc" --t-end 0.01 > "$dir/built.csv"
cmp -s "$dir/run.csv" "$dir/built.csv" || {
  echo "startup: the built simulator's CSV differs from hbgc run's" >&2
  exit 1
}
median_of() {
  local times=()
  for ((k = 0; k < n; ++k)); do
    start=${EPOCHREALTIME/./}
    "$@" > "$out"
    end=${EPOCHREALTIME/./}
    times+=($((end - start)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((n + 1) / 2))p"
}
built=$(median_of "$dir/rlc" --t-end 0.01)
baseline=$(median_of "$build/bin/hbg_bench_rlc_baseline")
awk -v b="$built" -v c="$baseline" -v n="$n" 'BEGIN {
  printf "built simulator rlc --t-end 0.01   median %6.1f ms of %d runs\n", b / 1000, n
  printf "hand-written C baseline            median %6.1f ms of %d runs (ratio %.2f)\n", c / 1000, n, b / c
}'
