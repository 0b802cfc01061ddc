#!/usr/bin/env python3
"""SparOA's operator scheduler against its baselines (SparOA Figs. 5, 6, 10, 11), for GNNs.

For each board (SparOA's two: Jetson Orin Nano and AGX Orin), `coinfer train thresholds` first trains
the board's threshold predictor (Sec. 3; Table 3's accuracy printed). Then for every shipped model,
`coinfer train sparoa --thresholds --json` trains the SAC policy (sched/sparoa_learner.hpp, 1000
episodes, seed 1) on a one-device scenario (local: the board runs every stage) and prices, by the
simulator's segment rule, the placements of CPU-only, GPU-only, greedy, CoDL-like, GraphSplit, the
thresholds alone (SparOA w/o RL) and the DP over tenths (SparOA-DP: exhaustive over whole and split
stages on that grid), alone on the board. Printed:

  Table 3  the threshold predictor's accuracy within ±10 % against a linear regression
  Fig. 5   device ms of one inference per rule, and SAC against the DP (target: within 5 % everywhere)
  Fig. 6   the share of the stages' work on the GPU per rule
  Fig. 10  SAC's training time to convergence against the time greedy and the DP take to decide
  Fig. 9   ablation: GPU-only, + threshold predictor (the thresholds alone), + scheduler (SAC)
  Fig. 11  energy per inference (mJ) per rule

The tables are SYNTHESISED (traces/lut, traces/lut_processors: roofline times from vendor figures,
traces/README.md), not measured. The boards' per-processor power is ASSUMED (below): a split of the
maximum power mode of SparOA's Table 1 (Orin Nano 25 W, AGX Orin 60 W) into the rest of the board, the GPU
and the CPU; only the energy columns depend on it.

  /usr/bin/python3 bench/sparoa_placement.py [--coinfer build/coinfer] [--episodes 1000] [--boards ...]
"""
import argparse, json, math, os, subprocess, sys, tempfile

from model_pairs import model_pairs

RULES = ["cpu_only", "accelerator_only", "greedy", "codl", "graphsplit", "thresholds", "dp", "sac"]
# ASSUMED per-processor power (W): rest of the board idle; each processor idle / busy; sums under the
# maximum power mode of [sparoa] Table 1 (25 W, 60 W). One source: the figures `coinfer reproduce sparoa`
# uses (reproduce/published/sparoa.yaml, the first item's sparoa.power), written here as YAML flow (JSON).
def assumed_power():
    import yaml
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "reproduce", "published", "sparoa.yaml")) as f:
        items = yaml.safe_load(f)["items"]
    power = next(i["sparoa"]["power"] for i in items if "power" in i.get("sparoa", {}))
    return {board: json.dumps(p) for board, p in power.items()}


POWER = assumed_power()


