#!/usr/bin/env bash
# coinfer-rt testbed: a short run in network namespaces (tc-shaped veth pairs, a bandwidth event),
# results in the simulator's schema, nothing left behind; the loopback fallback; Ctrl-C cleans up;
# too many devices is exit 2 with nothing created. Exit 77 (skip) without root or namespaces.
set -u
rt="$1"; root="$2"
source "$(dirname "$0")/rt_processes.sh"  # skips without coinfer-rt; $work, ok, bad, finish, $sim, strays
ours() { ip netns list 2>/dev/null | grep -c '^cf[0-9]' ; }
cat > "$work/s.yaml" <<YAML
name: tb
seed: 2
duration_s: 5
warmup_s: 1
drain_s: 3
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1, batch: {window_ms: 5, max_size: 4}}
devices:
  - {id: pi0, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 40, latency_ms: 2}, strategy: offload}
  - {id: pi1, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 10, latency_ms: 2}, strategy: pp(1),
     workload: {arrival: poisson, rate_per_s: 30}}
  - {id: pi2, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 40, latency_ms: 2}, strategy: data_parallel}
events:
  - {at_s: 2.5, device: pi0, bandwidth_mbps: 5}
YAML
before=$(ours)

# Loopback fallback (works without root).
"$rt" testbed "$work/s.yaml" --loopback --out "$work/lo" --startup 2 > "$work/lo.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && [ -s "$work/lo/results.h5" ] && grep -q '"mode": "loopback"' "$work/lo/testbed.json" && ok || bad "loopback run: exit $rc: $(tail -5 $work/lo.txt)"

# coinfer collect: the journals the testbed kept, merged by hand, give the testbed's own results (the
# same requests, summary and decisions; only the run's end differs: the testbed measures it, collect
# takes the last time a record mentions).
coinfer="$(dirname "$rt")/coinfer"
"$coinfer" collect "$work"/lo/logs/journal-*.jsonl "$work/lo/decisions.jsonl" --scenario "$work/s.yaml" --out "$work/col" > "$work/col.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$work/lo" "$work/col" <<'PY' && ok || { bad "collect: exit $rc"; cat "$work/col.txt"; }
import json, sys, h5py, numpy as np
a, b = sys.argv[1], sys.argv[2]
with h5py.File(a + "/results.h5") as fa, h5py.File(b + "/results.h5") as fb:
    names = []
    fa.visit(lambda n: names.append(n) if isinstance(fa[n], h5py.Dataset) and n.startswith(("requests/", "devices/", "decisions/", "events/")) else None)
    assert any(n.startswith("requests/") for n in names), names
    for n in names:
        x, y = fa[n][()], fb[n][()]
        assert x.shape == y.shape and (np.array_equal(x, y) or (x.dtype.kind == "f" and np.allclose(x, y, equal_nan=True, rtol=0, atol=0))), n
sa, sb = json.load(open(a + "/summary.json")), json.load(open(b + "/summary.json"))
assert sa["total"] == sb["total"] and sa["devices"] == sb["devices"], (sa["total"], sb["total"])
assert open(a + "/decisions.jsonl").read() == open(b + "/decisions.jsonl").read()
roles = [f["role"] for f in sb["data_files"]]
assert roles.count("device journal") == 3 and roles.count("decisions journal") == 1, roles
# The bandwidth records are the scenario's schedule (pi0: 40 Mbit/s, 5 from 2.5 s; pi1 10; pi2 40).
with h5py.File(a + "/results.h5") as f:
    bw = list(zip(f["bandwidth/device"][()].tolist(), f["bandwidth/t"][()].tolist(), f["bandwidth/mbps"][()].tolist()))
assert bw == [(0, 0.0, 40.0), (0, 2.5, 5.0), (1, 0.0, 10.0), (2, 0.0, 40.0)], bw
PY
# coinfer validate --real: the collected run compared with a simulation of its scheduler, no testbed
# started (the real run's numbers are the "testbed" side: its throughput is the collected one).
"$coinfer" validate "$work/s.yaml" --real "$work/col" --out "$work/vreal" > "$work/vreal.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$work/vreal" "$work/col" <<'PY' && ok || { bad "validate --real: exit $rc"; tail -5 "$work/vreal.txt"; }
import json, sys
v = json.load(open(sys.argv[1] + "/validate.json"))
real = json.load(open(sys.argv[2] + "/summary.json"))
assert list(v["schedulers"]) == [real["scheduler"]] and v["real_runs"][real["scheduler"]].endswith("/col"), v.keys()
rows = {(r["scope"], r["metric"]): r for r in v["schedulers"][real["scheduler"]]}
assert rows[("total", "throughput_rps")]["testbed"] == real["total"]["throughput_rps"], rows[("total", "throughput_rps")]
# No calibration for a run made elsewhere, and the file says so.
assert v["calibration"]["done"] is False and "nothing is measured on this machine" in v["calibration"]["why"], v.get("calibration")
PY
"$coinfer" report "$work/vreal" --out "$work/vreal.html" > /dev/null 2>&1 && grep -q "Caveats: calibration skipped" "$work/vreal.html" \
  && ok || bad "the validation report names the skipped calibration"
