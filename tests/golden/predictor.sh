#!/usr/bin/env bash
# ACE-GNN's learned predictors end to end: coinfer predictor samples (simulated, resumable, refuses a
# folder of other samples), train and eval (coinfer-predictor), a testbed-style run added as a measured
# sample, a simulation whose hierarchical scheduler ranks with estimator: gin (loaded through the
# plugin; the run records it), and bad input (exit 2, nothing written).
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-predictor" ] || { echo "SKIP: built without LibTorch"; exit 77; }
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"

samples=(predictor samples --systems 6 --schemes 5 --devices 1..3 --duration 4 --device-types rpi4b jetson-tx2 --models gcn/mr gat/siot sage/yelp --out "$work/s" -j2)
"$coinfer" "${samples[@]}" > "$work/s.out" 2> "$work/s.err"
[ $? -eq 0 ] && grep -q "wrote [0-9]* samples of 6 systems" "$work/s.out" && [ -f "$work/s/samples.h5" ] && ok || { bad "samples"; cat "$work/s.out" "$work/s.err"; }
n=$(ls "$work"/s/scenarios | wc -l)
[ "$n" -ge 6 ] && [ "$n" -le 30 ] && ok || bad "scenario count $n"
# Resuming: nothing runs again and the sample file is rewritten byte for byte.
cp "$work/s/samples.h5" "$work/first.h5"
"$coinfer" "${samples[@]}" > "$work/s2.out" 2> "$work/s2.err"
grep -q ", 0 to run" "$work/s2.err" && cmp -s "$work/first.h5" "$work/s/samples.h5" && ok || { bad "resume"; cat "$work/s2.err"; }
# Other options into the same folder: refused, nothing touched.
"$coinfer" predictor samples --systems 7 --out "$work/s" -q > "$work/s3.out" 2>&1
[ $? -eq 2 ] && grep -q "other samples" "$work/s3.out" && cmp -s "$work/first.h5" "$work/s/samples.h5" && ok || { bad "other options"; cat "$work/s3.out"; }
# The file's labels are the runs' summaries and its graphs the schemes' (one device -> 5 nodes).
/usr/bin/python3 - "$work/s" <<'PY' && ok || bad "sample contents"
import glob, json, os, sys, h5py
d = sys.argv[1]
f = h5py.File(d + "/samples.h5")
assert f.attrs["format"] == "coinfer-predictor-samples" and f.attrs["schema_version"] == 1
assert "simulated by coinfer" in f.attrs["provenance"]
s = f["samples"]
n = len(s["system"])
assert n == len(glob.glob(d + "/scenarios/*.yaml")), n
off = s["node_offset"][:]
for i in range(n):
    src = s["source"][i].decode()
    point = json.load(open(d + "/sweep.json"))["points"][i]
    assert point["scenario"].endswith(src), (src, point["scenario"])
    summ = json.load(open("%s/points/p%05d/summary.json" % (d, i)))
    assert abs(summ["total"]["throughput_rps"] - s["throughput_rps"][i]) < 1e-9
    devices = s["system_key"][i].decode().count("Mbps")
    assert off[i + 1] - off[i] == 3 * devices + 2, (off[i + 1] - off[i], devices)
    assert s["measured"][i] == 0
PY

# Training (tiny network, few epochs) and evaluation beside the analytic estimator.
"$coinfer" predictor train "$work/s/samples.h5" --out "$work/p.pt" --hidden 16 --epochs 4 --pairs-per-epoch 64 > "$work/t.out" 2> "$work/t.err"
[ $? -eq 0 ] && [ -f "$work/p.pt" ] && grep -q "validation (held-out 30 %)" "$work/t.out" && grep -q "epoch" "$work/t.err" && ok || { bad "train"; cat "$work/t.out" "$work/t.err"; }
"$coinfer" predictor eval "$work/s/samples.h5" --model "$work/p.pt" --json "$work/e.json" > "$work/e.out" 2>&1
[ $? -eq 0 ] && grep -q "^| analytic |" "$work/e.out" && grep -q "^| p.pt |" "$work/e.out" && [ -f "$work/e.json" ] && ok || { bad "eval"; cat "$work/e.out"; }
"$coinfer" plot "$work/e.json" --kind predictor-accuracy --out "$work/fig18.png" > "$work/plot.out" 2>&1 \
  && [ -s "$work/fig18.png" ] && [ -s "$work/fig18.pdf" ] && ok || { bad "plot predictor-accuracy"; cat "$work/plot.out"; }
