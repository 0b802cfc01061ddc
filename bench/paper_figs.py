#!/usr/bin/python3
"""Simulated versions of ACE-GNN Figs. 10, 14/15, 16, 20 and 21a with our schedulers (synthesised LUTs).
usage: /usr/bin/python3 bench/paper_figs.py [--coinfer build/coinfer]   (from the repository root)
Prints Markdown tables (pasted into bench/RESULTS.md). Each point is one `coinfer run` (seed 1)."""
import argparse
import json
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SCHEDULERS = ["local", "offload", "gcode", "greedy", "dp", "hierarchical"]


def run(coinfer, scenario, out, sets):
    cmd = [coinfer, "run", scenario, "-q", "--out", out]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)
    with open(f"{out}/summary.json") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coinfer", default="build/coinfer")
    args = ap.parse_args()
    c = args.coinfer
    with tempfile.TemporaryDirectory() as tmp:
        # Fig. 10: latency per 20 s phase while the network deteriorates.
        print("### Fig. 10: TX2, link 100 -> 40 -> 20 -> 5 -> 1 Mbit/s every 20 s: mean latency (ms) per phase\n")
        print("| server | scheduler | 100 | 40 | 20 | 5 | 1 | decisions | schemes chosen |")
        print("|---|---|---|---|---|---|---|---|---|")
        for srv, suffix in (("i7-7700", ""), ("gtx1060", "_gpu")):
          for sched in ["local", "offload", "gcode", "hierarchical"]:
            out = f"{tmp}/f10{sched}{suffix}"
            spec = "{name: hierarchical, objective: latency}" if sched == "hierarchical" else f"{{name: {sched}}}"
            run(c, f"scenarios/paper/fig10_network_deterioration{suffix}.yaml", out, [f"scheduler={spec}"])
            with h5py.File(f"{out}/results.h5") as f:
                t0, t1 = f["requests/t_created"][:], f["requests/t_result"][:]
                schemes = [s.decode() for s in f["decisions/scheme"][:]]
            cells = []
            for a in range(0, 100, 20):
                m = (t0 >= a) & (t0 < a + 20) & np.isfinite(t1)
                cells.append(f"{np.mean(t1[m] - t0[m]) * 1e3:.1f}" if m.any() else "-")
            chosen = " > ".join(s.split("=")[1].split(" ")[0] for s in schemes)
            print(f"| {srv} | {sched} | " + " | ".join(cells) + f" | {len(schemes)} | {chosen} |")

        # Figs. 14/15: throughput versus number of Pi 4B.
        for srv in ["gpu", "cpu"]:
            print(f"\n### Figs. 14/15: N Raspberry Pi 4B on the {srv.upper()} server at 40 Mbit/s: system throughput (req/s) / mean latency (ms)\n")
            print("| scheduler | " + " | ".join(f"N={n}" for n in range(1, 6)) + " |")
            print("|---|" + "---|" * 5)
            for sched in SCHEDULERS:
                cells = []
                for n in range(1, 6):
                    s = run(c, f"scenarios/paper/fig14_15_{srv}.yaml", f"{tmp}/f15{srv}{sched}{n}",
                            [f"devices.0.count={n}", f"scheduler.name={sched}"])
                    cells.append(f"{s['total']['throughput_rps']:.1f} / {s['total']['latency_ms']['mean']:.0f}")
                print(f"| {sched} | " + " | ".join(cells) + " |")

        # Fig. 16: idle devices as helpers.
        print("\n### Fig. 16: six Pi 4B offloading, three idle Jetson Nano, i7-7700 server with one worker\n")
        print("| configuration | throughput (req/s) | mean latency (ms) | requests run by helpers |")
        print("|---|---|---|---|")
        for label, sets in [("static offload, helpers on", []), ("static offload, helpers off", ["scheduler.helpers=false"]),
                            ("hierarchical, helpers on", ["scheduler={name: hierarchical}"]),
                            ("hierarchical, helpers off", ["scheduler={name: hierarchical, helpers: false}"])]:
            out = f"{tmp}/f16{label.replace(' ', '').replace(',', '')}"
            s = run(c, "scenarios/paper/fig16_idle_devices.yaml", out, sets)
            with h5py.File(f"{out}/results.h5") as f:
                helped = int(np.sum(f["requests/helper"][:] >= 0))
            print(f"| {label} | {s['total']['throughput_rps']:.1f} | {s['total']['latency_ms']['mean']:.1f} | {helped} |")

        # Fig. 20: nine devices.
        print("\n### Fig. 20: nine devices (3 TX2, 3 Nano, 3 Pi 4B) on one GTX 1060\n")
        print("| scheduler | throughput (req/s) | mean latency (ms) | energy per inference (J) |")
        print("|---|---|---|---|")
        for sched in SCHEDULERS:
            s = run(c, "scenarios/paper/fig20_nine_devices.yaml", f"{tmp}/f20{sched}", [f"scheduler.name={sched}"])
            t = s["total"]
            print(f"| {sched} | {t['throughput_rps']:.1f} | {t['latency_ms']['mean']:.1f} | {t['energy_j_per_inference']:.3f} |")

        # Fig. 21a: maximum batch size.
        print("\n### Fig. 21a: five Pi 4B offloading to the GTX 1060 (100 Mbit/s, two in flight each): throughput vs max batch size\n")
        sizes = [1, 2, 4, 5, 8, 12, 16]
        print("| max batch | " + " | ".join(str(k) for k in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        cells = []
        for k in sizes:
            s = run(c, "scenarios/paper/fig21a_batch.yaml", f"{tmp}/f21{k}", [f"servers.0.batch.max_size={k}"])
            cells.append(f"{s['total']['throughput_rps']:.1f}")
        print("| throughput (req/s) | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
