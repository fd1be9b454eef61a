#!/bin/sh
# link-check.sh CONTROL BINARY...: each BINARY holds no ANTLR symbol, and
# CONTROL (a test that parses text) does, so that the check can fail.
# The causality and equations stages depend on the bond graph, not on the
# parser; their own tests show it.
control="$1"
shift
if ! nm -C "$control" | grep -q 'antlr4::'; then
  echo "link-check: no ANTLR symbol in the control $control: the check cannot see them"
  exit 1
fi
status=0
for binary in "$@"; do
  count=$(nm -C "$binary" | grep -c 'antlr4::')
  if [ "$count" -ne 0 ]; then
    echo "link-check: $binary links $count ANTLR symbols"
    status=1
  else
    echo "link-check: $binary links no ANTLR symbol"
  fi
done
exit $status
