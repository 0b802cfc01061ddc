#!/usr/bin/python3
"""Server failure: six Raspberry Pi 4B offloading DGCNN to one i7-7700 edge server
(ACE-GNN Fig. 16's devices, 40 Mbit/s), closed loop; the server fails at 10 s and recovers at 20 s
(events[].fail/recover), or fails by a model (servers[].failures, mean 8 s up and 2 s down) over
several seeds. A static scheme keeps offloading: its devices wait through the outage; the adaptive
schedulers are triggered (fail:edge0) and run the devices locally until the recovery. Prints, per
scheduler, completed requests per phase, requests lost with the server, and (the model) the medians
over seeds; writes each fixed-outage run's timeline figure. Then two servers with edge0 failing: the
scenario's binding against scheduler.choose_servers moving edge0's devices to edge1 and back.
usage: /usr/bin/python3 bench/server_failure.py [--seeds 5] [--out /tmp/server_failure] (from the repository root; ~1 min)"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import h5py
import numpy as np

SCENARIO = """name: server_failure
seed: {seed}
duration_s: 30
warmup_s: 0
luts: [{root}/traces/lut/]
servers:
  - {{id: edge0, type: i7-7700, workers: 1, batch: {{window_ms: 10, max_size: 5}}{failures}}}
access_point: {{bandwidth_mbps: 300}}
scheduler: {{name: {scheduler}}}
devices:
  - {{id: pi, count: 6, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}},
     workload: {{arrival: closed_loop}}, strategy: offload}}
{events}"""
OUTAGE = "events:\n  - {at_s: 10, server: edge0, fail: true}\n  - {at_s: 20, server: edge0, recover: true}\n"
PHASES = [("before (0-10 s)", 0, 10), ("down (10-20 s)", 10, 20), ("after (20-30 s)", 20, 30)]
# Two servers: pi0-pi2 bound to edge0, pi3-pi5 to edge1; edge0 fails 10-20 s.
# With scheduler.choose_servers the scheduler may move edge0's devices to edge1 (failover) and back.
TWO_SERVERS = """name: failover
seed: 1
duration_s: 30
warmup_s: 0
luts: [{root}/traces/lut/]
servers:
  - {{id: edge0, type: gtx1060, workers: 1, batch: {{window_ms: 10, max_size: 5}}}}
  - {{id: edge1, type: gtx1060, workers: 1, batch: {{window_ms: 10, max_size: 5}}}}
access_point: {{bandwidth_mbps: 300}}
scheduler: {{name: {scheduler}{choose}}}
devices:
  - {{id: pi0, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload, server: edge0}}
  - {{id: pi1, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload, server: edge0}}
  - {{id: pi2, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload, server: edge0}}
  - {{id: pi3, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload, server: edge1}}
  - {{id: pi4, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload, server: edge1}}
  - {{id: pi5, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload, server: edge1}}
"""
FAILOVER = [("static", ""), ("hierarchical", ""), ("hierarchical", ", choose_servers: true"), ("greedy", ", choose_servers: true")]
SCHEDULERS = ("static", "greedy", "hierarchical")


def run(root, out_dir, name, text):
    path = os.path.join(out_dir, name + ".yaml")
    open(path, "w").write(text)
    out = os.path.join(out_dir, name)
    r = subprocess.run([os.path.join(root, "build/coinfer"), "run", path, "--out", out, "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{name}: {r.stderr}")
    with h5py.File(os.path.join(out, "results.h5")) as f:
        rq = f["requests"]
        t0, st = rq["t_created"][:], rq["status"][:]
        fail = [x.decode() if isinstance(x, bytes) else x for x in rq["failure"][:]]
        run.last = (rq["device"][:], rq["server"][:])  # for the two-server table
    return out, t0, st, fail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", default="/tmp/server_failure")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    root = os.path.abspath(".")
    print("fixed outage 10-20 s: completed requests (created in the phase) and requests lost with the server")
    print(f"{'scheduler':14s}" + "".join(f"{p:>18s}" for p, _, _ in PHASES) + f"{'lost':>8s}")
    for sched in SCHEDULERS:
        out, t0, st, fail = run(root, a.out, sched, SCENARIO.format(seed=1, root=root, scheduler=sched, failures="", events=OUTAGE))
        row = [int(((st == 0) & (t0 >= lo) & (t0 < hi)).sum()) for _, lo, hi in PHASES]
        lost = sum(1 for x in fail if x.startswith("server edge0"))
        print(f"{sched:14s}" + "".join(f"{v:18d}" for v in row) + f"{lost:8d}")
        subprocess.run([os.path.join(root, "build/coinfer"), "plot", "--kind", "timeline", os.path.join(out, "results.h5"), "--out",
                        os.path.join(a.out, f"timeline_{sched}.png")], capture_output=True)
    print("\ntwo servers, edge0 down 10-20 s: completed requests per phase, lost, and the share of edge0's devices' "
          "requests (pi0-pi2, created in the phase) that went to edge1")
    print(f"{'scheduler':34s}" + "".join(f"{p:>18s}" for p, _, _ in PHASES) + f"{'lost':>8s}" + "".join(f"{'edge1 ' + p.split()[0]:>14s}" for p, _, _ in PHASES))
    for sched, choose in FAILOVER:
        label = sched + (" + choose_servers" if choose else "")
        name = "failover_" + sched + ("_choose" if choose else "")
        out, t0, st, fail = run(root, a.out, name, TWO_SERVERS.format(root=root, scheduler=sched, choose=choose) + OUTAGE)
        dev, srv = run.last
        row = [int(((st == 0) & (t0 >= lo) & (t0 < hi)).sum()) for _, lo, hi in PHASES]
        lost = sum(1 for x in fail if x.startswith("server edge0"))
        share = []
        for _, lo, hi in PHASES:
            mine = (dev <= 2) & (t0 >= lo) & (t0 < hi)
            share.append(f"{100.0 * ((srv == 1) & mine).sum() / max(1, mine.sum()):13.0f}%")
        print(f"{label:34s}" + "".join(f"{v:18d}" for v in row) + f"{lost:8d}" + "".join(f"{x:>14s}" for x in share))
        subprocess.run([os.path.join(root, "build/coinfer"), "plot", "--kind", "timeline", os.path.join(out, "results.h5"), "--out",
                        os.path.join(a.out, f"timeline_{name}.png")], capture_output=True)
    print(f"\nfailure model (mean 8 s up, 2 s down), {a.seeds} seeds: median throughput (req/s over 30 s) and median requests lost")
    for sched in SCHEDULERS:
        tp, lost = [], []
        for seed in range(1, a.seeds + 1):
            out, t0, st, fail = run(root, a.out, f"{sched}_mtbf{seed}", SCENARIO.format(
                seed=seed, root=root, scheduler=sched, failures=", failures: {mtbf_s: 8, mttr_s: 2}", events=""))
            s = json.load(open(os.path.join(out, "summary.json")))
            tp.append(s["total"]["throughput_rps"])
            lost.append(sum(1 for x in fail if x.startswith("server edge0")))
        print(f"{sched:14s} {statistics.median(tp):8.2f} req/s {statistics.median(lost):6.0f} lost")


if __name__ == "__main__":
    main()