# The same seed trains the same predictor (its evaluation is identical).
"$coinfer" predictor train "$work/s/samples.h5" --out "$work/p2.pt" --hidden 16 --epochs 4 --pairs-per-epoch 64 -q \
  && "$coinfer" predictor eval "$work/s/samples.h5" --model "$work/p2.pt" > "$work/e2.out" 2>&1 \
  && diff <(sed 's/p2.pt/p.pt/' "$work/e2.out") "$work/e.out" > /dev/null && ok || bad "training is not deterministic"

# A run folder added as a measured sample (here a simulated run stands in for a testbed's: the command
# reads the same summary.json), then evaluated alone.
scen=$(ls "$work"/s/scenarios/*.yaml | head -1)
"$coinfer" run "$scen" --out "$work/run" -q && "$coinfer" predictor add "$work/s/samples.h5" --run "$work/run" --scenario "$scen" > "$work/a.out" 2>&1 \
  && grep -q "added a measured sample" "$work/a.out" \
  && "$coinfer" predictor eval "$work/s/samples.h5" --measured-only > "$work/m.out" 2>&1 && grep -q "^1 samples" "$work/m.out" && ok || { bad "predictor add"; cat "$work/a.out" "$work/m.out"; }

# A simulation ranking with the learned estimator: the plugin loads, the run finishes and records it;
# the quickstart's DGCNN was never in these samples, which the run warns about.
gin=(--set scheduler.name=hierarchical --set scheduler.estimator=gin --set "scheduler.predictor=$work/p.pt" --set duration_s=8)
"$coinfer" run scenarios/quickstart.yaml "${gin[@]}" --out "$work/g" -q > "$work/g.out" 2> "$work/g.err"
[ $? -eq 0 ] && grep -q '"estimator": "gin (' "$work/g/summary.json" && grep -q "warning: .*dgcnn/modelnet40 was not in the training samples" "$work/g.err" \
  && grep -q "warning: .*p.pt: its accuracy was measured on [0-9] held-out samples only (fewer than 100)" "$work/g.err" \
  && ok || { bad "run with estimator gin"; cat "$work/g.out" "$work/g.err"; }
# A link far slower than any in training: the warning says by how much.
"$coinfer" run scenarios/quickstart.yaml "${gin[@]}" --set devices.1.link.bandwidth_mbps=0.001 --out "$work/g-slow" -q > /dev/null 2> "$work/gs.err"
grep -q "warning: .*a node latency of [0-9.]* ms is [0-9.]*x the largest in training" "$work/gs.err" && ok || { bad "latency range warning"; cat "$work/gs.err"; }
"$coinfer" run scenarios/quickstart.yaml --set scheduler.name=hierarchical --set duration_s=8 --out "$work/an" -q \
  && grep -q '"estimator": "analytic"' "$work/an/summary.json" && ok || bad "analytic run records its estimator"

# Bad input: exit 2, a message naming the key or file, nothing written.
expect2() {  # name pattern args...
  local name=$1 pattern=$2; shift 2
  "$@" > "$work/bad.out" 2>&1
  local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$pattern" "$work/bad.out" && [ ! -e "$work/out-bad" ] && ok || { bad "$name (rc $rc)"; cat "$work/bad.out"; }
}
q=(scenarios/quickstart.yaml --set scheduler.name=hierarchical --out "$work/out-bad" -q)
expect2 "gin without predictor" "scheduler.predictor" "$coinfer" run "${q[@]}" --set scheduler.estimator=gin
expect2 "unknown estimator" "scheduler.estimator" "$coinfer" run "${q[@]}" --set scheduler.estimator=magic
expect2 "predictor without gin" "scheduler.predictor" "$coinfer" run "${q[@]}" --set scheduler.predictor=x.pt
expect2 "gin with objective latency" "scheduler.objective" "$coinfer" run "${q[@]}" --set scheduler.estimator=gin --set "scheduler.predictor=$work/p.pt" --set scheduler.objective=latency
echo "not a model" > "$work/garbage.pt"
expect2 "garbage predictor" "garbage.pt" "$coinfer" run "${q[@]}" --set scheduler.estimator=gin --set "scheduler.predictor=$work/garbage.pt"
expect2 "missing predictor" "nope.pt" "$coinfer" run "${q[@]}" --set scheduler.estimator=gin --set "scheduler.predictor=$work/nope.pt"
expect2 "gin on static" "scheduler.estimator" "$coinfer" run "${q[@]}" --set scheduler.name=static --set scheduler.estimator=gin
head -c 3000 "$work/first.h5" > "$work/cut.h5"
expect2 "corrupt samples (train)" "cut.h5" "$coinfer" predictor train "$work/cut.h5" --out "$work/out-bad"
expect2 "corrupt samples (eval)" "cut.h5" "$coinfer" predictor eval "$work/cut.h5"
expect2 "train bad aggregation" "--aggregation" "$coinfer" predictor train "$work/s/samples.h5" --out "$work/out-bad" --aggregation median
expect2 "eval garbage model" "garbage.pt" "$coinfer" predictor eval "$work/s/samples.h5" --model "$work/garbage.pt"
expect2 "samples bad range" "--devices" "$coinfer" predictor samples --devices 0..3 --out "$work/out-bad"
expect2 "samples unknown model" "--models" "$coinfer" predictor samples --models nosuch/data --out "$work/out-bad"

# The planning phase: best-first until the requirement is met, the plan a runnable scenario whose
# simulation is recorded; an unmeetable requirement exits 1 with the best scheme found; gin plans too.
plan_s=scenarios/validate/bw5_dev3.yaml
"$coinfer" plan "$plan_s" --throughput 1 --out "$work/plan" > "$work/plan.out" 2>&1
[ $? -eq 0 ] && grep -q "chosen (candidate 1, the first to meet 1 req/s)" "$work/plan.out" && grep -q "verified by simulation" "$work/plan.out" \
  && "$coinfer" run "$work/plan/plan.yaml" --out "$work/plan-run" -q && grep -q '"scheduler": "static"' "$work/plan-run/summary.json" \
  && /usr/bin/python3 -c "
import json, sys
p = json.load(open('$work/plan/plan.json')); s = json.load(open('$work/plan-run/summary.json'))
assert p['met'] and p['examined'] == 1 and len(p['candidates']) == 1
assert abs(p['simulated_rps'] - s['total']['throughput_rps']) < 1e-9  # the recorded verification is that run
" && ok || { bad "plan"; cat "$work/plan.out"; }
"$coinfer" plan "$plan_s" --throughput 1e6 --max-iterations 20 --no-verify --out "$work/plan-x" > "$work/planx.out" 2>&1
[ $? -eq 1 ] && grep -q "no examined scheme meets 1000000 req/s (20 examined, raise --max-iterations" "$work/planx.out" \
  && grep -q "does NOT meet" "$work/plan-x/plan.yaml" && [ ! -e "$work/plan-x/verify" ] && ok || { bad "unmeetable plan"; cat "$work/planx.out"; }
"$coinfer" plan "$plan_s" --throughput 1 --estimator gin --predictor "$work/p.pt" --no-verify --out "$work/plan-gin" > "$work/plang.out" 2>&1
[ $? -eq 0 ] && grep -q "with the gin (" "$work/plang.out" && ok || { bad "plan with gin"; cat "$work/plang.out"; }
expect2 "plan zero throughput" "--throughput" "$coinfer" plan "$plan_s" --throughput 0 --out "$work/out-bad"
expect2 "plan gin without predictor" "--predictor" "$coinfer" plan "$plan_s" --throughput 1 --estimator gin --out "$work/out-bad"
expect2 "plan garbage predictor" "garbage.pt" "$coinfer" plan "$plan_s" --throughput 1 --estimator gin --predictor "$work/garbage.pt" --out "$work/out-bad"

finish predictor
