#!/usr/bin/env bash
# Whole processes: the default `hbgc run MODEL --t-end T` (parse, compile
# and simulate, default options but the end time) against hand-written C
# programs, each timed from start to exit as CPU time, user + system, of
# all its threads (bench/cputime.c: wait4's rusage, in microseconds).
#
#   chain of 1,000 and 10,000 masses   bench/chain_cvode.c      CVODE Adams, fixed point
#   stiff RC ladder, 100 sections      bench/rc_ladder_cvode.c  CVODE BDF, band solver
#   bouncing ball (71 bounces, rest;   bench/ball_hand.c        dopri5 + Illinois by hand
#     and with e = 1, 1,107 bounces)
#   buck converter, 2,000 periods      bench/buck_hand.c        dopri5 + events by hand
#     (and 200, for the cost per event)
#
# The C programs are compiled here with `cc -std=c99 -O3` (no -march), and
# link CVODE from CVODE_PREFIX (its lib/ and include/: a -O3 build as in
# docs/performance.md) or else from the system (Debian's libsundials-dev,
# built without optimisation). Each round runs, for every model, hbgc with
# the default tiers, with --tier tape, with --tier jit and the C program,
# one after the other; the table shows the minimum over ROUNDS rounds
# (default 5; 0 stops after the checks). Before timing, each pair must
# agree: the last CSV row within a stated relative tolerance, and the
# bounce and event counts exactly.
#
# The chain's CVODE tolerance is chosen for equal accuracy: the final
# state's error against a tight reference (CVODE at rtol 1e-12; hbgc at
# --rtol 1e-12 agrees with it to 1.3e-10 at N = 1,000) is measured for
# hbgc's default run, and CVODE gets the tightest rtol of the grid
# 1, 2, 3, 5 x 10^-k whose error is not below hbgc's (no more accurate
# than hbg). CALIBRATE=1 repeats that scan and prints it; otherwise the
# chosen values (CHAIN_RTOL_1000, CHAIN_RTOL_10000) are used and the
# errors of both sides at them are printed (ACCURACY=0 skips that).
#
# Usage: bench/whole.sh BUILD_DIR [CVODE_PREFIX]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: bench/whole.sh BUILD_DIR [CVODE_PREFIX]}" && pwd)
prefix=${2:-}
rounds=${ROUNDS:-5}
rtol1k=${CHAIN_RTOL_1000:-5e-7}
rtol10k=${CHAIN_RTOL_10000:-3e-7}
hbgc=$build/bin/hbgc
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- the C programs -------------------------------------------------------
cc=${CC:-cc}
cflags=(-std=c99 -O3)
if [[ -n $prefix ]]; then
  cv_inc=(-I"$prefix/include")
  if [[ -f $prefix/lib/libsundials_cvode.a ]]; then
    cv_lib=("$prefix/lib/libsundials_cvode.a")
  else
    cv_lib=(-L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lsundials_cvode -lsundials_nvecserial)
  fi
else
  cv_inc=()
  cv_lib=(-lsundials_cvode -lsundials_nvecserial)
fi
"$cc" -std=c99 -O2 -o "$work/cputime" "$root/bench/cputime.c"
for p in chain_cvode rc_ladder_cvode; do
  "$cc" "${cflags[@]}" "${cv_inc[@]}" -o "$work/$p" "$root/bench/$p.c" "${cv_lib[@]}" -lm
done
for p in ball_hand buck_hand; do
  "$cc" "${cflags[@]}" -o "$work/$p" "$root/bench/$p.c" -lm
done

# --- the models -----------------------------------------------------------
"$build/bin/hbg_bench_chain" --print-model 1000 > "$work/chain1000.hbg"
"$build/bin/hbg_bench_chain" --print-model 10000 > "$work/chain10000.hbg"

