#!/usr/bin/python3
"""Batching as a decision and deadlines, in simulation.

ACE-GNN's Fig. 21a setting (scenarios/paper/fig21a_batch.yaml: five Raspberry Pi 4B offloading DGCNN to
the GTX 1060 server, two workers, synthesised LUTs), with Poisson arrivals at a load swept per device:
  1. throughput and p95 latency for fixed batch windows (0, 10, 50 ms at max 5) and for the window and
     size chosen at every decision (scheduler.batch_windows_ms [0, 5, 10, 20, 50], batch_sizes [1, 2, 5],
     period 2 s, the static scheduler's strategies; sched/README.md "Batching as a decision");
  2. SLO attainment with a 100 ms deadline, with and without drop_late, without batching (0 ms / 1: the
     server saturates near 300 req/s).
usage: /usr/bin/python3 bench/batching_and_slo.py [--coinfer build/coinfer] [--duration S]
Prints Markdown tables (pasted into bench/RESULTS.md). Each point is one `coinfer run` (seed 1)."""
import argparse
import json
import subprocess
import tempfile

SCENARIO = "scenarios/paper/fig21a_batch.yaml"
RATES = [10, 30, 50, 70, 90]  # requests per second per device (5 devices)


def run(coinfer, out, sets, scenario=SCENARIO):
    """One `coinfer run` of `scenario` with the overrides: its summary.json and decisions.jsonl."""
    cmd = [coinfer, "run", scenario, "-q", "--out", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(f"{out}/summary.json") as f:
        summary = json.load(f)
    decisions = [json.loads(line) for line in open(f"{out}/decisions.jsonl")]
    return summary, decisions


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--duration", type=float, default=20)
    args = ap.parse_args()
    c = args.coinfer
    base = [f"duration_s={args.duration}", "warmup_s=2", "drain_s=10"]
    with tempfile.TemporaryDirectory() as tmp:
        print(f"### Throughput (req/s) / p95 latency (ms) against the offered load: fixed windows and the chosen one\n")
        print("| offered (req/s) | " + " | ".join(f"{w} ms / 5" for w in (0, 10, 50)) + " | chosen | chosen batching at the last decision |")
        print("|---|---|---|---|---|---|")
        for rate in RATES:
            cells = []
            load = [f"devices.0.workload={{arrival: poisson, rate_per_s: {rate}}}"]
            for w in (0, 10, 50):
                s, _ = run(c, f"{tmp}/w{w}r{rate}", base + load + [f"servers.0.batch={{window_ms: {w}, max_size: 5}}"])
                cells.append(f"{s['total']['throughput_rps']:.1f} / {s['total']['latency_ms']['p95']:.1f}")
            s, d = run(c, f"{tmp}/cr{rate}", base + load + ["scheduler={name: static, period_s: 2, batch_windows_ms: [0, 5, 10, 20, 50], batch_sizes: [1, 2, 5]}"])
            cells.append(f"{s['total']['throughput_rps']:.1f} / {s['total']['latency_ms']['p95']:.1f}")
            chosen = d[-1]["detail"]["batching"][0]
            cells.append(f"{chosen['window_ms']:g} ms / {chosen['max_size']}")
            print(f"| {rate * 5} | " + " | ".join(cells) + " |")

        print(f"\n### SLO attainment with a 100 ms deadline (no batching: 0 ms / 1), without and with drop_late\n")
        print("| offered (req/s) | attainment | p95 (ms) | completed | attainment, drop_late | dropped | completed, drop_late |")
        print("|---|---|---|---|---|---|---|")
        for rate in RATES:
            row = [str(rate * 5)]
            for drop in ("false", "true"):
                s, _ = run(c, f"{tmp}/slo{drop}{rate}", base + ["servers.0.batch={window_ms: 0, max_size: 1}",
                    f"devices.0.workload={{arrival: poisson, rate_per_s: {rate}, deadline_ms: 100, drop_late: {drop}}}"])
                t = s["total"]
                row.append(f"{t['slo_attainment'] * 100:.1f} %")
                if drop == "false":
                    row += [f"{t['latency_ms']['p95']:.1f}", str(t["completed"])]
                else:
                    row += [str(t.get("dropped", 0)), str(t["completed"])]
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