"$coinfer" validate "$work/s.yaml" --real "$work" --out "$work/vbad" > "$work/vbad.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "not a run's results folder" "$work/vbad.txt" && [ ! -e "$work/vbad" ] && ok || bad "validate --real on a non-results folder: exit $rc"
"$coinfer" validate "$work/s.yaml" --real "$work/col" --schedulers local --out "$work/vbad" > "$work/vbad.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "not with --real" "$work/vbad.txt" && ok || bad "validate --real with --schedulers: exit $rc"

# Clocks (hw/clock_sync.hpp): pi1's clock set 3 s ahead. Its clock probes measure the offset, and the
# merged records of pi1 are on the server's clock: creation before the server received the upload,
# the result after the server's batch ended (the raw journal is 3 s off).
# Energy on real boards: pi0 has a power meter (a command printing "POWER 5.0 W" every 50 ms); its energy is
# the readings integrated over the 4 s window (20 J), the others' is not measured (null).
"$rt" testbed "$work/s.yaml" --loopback --out "$work/skew" --startup 2 --device-clock-skew pi1=3 \
  --device-power-command "pi0=sh -c 'while :; do echo POWER 5.0 W; sleep 0.05; done'" > "$work/skew.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$work/skew" <<'PY' && ok || { bad "clock skew: exit $rc"; tail -5 "$work/skew.txt"; }
import json, sys, h5py, numpy as np
d = sys.argv[1]
clock = json.load(open(d + "/summary.json"))["clock"]["devices"]
assert abs(clock["pi1"]["offset_s"] + 3) < 0.01 and clock["pi1"]["uncertainty_s"] < 0.01, clock
assert abs(clock["pi0"]["offset_s"]) < 0.01, clock
devs = json.load(open(d + "/summary.json"))["devices"]
assert abs(devs["pi0"]["energy_j"] - 20) < 0.5, devs["pi0"]
assert devs["pi1"]["energy_j"] is None and devs["pi2"]["energy_j"] is None, devs
with h5py.File(d + "/results.h5") as f:
    g = f["requests"]
    dev = g["device"][()]
    created, up, b_end, result = (g[k][()] for k in ("t_created", "t_uplink_end", "t_batch_end", "t_result"))
m = (dev == 1) & np.isfinite(up) & np.isfinite(result)
assert m.sum() > 5, m.sum()
tol = clock["pi1"]["uncertainty_s"] + 1e-3
assert np.all(created[m] <= up[m] + tol) and np.all(b_end[m] <= result[m] + tol), "pi1's times are not on the server's clock"
raw = [json.loads(l) for l in open(d + "/logs/journal-pi1.jsonl") if '"done"' in l]
r = next(x for x in raw if x.get("t_uplink_end") is not None)
assert r["t_created"] - r["t_uplink_end"] > 2.5, r  # uncorrected: 3 s off
PY

# The run's report shows the boards' clocks and the testbed settings.
"$coinfer" report "$work/skew" > "$work/report.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q 'id="run-clocks"' "$work/skew/report.html" && grep -q 'id="run-testbed"' "$work/skew/report.html" \
  && ok || { bad "report of a testbed run: exit $rc"; tail -15 "$work/report.txt"; }

# Bad journals: exit 2 naming the file, nothing written.
echo '{"ev":"note","device":"pi9"}' > "$work/pi9.jsonl"
printf 'hello\n' > "$work/garbage.jsonl"
for case in "pi9.jsonl:is not in the scenario" "garbage.jsonl:not a journal" "dup:a second journal of device 'pi0'" "decs:a second decisions journal"; do
  what=${case%%:*}; frag=${case#*:}
  case $what in
    dup) args=("$work/lo/logs/journal-pi0.jsonl" "$work/lo/logs/journal-pi0.jsonl") ;;
    decs) args=("$work/lo/decisions.jsonl" "$work/lo/decisions.jsonl") ;;
    *) args=("$work/$what") ;;
  esac
  "$coinfer" collect "${args[@]}" --scenario "$work/s.yaml" --out "$work/colbad" > "$work/colbad.txt" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q -- "$frag" "$work/colbad.txt" && [ ! -e "$work/colbad" ] && ok || { bad "collect $what: exit $rc"; cat "$work/colbad.txt"; }