# name | hbgc arguments | C program and arguments | last-row tolerance | target
cases=(
  "chain, 1,000 masses, t = 0..10|$work/chain1000.hbg --t-end 10|$work/chain_cvode 1000 10 $rtol1k|1e-3|2"
  "chain, 10,000 masses, t = 0..10|$work/chain10000.hbg --t-end 10|$work/chain_cvode 10000 10 $rtol10k|1e-3|1.5"
  "stiff RC ladder, 100 sections, t = 0..10|$root/bench/rc_ladder.hbg --t-end 10|$work/rc_ladder_cvode 100 10 1e-6|1e-4|2"
  "bouncing ball, 71 bounces and rest, t = 0..10|$root/examples/bouncing_ball.hbg --t-end 10|$work/ball_hand 10 0.8|1e-6|2"
  "bouncing ball, e = 1, 1,107 bounces, t = 0..1000|$root/examples/bouncing_ball.hbg --t-end 1000 -p e=1|$work/ball_hand 1000 1|1e-5|2"
  "buck, 200 periods|$root/examples/buck.hbg --t-end 0.02|$work/buck_hand 0.02|1e-4|-"
  "buck, 2,000 periods|$root/examples/buck.hbg --t-end 0.2|$work/buck_hand 0.2|1e-4|2 per event"
)

fail() { echo "whole.sh: $*" >&2; exit 1; }

# The last rows of two CSV files agree: |a - b| <= tol * max(|b|, max |b|
# of the column over the run) in every column but time.
check_last() { # hbg.csv c.csv tol name
  awk -F, -v tol="$3" -v name="$4" '
    FNR == 1 { next }
    FILENAME == ARGV[2] { for (i = 2; i <= NF; ++i) { v = $i < 0 ? -$i : $i; if (v > m[i]) m[i] = v } }
    { last[FILENAME] = $0 }
    END {
      na = split(last[ARGV[1]], a, ","); nb = split(last[ARGV[2]], b, ",");
      if (na != nb || a[1] != b[1]) { printf "%s: last rows differ in shape: %s | %s\n", name, last[ARGV[1]], last[ARGV[2]]; exit 1 }
      worst = 0
      for (i = 2; i <= na; ++i) { d = a[i] - b[i]; d = d < 0 ? -d : d; r = d / (m[i] > 0 ? m[i] : 1); if (r > worst) worst = r }
      if (worst > tol) { printf "%s: last rows differ by %.2g (tolerance %g): %s | %s\n", name, worst, tol, last[ARGV[1]], last[ARGV[2]]; exit 1 }
      printf "  %-50s last rows agree to %.1e (tolerance %g)\n", name, worst, tol
    }' "$1" "$2"
}

echo "Checking that each pair agrees..." >&2
declare -A events
for c in "${cases[@]}"; do
  IFS='|' read -r name hargs cargs tol target <<< "$c"
  # shellcheck disable=SC2086
  "$hbgc" run $hargs --events "$work/events.csv" > "$work/hbg.csv"
  # shellcheck disable=SC2086
  $cargs > "$work/c.csv" 2> "$work/c.err"
  check_last "$work/hbg.csv" "$work/c.csv" "$tol" "$name" >&2 || exit 1
  n_hbg=$(awk -F, 'NR > 1 && $3 == "after"' "$work/events.csv" | wc -l)
  case $name in
    bouncing*)
      b_hbg=$(grep -c ',after,"floor.touch=apart"' "$work/events.csv" || true)
      b_c=$(sed -n 's/^ball_hand: \([0-9]*\) bounces.*/\1/p' "$work/c.err")
      [[ $b_hbg == "$b_c" ]] || fail "$name: hbg bounced $b_hbg times, the C program $b_c"
      echo "  $name: $b_hbg bounces on both sides" >&2 ;;
    buck*)
      sw=$(sed -n 's/^buck_hand: \([0-9]*\) switchings, \([0-9]*\) diode.*/\1 \2/p' "$work/c.err")
      read -r s d <<< "$sw"
      # hbg's first event, at t = 0, closes the switch from its initial open state
      [[ $n_hbg == $((s + d + 1)) ]] || fail "$name: hbg has $n_hbg events, the C program $s switchings and $d diode blockings"
      echo "  $name: $n_hbg events on both sides ($s switchings, $d diode blockings, hbg's at t = 0)" >&2 ;;
  esac
  events[$name]=$n_hbg
done

