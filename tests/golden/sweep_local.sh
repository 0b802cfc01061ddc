#!/usr/bin/env bash
# coinfer sweep with the local backend: bad input refused before anything runs, a failing point
# reported without stopping the others, resumption, merged outputs.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
scn=scenarios/paper/fig14_15_gpu.yaml

expect2() {  # name fragment args...
  local name="$1" frag="$2"; shift 2
  "$coinfer" sweep "$@" --out "$work/$name" > "$work/$name.out" 2>&1
  local rc=$?
  if [ $rc -ne 2 ]; then bad "$name: exit $rc"; cat "$work/$name.out"; return; fi
  grep -q -- "$frag" "$work/$name.out" || { bad "$name: no '$frag'"; cat "$work/$name.out"; return; }
  [ -e "$work/$name" ] && { bad "$name: output folder created"; return; }
  ok
}
expect2 bad_key "grid devices.0.colour=red.*colour" $scn --grid devices.0.colour=red,blue
expect2 typo_key "did you mean" $scn --grid drain_ss=1,2
expect2 empty_range "is empty" $scn --grid devices=5..1
expect2 bad_value "grid point scheduler.name=greedi.*did you mean" $scn --grid scheduler=static,greedi
expect2 bad_backend "local, slurm" $scn --grid devices=1..2 --backend mpi
env PATH=/nonexistent "$coinfer" sweep $scn --grid devices=1..2 --backend slurm --out "$work/nosb" > "$work/nosb.out" 2>&1
[ $? -eq 2 ] && grep -q "sbatch not found" "$work/nosb.out" && [ ! -e "$work/nosb" ] && ok || { bad "no sbatch"; cat "$work/nosb.out"; }
# A Slurm without a reachable controller (an "internal error", exit 1): exit 2 with
# sbatch's words and the hint. A stand-in sbatch answers as Slurm's does when slurmctld is down.
mkdir -p "$work/fakebin"
printf '#!/bin/sh\necho "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' > "$work/fakebin/sbatch"
chmod +x "$work/fakebin/sbatch"
env PATH="$work/fakebin:$PATH" "$coinfer" sweep $scn --grid devices=1..2 --backend slurm --out "$work/noctl" > "$work/noctl.out" 2>&1
[ $? -eq 2 ] && grep -q "Unable to contact slurm controller" "$work/noctl.out" && grep -q "is slurmctld running" "$work/noctl.out" \
  && [ ! -e "$work/noctl" ] && ok || { bad "sbatch without a controller (and no sweep folder left behind)"; cat "$work/noctl.out"; ls -a "$work/noctl" 2>&1; }
"$coinfer" sweep $scn --grid devices=1..2 --out /proc/nope > "$work/unw.out" 2>&1
[ $? -eq 2 ] && grep -q "cannot be created or written" "$work/unw.out" && ok || bad "unwritable folder"

# Keys the file leaves at their defaults are grid keys too, as they are --set keys:
# the quickstart has no devices.0.count, drain_s or workload.in_flight.
"$coinfer" sweep scenarios/quickstart.yaml --grid devices=1..2 --grid drain_s=1,2 --grid devices.0.workload.in_flight=1,2 \
  --set duration_s=2 --set warmup_s=0 --jobs 2 --out "$work/defaults" > "$work/defaults.out" 2>&1
[ $? -eq 0 ] && [ "$(tail -n +2 "$work/defaults/sweep.csv" | grep -vc '^#')" -eq 8 ] && ok || { bad "grid over default keys"; cat "$work/defaults.out"; }

# Commas inside () and [] belong to a value: pp(0,1) (a cloud tier) and a placement are one value each.
"$coinfer" sweep scenarios/cloud/edge_cloud.yaml --grid 'devices.*.strategy=pp(0,1),local,pp(1,3)' --set duration_s=3 --set warmup_s=1 \
  --jobs 2 --out "$work/commas" > "$work/commas.out" 2>&1
[ $? -eq 0 ] && [ "$(tail -n +2 "$work/commas/sweep.csv" | grep -vc '^#')" -eq 3 ] && grep -q '"pp(0,1)"' "$work/commas/sweep.csv" \
  && ok || { bad "grid values with commas"; cat "$work/commas.out"; }

# Seeds that cannot change anything (closed loop everywhere) are run once, and the sweep says so.
"$coinfer" sweep $scn --grid devices=1,2 --seeds 3 --jobs 2 --set duration_s=3 --set warmup_s=1 --out "$work/det" > "$work/det.out" 2>&1
grep -q "2 of 2 grid points have no random element" "$work/det.out" && grep -q "2 points" "$work/det.out" && ok || { bad "seedless sweep"; cat "$work/det.out"; }
# Seeds matter with Poisson arrivals: the seeded sweeps below use them.
poisson='devices.0.workload={arrival: poisson, rate_per_s: 20}'

