#!/usr/bin/python3
"""A cloud tier: two tiers (device + edge) against three (device + edge + cloud) on the
shipped scenarios/cloud/edge_cloud.yaml (Raspberry Pi 4B running DGCNN/ModelNet40, Poisson 3 req/s each,
an i7-7700 edge with a GTX 1060 cloud behind a WAN), in three cases: as shipped (8 Pi; WAN 200 Mbit/s,
25 ms, congested to 20 Mbit/s from 10 s to 20 s), 16 Pi on that WAN (the edge overloaded), and 16 Pi with
a 1 Gbit/s, 10 ms WAN. For each: fixed strategies of two tiers (local, offload, pp(2), data_parallel) and
of three (pp(0,1), pp(1,2), pp(2,3), pp(2,6)), and the search schedulers deciding every second (greedy and
dp consider every pp(k,m); hierarchical only two tiers). Prints completed and failed requests, the mean
and p95 latency of completed requests, the mean of those created before the congestion (2-10 s: what
the first decision's prediction is about), the p95 of those created during it (10-20 s), the
share of requests that ran a cloud part, and the analytic estimator's predicted mean latency at the first
decision (it takes the cloud at batch 1 with no queue: sched/README.md "Cloud tier").
With --shared: two edges sharing one cloud (scenarios/cloud/shared_cloud.yaml), the estimator's first
predicted mean latency against the simulated mean for fixed strategies, beside another build's (--old).
usage: /usr/bin/python3 bench/cloud_tier.py [--out /tmp/cloud_tier] [--shared [--old BINARY]] (from the repository root; ~1 min)"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

SCENARIO = "scenarios/cloud/edge_cloud.yaml"
CASES = [("8 Pi, WAN 200 Mbit/s congested", []),
         ("16 Pi, WAN 200 Mbit/s congested", ["devices.0.count=16"]),
         ("16 Pi, WAN 1 Gbit/s", ["devices.0.count=16", "servers.0.link={bandwidth_mbps: 1000, latency_ms: 10}"])]
RUNS = [("local", ["devices.*.strategy=local"]), ("offload", ["devices.*.strategy=offload"]),
        ("pp(2)", ["devices.*.strategy=pp(2)"]), ("data_parallel", ["devices.*.strategy=data_parallel"]),
        ("pp(0,1)", ["devices.*.strategy=pp(0,1)"]), ("pp(1,2)", ["devices.*.strategy=pp(1,2)"]),
        ("pp(2,3)", ["devices.*.strategy=pp(2,3)"]), ("pp(2,6)", ["devices.*.strategy=pp(2,6)"]),
        ("greedy, every 1 s", ["scheduler={name: greedy, period_s: 1}"]), ("dp, every 1 s", ["scheduler={name: dp, period_s: 1}"]),
        ("hierarchical, every 1 s", ["scheduler={name: hierarchical, period_s: 1}"])]


SHARED = "scenarios/cloud/shared_cloud.yaml"
SHARED_CASES = [("8 + 8 Pi, WAN 200 Mbit/s", []), ("12 + 12 Pi, WAN 200 Mbit/s", ["devices.0.count=12", "devices.1.count=12"]),
                ("8 + 8 Pi, WAN 100 Mbit/s", ["servers.0.link={bandwidth_mbps: 100, latency_ms: 25}"]),
                ("8 + 8 Pi, the cloud's Pi local", ["devices.2.strategy=local"])]
SHARED_RUNS = ["pp(0,1)", "pp(1,2)", "pp(2,3)", "pp(0,6)", "pp(2)", "offload"]


def run(coinfer, scenario, sets, out):
    """Runs the scenario with the overrides into `out` (exits naming the command if it fails); returns the
    requests' status, t_created, t_result and cloud columns and the first decision's record."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [coinfer, "run", scenario, "--out", out, "-q"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {r.stderr}")
    with h5py.File(os.path.join(out, "results.h5")) as f:
        cols = [f[f"requests/{c}"][:] for c in ("status", "t_created", "t_result", "cloud")]
    with open(os.path.join(out, "decisions.jsonl")) as f:
        first = json.loads(f.readline())
    return cols + [first]


def simulated_mean_ms(coinfer, scenario, sets, out):
    """(mean latency ms of requests created after the warm-up that completed, failed count, first prediction ms)"""
    st, t0, t1, _, first = run(coinfer, scenario, sets, out)
    window = t0 >= 2.0  # warmup_s
    ok = window & (st == 0) & np.isfinite(t1)
    return float(((t1[ok] - t0[ok]) * 1e3).mean()), int((window & (st == 1)).sum()), first["predicted_latency_ms"]


