#!/usr/bin/python3
"""Server choice against static binding (issue 36 item 1): scenarios/servers/skewed_four_servers.yaml
(four GTX 1060 edge servers, 80 % of the Raspberry Pi 4B bound to edge0, Poisson offloading) at
several device counts, each scheduler with its scenario binding and with scheduler.choose_servers:
true, over seeds. Prints, per (devices, scheduler, binding): median throughput, p95 and mean latency
(summary.json "total"), requests per server, the decision's wall time (the first decision's: the one
that moves devices) and how many devices the first decision moved.
usage: /usr/bin/python3 bench/server_choice.py [--devices 10,20,40] [--seeds 3] [--coinfer build/coinfer]
       (from the repository root; ~2 min)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SCENARIO = "scenarios/servers/skewed_four_servers.yaml"


def counts_for(n):
    """80 % on edge0, the rest spread over edge1..edge3 (at least one each), as the scenario's entries."""
    far = max(3, round(n * 0.2))
    near = n - far
    f1 = far - 2
    return near, f1


def run_one(coinfer, out, n, scheduler, choose, seed):
    near, f1 = counts_for(n)
    sets = [f"devices.0.count={near}", f"devices.1.count={f1}", f"seed={seed}",
            f"scheduler={{name: {scheduler}, choose_servers: {'true' if choose else 'false'}}}"]
    cmd = [coinfer, "run", SCENARIO, "--out", out, "-q"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        total = json.load(f)["total"]
    with h5py.File(os.path.join(out, "results.h5"), "r") as h:
        server = np.asarray(h["requests/server"][:])
        per_server = [int(np.sum(server == j)) for j in range(4)]
    with open(os.path.join(out, "timing.json")) as f:  # wall-clock figures live outside the deterministic results
        wall = [d["wall_s"] for d in json.load(f)["decisions"]]
    with open(os.path.join(out, "decisions.jsonl")) as f:
        first = json.loads(f.readline())
    detail = first.get("detail") or {}
    moved = len(detail.get("servers", {}).get("moved", []))
    return total, per_server, wall[0] if wall else 0.0, moved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", default="10,20,40")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--schedulers", default="static,greedy,hierarchical")
    ap.add_argument("--coinfer", default="build/coinfer")
    a = ap.parse_args()
    if not os.path.exists(SCENARIO):
        sys.exit("run from the repository root")
    print("| devices | scheduler | binding | throughput req/s | p95 ms | mean ms | requests per server | first decision wall ms | moved |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="coinfer-server-choice-") as tmp:
        for n in [int(x) for x in a.devices.split(",")]:
            for scheduler in a.schedulers.split(","):
                for choose in (False, True):
                    rows = []
                    for seed in range(1, a.seeds + 1):
                        out = os.path.join(tmp, f"{n}-{scheduler}-{choose}-{seed}")
                        rows.append(run_one(a.coinfer, out, n, scheduler, choose, seed))
                    med = lambda f: statistics.median(f(r) for r in rows)  # noqa: E731
                    per_server = "/".join(str(round(statistics.median(r[1][j] for r in rows))) for j in range(4))
                    print(f"| {n} | {scheduler} | {'chosen' if choose else 'scenario'} | {med(lambda r: r[0]['throughput_rps']):.1f} | "
                          f"{med(lambda r: r[0]['latency_ms']['p95']):.0f} | {med(lambda r: r[0]['latency_ms']['mean']):.0f} | {per_server} | "
                          f"{med(lambda r: r[2]) * 1e3:.1f} | {med(lambda r: r[3]):.0f} |", flush=True)


if __name__ == "__main__":
    main()
