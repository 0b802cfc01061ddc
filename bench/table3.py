#!/usr/bin/python3
"""Simulated ACE-GNN Table III: mean latency (ms) of DGCNN/ModelNet40 for each static strategy, device/
server pair and bandwidth, beside the paper's figures. Runs `coinfer run` on scenarios/paper/table3_*.
usage: /usr/bin/python3 bench/table3.py [--coinfer build/coinfer] [--variants]   (from the repository root)
Prints a Markdown table (pasted into bench/RESULTS.md). --variants prints instead the rows of execution
variants: greedy (latency objective) with and without scheduler.max_output_error, DGCNN's INT8
variant synthesised for each device type with its output error measured here by coinfer profile --variant."""
import argparse
import json
import re
import subprocess
import sys
import tempfile

PAIRS = [("tx2", "gpu", "jetson-tx2", "gtx1060"), ("tx2", "cpu", "jetson-tx2", "i7-7700"),
         ("pi", "gpu", "rpi4b", "gtx1060"), ("pi", "cpu", "rpi4b", "i7-7700")]
PAPER = {  # ACE-GNN Table III (ms): HGNAS (device-only), GCoDE, ACE-GNN per bandwidth; columns as PAIRS
    100: {"HGNAS": [52.1, 52.1, 241.5, 241.5], "GCoDE": [30.4, 26.1, 20.4, 38.6], "ACE-GNN": [13.7, 12.7, 8.3, 28.4]},
    40: {"HGNAS": [52.1, 52.1, 241.5, 241.5], "GCoDE": [31.9, 21.0, 25.0, 64.4], "ACE-GNN": [13.9, 14.0, 8.3, 29.2]},
    20: {"HGNAS": [52.1, 52.1, 241.5, 241.5], "GCoDE": [34.9, 31.2, 30.5, 43.1], "ACE-GNN": [14.1, 14.0, 8.2, 29.0]},
    1: {"HGNAS": [52.1, 52.1, 241.5, 241.5], "GCoDE": [145.8, 343.1, 278.0, 141.6], "ACE-GNN": [33.5, 26.9, 63.1, 57.1]},
}


def model_splits(coinfer):
    out = subprocess.run([coinfer, "model", "show", "dgcnn"], check=True, capture_output=True, text=True).stdout
    pp_comm = int(re.search(r"PP_comm = pp\((\d+)\)", out).group(1))
    pp_comp = {}
    for m in re.finditer(r"^\s+(\S+)\s+->\s+(\S+)\s+pp\((\d+)\)", out, re.M):
        pp_comp[(m.group(1), m.group(2))] = int(m.group(3))
    return pp_comm, pp_comp


def variant_rows(coinfer, bound=0.05):
    """Greedy without and with the variant dimension, per cell: mean latency (ms) and the chosen strategy."""
    print(f"| Mbps | method | TX2-GPU | TX2-CPU | Pi-GPU | Pi-CPU |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        # The output error is the operators' and weights', not the hardware's: measured once here.
        subprocess.run([coinfer, "profile", "--model", "dgcnn", "--variant", "int8", "--ranges", "whole", "--batch", "1..1",
                        "--repeats", "1", "--warmup", "0", "--accuracy-samples", "8", "--out", f"{tmp}/measured.h5", "-q"],
                       check=True, capture_output=True)
        for dtype in sorted({p[2] for p in PAIRS} | {p[3] for p in PAIRS}):
            subprocess.run([coinfer, "lut", "synth", "--device", dtype, "--model", "dgcnn@int8", "--dataset", "modelnet40",
                            "--output-error-from", f"{tmp}/measured.h5", "--out-dir", f"{tmp}/v", "-q"],
                           check=True, capture_output=True)
        error = None
        for bw in (100, 40, 20, 1):
            rows = {"sim greedy": [], f"sim greedy + variants (max_output_error {bound})": []}
            chosen = []
            for dk, sk, dtype, stype in PAIRS:
                for name, extra in (("sim greedy", []), (f"sim greedy + variants (max_output_error {bound})",
                                                          ["--set", f"scheduler.max_output_error={bound}"])):
                    out = f"{tmp}/{dk}{sk}{bw}{len(extra)}"
                    subprocess.run([coinfer, "run", f"scenarios/paper/table3_{dk}_{sk}_{bw}mbps.yaml", "-q", "--out", out,
                                    "--set", f"luts=[traces/lut/, {tmp}/v/]", "--set", "scheduler.name=greedy",
                                    "--set", "scheduler.objective=latency", "--set", "devices.0.strategy=local"] + extra, check=True)
                    with open(f"{out}/summary.json") as f:
                        rows[name].append(json.load(f)["total"]["latency_ms"]["mean"])
                    if extra:
                        with open(f"{out}/decisions.jsonl") as f:
                            chosen.append(json.loads(f.readline())["scheme"].split("=")[1].split()[0])
            for name, cells in rows.items():
                print(f"| {bw} | {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
            print(f"| {bw} | chosen | " + " | ".join(chosen) + " |")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--variants", action="store_true", help="the execution-variant rows instead")
    args = ap.parse_args()
    if args.variants:
        return variant_rows(args.coinfer)
    pp_comm, pp_comp = model_splits(args.coinfer)
    print("| Mbps | method | TX2-GPU | TX2-CPU | Pi-GPU | Pi-CPU |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for bw in (100, 40, 20, 1):
            rows = {}
            for label in ("local", "offload", "PP_comp", "PP_comm", "data_parallel", "gcode", "hierarchical"):
                cells = []
                for dk, sk, dtype, stype in PAIRS:
                    strategy = {"PP_comp": f"pp({pp_comp[(dtype, stype)]})", "PP_comm": f"pp({pp_comm})"}.get(label, label)
                    out = f"{tmp}/{dk}{sk}{bw}{label}"
                    sets = ["--set", f"devices.0.strategy={strategy}"]
                    if label in ("gcode", "hierarchical"):  # adaptive: the scheduler picks; latency is the metric
                        sets = ["--set", f"scheduler.name={label}", "--set", "devices.0.strategy=local"]
                        if label == "hierarchical":
                            sets += ["--set", "scheduler.objective=latency"]
                    subprocess.run([args.coinfer, "run", f"scenarios/paper/table3_{dk}_{sk}_{bw}mbps.yaml", "-q",
                                    "--out", out] + sets, check=True)
                    with open(f"{out}/summary.json") as f:
                        cells.append(json.load(f)["total"]["latency_ms"]["mean"])
                name = {"PP_comp": "PP_comp", "PP_comm": f"PP_comm pp({pp_comm})", "gcode": "**gcode scheduler**",
                        "hierarchical": "**hierarchical scheduler**"}.get(label, label)
                rows[name] = cells
            best = [min(rows[r][i] for r in rows if "scheduler" not in r) for i in range(4)]
            for name, cells in rows.items():
                print(f"| {bw} | sim {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
            print(f"| {bw} | **sim best static** | " + " | ".join(f"**{c:.1f}**" for c in best) + " |")
            for name, cells in PAPER[bw].items():
                print(f"| {bw} | paper {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    print(f"\nPP_comp per pair: " + ", ".join(f"{d}->{s} pp({pp_comp[(d, s)]})" for _, _, d, s in PAIRS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
