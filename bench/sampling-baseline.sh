#!/usr/bin/env bash
# The cost of proven event detection against the sampled detection hbg had
# before it (commit b765097: guards sampled at a few points per step, no
# time events ahead of steps, every restart from --dt). Builds that commit
# in a temporary worktree, then times both on the same runs, interleaved:
#
#   - the bouncing ball of hbg_bench_events (its `events` part);
#   - examples/buck.hbg over 2,000 periods through `hbgc run --stats`.
#
# Usage: bench/sampling-baseline.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base=${HBG_SAMPLING_TREE:-/tmp/hbg-sampling-baseline}
if [ ! -x "$base/build/bin/hbgc" ] || [ ! -x "$base/build/bin/hbg_bench_events" ]; then
  git worktree add -f "$base" b765097 >/dev/null 2>&1 || true
  cmake -S "$base" -B "$base/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$base/build" -j"$(nproc)" --target hbgc hbg_bench_events >/dev/null
fi
for run in 1 2 3; do
  echo "ball, sampled:  $("$base/build/bin/hbg_bench_events" --repeat 5 --sizes "" | sed -n 2p)"
  echo "ball, proven:   $("$build/bin/hbg_bench_events" --repeat 5 --parts events | sed -n 2p)"
  for which in sampled proven; do
    hbgc="$base/build/bin/hbgc"
    [ "$which" = proven ] && hbgc="$build/bin/hbgc"
    stats=$("$hbgc" run examples/buck.hbg --t-end 0.2 --dt-out 5e-6 --stats -o /dev/null 2>&1)
    steps=$(grep '^steps:' <<<"$stats" | sed 's/^steps: //')
    events=$(grep '^events:' <<<"$stats" | sed 's/^events: //')
    time=$(grep 'integration and events' <<<"$stats" | sed 's/.*: //')
    printf 'buck, %-8s %s steps, %s events, %s\n' "$which:" "$steps" "$events" "$time"
  done
done
