#!/usr/bin/env bash
# Installs, builds, and simulates the series RLC example, printing a table.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
echo
echo "== hbgc explain examples/rlc.hbg"
build/bin/hbgc explain examples/rlc.hbg
echo
echo "== hbgc run examples/rlc.hbg --t-end 5 --dt-out 0.25 --format table"
build/bin/hbgc run examples/rlc.hbg --t-end 5 --dt-out 0.25 --format table
echo
echo "== hbgc run examples/collision_inelastic.hbg --t-end 0.4 --dt-out 0.1 --format table --events -"
build/bin/hbgc run examples/collision_inelastic.hbg --t-end 0.4 --dt-out 0.1 --format table --events -
