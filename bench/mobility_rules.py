#!/usr/bin/python3
"""What a handover does to the transfer it catches (mobility.mid_transfer): the shipped
scenarios/servers/walk_two_cells.yaml (one walker, four rovers, DGCNN offloaded over a 50 ms handover),
the same with the rovers driving (5-30 m/s, pauses of 0-1 s: many handovers), and driving with every
link capped at 5 Mbit/s (a 12 KB upload then takes ~20 ms: more are caught), under each rule:
wait (the transfer waits through the handover), resend (it starts again, whole, when the handover
ends), fail (the request fails). Prints, per case and rule: handovers, transfers resent, requests
failed, completed requests, mean and p99 latency of completed requests, and the radio bytes sent.
usage: /usr/bin/python3 bench/mobility_rules.py [--out /tmp/mobility_rules] (from the repository root; ~30 s)"""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np

CASES = [("walk_two_cells as shipped", []),
         ("rovers driving 5-30 m/s", ["devices.1.movement={model: random_waypoint, area_m: [200, 60], speed_mps: [5, 30], pause_s: [0, 1]}"]),
         ("driving, links capped 5 Mbit/s", ["devices.1.movement={model: random_waypoint, area_m: [200, 60], speed_mps: [5, 30], pause_s: [0, 1]}",
                                             "devices.*.link.bandwidth_mbps=5"])]
RULES = ("wait", "resend", "fail")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/mobility_rules")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    coinfer = os.path.abspath("build/coinfer")
    print(f"{'case':32s} {'rule':7s} {'handovers':>9s} {'resent':>7s} {'failed':>7s} {'completed':>9s} {'mean ms':>8s} {'p99 ms':>8s} {'sent MB':>8s}")
    for k, (case, sets) in enumerate(CASES):
        for rule in RULES:
            out = os.path.join(a.out, f"{k}_{rule}")
            cmd = [coinfer, "run", "scenarios/servers/walk_two_cells.yaml", "--out", out, "-q", "--set", f"mobility.mid_transfer={rule}"]
            for s in sets:
                cmd += ["--set", s]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{case} {rule}: {r.stderr}")
            summary = json.load(open(os.path.join(out, "summary.json")))
            h = summary.get("handovers", {"count": 0, "transfers_resent": 0, "requests_failed": 0})
            with h5py.File(os.path.join(out, "results.h5")) as f:
                st, t0, t1 = f["requests/status"][:], f["requests/t_created"][:], f["requests/t_result"][:]
                sent = float(f["devices/bytes_sent"][:].sum())
            ok = (st == 0) & np.isfinite(t1)
            lat = (t1[ok] - t0[ok]) * 1e3
            print(f"{case:32s} {rule:7s} {h['count']:9d} {h['transfers_resent']:7d} {h['requests_failed']:7d} {int(ok.sum()):9d} "
                  f"{lat.mean():8.2f} {np.percentile(lat, 99):8.2f} {sent / 1e6:8.2f}")


if __name__ == "__main__":
    main()
