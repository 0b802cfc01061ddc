#!/usr/bin/python3
"""Memory budget per request and per device, measured on `coinfer run`.

Per request: a closed-loop Pi 4B running DGCNN locally on a LUT scaled to a tiny latency creates many
requests quickly; two durations give two request counts, and the slope of peak RSS against requests
is the cost of one request (its record while running plus its row in the results).
Per device: the quickstart's DGCNN offload device replicated N times (count: N) for 2 simulated
seconds, N = 1,000 and 9,999 (10,000 with the idle device; the bound is 100,000 now: bench/RESULTS.md "Scale"); the slope of peak RSS against N, and the wall time to set up
and run. Peak RSS from wait4 on the coinfer process.

usage: bench/bounds.py [--coinfer build/coinfer]
"""
import argparse, os, shutil, subprocess, sys, tempfile, time

import h5py
import numpy as np


def run(coinfer, args, cwd):
    out = tempfile.mkdtemp(prefix="coinfer-bounds-")
    t0 = time.time()
    p = subprocess.Popen([coinfer, "run", *args, "--out", os.path.join(out, "o"), "-q"], cwd=cwd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.time() - t0
    err = p.stderr.read().decode()
    n = None
    if os.waitstatus_to_exitcode(status) == 0:
        with h5py.File(os.path.join(out, "o", "results.h5")) as f:
            n = len(f["requests/id"])
    shutil.rmtree(out, ignore_errors=True)
    if n is None:
        sys.exit(f"run failed: {args}: {err}")
    return n, usage.ru_maxrss / 1024, wall


def tiny_luts(root):
    """A folder with the quickstart's LUTs, the Pi 4B's DGCNN scaled to 10 us per request (caller removes it)."""
    work = tempfile.mkdtemp(prefix="coinfer-bounds-luts-")
    for f in ("gtx1060.h5", "rpi4b.h5"):
        shutil.copy(os.path.join(root, "traces/lut", f), work)
    with h5py.File(os.path.join(work, "rpi4b.h5"), "r+") as f:
        for k in ("latency_mean_s", "latency_p50_s", "latency_p95_s"):
            d = f["dgcnn/modelnet40/" + k]
            x = d[...]
            x[~np.isnan(x)] = 1e-5  # 10 us per request: 100k requests per simulated second
            d[...] = x
    return work


def closed_loop_args(work):
    """The quickstart with its Pi 4B in a closed loop, run locally on tiny_luts' folder."""
    return ["scenarios/quickstart.yaml", "--set", f"luts=[{work}]", "--set", "scheduler.name=local", "--set", "warmup_s=0",
            "--set", "devices.2.workload={arrival: closed_loop}"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    coinfer = os.path.abspath(a.coinfer)
    work = tiny_luts(root)
    base = closed_loop_args(work)
    rows = []
    for dur in (2, 6):
        rows.append(run(coinfer, base + ["--set", f"duration_s={dur}"], root))
    (n1, m1, _), (n2, m2, _) = rows
    per_request = (m2 - m1) * 1024 * 1024 / (n2 - n1)
    print(f"per request: {n1} requests -> {m1:.0f} MiB, {n2} -> {m2:.0f} MiB: {per_request:.0f} bytes per request")
    dev = []
    for n in (1000, 9999):
        args = ["scenarios/paper/fig16_idle_devices.yaml", "--set", f"devices.0.count={n}", "--set", "devices.1.count=1",
                "--set", "duration_s=2", "--set", "warmup_s=0", "--set", "scheduler={name: static}"]
        dev.append((n,) + run(coinfer, args, root))
    (d1, r1, mm1, w1), (d2, r2, mm2, w2) = dev
    per_device = (mm2 - mm1) * 1024 / (d2 - d1)
    for d, r, m, w in dev:
        print(f"{d} devices: {r} requests, peak {m:.0f} MiB, {w:.1f} s wall")
    print(f"per device: {per_device:.0f} KiB")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
