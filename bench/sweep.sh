#!/usr/bin/env bash
# Sweep throughput: runs per second of one `hbgc sweep` against the cores
# it uses (--jobs 1, 2, ...) and against MPI ranks (mpirun -n 1, 2, ...,
# one job each), on the same sweep:
#   hbgc sweep examples/bouncing_ball.hbg -p e=0.5:STEP:0.9 -p h0=1:0.5:3
#        --t-end 10 --outputs h
# (RUNS parameter sets). Every configuration must write the same summary
# as --jobs 1, byte for byte. Wall time from bash's $EPOCHREALTIME, the
# best of 3. Usage: bench/sweep.sh [BUILD_DIR] [RUNS] [MAX_WAYS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-400}
ways=${3:-$(nproc)}
hbgc="$(pwd)/$build/bin/hbgc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# e in 0.5..0.9 with runs / 5 points, h0 in five values.
per=$((runs / 5))
step=$(awk -v n="$per" 'BEGIN { printf "%.17g", 0.4 / (n - 1) }')
sweep=(sweep examples/bouncing_ball.hbg -p "e=0.5:$step:0.9" -p h0=1:0.5:3 --t-end 10
       --outputs h)
count=$("$hbgc" "${sweep[@]}" --jobs 1 -o "$work/ref.csv" && echo $(($(wc -l < "$work/ref.csv") - 1)))
best() { # command...: the best wall time of 3, in seconds
  local best=""
  for ((k = 0; k < 3; ++k)); do
    local start=${EPOCHREALTIME/./}
    "$@" > /dev/null
    local end=${EPOCHREALTIME/./}
    local t=$((end - start))
    if [[ -z "$best" || $t -lt $best ]]; then best=$t; fi
  done
  awk -v us="$best" 'BEGIN { printf "%.3f", us / 1e6 }'
}
base=""
for ((j = 1; j <= ways; ++j)); do
  t=$(best "$hbgc" "${sweep[@]}" --jobs "$j" -o "$work/jobs$j.csv")
  cmp -s "$work/ref.csv" "$work/jobs$j.csv" || { echo "sweep: --jobs $j wrote another summary" >&2; exit 1; }
  base=${base:-$t}
  awk -v j="$j" -v n="$count" -v t="$t" -v b="$base" \
    'BEGIN { printf "threads: --jobs %d   %d runs in %.3f s   %.0f runs/s   speed-up %.2f\n", j, n, t, n / t, b / t }'
done
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  for ((r = 1; r <= ways; ++r)); do
    t=$(best mpirun -n "$r" "$hbgc" "${sweep[@]}" --jobs 1 -o "$work/mpi$r.csv")
    cmp -s "$work/ref.csv" "$work/mpi$r.csv" || { echo "sweep: mpirun -n $r wrote another summary" >&2; exit 1; }
    awk -v r="$r" -v n="$count" -v t="$t" -v b="$base" \
      'BEGIN { printf "MPI: mpirun -n %d     %d runs in %.3f s   %.0f runs/s   speed-up %.2f\n", r, n, t, n / t, b / t }'
  done
fi
