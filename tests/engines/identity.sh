#!/usr/bin/env bash
# The two engines agree: every shipped scenario (the quickstart, the paper scenarios, the validation
# scenarios; the quickstart also under two adaptive schedulers) run by coinfer built on Debian 12's
# SimGrid 3.32 and by coinfer built on SimGrid >= 4.0 must give the same results.h5 and summary.json.
# results.h5 is compared byte for byte; where the bytes differ but h5diff finds every dataset and
# attribute equal, the difference is the HDF5 library's file layout, not a result, and is reported as
# such (a difference of content fails). summary.json is compared byte for byte.
# usage: tests/engines/identity.sh A_COINFER B_COINFER [B_PREFIX...]
#   A_COINFER  e.g. build/coinfer (SimGrid 3.32, on the host)
#   B_COINFER  e.g. build-debian13/coinfer; B_PREFIX: what runs it, e.g. scripts/debian13.sh run
# Run from the repository root; exits 0 when the engines agree on every scenario, 1 otherwise.
set -u
a="$1"; b="$2"; shift 2
b_prefix=("$@")
cd "$(dirname "$0")/../.."
work=$(mktemp -d /tmp/coinfer-identity.XXXXXX); trap 'rm -rf "$work"' EXIT
h5diff_in_b() { "${b_prefix[@]}" h5diff "$@"; }

cases=()
for s in scenarios/quickstart.yaml scenarios/paper/*.yaml scenarios/validate/*.yaml; do cases+=("$s|"); done
cases+=("scenarios/quickstart.yaml|scheduler.name=hierarchical" "scenarios/quickstart.yaml|scheduler.name=greedy")

same=0; layout=0; fails=0; n=0
for c in "${cases[@]}"; do
  s="${c%%|*}"; set_arg="${c#*|}"
  n=$((n+1))
  extra=(); [ -n "$set_arg" ] && extra=(--set "$set_arg")
  name="$n-$(basename "$s" .yaml)"
  # Both engines write the same --out (results record their command, --out included), then it is
  # moved to a/ or b/ for the comparison.
  mkdir -p "$work/a" "$work/b"
  if ! "$a" run "$s" -q --out "$work/out/$name" "${extra[@]}" > "$work/a.log" 2>&1; then
    echo "FAIL $s ${set_arg}: engine A failed"; cat "$work/a.log"; fails=$((fails+1)); continue
  fi
  mv "$work/out/$name" "$work/a/$name"
  if ! "${b_prefix[@]}" "$b" run "$s" -q --out "$work/out/$name" "${extra[@]}" > "$work/b.log" 2>&1; then
    echo "FAIL $s ${set_arg}: engine B failed"; cat "$work/b.log"; fails=$((fails+1)); continue
  fi
  mv "$work/out/$name" "$work/b/$name"
  if ! cmp -s "$work/a/$name/summary.json" "$work/b/$name/summary.json"; then
    echo "FAIL $s ${set_arg}: summary.json differs"; diff "$work/a/$name/summary.json" "$work/b/$name/summary.json" | head -10
    fails=$((fails+1)); continue
  fi
  if cmp -s "$work/a/$name/results.h5" "$work/b/$name/results.h5"; then
    same=$((same+1))
  elif h5diff_in_b "$work/a/$name/results.h5" "$work/b/$name/results.h5" > "$work/diff.log" 2>&1; then
    layout=$((layout+1))
  else
    echo "FAIL $s ${set_arg}: results.h5 content differs"; head -20 "$work/diff.log"; fails=$((fails+1))
  fi
done
echo "engine identity: $n scenarios, $same byte-identical results.h5, $layout equal in content (HDF5 file layout differs), $fails different"
[ $fails -eq 0 ]