def gmean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--boards", default="jetson-orin-nano,jetson-agx-orin")
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--models", default="", help="comma-separated model/dataset pairs (default: every shipped one)")
    a = ap.parse_args()
    root = os.path.abspath(".")
    pairs = model_pairs(a.coinfer)
    if a.models:
        want = set(a.models.split(","))
        pairs = [p for p in pairs if f"{p[0]}/{p[1]}" in want]
    rows = []
    accuracy = []
    with tempfile.TemporaryDirectory() as tmp:
        for board in a.boards.split(","):
            def scenario(model, ds):
                scen = os.path.join(tmp, "s.yaml")
                with open(scen, "w") as f:
                    f.write(f"name: sparoa-{board}-{model}-{ds}\nduration_s: 1\n"
                            f"luts: [{root}/traces/lut, {root}/traces/lut_processors, {root}/traces/lut_variants, {root}/traces/lut_images]\n"
                            f"servers: [{{id: e, type: i7-7700}}]\n"
                            f"devices:\n  - {{id: b, type: {board}, model: {model}, dataset: {ds}, strategy: local, "
                            f"power: {POWER.get(board, '{}')}, link: {{bandwidth_mbps: 20}}, workload: {{arrival: closed_loop, in_flight: 1}}}}\n")
                return scen
            thr = os.path.join(tmp, f"thresholds-{board}.pt")
            r = subprocess.run([a.coinfer, "-q", "train", "thresholds", scenario(*pairs[0]), "--seed", str(a.seed), "--out", thr],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{board} thresholds: {r.stderr.strip()}", file=sys.stderr)
                continue
            accuracy.append((board, r.stdout.strip()))
            print(f"  trained the threshold predictor of {board}", file=sys.stderr)
            for model, ds in pairs:
                scen = scenario(model, ds)
                r = subprocess.run([a.coinfer, "-q", "train", "sparoa", scen, "--json", "--episodes", str(a.episodes), "--seed", str(a.seed),
                                    "--thresholds", thr, "--out", os.path.join(tmp, "p.pt")], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"{board} {model}/{ds}: {r.stderr.strip()}", file=sys.stderr)
                    continue
                rows.append((board, f"{model}/{ds}", json.loads(r.stdout)))
                print(f"  trained {board} {model}/{ds}", file=sys.stderr)

    def table(title, key, fmt):
        print(f"\n{title}")
        print(f"{'board':17s} {'model':16s} " + " ".join(f"{r:>12s}" for r in RULES))
        for board, m, j in rows:
            cells = []
            for rule in RULES:
                v = j["rules"][rule].get(key)
                cells.append(f"{fmt(v):>12s}" if v is not None else f"{'-':>12s}")
            print(f"{board:17s} {m:16s} " + " ".join(cells))

    print("Table 3: the threshold predictors")
    for board, line in accuracy:
        print(f"  {line.split('; wrote')[0]}")
    table("Fig. 5: device ms of one inference alone on the board", "device_ms", lambda v: f"{v:.3f}")
    table("Fig. 6: share of the stages' work on the GPU", "accelerator_share", lambda v: f"{100 * v:.1f}%")
    table("Fig. 11: energy per inference (mJ; ASSUMED per-processor power)", "energy_mj", lambda v: f"{v:.2f}")
    print("\nFig. 9: ablation, speedup over GPU-only (geometric mean over models): + threshold predictor (thresholds alone), + scheduler (SAC)")
    for board in dict.fromkeys(r[0] for r in rows):
        sel = [j["rules"] for b, _, j in rows if b == board]
        thr = gmean([r["accelerator_only"]["device_ms"] / r["thresholds"]["device_ms"] for r in sel])
        sac = gmean([r["accelerator_only"]["device_ms"] / r["sac"]["device_ms"] for r in sel])
        print(f"  {board:17s} GPU-only 1.00x, + predictor {thr:.2f}x, + scheduler {sac:.2f}x")
    print("\nFig. 10: time to decide (s): greedy, DP, SAC's training to convergence (of its whole training)")
    for board, m, j in rows:
        s = j["rules"]["sac"]
        print(f"{board:17s} {m:16s} greedy {j['rules']['greedy']['decide_s']:.2e}  dp {j['rules']['dp']['decide_s']:.2e}  "
              f"sac {s['converged_s']:.2f} (episode {s['converged_episode']}) of {s['decide_s']:.2f}")
    print("\nSAC against the DP over tenths (target: within 5 % on every case):")
    worst = max(j["rules"]["sac"]["device_ms"] / j["rules"]["dp"]["device_ms"] for _, _, j in rows)
    missed = [(b, m, j["rules"]["sac"]["device_ms"] / j["rules"]["dp"]["device_ms"]) for b, m, j in rows
              if j["rules"]["sac"]["device_ms"] > 1.05 * j["rules"]["dp"]["device_ms"]]
    print(f"  worst SAC/DP {worst:.3f}; {len(rows) - len(missed)} of {len(rows)} within 5 %" +
          ("".join(f"\n  missed: {b} {m} {x:.3f}" for b, m, x in missed)))
    print("\nspeedup of SAC over each rule (geometric mean over models, per board; SparOA reports 1.22-1.31x over its baselines):")
    for board in dict.fromkeys(r[0] for r in rows):
        parts = []
        for rule in RULES[:-1]:
            v = [j["rules"][rule]["device_ms"] / j["rules"]["sac"]["device_ms"] for b, _, j in rows
                 if b == board and j["rules"][rule].get("device_ms")]
            if v:
                parts.append(f"{rule} {gmean(v):.2f}x")
        print(f"  {board:17s} " + ", ".join(parts))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
