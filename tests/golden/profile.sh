#!/usr/bin/env bash
# coinfer profile on a tiny model writes a valid, complete LUT labelled as measured; bad options exit 2.
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-profile" ] || { echo "SKIP: built without LibTorch"; exit 77; }
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
"$coinfer" profile --model gcn --dataset mr --batch 1..3 --repeats 2 --warmup 1 --out "$work/new/m.h5" -q > "$work/out" 2>&1 \
  && grep -q "MEASURED" "$work/out" && ok || { bad "profile"; cat "$work/out"; }
# Progress reaches a log that is not a terminal (Slurm, nohup): lines with an ETA, and the end.
"$coinfer" profile --model gcn --dataset mr --batch 1..2 --repeats 1 --warmup 0 --out "$work/p2/m.h5" > /dev/null 2> "$work/progress.log"
grep -q "^\[profile gcn/mr\] 100.0 %  .* elapsed, ETA 0 s" "$work/progress.log" && ! grep -q $'\r' "$work/progress.log" && ok \
  || { bad "profile progress without a terminal"; cat "$work/progress.log"; }
"$coinfer" lut check "$work/new/m.h5" --min-batch 3 | grep -q "^complete" && ok || { bad "lut check"; "$coinfer" lut check "$work/new/m.h5"; }
"$coinfer" lut show "$work/new/m.h5" > "$work/show"
grep -q "provenance: measured" "$work/show" && grep -q "cpu: " "$work/show" && grep -q "libtorch: " "$work/show" && grep -q "command: " "$work/show" \
  && ok || { bad "provenance"; cat "$work/show"; }
# Each entry keeps its distribution (schema 2): 23 levels, quantiles that never decrease, the median and
# p95 equal to the p50 and p95 columns, min <= mean <= max.
/usr/bin/python3 - "$work/new/m.h5" <<'PY' && ok || { bad "distributions"; }
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1])
assert f.attrs["schema_version"] == 2
g = f["gcn/mr"]
lv = g["latency_quantile_levels"][:]
q = g["latency_quantiles_s"][:]
assert len(lv) == 23 and lv[0] == 0 and lv[-1] == 1, lv
mean = g["latency_mean_s"][:]
have = ~np.isnan(mean)
assert have.sum() == 4 * 5 // 2 * 3, have.sum()
qs = q[have]
assert not np.isnan(qs).any()
assert (np.diff(qs, axis=1) >= 0).all()
i50, i95 = list(lv).index(0.5), list(lv).index(0.95)
assert np.allclose(qs[:, i50], g["latency_p50_s"][:][have]) and np.allclose(qs[:, i95], g["latency_p95_s"][:][have])
assert (qs[:, 0] <= mean[have] + 1e-12).all() and (mean[have] <= qs[:, -1] + 1e-12).all()
PY
# Peak memory at every batch size (a batch of 3 graphs holds about 3x the tensors of one: between 1.5x
# and 4.5x), and each stage's output sparsity: gcn's hidden stages end in a ReLU (zeros), its last stage
# has none; the datasets say so (traces/README.md).
/usr/bin/python3 - "$work/new/m.h5" <<'PY' && ok || { bad "peak memory per batch / sparsity"; }
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1])["gcn/mr"]
pb = g["peak_memory_bytes_by_batch"][:]
assert pb.shape == (5, 5, 3)
assert np.array_equal(pb[:, :, 0], g["peak_memory_bytes"][:], equal_nan=True)
whole = pb[0, 4]
assert 1.5 < whole[2] / whole[0] < 4.5, whole
sp = g["stage_output_sparsity"][:]
assert sp.shape == (4,) and ((sp >= 0) & (sp <= 1)).all(), sp
assert sp[0] > 0.05 and sp[3] == 0, sp   # after a ReLU some zeros; logits none
PY
# --processor: cpu names the table's processor (schema 4); cuda without a CUDA LibTorch is refused at once.
"$coinfer" profile --model gcn --dataset mr --batch 1..1 --repeats 1 --warmup 0 --processor cpu --out "$work/cpu.h5" -q > "$work/pc.out" 2>&1   && "$coinfer" lut show "$work/cpu.h5" | grep -q "processor cpu" && ok || { bad "--processor cpu"; cat "$work/pc.out"; }
"$coinfer" profile --model gcn --dataset mr --processor cpu --out "$work/new/m.h5" --replace -q > "$work/pm.out" 2>&1
[ $? -eq 2 ] && grep -q "one LUT file holds one processor's tables" "$work/pm.out" && ok || { bad "mixing processors in a file"; cat "$work/pm.out"; }
"$coinfer" profile --model gcn --dataset mr --processor cuda --out "$work/gpu.h5" -q > "$work/pg.out" 2>&1; rc=$?
if grep -q "is_available() is false" "$work/pg.out"; then  # a CPU-only LibTorch (Debian's) or no GPU visible
  [ $rc -eq 2 ] && grep -q "^error: --processor" "$work/pg.out" && [ ! -e "$work/gpu.h5" ] && ok || { bad "--processor cuda refusal"; cat "$work/pg.out"; }
