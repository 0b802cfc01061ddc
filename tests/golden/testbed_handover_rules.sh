#!/usr/bin/env bash
# mobility.mid_transfer resend and fail on the emulated testbed: a device walks
# between two access points ten times while it offloads in a closed loop over a link with 60 ms of
# latency, so that most handovers catch an upload or a result on the link. The server decides for
# uploads and the device for results, each where the transfer ends (core/mobility.hpp
# handover_catching, hw/README.md "Handovers mid-transfer"). For each rule, in both engines: every
# request is accounted for (ok or failed, none lost); under fail every failure is a handover's, with the
# simulator's text and one of the run's handover times, and at least one request failed so; under
# resend none failed and at least one transfer was sent again; summary.json counts what the records
# say. Network namespaces (root), else loopback. Exit 77 (skip) without coinfer-rt.
set -u
rt="$1"; root="$2"
source "$(dirname "$0")/rt_processes.sh"  # skips without coinfer-rt; $work, ok, bad, finish, $sim, strays
# At x = 10 m the device is nearest a, at 190 m nearest b: it walks across in 0.5 s and stays 0.5 to
# 0.62 s. The stays differ because a request caught at a handover ends there and the closed loop starts
# the next one at once: with crossings exactly 1 s apart (and positions sampled every 50 ms) every
# handover met the cycle at the same phase and caught the same kind of transfer (the simulator: 11
# uploads; one CI testbed run too). Stays of 0.5 + 0.03 * (k mod 5) s, sampled every 10 ms, spread the
# phases over the ~125-150 ms cycle: the simulator catches 6 uploads and 5 results.
/usr/bin/python3 - > "$work/walk.csv" <<'PY'
print("t_s,x_m,y_m")
t = 0.0
for k in range(11):
    x0, x1 = (10, 190) if k % 2 == 0 else (190, 10)
    print(f"{t:.2f},{x0},0"); print(f"{t + 0.5:.2f},{x1},0")
    t += 1.0 + 0.03 * (k % 5)
PY
mode=()
if [ "$(id -u)" -ne 0 ] || ! ip netns add cfprobe$$ 2>/dev/null; then mode=(--loopback); else ip netns del cfprobe$$; fi
for rule in fail resend; do
  cat > "$work/$rule.yaml" <<YAML
name: tbhandover_$rule
seed: 5
duration_s: 12
warmup_s: 0
drain_s: 4
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1, batch: {window_ms: 0, max_size: 1}}
mobility: {access_points: [{id: a, x_m: 0, y_m: 0, range_m: 150}, {id: b, x_m: 200, y_m: 0, range_m: 150}], step_s: 0.01,
           handover_ms: 100, mid_transfer: $rule}
scheduler: {name: static}
devices:
  - {id: pi0, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 40, latency_ms: 60}, strategy: offload, movement: {trace: $work/walk.csv}}
YAML
  "$rt" testbed "$work/$rule.yaml" "${mode[@]}" --out "$work/tb_$rule" --startup 2 > "$work/tb_$rule.txt" 2>&1; rc=$?
  [ $rc -eq 0 ] || { echo "FAIL testbed run ($rule): exit $rc"; tail -20 "$work/tb_$rule.txt"; exit 1; }
  "$sim" run "$work/$rule.yaml" --out "$work/sim_$rule" -q || { echo "FAIL simulator run ($rule)"; exit 1; }
  /usr/bin/python3 - "$rule" "$work/tb_$rule" "$work/sim_$rule" <<'PY' || { tail -30 "$work/tb_$rule.txt"; exit 1; }
import json, re, sys, h5py
rule = sys.argv[1]
def read(d):
    with h5py.File(d + "/results.h5") as f:
        txt = lambda x: x.decode() if isinstance(x, bytes) else x
        req = f["requests"]
        rows = [dict(status=int(s), failure=txt(fl), resends=int(r), t_batch_end=float(b), t_uplink_end=float(u))
                for s, fl, r, b, u in zip(req["status"][()], req["failure"][()], req["resends"][()], req["t_batch_end"][()], req["t_uplink_end"][()])]
        ev = f["events"]
        at = sorted(round(t, 6) for t, k in zip(ev["t"][()].tolist(), ev["kind"][()]) if txt(k) == "handover")
    return rows, at, json.load(open(d + "/summary.json"))
pattern = re.compile(r"handover from (a|b) to (a|b) at ([0-9.]+) s during its (upload|result's transfer) \(mobility\.mid_transfer: fail\)$")
for engine, d in (("testbed", sys.argv[2]), ("simulator", sys.argv[3])):
    rows, at, summary = read(d)
    assert len(at) == 11, (engine, at)  # one per crossing
    ok = [r for r in rows if r["status"] == 0]
    failed = [r for r in rows if r["status"] != 0]
    assert rows and len(ok) + len(failed) == len(rows), (engine, len(rows))
    h = summary["handovers"]
    if rule == "fail":
        for r in failed:
            m = pattern.match(r["failure"])
            assert m and round(float(m.group(3)), 6) in at, (engine, r["failure"], at)
            # A result caught on its way back was computed: its record keeps the server's times; an
            # upload caught never ran (NaN, as in the simulator: not a time stamp of 0).
            ran, arrived = r["t_batch_end"] == r["t_batch_end"], r["t_uplink_end"] == r["t_uplink_end"]
            assert ran == arrived == (m.group(4) != "upload"), (engine, r)
        assert failed, (engine, "no request failed at a handover", len(rows))
        assert h["requests_failed"] == len(failed), (engine, h, len(failed))
        caught = {pattern.match(r["failure"]).group(4) for r in failed}
    else:
        assert not failed, (engine, [r["failure"] for r in failed][:3])
        resent = sum(r["resends"] for r in rows)
        assert resent > 0 and h["transfers_resent"] == resent, (engine, h, resent)
        caught = {"resent"}
    # Both directions are decided: the server for uploads, the device for results (the walk spreads
    # the handovers over the cycle).
    if rule == "fail":
        assert caught == {"upload", "result's transfer"}, (engine, caught)
    elif engine == "testbed":
        logs = {n: open(d + "/logs/" + n).read() for n in ("server.log", "device-pi0.log")}
        up, down = logs["server.log"].count("caught the upload"), logs["device-pi0.log"].count("caught the result")
        assert up > 0 and down > 0 and up + down == resent, (up, down, resent)
        caught = {"%d uploads, %d results" % (up, down)}
    print("%s %s: %d requests, %d handovers, %d failed, %d transfers resent (%s); %.2f req/s, mean %.1f ms" % (
        rule, engine, len(rows), len(at), len(failed), sum(r["resends"] for r in rows), ", ".join(sorted(caught)),
        summary["total"]["throughput_rps"], summary["total"]["latency_ms"]["mean"]))
PY
done