# A point that fails at run time: its output folder's name is taken by a file.
mkdir -p "$work/s/points" && touch "$work/s/points/p00006"
"$coinfer" sweep $scn --grid scheduler=greedy,hierarchical --grid devices=1,5 --seeds 2 --jobs 2 --set "$poisson" --out "$work/s" > "$work/s.out" 2>&1
rc=$?
[ $rc -eq 1 ] && ok || bad "sweep with a failing point should exit 1, got $rc"
grep -q "point 6 failed; log: .*p00006.log" "$work/s.out" && ok || { bad "failed point not reported with its log"; cat "$work/s.out"; }
[ "$(grep -c '' "$work/s/sweep.csv")" -eq 9 ] && ok || bad "sweep.csv should have 8 rows + header"
[ "$(awk -F, 'NR>1 && $5==1' "$work/s/sweep.csv" | wc -l)" -eq 7 ] && ok || bad "the 7 other points should be ok"
grep -q "cannot be created or written" "$work/s/points/p00006.log" && ok || bad "failed point's log should say why"
# Resume: the file is gone and one finished point is deleted; a rerun runs exactly those two.
rm -rf "$work/s/points/p00001" "$work/s/points/p00006"
"$coinfer" sweep $scn --grid scheduler=greedy,hierarchical --grid devices=1,5 --seeds 2 --jobs 2 --set "$poisson" --out "$work/s" > "$work/s2.out" 2>&1
grep -q "6 already done, 2 to run" "$work/s2.out" && ok || { bad "resume"; cat "$work/s2.out"; }
[ -f "$work/s/points/p00001/summary.json" ] && ok || bad "resumed point not rerun"
# A point's identity is the content of what it reads. The quickstart with its trace
# copied here: editing the scenario file, or the trace it names, re-runs the points; an unchanged rerun
# runs nothing; the folder records the program, commit and the scenario's copy.
sed -e "s#traces/lut/#$root/traces/lut/#" -e "s#traces/bandwidth/drop_40_to_1.csv#$work/trace.csv#" scenarios/quickstart.yaml > "$work/edit.yaml"
cp traces/bandwidth/drop_40_to_1.csv "$work/trace.csv"
edit_sweep() { "$coinfer" sweep "$work/edit.yaml" --grid devices=1,2 --set duration_s=3 --set warmup_s=1 --jobs 2 --out "$work/e" > "$work/$1.out" 2>&1; }
edit_sweep e1 && grep -q "0 already done, 2 to run" "$work/e1.out" && ok || { bad "edited sweep: first run"; cat "$work/e1.out"; }
edit_sweep e2 && grep -q "2 already done, 0 to run" "$work/e2.out" && ok || { bad "edited sweep: unchanged rerun"; cat "$work/e2.out"; }
sed -i 's/rate_per_s: 20/rate_per_s: 5/' "$work/edit.yaml"
edit_sweep e3 && grep -q "0 already done, 2 to run" "$work/e3.out" && grep -q "2 of them ran before with other inputs" "$work/e3.out" \
  && grep -q "rate_per_s: 5" "$work/e/scenario_as_run.yaml" && ok || { bad "edited scenario file re-runs its points"; cat "$work/e3.out"; }
edit_sweep e4 && grep -q "2 already done, 0 to run" "$work/e4.out" && ok || { bad "edited sweep: rerun after the edit"; cat "$work/e4.out"; }
echo "50,20" >> "$work/trace.csv"
edit_sweep e5 && grep -q "0 already done, 2 to run" "$work/e5.out" && ok || { bad "edited trace re-runs the points"; cat "$work/e5.out"; }
/usr/bin/python3 - "$work/e/sweep.json" <<'PY' && ok || bad "sweep.json records program, commit and inputs"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["made_by"]["program"].startswith("coinfer "), m["made_by"]
assert m["made_by"]["commit"], m["made_by"]
assert all(len(p["inputs"]) == 64 for p in m["points"]), m["points"]
# A point's recorded command names the program ("exe run ...").
s = json.load(open(sys.argv[1].replace("sweep.json", "points/p00000/summary.json")))
assert s["made_by"]["command"].startswith("coinfer run "), s["made_by"]["command"]
PY

# A different grid in the same folder is refused.
"$coinfer" sweep $scn --grid devices=1..3 --out "$work/s" > "$work/s3.out" 2>&1
[ $? -eq 2 ] && grep -q "different sweep" "$work/s3.out" && ok || bad "different sweep in the same folder"
# collect rebuilds the merged files.
rm "$work/s/sweep.csv"
"$coinfer" sweep collect "$work/s" > /dev/null; [ -f "$work/s/sweep.csv" ] && ok || bad "collect"
/usr/bin/python3 - "$work/s/sweep.h5" <<'PY' && ok || bad "sweep.h5 content"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1])
assert f.attrs["format"] in (b"coinfer-sweep", "coinfer-sweep")
assert list(f["grid/devices"][:]) == [1, 1, 5, 5, 1, 1, 5, 5], f["grid/devices"][:]
assert [s.decode() for s in f["grid/scheduler"][:4]] == ["greedy"] * 4
assert f["ok"][:].tolist() == [1] * 8
assert np.all(f["metrics/throughput_rps"][:] > 0)
assert list(f["seed"][:]) == [1, 2] * 4
PY
finish sweep_local
