#!/usr/bin/python3
"""Decisions at scale, simulated: the system of bench_decisions (mixed Raspberry Pi / Jetson boards
alternating DGCNN and GCoDE on ModelNet40, links 1-100 Mbit/s log-spaced with 2 ms latency, one GTX 1060
with 2 workers and batching (10 ms window, at most 4) per --per-server devices, closed loop) written as a
scenario and run with `coinfer run` under each scheduler: the first decision's predicted throughput
(decisions.jsonl) and the simulated one (summary.json); decision times are bench_decisions' part. With --compare DIR (a
build folder of another commit) that build's coinfer runs the same scenarios: an A/B test of an
estimator or scheduler change where it matters, in simulation rather than by the estimator's own
account.
usage: /usr/bin/python3 bench/decision_sim.py [--devices 1000] [--per-server 100] [--schedulers hierarchical,greedy,dp,gcode]
       [--duration 10] [--build build] [--compare OTHER_BUILD] [--out DIR]   (from the repository root)"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

TYPES = ["rpi4b", "rpi3b", "jetson-tx2", "jetson-nano"]


def bandwidth(i):
    """bench_decisions.cpp's link of device i (Mbit/s, two decimals)."""
    return round(100 * math.exp(math.log(100.0) * ((i * 37) % 100) / 100.0)) / 100


def scenario(devices, per_server, scheduler, duration, repo):
    servers = max(1, devices // per_server)
    lines = [f"name: decision-sim-{devices}-{scheduler}", "seed: 1", f"duration_s: {duration}", "warmup_s: 1", "drain_s: 1",
             f"luts: [{os.path.join(repo, 'traces/lut')}/]", "access_point: {bandwidth_mbps: 1000000, latency_ms: 0}", "servers:"]
    for j in range(servers):
        lines.append(f"  - {{id: edge{j}, type: gtx1060, workers: 2, batch: {{window_ms: 10, max_size: 4}}}}")
    lines.append("devices:")
    for i in range(devices):
        model = "gcode" if i % 2 else "dgcnn"
        lines.append(f"  - {{id: d{i}, type: {TYPES[i % 4]}, model: {model}, dataset: modelnet40, server: edge{i % servers}, "
                     f"link: {{bandwidth_mbps: {bandwidth(i)}, latency_ms: 2}}, workload: {{arrival: closed_loop}}, strategy: offload}}")
    lines.append(f"scheduler: {{name: {scheduler}}}")
    return "\n".join(lines) + "\n"


def run(coinfer, path, out):
    p = subprocess.run([coinfer, "run", "-q", "--out", out, path], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stdout + p.stderr).strip().splitlines()[-1] if (p.stdout + p.stderr).strip() else f"exit {p.returncode}"}
    total = json.load(open(os.path.join(out, "summary.json")))["total"]
    with open(os.path.join(out, "decisions.jsonl")) as f:
        first = json.loads(f.readline())
    return {"simulated": total["throughput_rps"], "predicted": first["predicted_throughput_rps"], "latency_ms": total["latency_ms"]["mean"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=1000)
    ap.add_argument("--per-server", type=int, default=100)
    ap.add_argument("--schedulers", default="hierarchical,greedy,dp,gcode")
    ap.add_argument("--duration", type=float, default=10)
    ap.add_argument("--build", default="build")
    ap.add_argument("--compare", help="another build folder whose coinfer runs the same scenarios")
    ap.add_argument("--out", help="keep the scenarios and runs here (default: a temporary folder)")
    a = ap.parse_args()
    if a.devices < 1 or a.per_server < 1 or a.duration <= 0:
        sys.exit("decision_sim.py: --devices and --per-server must be >= 1, --duration > 0")
    repo = os.getcwd()
    builds = [("this build", os.path.join(a.build, "coinfer"))]
    if a.compare:
        builds.append((a.compare, os.path.join(a.compare, "coinfer")))
    for _, c in builds:
        if not os.access(c, os.X_OK):
            sys.exit(f"decision_sim.py: no coinfer at {c} (build first, or run from the repository root)")
    out = a.out or tempfile.mkdtemp(prefix="coinfer-decision-sim-")
    os.makedirs(out, exist_ok=True)
    print(f"{a.devices} devices, {max(1, a.devices // a.per_server)} servers, {a.duration:g} simulated s (runs in {out})\n")
    print("| scheduler | build | predicted req/s | simulated req/s | simulated mean latency ms |")
    print("|---|---|---|---|---|")
    for sched in a.schedulers.split(","):
        path = os.path.join(out, f"{sched}.yaml")
        # greedy and hierarchical may refuse this size by scheduler.max_work: raise it, this is a measurement
        text = scenario(a.devices, a.per_server, sched, a.duration, repo)
        if sched in ("greedy", "hierarchical"):
            text = text.replace(f"scheduler: {{name: {sched}}}", f"scheduler: {{name: {sched}, max_work: 1e9}}")
        with open(path, "w") as f:
            f.write(text)
        for k, (label, coinfer) in enumerate(builds):
            r = run(coinfer, path, os.path.join(out, f"{sched}-{k}"))
            if "error" in r:
                print(f"| {sched} | {label} | refused or failed: {r['error']} | | |")
            else:
                print(f"| {sched} | {label} | {r['predicted']:.1f} | {r['simulated']:.1f} | {r['latency_ms']:.1f} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
