#!/usr/bin/env python3
"""Operator placement inside a board: SparOA's baselines and GraNNite's GraphSplit on every
shipped multi-processor board and every shipped model (SparOA Fig. 5's comparison, for GNNs).

For each board, model and rule, a one-device scenario (local, the board alone) is simulated for 1 s
with `scheduler: {name: placement, rule: R}`; the rule's placement and its device milliseconds (one
inference alone on the board, the simulator's segment rule) come from the decision record. Also the
simulated mean latency, which equals it for a request alone. The tables are SYNTHESISED (traces/lut
for each board's default processor, traces/lut_processors for its others): roofline times from vendor
figures (traces/README.md), not measurements.

  /usr/bin/python3 bench/placement_rules.py [--coinfer build/coinfer] [--boards jetson-tx2,...]
"""
import argparse, json, os, subprocess, sys, tempfile

from model_pairs import model_pairs

RULES = ["cpu_only", "accelerator_only", "greedy", "codl", "graphsplit", "dp"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--boards", default="jetson-tx2,jetson-nano,jetson-orin-nano,jetson-agx-orin,core-ultra-165h")
    a = ap.parse_args()
    root = os.path.abspath(".")
    pairs = model_pairs(a.coinfer)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for board in a.boards.split(","):
            for model, ds in pairs:
                ms = {}
                placement = {}
                for rule in RULES:
                    scen = os.path.join(tmp, "s.yaml")
                    with open(scen, "w") as f:
                        f.write(f"name: p\nduration_s: 1\nluts: [{root}/traces/lut, {root}/traces/lut_processors, {root}/traces/lut_variants]\n"
                                f"servers: [{{id: e, type: i7-7700}}]\nscheduler: {{name: placement, rule: {rule}}}\n"
                                f"devices:\n  - {{id: b, type: {board}, model: {model}, dataset: {ds}, link: {{bandwidth_mbps: 20}},"
                                f" workload: {{arrival: closed_loop, in_flight: 1}}}}\n")
                    out = os.path.join(tmp, f"o-{board}-{model}-{ds}-{rule}")
                    r = subprocess.run([a.coinfer, "-q", "run", scen, "--out", out], capture_output=True, text=True)
                    if r.returncode != 0:
                        ms[rule] = None
                        continue
                    d = json.loads(open(os.path.join(out, "decisions.jsonl")).readline()).get("detail") or {}
                    dev = d.get("devices", {}).get("b", {})
                    ms[rule] = dev.get("device_ms")
                    placement[rule] = dev.get("placement", dev.get("kept", ""))
                rows.append((board, f"{model}/{ds}", ms, placement))
    print(f"{'board':18s} {'model':18s} " + " ".join(f"{r:>16s}" for r in RULES) + "   dp placement")
    for board, m, ms, pl in rows:
        cells = " ".join(f"{ms[r]:16.3f}" if ms.get(r) is not None else f"{'-':>16s}" for r in RULES)
        print(f"{board:18s} {m:18s} {cells}   {pl.get('dp', '')}")
    print("\nspeedup of dp over each rule (geometric mean over models, per board):")
    import math
    for board in dict.fromkeys(r[0] for r in rows):
        parts = []
        for rule in RULES[:-1]:
            v = [r[2][rule] / r[2]["dp"] for r in rows if r[0] == board and r[2].get(rule) and r[2].get("dp")]
            if v:
                parts.append(f"{rule} {math.exp(sum(map(math.log, v)) / len(v)):.2f}x")
        print(f"  {board:18s} " + ", ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
