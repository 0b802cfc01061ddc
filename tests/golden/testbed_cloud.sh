#!/usr/bin/env bash
# coinfer-rt testbed with a cloud tier (on the emulated testbed; hw/README.md "Cloud
# tier"): scenarios/cloud/edge_cloud.yaml, shortened: three Pis run pp(1,2) — [0,1) on the Pi, [1,2)
# at the edge, [2,9) at the cloud behind a WAN (25 ms, 200 Mbit/s). The edge really passes each state
# at stage 2 on to the cloud process, which batches and runs the rest. Checked against the simulator:
# the same decisions; every request completed, its record naming the cloud with its stamps in order
# (edge batch end <= cloud queued <= cloud batch start <= cloud batch end <= result); the cloud's log
# shows the edge registering. Loopback, then network namespaces (root). Then the cloud is killed at 3 s
# and started again at 5 s (loopback): the same decisions as the simulator, every failure the cloud's
# (held at the kill, or passed on while it was down), and requests after its recovery complete at the
# cloud again. Exit 77 (skip) without coinfer-rt.
set -u
rt="$1"; root="$2"
source "$(dirname "$0")/rt_processes.sh"  # skips without coinfer-rt; $work, ok, bad, finish, $sim, strays
# Shortened: 8 s, three Pis at 2 inputs/s each (the cloud's [2,9) takes ~0.1 s on this CPU). The
# scenario's LUTs are synthesised (not this machine's): only records and decisions are compared here;
# bench/RESULTS.md "A cloud tier on the testbed" compares times (coinfer validate --reprofile).
sets=(--set duration_s=8 --set warmup_s=1 --set devices.0.count=3 --set devices.0.workload.rate_per_s=2)
cp scenarios/cloud/edge_cloud.yaml "$work/s.yaml"
sed -i "s|\.\./\.\./traces/|$root/traces/|; s|luts: \[traces/lut/\]|luts: [$root/traces/lut/]|" "$work/s.yaml"

check() {  # $1: the testbed run's folder, $2: the simulator's, $3: "fail" when the cloud was killed
  /usr/bin/python3 - "$1" "$2" "${3:-}" <<'PY'
import json, sys, h5py, numpy as np
d, sim, failing = sys.argv[1], sys.argv[2], sys.argv[3] == "fail"
def decisions(x):
    return [(r["trigger"], r["scheme"]) for r in map(json.loads, open(x + "/decisions.jsonl"))]
tb, sm = decisions(d), decisions(sim)
assert [t for t, _ in tb] == [t for t, _ in sm] and tb == sm, (tb, sm)
with h5py.File(d + "/results.h5") as f:
    g = f["requests"]
    txt = lambda a: [x.decode() if isinstance(x, bytes) else x for x in a]
    col = lambda k: g[k][()].astype(float)
    status, failure, created = g["status"][()], txt(g["failure"][()]), col("t_created")
    cloud, cb, be, cq, cs, ce, res = col("cloud"), col("cloud_batch_size"), col("t_batch_end"), col("t_cloud_queued"), col("t_cloud_batch_start"), col("t_cloud_batch_end"), col("t_result")
    to_cloud, split = col("bytes_to_cloud"), col("split")
    servers = txt(f["servers/id"][()]) if "servers/id" in f else ["cloud", "edge"]
assert len(status) > 20, len(status)
assert all(s == 0 or failure[i] for i, s in enumerate(status)), "a failed request without a reason"
done = status == 0
assert (split == 1).all(), "every request pp(1,2): the device ran [0,1)"
# Completed: [2,9) ran at the cloud (index 0), after the edge's [1,2), before the result came back.
assert (cloud[done] == servers.index("cloud")).all(), cloud[done]
assert (cb[done] >= 1).all() and (to_cloud[done] > 0).all()
eps = 1e-3  # stamps of two processes on one clock, rounded in transit
assert (be[done] <= cq[done] + eps).all() and (cq[done] <= cs[done] + eps).all() and (cs[done] <= ce[done] + eps).all() and (ce[done] <= res[done] + eps).all()
if not failing:
    assert done.all(), [x for x in failure if x][:5]
else:
    # Every failure is the cloud's: held when it was killed at 3 s, or passed on while it was down.
    others = sorted({x for x in failure if x and not x.startswith(("server cloud failed at 3 s", "server cloud is down (failed at 3 s)"))})
    assert not others, others
    assert sum(1 for x in failure if x.startswith("server cloud is down (failed at 3 s)")) >= 1, "none passed on while the cloud was down"
    assert sum(1 for x in failure if x.startswith("server cloud failed at 3 s")) >= 1, "none held by the cloud when it was killed"
    late = done & (created > 6.0)  # 1 s each way to the cloud: these complete in the drain
    assert late.sum() >= 5, "no request completed at the cloud after its recovery"
    # None passed on while it was down completed (the edge takes the scenario's failure 0.25 s early,
    # as the devices do, and the cloud is up again at 5 s: a request whose edge part ends after that
    # completes, as in the simulator).
    assert not (done & (be > 3.0) & (be < 4.75)).any(), "passed on while the cloud was down, and completed"
logc = open(d + "/logs/server-cloud.log").read() if __import__("os").path.exists(d + "/logs/server-cloud.log") else open(d + "/logs/server.log").read()
assert "edge server edge connected" in logc, "the edge did not register with the cloud"
PY
}

"$sim" run "$work/s.yaml" "${sets[@]}" --out "$work/sim" -q || { echo "FAIL simulator run"; exit 1; }
run() {  # $1: name, $2: simulator folder, $3: "fail" or "", rest: options
  local name=$1 simd=$2 mode=$3; shift 3
  "$rt" testbed "$work/s.yaml" "${sets[@]}" "$@" --out "$work/$name" --startup 2 > "$work/$name.txt" 2>&1; local rc=$?
  [ $rc -eq 0 ] && grep -q "started 2 edge servers" "$work/$name.txt" && ok || { bad "$name run: exit $rc"; tail -20 "$work/$name.txt"; }
  if [ -s "$work/$name/results.h5" ]; then
    check "$work/$name" "$simd" "$mode" && ok || { bad "cloud records ($name)"; tail -n 5 "$work/$name/logs/"server*.log; }
  fi
  [ "$(strays)" -eq 0 ] && ok || bad "processes left behind: $(pgrep -af 'coinfer-rt (serve|device)')"
}
run lo "$work/sim" "" --loopback
if [ "$(id -u)" -eq 0 ] && ip netns add cf_probe_$$ 2>/dev/null; then
  ip netns del cf_probe_$$
  run ns "$work/sim" ""
fi

# The cloud killed at 3 s and started again at 5 s. Its WAN's latency raised to 1 s, so that it surely
# holds requests when it is killed (6 inputs/s, each held ~2.1 s: sent, run, answered).
sets+=(--set 'events=[{at_s: 3, server: cloud, fail: true}, {at_s: 5, server: cloud, recover: true}]' --set servers.0.link.latency_ms=1000)
"$sim" run "$work/s.yaml" "${sets[@]}" --out "$work/simf" -q || bad "simulator run, cloud failing"
run lof "$work/simf" fail --loopback
grep -q "killed the edge server (cloud" "$work/lof.txt" && ok || bad "the cloud was not killed"

finish testbed_cloud
