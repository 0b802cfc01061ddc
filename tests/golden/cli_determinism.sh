#!/usr/bin/env bash
# Same command => byte-identical results.h5 and summary.json (two separate processes, the same --out:
# results record their command, so a different folder would differ there); a different seed changes
# the Poisson arrivals.
set -eu
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
"$coinfer" run scenarios/quickstart.yaml --out "$work/a" -q
mv "$work/a" "$work/b"
"$coinfer" run scenarios/quickstart.yaml --out "$work/a" -q
cmp "$work/a/results.h5" "$work/b/results.h5"
cmp "$work/a/summary.json" "$work/b/summary.json"
# With an adaptive scheduler too (decision wall times go to timing.json, not results.h5).
"$coinfer" run scenarios/quickstart.yaml --out "$work/h" -q --set scheduler.name=hierarchical
mv "$work/h" "$work/h1"
"$coinfer" run scenarios/quickstart.yaml --out "$work/h" -q --set scheduler.name=hierarchical
cmp "$work/h/results.h5" "$work/h1/results.h5"
cmp "$work/h/summary.json" "$work/h1/summary.json"
"$coinfer" run scenarios/quickstart.yaml --out "$work/c" -q --set seed=2
if cmp -s "$work/a/results.h5" "$work/c/results.h5"; then echo "FAIL: seed did not change anything"; exit 1; fi
# No temporary files left behind.
if ls -A "$work/a" | grep -q tmp; then echo "FAIL: temporary files left"; exit 1; fi
echo "5 passed, 0 failed"