else
  [ $rc -eq 0 ] && ok || { bad "--processor cuda on a CUDA LibTorch (exit $rc)"; cat "$work/pg.out"; }
fi
# Wire bytes per split: what the middleware sends is at least the frame and header beyond nothing, and
# for the uncompressed raw input (17 x 300 random floats do not compress) the tensor bytes plus framing.
/usr/bin/python3 - "$work/new/m.h5" <<'PY' && ok || { bad "wire bytes"; }
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1])["gcn/mr"]
w = g["wire_bytes_quantiles"][:]
tensor = g["bytes_per_split"][:]
assert w.shape == (5, 23) and not np.isnan(w).any(), w.shape
assert (np.diff(w, axis=1) >= 0).all()
assert w[0, 0] > tensor[0] and w[0, -1] < tensor[0] + 1024, (w[0], tensor[0])
assert (g["wire_compress_s"][:] >= 0).all() and (g["wire_decompress_s"][:] >= 0).all()
PY
"$coinfer" lut show "$work/new/m.h5" | grep -q "distributions: 30 entries, 23 levels" && "$coinfer" lut show "$work/new/m.h5" | grep -q "wire bytes per request" && ok || { bad "lut show distributions"; "$coinfer" lut show "$work/new/m.h5"; }
# The measured bytes per split equal the spec's (model show prints them in KB).
/usr/bin/python3 - "$work/new/m.h5" <<'PY' && ok || { bad "bytes"; }
import sys, h5py
f = h5py.File(sys.argv[1])
b = f["gcn/mr/bytes_per_split"][:]
# mr: 17 nodes x 300 features x 4 B + 68 edges x 16 B; then 17 x 64 x 4 + graph; 17 x 64 x 4 + graph; pooled 64 x 4; 2 classes x 4
assert list(b) == [17 * 300 * 4 + 68 * 16, 17 * 64 * 4 + 68 * 16, 17 * 64 * 4, 64 * 4, 2 * 4], list(b)
PY
for bad in "--model nope --out $work/x.h5" "--model gcn --batch 2..4 --out $work/x.h5" "--model gcn --repeats 0 --out $work/x.h5" "--model gcn --dataset nosuchset --out $work/x.h5"; do
  "$coinfer" profile $bad > /dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && [ ! -e "$work/x.h5" ] && ok || { bad "bad option ($bad): exit $rc"; }
done
"$coinfer" profile --help | grep -q -- "--feature-chunks" && ok || { bad "help"; }
# Real dataset files as inputs (made here); a wrong dtype or feature width is exit 2 naming file and field.
/usr/bin/python3 - "$work" <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(1)
with h5py.File(f"{d}/graph.h5", "w") as f:
    f["x"] = rng.random((17, 300), dtype=np.float32); f["edge_index"] = rng.integers(0, 17, (2, 68))
with h5py.File(f"{d}/narrow.h5", "w") as f:
    f["x"] = rng.random((17, 30), dtype=np.float32); f["edge_index"] = rng.integers(0, 17, (2, 68))
with h5py.File(f"{d}/f64.h5", "w") as f:
    f["x"] = rng.random((17, 300)); f["edge_index"] = rng.integers(0, 17, (2, 68))
PY
"$coinfer" profile --model gcn --dataset mr --batch 1..2 --repeats 1 --input "$work/graph.h5" --out "$work/real.h5" -q > /dev/null \
  && "$coinfer" lut show "$work/real.h5" | grep -q "inputs: samples from the file" && ok || { bad "real input file"; }
for f in narrow f64; do
  "$coinfer" profile --model gcn --dataset mr --batch 1..1 --repeats 1 --input "$work/$f.h5" --out "$work/x.h5" -q > "$work/$f.err" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "$f.h5" "$work/$f.err" && [ ! -e "$work/x.h5" ] && ok || { bad "bad input file $f: $rc"; cat "$work/$f.err"; }