# --- equal accuracy on the chain -----------------------------------------
chain_states() { # N: the chain's .hbg with every state as an output
  "$build/bin/hbg_bench_chain" --print-model "$1" |
    awk -v n="$1" '/^    output x = /{ print; for (i = 0; i < n; ++i) printf "    output spring%d.q; output mass%d.p;\n", i, i; next } { print }'
}
hbg_final() { tail -1 | tr , '\n' | tail -n +3; }
c_final() { sed -n '/^final$/,$p' | tail -n +2; }
# max |x - ref| / max |ref|, for the charges q and the momenta p apart; the larger
state_error() {
  paste -d' ' "$1" "$2" | awk '{ d = $1 - $2; d = d < 0 ? -d : d; r = $2 < 0 ? -$2 : $2; k = (NR - 1) % 2
    if (d > md[k]) md[k] = d; if (r > mr[k]) mr[k] = r }
    END { a = md[0] / mr[0]; b = md[1] / mr[1]; printf "%.3g", (a > b ? a : b) }'
}
if [[ ${ACCURACY:-1} == 1 || ${CALIBRATE:-0} == 1 ]]; then
  echo "Equal accuracy on the chain (final state against CVODE at rtol 1e-12)..." >&2
  for n in 1000 10000; do
    chain_states $n > "$work/states$n.hbg"
    "$work/chain_cvode" $n 10 1e-12 --final 2> /dev/null | c_final > "$work/ref$n"
    "$hbgc" run "$work/states$n.hbg" --t-end 10 | hbg_final > "$work/hbg$n"
    e_hbg=$(state_error "$work/hbg$n" "$work/ref$n")
    chosen=$([[ $n == 1000 ]] && echo "$rtol1k" || echo "$rtol10k")
    grid=$chosen
    [[ ${CALIBRATE:-0} == 1 ]] && grid="1e-6 5e-7 3e-7 2e-7 1e-7 5e-8 3e-8 2e-8 1e-8"
    line="  N = $n: hbgc default $e_hbg;"
    for r in $grid; do
      "$work/chain_cvode" $n 10 "$r" --final 2> /dev/null | c_final > "$work/cv"
      line+=" CVODE rtol $r $(state_error "$work/cv" "$work/ref$n");"
    done
    echo "$line" >&2
  done
fi

# --- timing ------------------------------------------------------------------
((rounds > 0)) || exit 0
declare -A best
cpu() { # key command...: run, keep the minimum CPU time (us)
  local key=$1 t
  shift
  t=$("$work/cputime" "$work/out.csv" "$@" 2> /dev/null) || fail "$* failed"
  if [[ -z ${best[$key]:-} || $t -lt ${best[$key]} ]]; then best[$key]=$t; fi
}
for ((k = 1; k <= rounds; ++k)); do
  echo "Round $k of $rounds..." >&2
  for c in "${cases[@]}"; do
    IFS='|' read -r name hargs cargs tol target <<< "$c"
    # shellcheck disable=SC2086
    cpu "$name/default" "$hbgc" run $hargs
    # shellcheck disable=SC2086
    cpu "$name/tape" "$hbgc" run $hargs --tier tape
    # shellcheck disable=SC2086
    cpu "$name/jit" "$hbgc" run $hargs --tier jit
    # shellcheck disable=SC2086
    cpu "$name/c" $cargs
  done
done

ms() { awk -v t="$1" 'BEGIN { printf (t < 10000 ? "%.2f ms" : t < 100000 ? "%.1f ms" : "%.0f ms"), t / 1000 }'; }
echo
echo "| model | hbgc default | \`--tier tape\` | \`--tier jit\` | hand-written C | default / C | target |"
echo "|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  IFS='|' read -r name hargs cargs tol target <<< "$c"
  d=${best[$name/default]} h=${best[$name/c]}
  ratio=$(awk -v a="$d" -v b="$h" 'BEGIN { printf "%.1f", a / b }')
  echo "| $name | $(ms "$d") | $(ms "${best[$name/tape]}") | $(ms "${best[$name/jit]}") | $(ms "$h") | $ratio | $target |"
done
# The buck per event: whole runs over their events, and the marginal cost
# of an event between 200 and 2,000 periods (the fixed cost cancels).
s="buck, 200 periods" l="buck, 2,000 periods"
awk -v es="${events[$s]}" -v el="${events[$l]}" \
  -v ds="${best[$s/default]}" -v dl="${best[$l/default]}" \
  -v cs="${best[$s/c]}" -v cl="${best[$l/c]}" 'BEGIN {
  printf "\nbuck per event, whole run of 2,000 periods (%d events): hbgc %.2f us, C %.2f us, ratio %.1f\n", el, dl / el, cl / el, dl / cl
  pd = (dl - ds) / (el - es); pc = (cl - cs) / (el - es)
  printf "buck per event, marginal from 200 to 2,000 periods (%d events): hbgc %.2f us, C %.2f us, ratio %.1f\n", el - es, pd, pc, pd / pc
}'
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load average $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
