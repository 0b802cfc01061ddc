#!/usr/bin/python3
"""Server choice against static binding: scenarios/servers/skewed_four_servers.yaml
(Intel i7-7700 edge servers, 80 % of the Raspberry Pi 4B bound to edge0 and the rest spread over the
others, Poisson offloading at 4 req/s each) with 1..4 servers and several device counts, each
scheduler with the scenario's binding and with scheduler.choose_servers: true, over seeds. Prints, per
(servers, devices, scheduler, binding): median throughput, p95 and mean latency (summary.json
"total"), requests per server, the first decision's wall time (the one that moves devices) and how
many devices it moved.
usage: /usr/bin/python3 bench/server_choice.py [--servers 1,2,3,4] [--devices 10,20,40] [--seeds 3]
       [--schedulers static,greedy,hierarchical] [--objective latency] [--coinfer build/coinfer]
       (from the repository root; ~3 min)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import yaml

SCENARIO = "scenarios/servers/skewed_four_servers.yaml"


def scenario_text(servers, n):
    """The shipped scenario with `servers` servers and n devices: 80 % on edge0 (all of them with one
    server), the rest spread over the others in turn."""
    with open(SCENARIO) as f:
        doc = yaml.safe_load(f)
    doc["luts"] = [os.path.abspath("traces/lut")]
    doc["servers"] = [dict(doc["servers"][0], id=f"edge{k}") for k in range(servers)]
    template = {k: v for k, v in doc["devices"][0].items() if k not in ("id", "count", "server")}
    near = n if servers == 1 else round(n * 0.8)
    counts = [near] + [0] * (servers - 1)
    for i in range(n - near):
        counts[1 + i % (servers - 1)] += 1
    doc["devices"] = [dict(template, id=f"d{k}_", count=c, server=f"edge{k}") for k, c in enumerate(counts) if c]
    return yaml.safe_dump(doc, sort_keys=False)


def run_one(coinfer, tmp, servers, n, scheduler, choose, seed, objective=None):
    name = f"{servers}-{n}-{scheduler}-{choose}-{seed}"
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(scenario_text(servers, n))
    out = os.path.join(tmp, name)
    extra = f", objective: {objective}" if objective and scheduler != "static" else ""
    sets = [f"seed={seed}", f"scheduler={{name: {scheduler}, choose_servers: {'true' if choose else 'false'}{extra}}}"]
    cmd = [coinfer, "run", path, "--out", out, "-q"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        total = json.load(f)["total"]
    with h5py.File(os.path.join(out, "results.h5"), "r") as h:
        server = np.asarray(h["requests/server"][:])
        per_server = [int(np.sum(server == j)) for j in range(servers)]
    with open(os.path.join(out, "timing.json")) as f:  # wall-clock figures live outside the deterministic results
        wall = [d["wall_s"] for d in json.load(f)["decisions"]]
    with open(os.path.join(out, "decisions.jsonl")) as f:
        first = json.loads(f.readline())
    detail = first.get("detail") or {}
    moved = len(detail.get("servers", {}).get("moved", []))
    return total, per_server, wall[0] if wall else 0.0, moved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="1,2,3,4")
    ap.add_argument("--devices", default="10,20,40")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--schedulers", default="static,greedy,hierarchical")
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--objective", default=None, help="scheduler.objective for the search schedulers (static has none)")
    a = ap.parse_args()
    if not os.path.exists(SCENARIO):
        sys.exit("run from the repository root")
    print("| servers | devices | scheduler | binding | throughput req/s | p95 ms | mean ms | requests per server | first decision wall ms | moved |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="coinfer-server-choice-") as tmp:
        for servers in [int(x) for x in a.servers.split(",")]:
            for n in [int(x) for x in a.devices.split(",")]:
                for scheduler in a.schedulers.split(","):
                    for choose in ((False,) if servers == 1 else (False, True)):
                        rows = [run_one(a.coinfer, tmp, servers, n, scheduler, choose, seed, a.objective) for seed in range(1, a.seeds + 1)]
                        med = lambda f: statistics.median(f(r) for r in rows)  # noqa: E731
                        per_server = "/".join(str(round(statistics.median(r[1][j] for r in rows))) for j in range(servers))
                        print(f"| {servers} | {n} | {scheduler} | {'chosen' if choose else 'scenario'} | "
                              f"{med(lambda r: r[0]['throughput_rps']):.1f} | {med(lambda r: r[0]['latency_ms']['p95']):.0f} | "
                              f"{med(lambda r: r[0]['latency_ms']['mean']):.0f} | {per_server} | {med(lambda r: r[2]) * 1e3:.1f} | "
                              f"{med(lambda r: r[3]):.0f} |", flush=True)


if __name__ == "__main__":
    main()
