#!/usr/bin/env bash
# coinfer profile --modules and coinfer lut fill end to end: module samples measured here, a held-out
# split of the shipped measured LUTs filled and checked against the measurements, runs refusing
# estimated entries unless luts_fill: allow, determinism, and bad input (exit 2, nothing written).
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-lutfill" ] || { echo "SKIP: built without LibTorch"; exit 77; }
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
scenario=scenarios/validate/bw5_dev1.yaml

# Module samples: two or three random variants of every model and dataset (round robin over 20), every stage at
# batch 1..2 (small, fast); enough of every op DGCNN needs for the fill (10 each).
# Module samples of dgcnn's variants: the model whose gaps the fill below estimates.
"$coinfer" profile --modules 44 --model dgcnn --batch 1..2 --repeats 1 --warmup 0 --out "$work/samples.csv" -q > "$work/p.out" 2>&1 \
  && grep -q "MEASURED" "$work/p.out" && head -1 "$work/samples.csv" | grep -q "^# coinfer-module-samples schema 1" \
  && grep -q "^# provenance kind=measured" "$work/samples.csv" && grep -q "^# provenance cpu=" "$work/samples.csv" && ok || { bad "profile --modules"; cat "$work/p.out"; }

# A held-out split: the server LUT keeps batch sizes 1..4; the scenario needs 1..8.
mkdir -p "$work/luts"
/usr/bin/python3 bench/lut_holdout.py traces/lut_measured/x86-epyc-2vcpu.h5 "$work/luts/x86-epyc-2vcpu.h5" --max-batch 4
cp traces/lut_measured/x86-epyc-0.3cpu.h5 "$work/luts/"
set8=(--set "servers.0.batch.max_size=8" --set "luts=[$work/luts]")
"$coinfer" run "$scenario" "${set8[@]}" --out "$work/r0" -q > "$work/r0.out" 2>&1
[ $? -eq 2 ] && grep -q "batch size 5" "$work/r0.out" && [ ! -e "$work/r0" ] && ok || { bad "run with a gap"; cat "$work/r0.out"; }

"$coinfer" lut fill "$scenario" "${set8[@]}" --samples "$work/samples.csv" --out "$work/fill" \
  --check-against traces/lut_measured/x86-epyc-2vcpu.h5 --epochs 200 > "$work/f.out" 2> "$work/f.err"
rc=$?
[ $rc -eq 0 ] && grep -q "filled 36 entries of x86-epyc-2vcpu/dgcnn/modelnet40" "$work/f.out" && [ -f "$work/fill/fill_report.json" ] \
  && [ -f "$work/fill/x86-epyc-2vcpu.h5" ] && [ -f "$work/fill/x86-epyc-0.3cpu.h5" ] && ok || { bad "lut fill (rc $rc)"; cat "$work/f.out" "$work/f.err"; }
# The filled file: schema 3, 36 marked entries with a method and a finite error, the measured ones unmarked
# and unchanged, filled entries near the held-out measurements (a loose bound: a broken regressor or a
# wrong sum is off by far more), and the report's per-op table.
/usr/bin/python3 - "$work/fill" <<'PY' && ok || bad "filled LUT contents"
import json, sys, h5py, numpy as np
d = sys.argv[1]
f = h5py.File(d + "/x86-epyc-2vcpu.h5")
assert f.attrs["schema_version"] == 3
g = f["dgcnn/modelnet40"]
m = h5py.File("traces/lut_measured/x86-epyc-2vcpu.h5")["dgcnn/modelnet40"]
err = g["latency_estimate_error"][:]
est = ~np.isnan(err)
assert est.sum() == 36, est.sum()
assert (g["latency_estimate_method"][:][est] >= 0).all() and (g["latency_estimate_method"][:][~est] == -1).all()
assert np.isfinite(err[est]).all() and (err[est] >= 0).all()
mean, ref = g["latency_mean_s"][:], m["latency_mean_s"][:]
keep = ~np.isnan(mean) & ~est
assert np.array_equal(mean[keep], ref[keep])                  # measured entries untouched
assert (g["latency_count"][:][est] == 0).all()                # estimates are not runs
big = est & (ref > 0.05)                                      # entries above 50 ms: what a run's time is made of
rel = np.abs(mean[big] - ref[big]) / ref[big]
# Only a gross bound: the samples here are 1 timed run at batch 1..2 measured while other tests load the
# machine, so how close the filled entries come is a timing, not a property of the code (bench/
# lut_fill_accuracy.py measures the accuracy). Seen on clean clones testing beside nothing but their own
# parallel tests: worst entry 2.9x, 7.2x and 22x off, weighted error 1.54; a unit error (ms for s) or a
# fill from the wrong table is off by far more than 10x.
weighted = np.abs(mean[big] - ref[big]).sum() / ref[big].sum()
assert weighted < 10, (weighted, rel.max())
assert g.attrs["provenance:estimated_entries"].startswith("36 entries ESTIMATED")
r = json.load(open(d + "/fill_report.json"))
ops = {o["op"]: o for o in r["ops"]}
assert {"edgeconv", "fc"} <= set(ops), ops.keys()
for o in ops.values():
    assert o["chosen"] in ("lr", "mlp", "medn") and set(o["test_scores"]) == {"lr", "mlp", "medn"}