def shared(a):
    """Two edges sharing one cloud (scenarios/cloud/shared_cloud.yaml): the estimator's first predicted mean
    latency against the simulated mean, this build and (--old BINARY) another, for the edges' devices on
    each strategy (the cloud's own two Pi offload to it)."""
    def this_and_old(run_sets, name):  # simulated_mean_ms with this build, and with --old's (or None)
        this = simulated_mean_ms(os.path.abspath("build/coinfer"), SHARED, run_sets, os.path.join(a.out, name))
        return this, simulated_mean_ms(os.path.abspath(a.old), SHARED, run_sets, os.path.join(a.out, name + "_old")) if a.old else None

    print(f"{'case':30s} {'strategy':9s} {'simulated ms':>12s} {'failed':>6s} {'predicted ms':>12s} {'error':>7s}" +
          (f" {'old predicted':>13s} {'old error':>9s}" if a.old else ""))
    for k, (case, sets) in enumerate(SHARED_CASES):
        for j, strategy in enumerate(SHARED_RUNS):
            run_sets = sets + [f"devices.0.strategy={strategy}", f"devices.1.strategy={strategy}"]
            (sim, failed, pred), old = this_and_old(run_sets, f"shared_{k}_{j}")
            line = f"{case:30s} {strategy:9s} {sim:12.1f} {failed:6d} {pred:12.1f} {100 * (pred / sim - 1):+6.1f}%"
            if old:
                line += f" {old[2]:13.1f} {100 * (old[2] / sim - 1):+8.1f}%"
            print(line, flush=True)
    # The search schedulers where the sharing decides: 12 + 12 Pi on a 100 Mbit/s WAN, deciding every second.
    sets = ["devices.0.count=12", "devices.1.count=12", "servers.0.link={bandwidth_mbps: 100, latency_ms: 25}"]
    print(f"\n12 + 12 Pi, WAN 100 Mbit/s, deciding every second: simulated mean latency (first prediction)")
    for j, name in enumerate(["greedy", "hierarchical", "dp"]):
        run_sets = sets + [f"scheduler={{name: {name}, period_s: 1}}"]
        (sim, failed, pred), old = this_and_old(run_sets, f"shared_search_{j}")
        line = f"{name:14s} this build {sim:9.1f} ms ({pred:.1f}), failed {failed}"
        if old:
            line += f"; old build {old[0]:9.1f} ms ({old[2]:.1f}), failed {old[1]}"
        print(line, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/cloud_tier")
    ap.add_argument("--shared", action="store_true", help="two edges sharing one cloud instead (scenarios/cloud/shared_cloud.yaml)")
    ap.add_argument("--old", help="with --shared: another coinfer binary whose predictions to show beside")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.shared:
        return shared(a)
    coinfer = os.path.abspath("build/coinfer")
    for k, (case, sets) in enumerate(CASES):
        print(f"\n{case}")
        print(f"{'run':24s} {'completed':>9s} {'failed':>6s} {'mean ms':>9s} {'p95 ms':>9s} {'mean 2-10 s':>11s} {'p95 10-20 s':>11s} {'cloud %':>7s} "
              f"{'predicted ms':>12s}")
        for j, (name, extra) in enumerate(RUNS):
            st, t0, t1, cloud, first = run(coinfer, SCENARIO, sets + extra, os.path.join(a.out, f"{k}_{j}"))
            window = t0 >= 2.0  # warmup_s
            ok = window & (st == 0) & np.isfinite(t1)
            lat = (t1[ok] - t0[ok]) * 1e3
            congested = ok & (t0 >= 10) & (t0 < 20)
            lat_c = (t1[congested] - t0[congested]) * 1e3
            before = ok & (t0 < 10)
            lat_b = (t1[before] - t0[before]) * 1e3
            print(f"{name:24s} {int(ok.sum()):9d} {int((window & (st == 1)).sum()):6d} {lat.mean():9.1f} {np.percentile(lat, 95):9.1f} "
                  f"{lat_b.mean() if lat_b.size else float('nan'):11.1f} {np.percentile(lat_c, 95) if lat_c.size else float('nan'):11.1f} {100 * float((cloud[window] >= 0).mean()):7.1f} "
                  f"{first['predicted_latency_ms']:12.1f}")


if __name__ == "__main__":
    main()
