#!/usr/bin/env bash
# Same scenario + same seed => byte-identical results.h5 and summary.json (two separate processes);
# a different seed changes the Poisson arrivals.
set -eu
coinfer="$1"; root="$2"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$root"
"$coinfer" run scenarios/quickstart.yaml --out "$work/a" -q
"$coinfer" run scenarios/quickstart.yaml --out "$work/b" -q
cmp "$work/a/results.h5" "$work/b/results.h5"
cmp "$work/a/summary.json" "$work/b/summary.json"
# With an adaptive scheduler too (decision wall times go to timing.json, not results.h5).
"$coinfer" run scenarios/quickstart.yaml --out "$work/h1" -q --set scheduler.name=hierarchical
"$coinfer" run scenarios/quickstart.yaml --out "$work/h2" -q --set scheduler.name=hierarchical
cmp "$work/h1/results.h5" "$work/h2/results.h5"
cmp "$work/h1/summary.json" "$work/h2/summary.json"
"$coinfer" run scenarios/quickstart.yaml --out "$work/c" -q --set seed=2
if cmp -s "$work/a/results.h5" "$work/c/results.h5"; then echo "FAIL: seed did not change anything"; exit 1; fi
# No temporary files left behind.
if ls -A "$work/a" | grep -q tmp; then echo "FAIL: temporary files left"; exit 1; fi
echo "5 passed, 0 failed"
