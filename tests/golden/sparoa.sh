#!/usr/bin/env bash
# SparOA's operator scheduler (sched/README.md "SparOA"): `coinfer train thresholds` writes a threshold
# predictor and its sample set, `coinfer train sparoa` a policy (byte for byte the same for the same
# command) whose placement `scheduler: {name: placement, rule: sac}` applies in `coinfer run` exactly as
# training reported it; every bad file, device or option is exit 2 with the reason and nothing written.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"
cd "$root"
[ -x "$(dirname "$coinfer")/coinfer-sac" ] || { echo "SKIP: this build has no LibTorch (coinfer-sac)"; exit 77; }

cat > "$work/s.yaml" <<YAML
name: sparoa-golden
duration_s: 1
luts: [$root/traces/lut, $root/traces/lut_processors]
servers: [{id: e, type: i7-7700}]
devices:
  - {id: b, type: jetson-orin-nano, model: gcn, dataset: mr, link: {bandwidth_mbps: 20}, workload: {arrival: closed_loop, in_flight: 1}}
  - {id: pi, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 20}, workload: {arrival: closed_loop, in_flight: 1}}
YAML

# --- the threshold predictor: a file, its sample set with where the numbers came from ---
"$coinfer" -q train thresholds "$work/s.yaml" --out "$work/t.pt" --sequences 2 --epochs 3 > "$work/t.txt" 2>&1 && ok || { bad "train thresholds: exit $?"; cat "$work/t.txt"; }
[ -s "$work/t.pt" ] && grep -q "within ±10% on the test split" "$work/t.txt" && ok || bad "train thresholds: no predictor or no accuracy line: $(cat "$work/t.txt")"
grep -q "^# ground truth: grid search .* SYNTHESISED roofline" "$work/t.pt.samples.csv" && grep -q "^# sparsity model (ASSUMED" "$work/t.pt.samples.csv" \
  && ok || bad "the sample set does not say where its numbers came from"
[ "$(grep -c '^[0-9]' "$work/t.pt.samples.csv")" -gt 20 ] && ok || bad "the sample set has too few rows"

# --- the policy: deterministic, with the thresholds, applied by the scheduler as trained ---
train() { mkdir -p "$1" && (cd "$1" && "$coinfer" -q train sparoa "$work/s.yaml" --out p.pt --episodes 60 --thresholds "$work/t.pt" --json); }
train "$work/a" > "$work/p.json" 2> "$work/p.err" && ok || { bad "train sparoa: exit $?"; cat "$work/p.err"; }
train "$work/b" > /dev/null 2>&1
cmp -s "$work/a/p.pt" "$work/b/p.pt" && cmp -s <(cut -d, -f1,3- "$work/a/p.pt.learning.csv") <(cut -d, -f1,3- "$work/b/p.pt.learning.csv") && ok || bad "the same training command gave another policy"
cp "$work/a/p.pt" "$work/p.pt"
placement=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rules']['sac']['placement'])" "$work/p.json")
/usr/bin/python3 -c "
import json,sys; j=json.load(open(sys.argv[1])); r=j['rules']
assert j['device']=='b' and j['k']==4, j
for rule in ['cpu_only','accelerator_only','greedy','dp','codl','graphsplit','thresholds','sac']: assert r[rule]['device_ms']>0, rule
assert r['dp']['device_ms'] <= min(r[x]['device_ms'] for x in ['cpu_only','accelerator_only','greedy','graphsplit','thresholds'])+1e-9
# The Orin copies tensors between its CPU and GPU (traces/devices.yaml): a placement copies exactly when it
# moves between processors or splits a stage (its text has a second part or a share), and less than it takes.
for rule, x in r.items():
    moved = ',' in x['placement'] or '*' in x['placement']
    assert (x['transfer_ms'] > 0) == moved and x['transfer_ms'] < x['device_ms'], (rule, x)
" "$work/p.json" && ok || bad "train sparoa --json: missing rules, the DP above another rule, or copies where none are: $(cat "$work/p.json")"
"$coinfer" -q run "$work/s.yaml" --set "scheduler={name: placement, rule: sac, policy: $work/p.pt}" --out "$work/run" > "$work/run.txt" 2>&1 \
  && ok || { bad "run with rule sac: exit $?"; cat "$work/run.txt"; }
/usr/bin/python3 -c "
import json,sys; d=json.loads(open(sys.argv[1]+'/decisions.jsonl').readline())['detail']
assert d['rule']=='sac' and d['devices']['b']['placement']==sys.argv[2], d
assert 'pi' not in d['devices'], d  # one processor: nothing to place
" "$work/run" "$placement" && ok || bad "the run's placement is not the trained one ($placement): $(head -c 600 "$work/run/decisions.jsonl")"
grep -q '"estimator": "sparoa policy' "$work/run/summary.json" && ok || bad "summary.json does not name the SparOA policy"

