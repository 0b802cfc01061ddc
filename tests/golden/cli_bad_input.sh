#!/usr/bin/env bash
# Bad input: exit code 2, an error naming the file/line/key, and no output folder left behind.
set -u
coinfer="$1"; root="$2"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fails=0; passes=0
cd "$root"
base="$root/scenarios/quickstart.yaml"

expect_bad() {  # name, expected stderr fragment, coinfer args...
  local name="$1" frag="$2"; shift 2
  local out="$work/out-$name"
  "$coinfer" "$@" --out "$out" >"$work/$name.stdout" 2>"$work/$name.stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then echo "FAIL $name: exit $rc, expected 2"; cat "$work/$name.stderr"; fails=$((fails+1)); return; fi
  if ! grep -q -- "$frag" "$work/$name.stderr"; then echo "FAIL $name: stderr lacks '$frag':"; cat "$work/$name.stderr"; fails=$((fails+1)); return; fi
  if [ -e "$out" ]; then echo "FAIL $name: output folder was created"; fails=$((fails+1)); return; fi
  passes=$((passes+1))
}

mk() { sed "$1" "$base" > "$work/$2.yaml"; }
mk 's/^seed: 1/seed: [1/' malformed
expect_bad malformed "YAML syntax error" run "$work/malformed.yaml"
mk 's/^duration_s: 60/duration: 60/' unknown_key
expect_bad unknown_key "did you mean 'duration_s'" run "$work/unknown_key.yaml"
expect_bad unknown_key_line "unknown_key.yaml:7:1" run "$work/unknown_key.yaml"
mk '0,/bandwidth_mbps: 40/s//bandwidth_mbps: -3/' negative_bw
expect_bad negative_bw "devices\[0\].link.bandwidth_mbps" run "$work/negative_bw.yaml"
mk '0,/bandwidth_mbps: 40/s//bandwidth_mbps: 0/' zero_bw
expect_bad zero_bw "must be > 0" run "$work/zero_bw.yaml"
mk '0,/strategy: offload/s//strategy: pp(42)/' bad_split
expect_bad bad_split "outside 0..9" run "$work/bad_split.yaml"
mk '0,/type: rpi4b/s//type: rpi9/' bad_type
expect_bad bad_type "no LUT for device type 'rpi9'" run "$work/bad_type.yaml"
mk '0,/model: dgcnn/s//model: resnet/' bad_model
expect_bad bad_model "unknown model 'resnet'" run "$work/bad_model.yaml"
mk '0,/dataset: modelnet40/s//dataset: cora/' bad_dataset
expect_bad bad_dataset "unknown dataset 'cora'" run "$work/bad_dataset.yaml"
sed '0,/    type: rpi4b/s//    type: rpi4b\n    server: edge7/' "$base" > "$work/bad_server.yaml"
expect_bad bad_server "unknown server 'edge7'" run "$work/bad_server.yaml"
expect_bad batch_beyond_lut "batch size 17" run "$base" --set servers.0.batch.max_size=40
expect_bad bad_set "did you mean 'duration_s'" run "$base" --set durations=3
# A LUT without the entries the scenario needs, and a corrupt LUT.
mkdir -p "$work/luts" && cp "$root/traces/lut/rpi4b.h5" "$work/luts/"
expect_bad lut_missing_server "no LUT for device type 'gtx1060'" run "$base" --set "luts=[$work/luts]"
mkdir -p "$work/corrupt" && head -c 3000 "$root/traces/lut/gtx1060.h5" > "$work/corrupt/gtx1060.h5" && cp "$root/traces/lut/rpi4b.h5" "$work/corrupt/"
expect_bad corrupt_lut "gtx1060.h5" run "$base" --set "luts=[$work/corrupt]"
expect_bad missing_file "cannot open file" run "$work/nope.yaml"
expect_bad bad_scheduler "did you mean 'greedy'" run "$base" --set scheduler.name=greedi
expect_bad bad_sched_param "unknown parameter for scheduler 'hierarchical'" run "$base" --set scheduler.name=hierarchical --set scheduler.iteratons=3
expect_bad bad_objective "allowed: throughput, latency" run "$base" --set scheduler.name=greedy --set scheduler.objective=fast
expect_bad oracle_too_big "max_schemes" run "$base" --set scheduler.name=oracle --set scheduler.max_schemes=10
"$coinfer" run "$base" --set duration_s=6 --out /proc/nope > /dev/null 2> "$work/unwritable.stderr"
if [ $? -eq 2 ] && grep -q "cannot be created or written" "$work/unwritable.stderr"; then passes=$((passes+1)); else echo "FAIL unwritable_out"; cat "$work/unwritable.stderr"; fails=$((fails+1)); fi

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