assert len(r["filled"]) == 36 and r["check_against"]["samples"] == 36
PY
grep -q "check against .*36 filled entries measured there: P10" "$work/f.out" && ok || bad "check-against line"

# Runs refuse estimated entries unless the scenario allows them, and then say which they used.
useset=(--set "servers.0.batch.max_size=8" --set "luts=[$work/fill]")
"$coinfer" run "$scenario" "${useset[@]}" --set duration_s=8 --out "$work/r1" -q > "$work/r1.out" 2>&1
[ $? -eq 2 ] && grep -q "luts_fill" "$work/r1.out" && grep -q "is estimated" "$work/r1.out" && [ ! -e "$work/r1" ] && ok || { bad "run refuses estimates"; cat "$work/r1.out"; }
"$coinfer" run "$scenario" "${useset[@]}" --set duration_s=8 --set luts_fill=allow --out "$work/r2" -q > "$work/r2.out" 2>&1
[ $? -eq 0 ] && grep -q "ESTIMATED" "$work/r2.out" && /usr/bin/python3 -c "
import json,sys,h5py; s=json.load(open('$work/r2/summary.json')); assert s['estimated_lut_entries']['count']==36, s
assert h5py.File('$work/r2/results.h5').attrs['estimated_lut_entries']==36" && ok || { bad "run with luts_fill: allow"; cat "$work/r2.out"; }

# Same seed, same estimates (the report's command line aside).
"$coinfer" lut fill "$scenario" "${set8[@]}" --samples "$work/samples.csv" --out "$work/fill2" --epochs 200 -q 2>/dev/null
"$coinfer" lut show "$work/fill/x86-epyc-2vcpu.h5" --json | /usr/bin/python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['tables'][0]['estimated_entries']))" > "$work/e1"
"$coinfer" lut show "$work/fill2/x86-epyc-2vcpu.h5" --json | /usr/bin/python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['tables'][0]['estimated_entries']))" > "$work/e2"
[ -s "$work/e1" ] && cmp -s "$work/e1" "$work/e2" && ok || bad "deterministic fill"