# --- one policy for every split, and the device-level SAC in its operator-level mode ---
"$coinfer" -q train sparoa "$work/s.yaml" --out "$work/any.pt" --episodes 40 --any-split > "$work/any.txt" 2>&1 && ok || { bad "train sparoa --any-split: exit $?"; cat "$work/any.txt"; }
"$coinfer" -q run "$work/s.yaml" --set 'devices.0.strategy=pp(2)' --set "scheduler={name: placement, rule: sac, policy: $work/any.pt}" --out "$work/pp2" > /dev/null 2>&1
/usr/bin/python3 -c "
import json,sys; d=json.loads(open(sys.argv[1]+'/decisions.jsonl').readline())['detail']['devices']['b']
assert d['placement'].endswith(':1-2]') or ':0-2]' in d['placement'], d  # two stages placed
" "$work/pp2" && ok || bad "an any-split policy did not place pp(2)'s two stages: $(head -c 400 "$work/pp2/decisions.jsonl")"
mkdir -p "$work/sac" && (cd "$work/sac" && "$coinfer" -q train sac "$work/s.yaml" --out p.pt --episodes 2 --episode-duration 3 --placement-policy "$work/any.pt") > "$work/sac.txt" 2>&1 \
  && ok || { bad "train sac --placement-policy: exit $?"; cat "$work/sac.txt"; }
"$coinfer" -q run "$work/s.yaml" --set "scheduler={name: sac, policy: $work/sac/p.pt, period_s: 0.5}" --out "$work/sacrun" > "$work/sacrun.txt" 2>&1 \
  && ok || { bad "run the operator-level SAC: exit $?"; cat "$work/sacrun.txt"; }
/usr/bin/python3 -c "
import json,sys
for line in open(sys.argv[1]+'/decisions.jsonl'):
    for st in json.loads(line)['detail']['steps']:
        if st['device'] == 'b' and not st['strategy'].startswith('offload'): assert '[' in st['strategy'], st  # placed on its processors
        if st['device'] == 'pi': assert '[' not in st['strategy'], st  # one processor: nothing to place
" "$work/sacrun" && ok || bad "the operator-level SAC did not place the Orin's stages: $(head -c 600 "$work/sacrun/decisions.jsonl")"
mv "$work/any.pt" "$work/any-moved.pt"
refuse_sac=$("$coinfer" -q run "$work/s.yaml" --set "scheduler={name: sac, policy: $work/sac/p.pt}" --out "$work/x" 2>&1; echo "rc=$?")
echo "$refuse_sac" | grep -q "rc=2" && echo "$refuse_sac" | grep -q "was trained with it" && ok || bad "a missing placement policy of an operator-level SAC: $refuse_sac"
mv "$work/any-moved.pt" "$work/any.pt"

# --- bad input: exit 2, the reason, nothing written ---
refuse() {  # refuse WHAT EXPECTED-TEXT command...
  local what="$1" text="$2"; shift 2
  "$@" > "$work/r.txt" 2>&1; local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$text" "$work/r.txt" && ok || { bad "$what: exit $rc, wanted 2 and '$text': $(cat "$work/r.txt")"; }
}
refuse "unknown device" "no device 'zz'" "$coinfer" train sparoa "$work/s.yaml" --device zz --out "$work/x.pt"
refuse "one-processor board" "SparOA places stages between a CPU and a GPU" "$coinfer" train sparoa "$work/s.yaml" --device pi --out "$work/x.pt"
refuse "a device-level SAC policy as thresholds" "not a coinfer-threshold-predictor" "$coinfer" train sparoa "$work/s.yaml" --out "$work/x.pt" --thresholds "$work/p.pt"
sed 's/jetson-orin-nano/jetson-agx-orin/' "$work/s.yaml" > "$work/agx.yaml"
refuse "a predictor of another board" "trained for a jetson-orin-nano" "$coinfer" train sparoa "$work/agx.yaml" --out "$work/x.pt" --thresholds "$work/t.pt"
refuse "policy of another board" "was trained for gcn/mr on a jetson-orin-nano" "$coinfer" run "$work/agx.yaml" --set "scheduler={name: placement, rule: sac, policy: $work/p.pt}" --out "$work/x"
refuse "no policy" "rule sac needs its policy file" "$coinfer" run "$work/s.yaml" --set "scheduler={name: placement, rule: sac}" --out "$work/x"
refuse "a predictor as policy" "not a coinfer-sparoa-policy" "$coinfer" run "$work/s.yaml" --set "scheduler={name: placement, rule: sac, policy: $work/t.pt}" --out "$work/x"
refuse "a policy with another rule" "a policy file is for rule sac only" "$coinfer" run "$work/s.yaml" --set "scheduler={name: placement, rule: dp, policy: $work/p.pt}" --out "$work/x"
refuse "thresholds without synthesised tables" "synthesised" "$coinfer" train thresholds "$work/s.yaml" --device pi --out "$work/x.pt"
[ ! -e "$work/x.pt" ] && [ ! -e "$work/x" ] && ok || bad "a refused command wrote something: $(ls "$work")"
finish sparoa
