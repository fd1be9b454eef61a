#!/usr/bin/env bash
# check-fmus.sh HBGC IMPORTER EXAMPLES WORKDIR
#
# For continuous and switched examples: builds the FMU with `hbgc build
# --fmu`, unpacks it, checks its modelDescription.xml and binary
# (check-description.py), then simulates it with the test importer as an
# FMI master does, by Model Exchange (the importer's RK4, event indicators,
# event iteration) and by Co-Simulation (fmi3DoStep), and compares both
# with `hbgc run` at a tight tolerance (compare.py).
set -euo pipefail
hbgc="$1"
importer="$2"
examples="$3"
work="$4"
here="$(cd "$(dirname "$0")" && pwd)"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# name t_end [-p NAME=VALUE ...]: ME and CS against hbgc run, of the
# example `name` (of $src/name.hbg when src is set).
check() {
  local name="$1" tend="$2"
  shift 2
  local dt step
  dt=$(python3 -c "print($tend / 100)")
  step=$(python3 -c "print($tend / 20000)")
  local dir="${src:-$examples}"
  "$hbgc" build "$dir/$name.hbg" --fmu -o "$name.fmu"
  rm -rf "$name"
  python3 -m zipfile -e "$name.fmu" "$name"
  python3 "$here/check-description.py" "$name"
  local runp=() fmup=()
  for kv in "$@"; do
    runp+=(-p "$kv")
    fmup+=(-p "$kv")
  done
  (cd "$dir" && "$hbgc" run "$name.hbg" --t-end "$tend" --dt-out "$dt" --rtol 1e-10 \
     "${runp[@]}" > "$work/$name.run.csv")
  "$importer" "$name" --t-end "$tend" --dt-out "$dt" --step "$step" "${fmup[@]}" > "$name.me.csv"
  echo "$name, model exchange (RK4, h = $step):"
  python3 "$here/compare.py" "$name.run.csv" "$name.me.csv" 1e-6
  "$importer" "$name" --cs --tolerance 1e-10 --t-end "$tend" --dt-out "$dt" "${fmup[@]}" \
    > "$name.cs.csv"
  echo "$name, co-simulation (fmi3DoStep every $dt):"
  python3 "$here/compare.py" "$name.run.csv" "$name.cs.csv" 1e-6
}

check rlc 5 R=0.5
check dc_motor 1
check bouncing_ball 3
check rectifier 0.04
check ideal_switch 0.04
check stick_slip 2
check hydraulic_press 2
check relay_motor 1
# A relay that slides, then leaves the slide: its exit is an event
# indicator of the FMU's.
src="$here/Inputs" check relay_room 3000
# Sampled control: a PI's discrete values set at a clock's ticks.
check dc_motor_digital 1
# An edge clock whose update closes a switch in the same event.
src="$here/../boolean/models" check edge_switch 4

# The discrete values are variables of the FMU (variability `discrete`):
# the PI's output, read as pi.y, is the supply voltage the model outputs.
for kind in me cs; do
  flag=""; [ "$kind" = cs ] && flag="--cs --tolerance 1e-10"
  # shellcheck disable=SC2086
  "$importer" dc_motor_digital $flag --t-end 1 --dt-out 0.01 --step 5e-5 --discrete \
    > dc_motor_digital.discrete.$kind.csv
  python3 - "dc_motor_digital.discrete.$kind.csv" "$kind" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert "pi.x" in rows[0] and "pi.y" in rows[0], "no discrete variables: %s" % list(rows[0])
worst = max(abs(float(r["pi.y"]) - float(r["voltage"])) for r in rows)
print("dc_motor_digital, %s: pi.y against the voltage it sets, largest difference %.3g" %
      (sys.argv[2], worst))
sys.exit(0 if worst == 0 else 1)
PY
done

# The FMI 3.0 standard's example master loop, as the Modelica
# Association's reference masters run Model Exchange: forward Euler, no
# event location. Stick-slip sticks where its relative speed changed sign
# within the last step (an equality reached), so its position converges
# at first order with the step; the PWM's edges come as announced time
# events, on which the master ends its steps.
(cd "$examples" && "$hbgc" run stick_slip.hbg --t-end 2 --dt-out 0.02 --rtol 1e-10) \
  > stick_slip.ref.csv
for h in 0.001 0.0005 0.00025; do
  "$importer" stick_slip --spec-loop --t-end 2 --dt-out 0.02 --step "$h" > "stick_slip.spec.$h.csv"
done
echo "stick_slip, the standard's master loop (forward Euler, h = 1e-3, 5e-4, 2.5e-4):"
python3 "$here/converge.py" stick_slip.ref.csv x stick_slip.spec.{0.001,0.0005,0.00025}.csv
"$hbgc" build "$examples/pwm_rc.hbg" --fmu -o pwm_rc.fmu
rm -rf pwm_rc
python3 -m zipfile -e pwm_rc.fmu pwm_rc
"$importer" pwm_rc --spec-loop --t-end 0.01 --dt-out 0.0001 --step 3e-6 2> pwm_rc.spec.log \
  > /dev/null
grep -q ' 400 time events' pwm_rc.spec.log ||
  { echo "pwm_rc: the PWM's edges are not announced as time events:"; cat pwm_rc.spec.log; exit 1; }

# An input set by the importer: the motor of dc_motor_speed.hbg at 12 V is
# dc_motor.hbg's.
"$hbgc" build "$examples/dc_motor_speed.hbg" --fmu -o speed.fmu
rm -rf speed && python3 -m zipfile -e speed.fmu speed
python3 "$here/check-description.py" speed
"$importer" speed --t-end 1 --dt-out 0.01 --step 5e-5 -p V=12 | cut -d, -f1-3 > speed.me.csv
(cd "$examples" && "$hbgc" run dc_motor.hbg --t-end 1 --dt-out 0.01 --rtol 1e-10) \
  | cut -d, -f1-3 > speed.run.csv
echo "dc_motor_speed with the input V = 12, against dc_motor:"
python3 "$here/compare.py" speed.run.csv speed.me.csv 1e-6

# An input that switches a junction, set by the importer at t = 0.5 (in
# event mode by Model Exchange, between steps by Co-Simulation): against
# the closed form.
"$hbgc" build "$here/Inputs/switched_rc.hbg" --fmu -o switched.fmu
rm -rf switched && python3 -m zipfile -e switched.fmu switched
python3 "$here/check-description.py" switched
"$importer" switched --t-end 1 --dt-out 0.01 --step 1e-4 --at 0.5:close=1 > switched.me.csv
"$importer" switched --cs --tolerance 1e-10 --t-end 1 --dt-out 0.01 --at 0.5:close=1 \
  > switched.cs.csv
for kind in me cs; do
  python3 - "switched.$kind.csv" "$kind" <<'PY'
import csv, math, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
worst = max(abs(float(v) - (0 if float(t) < 0.5 + 1e-12 else 1 - math.exp(-2 * (float(t) - 0.5))))
            for t, v in rows)
print("switched_rc, %s: the input closes the switch at t = 0.5; largest error %.3g" % (sys.argv[2], worst))
sys.exit(0 if worst < 1e-8 else 1)
PY
done

# An importer with another FMU's token is refused, with the FMU's message.
if "$importer" rlc --t-end 1 --token '{not-this-one}' > /dev/null 2> token.err; then
  echo "an FMU instantiated with a wrong token" >&2
  exit 1
fi
grep -q 'instantiation token `{not-this-one}` is not this FMU' token.err
echo "a wrong instantiation token is refused"