done

# Idle helpers: with one busy worker, the server forwards waiting batches to the idle device when the
# shared policy (core/helper_forwarding.hpp) expects the helper to finish sooner, and relays its
# results to the origin (loopback run). The helper is of the server's type (its LUT says it runs the
# model as fast as a worker), so a batch waiting behind a busy worker goes to it: three offloading
# devices keep up to two batches waiting.
cat > "$work/h.yaml" <<YAML
name: helpers
seed: 1
duration_s: 5
drain_s: 5
luts: [traces/lut_measured]
servers:
  - {id: edge, type: x86-epyc-2vcpu, workers: 1, batch: {window_ms: 0, max_size: 1}}
devices:
  - {id: d, count: 3, type: x86-epyc-0.3cpu, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 100}, strategy: offload}
  - {id: idle, type: x86-epyc-2vcpu, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 100}, strategy: offload,
     workload: {arrival: none}}
scheduler: {name: static, helpers: true}
YAML
"$rt" testbed "$work/h.yaml" --loopback --out "$work/h" --startup 2 > "$work/h.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "helper run: exit $rc: $(tail -5 $work/h.txt)"
/usr/bin/python3 - "$work/h/results.h5" <<'PY' && ok || bad "no request ran on the helper"
import sys, h5py, numpy as np
r = h5py.File(sys.argv[1])["requests"]
helper, status = r["helper"][:], r["status"][:]
assert np.sum((helper == 3) & (status == 0)) >= 3, (np.unique(helper, return_counts=True), np.sum(status))
assert np.sum(status != 0) == 0, ("failed requests", [x.decode() for x in r["failure"][:][status != 0]])
print(f"{np.sum(helper == 3)} of {len(helper)} requests ran on the idle helper")
PY

# Background load: at 3 s a load of 0.5 takes half of the device's 0.3-core CPU cap
# (the cgroup quota of its work threads drops to 0.15 cores, testbed.json says so); its computations
# then take about twice as long, and the scheduler re-decided on the load trigger as in the simulator.
if [ -d /sys/fs/cgroup/cpu ] || grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
cat > "$work/l.yaml" <<YAML
name: load
seed: 1
duration_s: 6
drain_s: 5
luts: [traces/lut_measured]
servers:
  - {id: edge, type: x86-epyc-2vcpu, workers: 1, batch: {window_ms: 0, max_size: 1}}
devices:
  - {id: d, type: x86-epyc-0.3cpu, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 100}, strategy: local,
     workload: {arrival: closed_loop, in_flight: 1}}
scheduler: {name: greedy}
events:
  - {at_s: 3, device: d, load: 0.5}
YAML
"$rt" testbed "$work/l.yaml" --loopback --device-cpu 0.3 --out "$work/l" --startup 2 > "$work/l.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "load run: exit $rc: $(tail -5 $work/l.txt)"
/usr/bin/python3 - "$work/l" <<'PY' && ok || bad "background load on the testbed"
import sys, json, h5py, numpy as np
d = sys.argv[1]
applied = json.load(open(f"{d}/testbed.json"))["loads_applied"]
assert len(applied) == 1 and applied[0]["device"] == "d" and applied[0]["load"] == 0.5 and abs(applied[0]["cpu_cores"] - 0.15) < 1e-9, applied
assert 2.9 < applied[0]["t_s"] < 3.5, applied
decisions = [json.loads(l) for l in open(f"{d}/decisions.jsonl") if l.strip()]
assert any(str(x.get("trigger", "")).startswith("load:d") for x in decisions), [x.get("trigger") for x in decisions]
r = h5py.File(f"{d}/results.h5")["requests"]
start, end = r["t_device_start"][:], r["t_device_end"][:]
ok = np.isfinite(start) & np.isfinite(end)
t = applied[0]["t_s"]  # the quota's change: computations wholly before it, and wholly after it
before, after = (end - start)[ok & (end < t)], (end - start)[ok & (start > t)]
assert len(before) and len(after), (start, end, t)
# The fastest computation of each side: other processes on the machine can only lengthen a computation (the
# quota caps it, nothing else speeds it), so the minima compare the two quotas where medians also compare
# how busy the machine was (a CI run with a build beside it gave medians 646 / 881 ms, ratio 1.36; quiet
# runs give ~2.0 either way).
print(f"device compute: median {np.median(before)*1e3:.0f} ms before the load, {np.median(after)*1e3:.0f} ms after; "
      f"fastest {before.min()*1e3:.0f} / {after.min()*1e3:.0f} ms (ratio {after.min()/before.min():.2f}; 2 expected)")
