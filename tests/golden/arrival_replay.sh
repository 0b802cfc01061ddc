#!/usr/bin/env bash
# The real device draws the simulator's arrival stream: a coinfer-rt device with Poisson arrivals
# creates its requests at the times `coinfer run` simulated for the same (seed, device), up to the
# wall clock's scheduling delay (a few ms), and a different device index draws different times.
set -u
rt="$1"; coinfer="$2"; root="$3"
source "$(dirname "$0")/rt_processes.sh"
echo "replay-secret" > "$work/secret"
cat > "$work/s.yaml" <<YAML
name: replay
seed: 11
duration_s: 4
drain_s: 2
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1}
devices:
  - {id: a, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 50}, strategy: local, workload: {arrival: poisson, rate_per_s: 8}}
  - {id: b, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 50}, strategy: local, workload: {arrival: poisson, rate_per_s: 8}}
YAML
"$coinfer" run "$work/s.yaml" --out "$work/sim" -q || { echo "FAIL: simulation"; exit 1; }
# Time zero 6 s ahead: the server and both devices must be up (LibTorch loaded, registered) before it,
# or the first arrivals are missed. 2 s was too little beside CI's niced background builds and fuzzing
# (23 of 32 arrivals replayed once).
epoch=$(date +%s.%N | awk '{printf "%.3f", $1 + 6}')
"$rt" serve "$work/s.yaml" --bind 127.0.0.1 --port 0 --port-file "$work/port" --secret-file "$work/secret" --epoch "$epoch" > "$work/server.log" 2>&1 &
server=$!; pids+=($server)
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
for id in a b; do
  "$rt" device "$work/s.yaml" --id $id --port "$port" --epoch "$epoch" --secret-file "$work/secret" --records "$work/$id.jsonl" > "$work/$id.log" 2>&1 &
  pids+=($!); eval "dev_$id=$!"
done
wait "$dev_a"; wait "$dev_b"
kill "$server" 2>/dev/null
/usr/bin/python3 - "$work" <<'PY'
import json, sys, h5py
work = sys.argv[1]
f = h5py.File(f"{work}/sim/results.h5")
dev = f["requests/device"][:]
t = f["requests/t_created"][:]
sim = {i: sorted(t[dev == i].tolist()) for i in (0, 1)}
fails = 0
for i, name in enumerate("ab"):
    real = sorted(json.loads(l)["t_created"] for l in open(f"{work}/{name}.jsonl") if '"created"' in l)
    if len(real) != len(sim[i]):
        print(f"FAIL device {name}: {len(real)} real arrivals, {len(sim[i])} simulated"); fails += 1; continue
    late = [r - s for r, s in zip(real, sim[i])]
    # The real device wakes at the due time and then creates the request: never early, a few ms late.
    if min(late) < -0.002 or max(late) > 0.05:
        print(f"FAIL device {name}: real minus simulated creation times span {min(late):.4f}..{max(late):.4f} s"); fails += 1; continue
    print(f"device {name}: {len(real)} arrivals replayed, lateness {min(late)*1e3:.1f}..{max(late)*1e3:.1f} ms")
if sim[0][:5] == sim[1][:5]:
    print("FAIL: devices a and b drew the same arrival times"); fails += 1
sys.exit(1 if fails else 0)
PY