done
# CPU capping (a cgroup) when this machine allows it; its cgroup is gone afterwards.
if "$coinfer" profile --model gcn --dataset mr --batch 1..1 --repeats 2 --cpu-quota 0.5 --out "$work/cap.h5" -q > "$work/cap.out" 2>&1; then
  "$coinfer" lut show "$work/cap.h5" | grep -q "cpu_cap: emulated slower device: cgroup" && ! ls -d /sys/fs/cgroup/*/coinfer-profile-* /sys/fs/cgroup/coinfer-profile-* > /dev/null 2>&1 \
    && ok || { bad "cpu cap provenance or cleanup"; }
else
  grep -q "cannot cap the CPU" "$work/cap.out" && echo "note: CPU capping unavailable here: $(cat "$work/cap.out")" && ok || { bad "cpu cap error"; cat "$work/cap.out"; }
fi
cp "$work/new/m.h5" "$work/keep.h5"
# An existing LUT file keeps its tables (profiling a second model must not delete the
# first): a second table is added; measuring a table the file holds is refused unless --replace.
"$coinfer" profile --model gat --dataset mr --batch 1..1 --repeats 1 --warmup 0 --ranges whole --out "$work/keep.h5" -q > "$work/add.out" 2>&1 \
  && "$coinfer" lut show "$work/keep.h5" > "$work/add.show" && grep -q "model gcn  dataset mr" "$work/add.show" && grep -q "model gat  dataset mr" "$work/add.show" \
  && ok || { bad "a second table added"; cat "$work/add.out" "$work/add.show"; }
cp "$work/keep.h5" "$work/before.h5"
"$coinfer" profile --model gat --dataset mr --batch 1..1 --repeats 1 --warmup 0 --ranges whole --out "$work/keep.h5" -q > "$work/again.out" 2>&1
[ $? -eq 2 ] && grep -q "already holds .*gat/mr.*--replace" "$work/again.out" && cmp -s "$work/before.h5" "$work/keep.h5" \
  && ok || { bad "the same table again without --replace"; cat "$work/again.out"; }
"$coinfer" profile --model gat --dataset mr --batch 1..1 --repeats 1 --warmup 0 --ranges whole --out "$work/keep.h5" --replace -q > "$work/rep.out" 2>&1 \
  && "$coinfer" lut show "$work/keep.h5" | grep -q "model gcn  dataset mr" && ok || { bad "--replace"; cat "$work/rep.out"; }
# A killed profile resumes: entries are journaled in OUT.partial as they are measured;
# the same command again measures only the rest, says so, records it and removes the journal; other
# options are refused while the journal waits. (Many repeats: entries take long enough to kill between.
# gcn has 4 stages: 10 ranges x 3 batch sizes = 30 entries.)
slow=(profile --model gcn --dataset mr --batch 1..3 --repeats 400 --warmup 0 --out "$work/res/m.h5")
"$coinfer" "${slow[@]}" -q > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do [ "$(cat "$work/res/m.h5.partial" 2>/dev/null | wc -l)" -ge 3 ] && break; sleep 0.05; done
pkill -KILL -P $pid 2> /dev/null; kill -KILL $pid 2> /dev/null; wait $pid 2> /dev/null
journaled=$(($(wc -l < "$work/res/m.h5.partial" 2>/dev/null || echo 1) - 1))
"$coinfer" profile --model gcn --dataset mr --batch 1..3 --repeats 5 --warmup 0 --out "$work/res/m.h5" > "$work/res-other.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "an interrupted profile with other options" "$work/res-other.out" && [ ! -e "$work/res/m.h5" ] && [ "$journaled" -ge 2 ] \
  && ok || { bad "other options while a journal waits: exit $rc, $journaled entries journaled"; cat "$work/res-other.out"; }
"$coinfer" "${slow[@]}" > "$work/res.out" 2> "$work/res.err" \
  && grep -q "resuming an interrupted profile: [0-9]* entries measured before" "$work/res.err" && [ ! -e "$work/res/m.h5.partial" ] \
  && "$coinfer" lut check "$work/res/m.h5" --min-batch 3 | grep -q "^complete" \
  && "$coinfer" lut show "$work/res/m.h5" | grep -q "resumed: [0-9]* of 30 (range, batch) entries were measured by an earlier run" \
  && ok || { bad "resume"; cat "$work/res.out" "$work/res.err"; }
# A profiled fd<P> variant decomposes (the command line's default once undid the
# variant's slices, so gcn@fd8 was the base model under another name). GCN on the Yelp-like graph, whole model, batch
# 1: the base scatters E x 64 hidden features at once, fd8 eight columns at a time, so its peak tensor
# memory must be lower (the messages are 1/8 as wide; the input features, 10,000 x 100, are shared by
# both), and the provenance must say 8 slices.
"$coinfer" profile --model gcn --dataset yelp --batch 1..1 --repeats 1 --warmup 0 --ranges whole --out "$work/fd/base.h5" -q > "$work/fdb.out" 2>&1 \
  && "$coinfer" profile --model gcn --dataset yelp --variant fd8 --batch 1..1 --repeats 1 --warmup 0 --ranges whole --out "$work/fd/fd8.h5" -q > "$work/fd8.out" 2>&1 \
  && "$coinfer" lut show "$work/fd/fd8.h5" | grep -q "feature_chunks: 8" \
  && /usr/bin/python3 - "$work/fd/base.h5" "$work/fd/fd8.h5" <<'PY' && ok || { bad "profiled fd8 does not decompose"; cat "$work/fdb.out" "$work/fd8.out"; "$coinfer" lut show "$work/fd/fd8.h5"; }
import sys, h5py, numpy as np
base = h5py.File(sys.argv[1])["gcn/yelp"]["peak_memory_bytes"][:]
fd8 = h5py.File(sys.argv[2])["gcn@fd8/yelp"]["peak_memory_bytes"][:]
b, f = base[~np.isnan(base)].max(), fd8[~np.isnan(fd8)].max()
print("peak bytes base %.0f fd8 %.0f" % (b, f))
assert f < 0.9 * b, (b, f)
PY
# A split whose state is larger than the middleware's largest frame (gcn_wide on Pubmed: 19,717 x 1024
# floats after conv1, 80 MB > 64 MiB) must not end the profile with "internal error" (exit 1): it is
# measured without wire bytes for that split, which the provenance names.
"$coinfer" profile --model gcn_wide --dataset pubmed --batch 1..1 --repeats 1 --warmup 0 --ranges whole --out "$work/wide.h5" -q > "$work/wide.out" 2>&1 \
  && "$coinfer" lut show "$work/wide.h5" | grep -q "wire_bytes_missing: split 1: the state at batch 1 is larger than the middleware's largest frame" \
  && ok || { bad "a split larger than a frame"; cat "$work/wide.out"; }
# Operator classes (traces/README.md "Operator classes"): the entry written is a valid processor's once
# pasted under one, its tables say they come from the class rates, and a synthesised stage of gcn/mr is
# then priced from them; an --out that is not YAML exits 2 and writes nothing.
"$coinfer" profile --operator-classes --repeats 3 --warmup 1 --out "$work/oc/classes.yaml" -q > "$work/oc.out" 2>&1 \
  && grep -q "^operator_classes:" "$work/oc/classes.yaml" && grep -q "MEASURED on " "$work/oc/classes.yaml" && ok \
  || { bad "profile --operator-classes"; cat "$work/oc.out"; }
{ printf 'profiles:\n  here:\n    role: device\n    description: "this CPU"\n    processors:\n      cpu:\n        kind: cpu\n'
  printf '        description: "test"\n        peak_gflops: 10\n        mem_gbps: 10\n'
  grep -v "^#" "$work/oc/classes.yaml" | sed 's/^/        /'; } > "$work/oc/profiles.yaml"
"$coinfer" lut synth --profiles "$work/oc/profiles.yaml" --device here --model gcn --dataset mr --max-batch 1 --out "$work/oc/here.h5" -q > "$work/oc2.out" 2>&1 \
  && "$coinfer" lut show "$work/oc/here.h5" | grep -q "operator_classes_source: MEASURED on " && ok \
  || { bad "a profile with the measured classes"; cat "$work/oc2.out" "$work/oc/profiles.yaml"; }
# Where the time goes on that processor: each operator's time, each stage's, the share by class; a
# roofline processor has no time per operator (exit 2).
"$coinfer" model show gcn --dataset mr --on here.cpu --profiles "$work/oc/profiles.yaml" > "$work/oc4.out" 2>&1 \
  && grep -q "^by class on cpu at batch 1 (.* ms of operators" "$work/oc4.out" && grep -q "stage on cpu at batch 1: " "$work/oc4.out" && ok \
  || { bad "model show --on"; cat "$work/oc4.out"; }
# The same as JSON: each stage's seconds_on is its operators' plus one stage overhead, the same for every stage.
"$coinfer" model show gcn --dataset mr --on here.cpu --profiles "$work/oc/profiles.yaml" --json > "$work/oc6.json" 2> "$work/oc6.err" \
  && /usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))[0]
assert m["on"] == "cpu", m["on"]
rest = [st["seconds_on"] - sum(o["seconds_on"] for o in st["operators"]) for st in m["stages"]]
assert all(o["seconds_on"] > 0 for st in m["stages"] for o in st["operators"])
assert min(rest) >= 0 and max(rest) - min(rest) < 1e-12, rest
' "$work/oc6.json" && ok || { bad "model show --on --json"; cat "$work/oc6.err"; }
"$coinfer" model show gcn --dataset mr --on rpi4b > "$work/oc5.out" 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q "priced by its roofline" "$work/oc5.out" && ok || { bad "model show --on a roofline (exit $rc)"; cat "$work/oc5.out"; }
"$coinfer" profile --operator-classes --out "$work/oc/classes.txt" > "$work/oc3.out" 2>&1; rc=$?
[ "$rc" = 2 ] && [ ! -e "$work/oc/classes.txt" ] && grep -q "\-\-out" "$work/oc3.out" && ok || { bad "--operator-classes --out not YAML (exit $rc)"; cat "$work/oc3.out"; }
finish profile