assert after.min() / before.min() > 1.4, (before, after)
PY
else
  echo "note: no cgroup cpu controller: background load on the testbed not checked"
fi

if [ "$(id -u)" -ne 0 ] || ! ip netns add cfprobe$$ 2>/dev/null; then
  echo "SKIP the namespace part: needs root and ip netns (loopback part: $passes passed, $fails failed)"
  [ $fails -eq 0 ] && exit 77 || exit 1
fi
ip netns del cfprobe$$

"$rt" testbed "$work/s.yaml" --out "$work/ns" --startup 2 > "$work/ns.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || bad "namespace run: exit $rc: $(tail -5 $work/ns.txt)"
grep -q '"mode": "netns"' "$work/ns/testbed.json" && ok || bad "not run in namespaces: $(cat $work/ns/testbed.json)"
/usr/bin/python3 - "$work/ns" <<'PY' && ok || bad "namespace results"
import sys, json, h5py, numpy as np
d = sys.argv[1]
s = json.load(open(f"{d}/summary.json"))
assert s["devices"]["pi0"]["completed"] > 20 and s["devices"]["pi1"]["completed"] > 20, s
f = h5py.File(f"{d}/results.h5")
r = f["requests"]
created, result = r["t_created"][:], r["t_result"][:]
dev = r["device"][:]
assert np.all(np.isfinite(result[r["status"][:] == 0]))
# pi0's uploads take longer after the 40 -> 5 Mbit/s event at 2.5 s (tc changed the shaping).
up = r["t_uplink_end"][:] - created
before = np.median(up[(dev == 0) & (created < 2.3) & (created > 0.5)])
after = np.median(up[(dev == 0) & (created > 2.8)])
assert after > 3 * before, (before, after)
# pp(1): pi1 ran stage 0 itself.
assert np.all(np.isfinite(r["t_device_end"][:][dev == 1]))
# data_parallel: pi2's inputs ran whole on both sides (split 0 on the server, split n on the device).
splits = set(r["split"][:][dev == 2].tolist())
assert 0 in splits and max(splits) > 0 and len(splits) == 2, splits
print(f"pi0 uplink median {before*1e3:.2f} ms at 40 Mbit/s, {after*1e3:.2f} ms at 5 Mbit/s")
PY
[ "$(ours)" -eq "$before" ] && ok || bad "namespaces left behind: $(ip netns list)"
[ "$(strays)" -eq 0 ] && ok || bad "processes left behind"

# The access point is one medium shared by every device in both directions: two devices on fast links
# (100 Mbit/s) behind a 4 Mbit/s access point upload at the access point's pace, sharing it fairly, as simulated.
# One 21.5 KB GCN/MR input alone takes 43 ms at 4 Mbit/s (1.7 ms at 100 Mbit/s).
cat > "$work/ap.yaml" <<YAML
name: ap
seed: 1
duration_s: 4
warmup_s: 1
drain_s: 3
luts: [traces/lut]
access_point: {bandwidth_mbps: 4}
servers:
  - {id: edge, type: gtx1060, workers: 2, batch: {window_ms: 0, max_size: 1}}
devices:
  - {id: p, count: 2, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 100, latency_ms: 1}, strategy: offload}
YAML
cat > "$work/ap_check.py" <<'PY'
import sys, h5py, numpy as np
# Each upload, against a fair shared 4 Mbit/s medium: alone it takes T0 = bytes x 8 / 4e6; while the other
# device uploads too it progresses at half the rate, so an upload overlapped for a fraction f of its
# duration d takes d = T0 / (1 - f/2). Where the two devices' uploads happen to overlap depends on their
# phase (different on the testbed and in the simulator), so each upload is checked against its own f.
def uploads(d):
    r = h5py.File(f"{d}/results.h5")["requests"]
    keep = (r["t_created"][:] > 1) & (r["status"][:] == 0)
    return [(dev, a, b, n) for dev, a, b, n in zip(r["device"][:][keep], r["t_created"][:][keep], r["t_uplink_end"][:][keep], r["bytes_up"][:][keep])]
