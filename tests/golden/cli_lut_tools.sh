#!/usr/bin/env bash
# lut synth / show / check / import and model show, end to end.
set -eu
coinfer="$1"; root="$2"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
"$coinfer" lut synth --device rpi4b --model dgcnn --out "$work/rpi4b.h5" | grep -q "SYNTHESISED"
"$coinfer" lut show "$work/rpi4b.h5" > "$work/show.txt"
grep -q "provenance: synthesised" "$work/show.txt"
grep -q "b=1 241.500 ms" "$work/show.txt"
"$coinfer" lut check "$work/rpi4b.h5" | grep -q "complete"
# The shipped LUTs are exactly what `lut synth` produces from the shipped profiles and specs.
"$coinfer" lut synth --device all --out-dir "$work/all" > /dev/null
for f in "$root"/traces/lut/*.h5; do
  "$coinfer" lut show "$f" > "$work/shipped.txt"; "$coinfer" lut show "$work/all/$(basename "$f")" > "$work/fresh.txt"
  sed -i 's|profiles_file: .*||; s|model_spec: .*||' "$work/shipped.txt" "$work/fresh.txt"
  diff "$work/shipped.txt" "$work/fresh.txt" || { echo "FAIL: $f is stale; run scripts/make_luts.sh"; exit 1; }
done
cat > "$work/m.csv" <<CSV
device_type,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count
myboard,gcn,mr,0,4,1,12.5,12,14,0.5,100
CSV
"$coinfer" lut import "$work/m.csv" --out "$work/my.h5" --source "test numbers" | grep -q imported
set +e
"$coinfer" lut check "$work/my.h5" > "$work/check.txt"; rc=$?
set -e
[ $rc -eq 1 ] || { echo "FAIL: check on a sparse LUT should exit 1, got $rc"; exit 1; }
grep -q "missing latency \[0,1) batch 1" "$work/check.txt"
set +e
"$coinfer" lut show "$work/absent.h5" 2>/dev/null; rc=$?
set -e
[ $rc -eq 2 ] || { echo "FAIL: missing LUT file should exit 2"; exit 1; }
"$coinfer" model show dgcnn | grep -q "PP_comm = pp(8)"
"$coinfer" run --help | grep -q -- "--set"
echo "9 passed, 0 failed"
