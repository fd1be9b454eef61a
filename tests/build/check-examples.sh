#!/usr/bin/env bash
# check-examples.sh HBGC EXAMPLES WORKDIR
#
# Builds a simulator of every example with `hbgc build` and runs it and
# `hbgc run` with the same options: the CSV and the event log must be the
# same bytes. Each simulator must load no LLVM, ANTLR or hbg library
# (`ldd`). Prints one line per example; exits 1 at the first difference.
set -euo pipefail
hbgc="$1"
examples="$2"
work="$3"
rm -rf "$work"
mkdir -p "$work"
count=0
for file in "$examples"/*.hbg; do
  name="$(basename "$file" .hbg)"
  args=()
  grep -q 't_end' "$file" || args=(--t-end 1)
  "$hbgc" build "$file" -o "$work/$name"
  if ldd "$work/$name" | grep -Ei 'llvm|antlr|hbg'; then
    echo "$name: the simulator loads a library it must not need" >&2
    exit 1
  fi
  (cd "$examples" && "$hbgc" run "$name.hbg" "${args[@]}" --events "$work/$name.run.events" \
     > "$work/$name.run.csv")
  "$work/$name" "${args[@]}" --events "$work/$name.built.events" > "$work/$name.built.csv"
  for kind in csv events; do
    if ! cmp "$work/$name.run.$kind" "$work/$name.built.$kind"; then
      echo "$name: the simulator's $kind differs from hbgc run's" >&2
      exit 1
    fi
  done
  echo "$name: $(wc -l < "$work/$name.built.csv") rows, $(($(wc -l < "$work/$name.built.events") - 1)) event-log rows, identical"
  count=$((count + 1))
done
# Options other than the defaults: a parameter, a fixed-step method, the
# stiff method with a tolerance, the iterative remap, an input's value.
check() {
  local name="$1"
  shift
  (cd "$examples" && "$hbgc" run "$name.hbg" "$@" > "$work/opt.run.csv")
  "$work/$name" "$@" > "$work/opt.built.csv"
  cmp "$work/opt.run.csv" "$work/opt.built.csv" || { echo "$name $*: differs" >&2; exit 1; }
  echo "$name $*: identical"
}
check rlc --t-end 2 -p R=0.5 --method rk4 --dt 0.01
check rlc --t-end 2 --method rosenbrock --rtol 1e-8 --dt-out 0.05
check collision_inelastic --t-end 1 --remap iterative --remap-factor 0.5
check bouncing_ball --t-end 3 --max-step 0.01 --atol 1e-9
check dc_motor_speed -p V=12 --dt-out 0.05
check bouncing_ball --t-end 3 --format=mat -p g=9.7
check rlc --t-end 0.5 --format table
# --stats: the run's counters on stderr, the CSV unchanged.
"$work/bouncing_ball" --t-end 3 --stats > "$work/stats.csv" 2> "$work/stats.txt"
grep -q '^steps: [0-9]* accepted' "$work/stats.txt" && grep -q '^events: [1-9]' "$work/stats.txt" ||
  { echo "bouncing_ball --stats: no counters" >&2; cat "$work/stats.txt" >&2; exit 1; }
(cd "$examples" && "$hbgc" run bouncing_ball.hbg --t-end 3) | cmp - "$work/stats.csv"
echo "bouncing_ball --stats: counters on stderr, the same CSV"
echo "all $count examples: the built simulators write what hbgc run writes"
