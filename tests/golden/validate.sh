#!/usr/bin/env bash
# coinfer validate: a short real comparison (simulator vs testbed) writes validate.json/csv with every
# metric; synthesised LUTs and unknown schedulers are exit 2; the shipped measured LUTs are complete
# and say so. Uses namespaces when root, else the loopback testbed.
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-rt" ] || { echo "SKIP: built without LibTorch"; exit 77; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$root"
fails=0; passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL $1"; fails=$((fails+1)); }

for f in traces/lut_measured/*.h5; do
  "$coinfer" lut check "$f" --min-batch 1 | grep -q "provenance measured" && "$coinfer" lut check "$f" --min-batch 1 | grep -q "^complete" && ok || bad "measured LUT $f: $("$coinfer" lut check "$f")"
done

"$coinfer" validate scenarios/quickstart.yaml --out "$work/q" > "$work/q.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "not measured on this machine" "$work/q.txt" && grep -q "coinfer profile" "$work/q.txt" && [ ! -e "$work/q" ] \
  && ok || bad "synthesised LUTs: exit $rc: $(cat $work/q.txt)"
"$coinfer" validate scenarios/validate/bw40_dev1.yaml --schedulers offload,nope --out "$work/n" > "$work/n.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "unknown scheduler 'nope'" "$work/n.txt" && [ ! -e "$work/n" ] && ok || bad "unknown scheduler: exit $rc: $(cat $work/n.txt)"

extra=()
if [ "$(id -u)" -ne 0 ] || ! ip netns add cfprobe$$ 2>/dev/null; then extra=(--loopback --device-cpu 0); else ip netns del cfprobe$$; fi
# The device LUT asks for a 0.3-core cgroup cap; without a writable cpu controller run uncapped.
capok=0
if [ -d /sys/fs/cgroup/cpu ] && mkdir /sys/fs/cgroup/cpu/coinfer-probe-$$ 2>/dev/null; then rmdir /sys/fs/cgroup/cpu/coinfer-probe-$$; capok=1; fi
if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null && mkdir /sys/fs/cgroup/coinfer-probe-$$ 2>/dev/null; then rmdir /sys/fs/cgroup/coinfer-probe-$$; capok=1; fi
if [ $capok -eq 0 ] && [ ${#extra[@]} -eq 0 ]; then
  echo "note: no writable cgroup cpu controller, validating with uncapped devices"; extra=(--device-cpu 0)
fi
"$coinfer" validate scenarios/validate/bw40_dev1.yaml --schedulers offload,local --set duration_s=6 --set warmup_s=1 --set drain_s=5 \
  --out "$work/v" "${extra[@]}" > "$work/v.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "validate run: exit $rc: $(tail -20 $work/v.txt; cat $work/v/validate.log 2>/dev/null | tail -20)"
/usr/bin/python3 - "$work/v" <<'PY' && ok || bad "validate.json"
import json, sys
r = json.load(open(sys.argv[1] + "/validate.json"))
for sched in ("offload", "local"):
    rows = {(m["scope"], m["metric"]): m for m in r["schedulers"][sched]}
    for key in [("total", "throughput_rps"), ("total", "latency_mean_ms"), ("dev0", "latency_p95_ms"), ("total", "decisions")]:
        assert key in rows, key
    t = rows[("total", "throughput_rps")]
    assert t["sim"] > 0 and t["testbed"] > 0, t
    assert rows[("total", "energy_j_per_inference")]["testbed"] is None  # not measured on the testbed
assert "held" in r["ranking"]
print("offload throughput sim %.2f testbed %.2f" % (r["schedulers"]["offload"][0]["sim"], r["schedulers"]["offload"][0]["testbed"]))
PY
grep -q "ranking by total throughput" "$work/v.txt" && [ -s "$work/v/validate.csv" ] && [ -s "$work/v/offload/testbed/results.h5" ] && ok || bad "report files"
echo "validate: $passes passed, $fails failed"
[ $fails -eq 0 ]