# Nothing to fill: says so, writes nothing.
"$coinfer" lut fill "$scenario" --out "$work/none" > "$work/n.out" 2>&1
[ $? -eq 0 ] && grep -q "nothing to fill" "$work/n.out" && [ ! -e "$work/none" ] && ok || { bad "nothing to fill"; cat "$work/n.out"; }
# Bad input: exit 2, a clear message, nothing written.
expect2() {  # name, needle, command...
  local name="$1" needle="$2"; shift 2
  "$@" > "$work/b.out" 2>&1; local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$needle" "$work/b.out" && [ ! -e "$work/bad" ] && ok || { bad "$name (rc $rc)"; cat "$work/b.out"; }
}
# Without the module samples, linear and pool have too few measured samples.
expect2 "too few samples" "too few samples\|no measurement and no regressor" "$coinfer" lut fill "$scenario" "${set8[@]}" --out "$work/bad" -q
expect2 "missing samples file" "samples.csv" "$coinfer" lut fill "$scenario" "${set8[@]}" --samples "$work/nope/samples.csv" --out "$work/bad" -q
sed 's/^edgeconv,\([^,]*\),\([^,]*\),\([^,]*\),[^,]*,/edgeconv,\1,\2,\3,banana,/' "$work/samples.csv" > "$work/corrupt.csv"
expect2 "corrupt samples" "corrupt.csv:[0-9]*.*mean_s" "$coinfer" lut fill "$scenario" "${set8[@]}" --samples "$work/corrupt.csv" --out "$work/bad" -q
expect2 "synthesised LUTs only" "no measured" "$coinfer" lut fill scenarios/quickstart.yaml --set servers.0.batch.max_size=20 --out "$work/bad" -q
# A device type with no LUT at all, on a static offload: the simulator binds its table
# (wire bytes; a scheduler's moves), so it is a gap -- not "nothing to fill" -- and filling it needs a
# measured table of that type; run refuses the same scenario at the device's type.
mkdir -p "$work/onlyserver"; cp traces/lut_measured/x86-epyc-2vcpu.h5 "$work/onlyserver/"
absent=(--set "luts=[$work/onlyserver]" --set scheduler.name=static)
expect2 "absent device type" "no measured LUT of device type x86-epyc-0.3cpu" "$coinfer" lut fill "$scenario" "${absent[@]}" --out "$work/bad" -q
expect2 "run with an absent device table" "devices (id dev[0-9]*).type" "$coinfer" run "$scenario" "${absent[@]}" --out "$work/bad" -q
# A --samples file that does not exist is refused even when nothing needs filling.
expect2 "missing samples, nothing to fill" "no such file" "$coinfer" lut fill "$scenario" --samples "$work/nope.csv" --out "$work/bad" -q
# An imported LUT without the hardware it was measured on ("internal error: provenance has
# no 'cores'", exit 1): refused naming the file and the import options that record it; with them, accepted.
/usr/bin/python3 - "$work/imp.csv" <<'PY'
import h5py, sys, numpy as np
m = h5py.File("traces/lut_measured/x86-epyc-0.3cpu.h5")["dgcnn/modelnet40"]["latency_mean_s"][:]
with open(sys.argv[1], "w") as f:
    f.write("device_type,model,dataset,start,end,batch,mean_ms,p50_ms,p95_ms,std_ms,count\n")
    for i in range(m.shape[0]):
        for j in range(i + 1, m.shape[1]):
            if j - i == 2: continue  # gaps for lut fill to fill
            for b in range(m.shape[2]):
                if np.isfinite(m[i, j, b]):
                    v = m[i, j, b] * 1e3
                    f.write(f"x86-epyc-0.3cpu,dgcnn,modelnet40,{i},{j},{b + 1},{v},{v},{v},0,1\n")
PY
mkdir -p "$work/imp" && cp traces/lut_measured/x86-epyc-2vcpu.h5 "$work/imp/"
"$coinfer" lut import "$work/imp.csv" --out "$work/imp/x86-epyc-0.3cpu.h5" --source "test: the shipped measurement, some ranges left out" -q > /dev/null 2>&1
expect2 "imported without cores" "x86-epyc-0.3cpu.h5.*--cores N --threads T" "$coinfer" lut fill "$scenario" --set "luts=[$work/imp]" --out "$work/bad" -q
"$coinfer" lut import "$work/imp.csv" --out "$work/imp/x86-epyc-0.3cpu.h5" --source "test" --cores 0.3 --threads 1 -q > /dev/null 2>&1
"$coinfer" lut show "$work/imp/x86-epyc-0.3cpu.h5" | grep -q "cores: 0.3" && ok || bad "lut import --cores recorded"
expect2 "bad epochs" "epochs" "$coinfer" lut fill "$scenario" --epochs 0 --out "$work/bad"
expect2 "bad --modules" "modules" "$coinfer" profile --modules -3 --out "$work/bad/s.csv"

finish lut_fill
