#!/usr/bin/env bash
# Execution variants end to end: coinfer profile --variant writes a LUT keyed MODEL@VARIANT
# with the output error in its provenance; bad variants are refused (exit 2, nothing written); a scenario
# whose devices name a variant runs on it; with scheduler.max_output_error greedy chooses among the
# variants the LUTs hold (and says why the others are not offered); the testbed refuses the key.
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-profile" ] || { echo "SKIP: built without LibTorch"; exit 77; }
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"

# A measured INT8 + dense-mask table: key, bytes per split, error attributes.
"$coinfer" profile --model gcn --dataset mr --variant int8+dense_mask --batch 1..2 --repeats 2 --warmup 1 \
  --device-type here --out "$work/q.h5" -q > "$work/p.out" 2>&1 && ok || { bad "profile --variant"; cat "$work/p.out"; }
/usr/bin/python3 - "$work/q.h5" <<'PY' && ok || bad "variant LUT contents"
import sys, h5py
f = h5py.File(sys.argv[1])
names = []
f.visit(names.append)
t = [n for n in names if "gcn@dense_mask+int8" in n]
assert t, names
g = f[t[0]]
attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g.attrs.items()}
prov = {k: v for k, v in attrs.items()}
flat = str(prov) + str({k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()})
for n in names:
    if n.startswith(t[0]):
        flat += str({k: (v.decode() if isinstance(v, bytes) else v) for k, v in f[n].attrs.items()})
for key in ("output_mean_abs_error", "output_top1_agreement", "quantized_engine", "variant"):
    assert key in flat, (key, flat[:2000])
PY
"$coinfer" lut show "$work/q.h5" | grep -q "model gcn@dense_mask+int8" && ok || bad "lut show names the variant"

# Refusals: exit 2, the key named, nothing written.
for args in "--variant int4" "--variant dense_mask --model dgcnn" "--variant cap8 --dataset mr" "--variant int8 --accuracy-samples 0 --dataset mr"; do
  model=gcn; case "$args" in *--model*) model="";; esac
  # shellcheck disable=SC2086
  "$coinfer" profile ${model:+--model $model} $args --out "$work/bad.h5" -q > "$work/b.out" 2>&1
  rc=$?
  [ $rc -eq 2 ] && [ ! -e "$work/bad.h5" ] && grep -q "error" "$work/b.out" && ok || { bad "profile $args (rc $rc)"; cat "$work/b.out"; }
done

# A scenario with variants: LUTs synthesised for rpi4b and gtx1060 (exact dense-mask variant, and INT8
# with no documented error), one device naming a variant itself, greedy choosing for the others.
mkdir -p "$work/luts"
for d in rpi4b gtx1060; do
  for m in gcn@dense_mask gcn@int8; do
    "$coinfer" lut synth --device $d --model $m --dataset mr --out "$work/luts/$d-${m#gcn@}.h5" -q || bad "lut synth $d $m"
  done
done
cat > "$work/v.yaml" <<YAML
name: variants
duration_s: 5
luts: [traces/lut/, $work/luts/]
servers: [{id: e, type: gtx1060, batch: {window_ms: 5, max_size: 4}}]
devices:
  - {id: fixed, type: rpi4b, model: gcn, variant: {precision: int8}, dataset: mr, link: {bandwidth_mbps: 2}, strategy: offload}
  - {id: chosen, count: 2, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 2}, strategy: offload}
scheduler: {name: greedy, max_output_error: 0.1}
YAML
"$coinfer" -v run "$work/v.yaml" --out "$work/run" > "$work/r.out" 2>&1 && ok || { bad "run with variants"; cat "$work/r.out"; }
grep -q "variant gcn@int8 for rpi4b/mr: not offered to the scheduler: its LUT documents no output error" "$work/r.out" && ok || { bad "note on int8"; cat "$work/r.out"; }
/usr/bin/python3 - "$work/run" <<'PY' && ok || bad "requests ran the chosen variants"
import json, sys, h5py
d = sys.argv[1]
dec = [json.loads(l) for l in open(d + "/decisions.jsonl")]
scheme = dec[0]["scheme"]
# The chosen devices got an explicit variant (fp32 or dense_mask); the fixed one ran its INT8 model.
assert "chosen0=" in scheme and "@" in scheme.split("chosen0=")[1].split()[0], scheme
r = h5py.File(d + "/results.h5")["requests"]
dev = r["device"][:]
strat = [s.decode() if isinstance(s, bytes) else s for s in r["strategy"][:]]
# Requests created before the first scheme reached a device run its configured strategy; every later
# one runs the chosen variant.
for x in (1, 2):
    mine = [s for s, y in zip(strat, dev) if y == x]
    assert "@" in mine[-1] and sum("@" in s for s in mine) > len(mine) // 2, (x, set(mine))
assert (r["status"][:] == r["status"][0]).all()
PY
# Without the key nothing is chosen: strategies carry no variant.
"$coinfer" run "$work/v.yaml" --set "scheduler={name: greedy}" --out "$work/run2" -q > "$work/r2.out" 2>&1 \
  && ! grep -q "@" "$work/run2/decisions.jsonl" && ok || { bad "no choice without max_output_error"; cat "$work/r2.out"; }
# A bad bound: exit 2 naming the key.
"$coinfer" run "$work/v.yaml" --set "scheduler.max_output_error=-0.5" --out "$work/run3" > "$work/r3.out" 2>&1
[ $? -eq 2 ] && grep -q "scheduler.max_output_error" "$work/r3.out" && [ ! -e "$work/run3" ] && ok || { bad "negative bound"; cat "$work/r3.out"; }

finish variants
