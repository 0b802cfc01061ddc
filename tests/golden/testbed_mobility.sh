#!/usr/bin/env bash
# coinfer-rt testbed with a device that moves between two access points: the link
# schedule its positions give (core/mobility.hpp) is shaped with tc like any bandwidth trace, and the
# server offers the handover trigger at its time, as the simulator does. Checks: the run completes, its
# /events hold the handover (4.5 s, to b), the server decided on "handover:pi0" at about 4.5 s, and the
# simulator's run of the same scenario has the same handover. Network namespaces (root), else loopback
# (no shaping there; the trigger and the records are the same). Exit 77 (skip) without coinfer-rt.
set -u
rt="$1"; root="$2"
source "$(dirname "$0")/rt_processes.sh"  # skips without coinfer-rt; $work, ok, bad, finish, $sim, strays
printf 't_s,x_m,y_m\n0,10,0\n3,10,0\n5,190,0\n' > "$work/walk.csv"
cat > "$work/s.yaml" <<YAML
name: tbwalk
seed: 3
duration_s: 7
warmup_s: 1
drain_s: 3
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1, batch: {window_ms: 5, max_size: 4}}
mobility: {access_points: [{id: a, x_m: 0, y_m: 0, range_m: 150}, {id: b, x_m: 200, y_m: 0, range_m: 150}], step_s: 0.5, handover_ms: 200}
scheduler: {name: greedy}
devices:
  - {id: pi0, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 40, latency_ms: 2}, strategy: offload, movement: {trace: $work/walk.csv}}
YAML
mode=()
if [ "$(id -u)" -ne 0 ] || ! ip netns add cfprobe$$ 2>/dev/null; then mode=(--loopback); else ip netns del cfprobe$$; fi
"$rt" testbed "$work/s.yaml" "${mode[@]}" --out "$work/tb" --startup 2 > "$work/tb.txt" 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "FAIL testbed run: exit $rc"; tail -20 "$work/tb.txt"; exit 1; }
"$sim" run "$work/s.yaml" --out "$work/sim" -q || { echo "FAIL simulator run"; exit 1; }
/usr/bin/python3 - "$work/tb" "$work/sim" <<'PY' || { tail -20 "$work/tb.txt"; exit 1; }
import json, sys, h5py
def handovers(d):
    with h5py.File(d + "/results.h5") as f:
        txt = lambda k: [x.decode() if isinstance(x, bytes) else x for x in f["events/" + k][()]]
        return [(round(t, 6), dev, ap, frm) for t, k, dev, ap, frm in zip(f["events/t"][()].tolist(), txt("kind"), txt("device"), txt("access_point"),
                                                                        txt("from_access_point")) if k == "handover"]
tb, sim = handovers(sys.argv[1]), handovers(sys.argv[2])
assert tb == [(4.5, "pi0", "b", "a")], tb
assert sim == tb, (sim, tb)
decisions = [json.loads(l) for l in open(sys.argv[1] + "/decisions.jsonl")]
at = [x["t_s"] for x in decisions if "handover:pi0" in x["trigger"]]
assert len(at) == 1 and 4.5 <= at[0] < 5.5, decisions
for d in sys.argv[1:3]:  # summary.json: the handovers per device with the access points in turn
    h = json.load(open(d + "/summary.json"))["handovers"]
    assert h["count"] == 1 and h["devices"]["pi0"] == {"count": 1, "at_s": [4.5], "access_points": ["a", "b"]}, h
print("testbed mobility: 1 handover at 4.5 s in both engines, decided on at %.3f s on the testbed" % at[0])
PY
