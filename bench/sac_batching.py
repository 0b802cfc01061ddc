#!/usr/bin/python3
"""Batching learned by SAC (sched/README.md "Batching learned by SAC"), in simulation.

ACE-GNN's Fig. 21a setting (scenarios/paper/fig21a_batch.yaml: five Raspberry Pi 4B with DGCNN and the
GTX 1060 server, two workers, synthesised LUTs) with Poisson arrivals and the batching candidates of
bench/batching_and_slo.py (windows [0, 5, 10, 20, 50] ms x sizes [1, 2, 5]):
  1. Trains one SAC policy with `coinfer train sac --learn-batching` (the device agents and the server's
     batching agent together; loads varied per episode by --load-spread, the scenario's bandwidths);
  2. runs it at each offered load against the same device policy whose batching is (a) the analytic
     estimator's pass over the same candidates and (b) the scenario's fixed 10 ms / 5, and against the
     static offload with the estimator's pass (bench/batching_and_slo.py's "chosen").
usage: /usr/bin/python3 bench/sac_batching.py [--coinfer build/coinfer] [--episodes N] [--duration S] [--keep DIR]
Prints Markdown tables (pasted into bench/RESULTS.md). Each point is one `coinfer run` (seed 1)."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batching_and_slo import run  # noqa: E402  (one `coinfer run`: its summary and decisions)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios/paper/fig21a_batch.yaml")
RATES = [10, 30, 50, 70, 90]  # requests per second per device (5 devices)
CANDIDATES = "batch_windows_ms: [0, 5, 10, 20, 50], batch_sizes: [1, 2, 5]"


def training_scenario(path):
    """The Fig. 21a scenario with Poisson arrivals at 50/s per device, the candidates and a 1 s period."""
    text = open(SCENARIO).read()
    text = text.replace("luts: [traces/lut/]", f"luts: [{ROOT}/traces/lut/]")
    text = text.replace("name: fig21a_batch", "name: fig21a_batch_learned")
    text = text.replace("scheduler: {name: static}", "scheduler: {name: static, period_s: 1, " + CANDIDATES + "}")
    text = text.replace("workload: {arrival: closed_loop, in_flight: 2}", "workload: {arrival: poisson, rate_per_s: 50}")
    for must in ("/traces/lut/", "batch_windows_ms", "poisson"):
        assert must in text, f"{SCENARIO} changed: cannot derive the training scenario ({must})"
    with open(path, "w") as f:
        f.write("# Derived by bench/sac_batching.py from scenarios/paper/fig21a_batch.yaml (synthesised LUTs).\n" + text)


def last_batching(decisions):
    """The batching in force after the last decision: the last scheme text naming it, else the scenario's."""
    for d in reversed(decisions):
        detail = d.get("detail") or {}
        for s in detail.get("servers", []):  # learned
            return f"{s['window_ms']:g} ms / {s['max_size']}"
        for b in detail.get("batching", []):  # the estimator's pass
            return f"{b['window_ms']:g} ms / {b['max_size']}"
    return "10 ms / 5 (fixed)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coinfer", default=os.path.join(ROOT, "build/coinfer"))
    ap.add_argument("--episodes", type=int, default=300)
    ap.add_argument("--objective", default="latency", choices=["throughput", "latency"],
                    help="the reward's (coinfer train sac --objective; default latency: below saturation every batching has the same throughput)")
    ap.add_argument("--duration", type=float, default=20)
    ap.add_argument("--keep", help="write the training scenario and the policy here (default: a temporary folder)")
    args = ap.parse_args()
    c = os.path.abspath(args.coinfer)
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.abspath(args.keep) if args.keep else tmp
        os.makedirs(work, exist_ok=True)
        scenario = os.path.join(work, "fig21a_batch_learned.yaml")
        training_scenario(scenario)
        policy = os.path.join(work, "policy.pt")
        t0 = time.time()
        train = ["--episodes", str(args.episodes), "--objective", args.objective, "--learn-batching", "--keep-bandwidth", "--load-spread", "3",
                 "--episode-duration", "10", "--restart"]
        subprocess.run([c, "train", "sac", scenario, "--out", policy] + train + ["-q"], check=True)
        print(f"trained in {time.time() - t0:.0f} s: `coinfer train sac {os.path.basename(scenario)} --out policy.pt {' '.join(train)}`\n")
        base = [f"duration_s={args.duration}", "warmup_s=2", "drain_s=10"]
        sac = f"name: sac, policy: '{policy}', period_s: 1"
        columns = [
            ("SAC, batching learned", f"scheduler={{{sac}, {CANDIDATES}}}"),
            ("SAC, the estimator's pass", f"scheduler={{{sac}, batching_policy: none, {CANDIDATES}}}"),
            ("SAC, fixed 10 ms / 5", f"scheduler={{{sac}, batching_policy: none}}"),
            ("static offload, the estimator's pass", f"scheduler={{name: static, period_s: 1, {CANDIDATES}}}"),
        ]
        print("### Throughput (req/s) / p95 latency (ms) against the offered load, and the batching after the last decision\n")
        print("| offered (req/s) | " + " | ".join(name for name, _ in columns) + " |")
        print("|---|" + "---|" * len(columns))
        for rate in RATES:
            cells = []
            load = [f"devices.0.workload={{arrival: poisson, rate_per_s: {rate}}}"]
            for k, (_, sched) in enumerate(columns):
                s, d = run(c, f"{tmp}/c{k}r{rate}", base + load + [sched], scenario)
                p95 = s['total']['latency_ms']['p95']
                p95 = "-" if p95 is None else f"{p95:.1f}"
                cells.append(f"{s['total']['throughput_rps']:.1f} / {p95} ({last_batching(d)})")
            print(f"| {rate * 5} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
