#!/usr/bin/python3
"""Background load: a Jetson TX2 (GPU) computing DGCNN next to a GTX 1060 server
over a slow link (2 Mbit/s: computing locally is fastest while the board is free), one request in flight,
schedulers minimising latency; from 10 s to 20 s other work takes a share of its processor (events[].load). A static
scheme keeps computing locally through it; an adaptive scheduler (hierarchical, greedy) sees the load in
SystemState, re-decides on the `load:ID` trigger and moves the work off the loaded device, then back.
Prints throughput and mean latency per phase for each scheduler and writes the adaptive run's timeline
figure (latency, the load share dashed, the scheme switches).
usage: /usr/bin/python3 bench/background_load.py [--load 0.8] [--mbps 2] [--out /tmp/bgload] (from the repository root; ~1 min)"""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np

SCENARIO = """name: background_load
seed: 1
duration_s: 30
warmup_s: 0
luts: [{root}/traces/lut/]
servers:
  - {{id: edge0, type: gtx1060, workers: 2, batch: {{window_ms: 10, max_size: 5}}}}
scheduler: {{name: {scheduler}{objective}}}
devices:
  - {{id: tx2, type: jetson-tx2, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: {mbps}, latency_ms: 2}},
     workload: {{arrival: closed_loop, in_flight: 1}}, strategy: local}}
events:
  - {{at_s: 10, device: tx2, load: {load}}}
  - {{at_s: 20, device: tx2, load: 0}}
"""
PHASES = [("before (0-10 s)", 0, 10), ("loaded (10-20 s)", 10, 20), ("after (20-30 s)", 20, 30)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", type=float, default=0.8)
    ap.add_argument("--mbps", type=float, default=2)
    ap.add_argument("--out", default="/tmp/bgload")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    root = os.path.abspath(".")
    rows = []
    for sched in ("static", "greedy", "hierarchical"):  # static keeps the scenario's local
        path = os.path.join(a.out, f"{sched}.yaml")
        open(path, "w").write(SCENARIO.format(root=root, scheduler=sched, load=a.load, mbps=a.mbps,
                                                   objective="" if sched == "static" else ", objective: latency"))
        out = os.path.join(a.out, sched)
        r = subprocess.run(["build/coinfer", "run", path, "--out", out, "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{sched}: {r.stderr}")
        with h5py.File(os.path.join(out, "results.h5")) as f:
            rq = f["requests"]
            t0, t1, st = rq["t_created"][:], rq["t_result"][:], rq["status"][:]
            schemes = [x.decode() if isinstance(x, bytes) else x for x in f["decisions/scheme"][:]] if "decisions" in f else []
            dec_t = f["decisions/t"][:] if "decisions" in f else []
        row = [sched]
        for _, lo, hi in PHASES:
            m = (st == 0) & (t1 >= lo) & (t1 < hi)
            lat = (t1[m] - t0[m]) * 1e3
            row.append(f"{m.sum() / (hi - lo):.1f} req/s, {np.mean(lat):.1f} ms" if m.any() else "none")
        row.append("; ".join(f"{t:.1f} s: {s}" for t, s in zip(dec_t, schemes)) or "-")
        rows.append(row)
        if sched == "hierarchical":
            png = os.path.join(a.out, "timeline.png")
            p = subprocess.run(["build/coinfer", "plot", os.path.join(out, "results.h5"), "--kind", "timeline", "--out", png], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"plot: {p.stderr}")
    print(f"TX2 (GPU) + GTX 1060, {a.mbps:g} Mbit/s, DGCNN/ModelNet40, closed loop with one request in flight, objective latency; "
          f"load {a.load} on the TX2 from 10 s to 20 s:\n")
    print("| scheduler | " + " | ".join(p[0] for p in PHASES) + " | decisions |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"\ntimeline of the hierarchical run: {os.path.join(a.out, 'timeline.png')}")


if __name__ == "__main__":
    main()