def ratios(d):
    u = uploads(d)
    out = []
    for dev, a, b, n in u:
        overlap = sum(max(0.0, min(b, b2) - max(a, a2)) for dev2, a2, b2, _ in u if dev2 != dev)
        f = min(1.0, overlap / (b - a))
        out.append((b - a) * (1 - f / 2) / (n * 8 / 4e6))
    return np.array(out), np.median([b - a for _, a, b, _ in u])
tb, tb_med = ratios(sys.argv[1])
sim, sim_med = ratios(sys.argv[2])
print(f"shared 4 Mbit/s access point: median upload {tb_med*1e3:.1f} ms on the testbed, {sim_med*1e3:.1f} ms simulated; "
      f"upload time over the fair-share expectation: median {np.median(tb):.2f} on the testbed, {np.median(sim):.2f} simulated")
assert len(tb) > 20, len(tb)
assert 0.85 < np.median(tb) < 1.3, np.median(tb)   # 100 Mbit/s links alone would give about 0.04
assert 0.85 < np.median(sim) < 1.3, np.median(sim)
PY
"$(dirname "$rt")/coinfer" run "$work/ap.yaml" --out "$work/aps" -q > /dev/null 2>&1
# One measurement on this shared VM is occasionally off (seen once in many runs: uploads at 0.47 of the fair
# share while the clock probes reported 28 ms of uncertainty, i.e. a machine stalled for tens of ms): a miss is
# measured once more, and both figures are printed.
ap_ok=no
for attempt in 1 2; do
  rm -rf "$work/apt"
  "$rt" testbed "$work/ap.yaml" --out "$work/apt" --startup 2 > "$work/apt.txt" 2>&1; rc=$?
  if [ $rc -eq 0 ] && /usr/bin/python3 "$work/ap_check.py" "$work/apt" "$work/aps"; then ap_ok=yes; break; fi
  echo "shared access point: attempt $attempt missed (exit $rc)"
done
[ $ap_ok = yes ] && ok || bad "shared access point: exit $rc: $(tail -3 $work/apt.txt)"
[ "$(ours)" -eq "$before" ] && [ "$(strays)" -eq 0 ] && ok || bad "access point run left namespaces or processes"

# Ctrl-C during the run: exit 130, nothing left behind.
"$rt" testbed "$work/s.yaml" --out "$work/int" --startup 2 > "$work/int.txt" 2>&1 &
tb=$!
sleep 4; kill -INT $tb; wait $tb; rc=$?
[ $rc -eq 130 ] && ok || bad "Ctrl-C: exit $rc"
[ "$(ours)" -eq "$before" ] && [ "$(strays)" -eq 0 ] && ok || bad "Ctrl-C left namespaces or processes: $(ip netns list)"

# More devices than the testbed creates: exit 2, nothing created.
/usr/bin/python3 - "$work/s.yaml" "$work/big.yaml" <<'PY'
import sys
t = open(sys.argv[1]).read().split("devices:")[0]
t += "devices:\n  - {id: d, count: 201, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 40}, strategy: offload}\n"
open(sys.argv[2], "w").write(t)
PY
"$rt" testbed "$work/big.yaml" --out "$work/big" > "$work/big.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "at most 200" "$work/big.txt" && [ ! -e "$work/big" ] && [ "$(ours)" -eq "$before" ] && ok || bad "too many devices: exit $rc: $(cat $work/big.txt)"
# The real server forms batches larger than one (no test ever saw it): three closed-loop
# devices offloading everything, a 20 ms window, loopback; batch sizes from the results.
sed -e 's/window_ms: 5, max_size: 4/window_ms: 20, max_size: 4/' -e 's/strategy: pp(1),/strategy: offload,/' \
    -e 's/strategy: data_parallel/strategy: offload/' -e 's/workload: {arrival: poisson, rate_per_s: 30}/workload: {arrival: closed_loop}/' \
    -e '/^events:/,$d' "$work/s.yaml" > "$work/batch.yaml"
