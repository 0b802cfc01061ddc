#!/usr/bin/python3
"""Sweep parallel efficiency: the same 200-point sweep run with 1 and with 2 local worker processes,
in the same invocation, alternating, REPS times; efficiency = serial time / (2 x parallel time), medians.
usage: /usr/bin/python3 bench/sweep_speed.py [--reps 2] [--coinfer build/coinfer]   (from the repository root)"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GRID = ["--grid", "devices=1..5", "--grid", "bandwidth_mbps=1,5,20,40,100",
        "--grid", "scheduler=hierarchical,gcode,greedy,dp", "--seeds", "2"]  # 5 x 5 x 4 x 2 = 200 points


def timed(cmd):
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--coinfer", default="build/coinfer")
    args = ap.parse_args()
    serial, parallel = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.reps):
            for jobs, store in ((1, serial), (2, parallel)):
                out = f"{tmp}/s{jobs}_{r}"
                store.append(timed([args.coinfer, "sweep", "scenarios/paper/fig14_15_gpu.yaml", *GRID, "--jobs", str(jobs),
                                    "--out", out, "-q"]))
                shutil.rmtree(out)
    t1, t2 = statistics.median(serial), statistics.median(parallel)
    print("| sweep | points | serial (1 worker) | parallel (2 workers) | speed-up | parallel efficiency |")
    print("|---|---|---|---|---|---|")
    print(f"| fig14_15_gpu: devices 1..5 x bandwidth 5 values x 4 schedulers x 2 seeds | 200 | {t1:.1f} s | {t2:.1f} s | "
          f"{t1 / t2:.2f} | {t1 / (2 * t2) * 100:.0f} % |")
    print(f"(all serial runs: {', '.join(f'{x:.1f}' for x in serial)} s; parallel: {', '.join(f'{x:.1f}' for x in parallel)} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
