#!/usr/bin/python3
"""Throughput under overload: N Raspberry Pi 4Bs offload DGCNN (ModelNet40, ~12 KB
inputs) to a GTX 1060 over links of B Mbit/s, Poisson at R req/s each, window 2..20 s, drain 30 s.
For each (N, B) prints: the link cap per device (B / (8 x the median bytes_up), what the uplink can
carry), summary.json's throughput_rps (results delivered inside the window) and
throughput_incl_drain_rps (the window's requests that completed, drain included: what throughput_rps
meant before schema 3), the analytic estimator's prediction (coinfer scheduler estimate) and whether
the run says it is saturated.
usage: /usr/bin/python3 bench/overload_throughput.py [--devices 1,2,4] [--mbps 2,20] [--rate 60]
       [--coinfer build/coinfer]   (from the repository root; ~10 s)"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SCENARIO = """name: overload
duration_s: 20
warmup_s: 2
network_model: cm02
luts: [{root}/traces/lut/]
servers:
  - {{id: edge0, type: gtx1060, workers: 2, batch: {{window_ms: 10, max_size: 5}}}}
access_point: {{bandwidth_mbps: 300}}
devices:
  - {{id: pi, count: {n}, type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: {mbps}, latency_ms: 2}},
     workload: {{arrival: poisson, rate_per_s: {rate}}}, strategy: offload}}
scheduler: {{name: static}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", default="1,2,4")
    ap.add_argument("--mbps", default="2,20")
    ap.add_argument("--rate", type=float, default=60)
    ap.add_argument("--coinfer", default="build/coinfer")
    a = ap.parse_args()
    root = os.getcwd()
    print(f"{'devices':>7} {'Mbit/s':>6} {'cap/dev':>8} {'thr/dev':>8} {'incl_drain/dev':>14} {'estimate/dev':>12} {'saturated':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in a.devices.split(",")]:
            for mbps in [float(x) for x in a.mbps.split(",")]:
                path = os.path.join(tmp, f"o{n}_{mbps:g}.yaml")
                with open(path, "w") as f:
                    f.write(SCENARIO.format(root=root, n=n, mbps=mbps, rate=a.rate))
                out = os.path.join(tmp, f"r{n}_{mbps:g}")
                subprocess.run([a.coinfer, "run", path, "-q", "--out", out], check=True)
                est = json.loads(subprocess.run([a.coinfer, "scheduler", "estimate", path, "--json"], check=True,
                                                capture_output=True, text=True).stdout)
                j = json.load(open(os.path.join(out, "summary.json")))
                with h5py.File(os.path.join(out, "results.h5")) as f:
                    up = float(np.median(f["requests/bytes_up"][:]))
                cap = mbps * 1e6 / (8 * up)
                t = j["total"]
                per_est = np.mean([d["throughput_rps"] for d in est["devices"]])
                print(f"{n:7d} {mbps:6g} {cap:8.2f} {t['throughput_rps'] / n:8.2f} {t['throughput_incl_drain_rps'] / n:14.2f} "
                      f"{per_est:12.2f} {str(t['saturated']):>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