"$rt" testbed "$work/batch.yaml" --loopback --out "$work/batch" --startup 2 > "$work/batch.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && /usr/bin/python3 - "$work/batch/results.h5" <<'PY' && ok || { bad "batches larger than one on the real server: exit $rc"; tail -5 "$work/batch.txt"; }
import sys, h5py, collections
with h5py.File(sys.argv[1], "r") as f:
    r = f["requests"]
    sizes = [int(b) for b, st in zip(r["batch_size"][:], r["status"][:]) if st == 0]
hist = collections.Counter(sizes)
print("batch sizes on the real server:", dict(sorted(hist.items())))
assert len(sizes) > 20 and max(sizes) > 1, hist
PY
# The kernel's memory limit on device processes (a cgroup per device, where this machine
# lets us write one). A DGCNN board, local: auto adds the process's footprint before its first request to
# the board's 4 GB, and nothing is killed; exact at 0.1 GB for the whole process (LibTorch alone takes
# ~70 MB; a DGCNN request's tensors tens of MB more) is killed by the kernel's OOM killer, and the run
# records its unfinished request failed "out of memory on pi0:cpu (the kernel killed ...)" -- the
# simulator's reason -- exit 1, its cgroup removed.
if mkdir /sys/fs/cgroup/memory/coinfer-probe-$$ 2>/dev/null || { grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && mkdir /sys/fs/cgroup/coinfer-probe-$$ 2>/dev/null; }; then
  rmdir /sys/fs/cgroup/memory/coinfer-probe-$$ /sys/fs/cgroup/coinfer-probe-$$ 2>/dev/null
  cat > "$work/mem.yaml" <<YAML
name: mem
seed: 2
duration_s: 4
drain_s: 3
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1}
devices:
  - {id: pi0, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 40, latency_ms: 2}, strategy: local}
YAML
  "$rt" testbed "$work/mem.yaml" --loopback --out "$work/mauto" --startup 2 > "$work/mauto.txt" 2>&1; rc=$?
  [ $rc -eq 0 ] && /usr/bin/python3 - "$work/mauto" <<'PY' && ok || { bad "memory limit auto: exit $rc"; tail -5 "$work/mauto.txt"; }
import json, sys
m = json.load(open(sys.argv[1] + "/testbed.json"))["device_memory"]
d = m["devices"]["pi0"]
assert m["mode"] == "auto" and d["board_memory_mb"] == 4000 and d["oom_kills"] == 0, m
assert abs(d["limit_mb"] - 4000 - d["footprint_before_first_request_mb"]) < 1e-6 and d["footprint_before_first_request_mb"] > 10, d
s = json.load(open(sys.argv[1] + "/summary.json"))["total"]
assert s["completed"] > 3 and s["failed"] == 0, s
PY
  "$rt" testbed "$work/mem.yaml" --loopback --out "$work/mexact" --startup 2 --device-memory exact --set devices.0.memory_gb=0.1 > "$work/mexact.txt" 2>&1; rc=$?
  [ $rc -eq 1 ] && grep -q "ended with killed by signal 9 (Killed): the kernel killed it for memory" "$work/mexact.txt" && /usr/bin/python3 - "$work/mexact" <<'PY' && ok || { bad "memory limit exact: exit $rc"; tail -5 "$work/mexact.txt"; }
import json, sys, h5py
d = json.load(open(sys.argv[1] + "/testbed.json"))["device_memory"]["devices"]["pi0"]
assert d["limit_mb"] == 100 and d["oom_kills"] >= 1, d
with h5py.File(sys.argv[1] + "/results.h5") as f:
    fail = [x.decode() for x, st in zip(f["requests/failure"][:], f["requests/status"][:]) if st == 1]
assert fail and all(x.startswith("out of memory on pi0:cpu (the kernel killed the device process at its 100 MB limit") for x in fail), fail
PY
  ! ls -d /sys/fs/cgroup/memory/coinfer-mem-* /sys/fs/cgroup/coinfer-mem-* > /dev/null 2>&1 && ok || bad "memory cgroups left behind"
  # exact where even starting does not fit: a clear error, not a hang.
  "$rt" testbed "$work/mem.yaml" --loopback --out "$work/mtiny" --startup 2 --device-memory exact --set devices.0.memory_gb=0.01 > "$work/mtiny.txt" 2>&1; rc=$?
  [ $rc -ne 0 ] && grep -q "exited before starting: the kernel killed it for memory" "$work/mtiny.txt" && ok || { bad "memory limit below the footprint: exit $rc"; tail -5 "$work/mtiny.txt"; }
else
  echo "note: no writable cgroup memory controller: the kernel memory limit is not tested"
fi
finish testbed
