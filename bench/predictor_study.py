#!/usr/bin/python3
"""ACE-GNN's learned predictors against the analytic estimator, from sample sets
made by `coinfer predictor samples` and models made by `coinfer predictor train`:

  held-out   every model and the analytic estimator on a sample set of fresh systems (another seed)
  systems    held-out systems: for each --holdout-type T, a model trained without any system holding a
             T board (hint layout, --budget-hidden), evaluated on the held-out systems that have one
  measured   (when --measured SAMPLES is given) samples measured on the emulated testbed
  budget     accuracy against the number of training samples (--budgets, whole systems, both layouts,
             hidden --budget-hidden), evaluated on the held-out set
  outcome    the throughput reached when scheduling: the simulated throughput of hierarchical with the
             analytic estimator and with each model, and of oracle (exhaustive, analytic), on held-out
             systems of up to 5 devices (--outcome-systems of them, one scenario each)

usage: /usr/bin/python3 bench/predictor_study.py --train TRAIN.h5 --test TEST.h5 --model NAME=FILE ...
           [--measured M.h5] [--budgets 100,300,1000,3000] [--holdout-type jetson-nano] [--out DIR]
(from the repository root; markdown tables on stdout, everything also in DIR/study.json)"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import re
import subprocess
import sys

COINFER = "build/coinfer"


def log(msg):
    print(f"[predictor_study] {msg}", file=sys.stderr, flush=True)


def evaluate(samples, models, extra=()):
    """Rows of `coinfer predictor eval` (JSON)."""
    out = f"/tmp/predictor_study_eval_{os.getpid()}.json"
    cmd = [COINFER, "predictor", "eval", samples, "--json", out] + list(extra)
    for m in models:
        cmd += ["--model", m]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    rows = json.load(open(out))
    os.remove(out)
    return rows


def train(samples, out, extra):
    if os.path.exists(out):
        return out
    log(f"training {out} ({' '.join(extra)})")
    subprocess.run([COINFER, "predictor", "train", samples, "--out", out, "-q"] + extra, check=True)
    return out


def pc(v):
    return "-" if v is None or v != v else f"{100 * v:.1f} %"


def table(title, rows, names=None):
    print(f"\n{title}\n")
    print("| estimator | samples | within 10 % | within 20 % | MAPE | pairwise ranking |")
    print("|---|---|---|---|---|---|")
    for r in rows["rows"]:
        name = (names or {}).get(r["estimator"], r["estimator"])
        print(f"| {name} | {rows['samples']} | {pc(r['within_10'])} | {pc(r['within_20'])} | {pc(r['mape'])} | {pc(r['pairwise'])} ({r['pairs']} pairs) |")


def run_scenario(args):
    """The scheduler's decision at time 0, then that scheme simulated as a static scenario: the devices
    start with it (in a run where the scheduler switches devices at 0 s, a request created under the
    scenario's initial strategy is already in flight and a slow offload blocks a closed loop for seconds:
    see sim/README.md), so schedulers are compared on what they chose."""
    scen, sets, out = args
    if not os.path.exists(os.path.join(out, "summary.json")):
        r = subprocess.run([COINFER, "run", scen, "--out", out, "-q"] + sum([["--set", s] for s in sets], []), capture_output=True, text=True)
        if r.returncode != 0:
            return None
    first = json.loads(open(os.path.join(out, "decisions.jsonl")).readline())
    chosen = dict(x.split("=", 1) for x in first["scheme"].split() if not x.startswith("helpers="))
    static = out + "-static"
    if not os.path.exists(os.path.join(static, "summary.json")):
        ids = re.findall(r"^  - \{id: (d[0-9]+),", open(scen).read(), re.M)
        st = [f"devices.{i}.strategy={chosen[d]}" for i, d in enumerate(ids)]
        r = subprocess.run([COINFER, "run", scen, "--out", static, "-q", "--set", "scheduler.name=static"] + sum([["--set", x] for x in st], []),
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None
    return json.load(open(os.path.join(static, "summary.json")))["total"]["throughput_rps"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True, help="sample folder or samples.h5 of fresh systems")
    ap.add_argument("--model", action="append", default=[], help="NAME=FILE")
    ap.add_argument("--measured", default="")
    ap.add_argument("--budgets", default="100,300,1000,3000")
    ap.add_argument("--budget-hidden", type=int, default=128)
    ap.add_argument("--holdout-type", action="append", default=[])
    ap.add_argument("--outcome-systems", type=int, default=20)
    ap.add_argument("--out", default="/tmp/predictor-study")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--coinfer", default="build/coinfer", help="the coinfer program (its companions beside it)")
    a = ap.parse_args()
    global COINFER
    COINFER = a.coinfer
    os.makedirs(a.out, exist_ok=True)
    test = a.test if a.test.endswith(".h5") else os.path.join(a.test, "samples.h5")
    test_dir = os.path.dirname(test)
    models = dict(m.split("=", 1) for m in a.model)
    names = {os.path.basename(f): n for n, f in models.items()}
    study = {"train": a.train, "test": test, "models": models}

    study["held_out"] = evaluate(test, list(models.values()))
    table("Held-out samples (fresh systems):", study["held_out"], names)

    study["held_out_systems"] = {}
    for t in a.holdout_type:
        f = train(a.train, os.path.join(a.out, f"without-{t}.pt"), ["--layout", "hint", "--hidden", str(a.budget_hidden), "--exclude-device-types", t])
        g = train(a.train, os.path.join(a.out, f"paper-without-{t}.pt"), ["--layout", "paper", "--hidden", str(a.budget_hidden), "--exclude-device-types", t])
        rows = evaluate(test, [f, g], ["--device-types", t])
        study["held_out_systems"][t] = rows
        table(f"Held-out systems: every test system with a {t} (never in training):", rows,
              {os.path.basename(f): f"hint, trained without {t}", os.path.basename(g): f"paper, trained without {t}"})

    if a.measured:
        study["measured"] = evaluate(a.measured, list(models.values()), ["--measured-only"])
        table("Testbed-measured samples:", study["measured"], names)

    study["budget"] = {}
    budgets = [int(x) for x in a.budgets.split(",") if x]
    if budgets:
        print("\nAccuracy against the number of training samples (held-out samples; hidden %d):\n" % a.budget_hidden)
        print("| training samples | layout | within 10 % | within 20 % | MAPE | pairwise ranking |")
        print("|---|---|---|---|---|---|")
        for b in budgets:
            for layout in ("paper", "hint"):
                f = train(a.train, os.path.join(a.out, f"{layout}-{b}.pt"), ["--layout", layout, "--hidden", str(a.budget_hidden), "--limit", str(b)])
                r = evaluate(test, [f])["rows"][1]
                study["budget"][f"{layout}-{b}"] = r
                print(f"| {b} | {layout} | {pc(r['within_10'])} | {pc(r['within_20'])} | {pc(r['mape'])} | {pc(r['pairwise'])} |")

    # Outcome: scheduling held-out systems of up to 5 devices.
    scen = sorted(glob.glob(os.path.join(test_dir, "scenarios", "*_0000.yaml")))
    picked = []
    for s in scen:
        n = len(re.findall(r"^  - \{id: d", open(s).read(), re.M))
        if n <= 5:
            picked.append((s, n))
        if len(picked) >= a.outcome_systems:
            break
    variants = {"hierarchical + analytic": ["scheduler.name=hierarchical"], "oracle (analytic)": ["scheduler.name=oracle", "scheduler.max_schemes=200000"]}
    for n, f in models.items():
        variants[f"hierarchical + gin ({n})"] = ["scheduler.name=hierarchical", "scheduler.estimator=gin", f"scheduler.predictor={os.path.abspath(f)}"]
    jobs = []
    for i, (s, n) in enumerate(picked):
        for v, sets in variants.items():
            jobs.append((s, sets, os.path.join(a.out, "outcome", f"{i}-{re.sub('[^a-z0-9]+', '_', v)}")))
    log(f"outcome: {len(picked)} systems x {len(variants)} schedulers")
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        thr = list(pool.map(run_scenario, jobs))
    res = {}
    k = 0
    for i, (s, n) in enumerate(picked):
        res[s] = {}
        for v in variants:
            res[s][v] = thr[k]
            k += 1
    study["outcome"] = res
    print(f"\nScheduling {len(picked)} held-out systems of 1-5 devices (each scheduler's decision at 0 s simulated as a static scheme; ratio to oracle's):\n")
    print("| scheduler | mean ratio to oracle | worst | systems within 2 % of oracle |")
    print("|---|---|---|---|")
    for v in variants:
        ratios = [res[s][v] / res[s]["oracle (analytic)"] for s in res if res[s][v] and res[s]["oracle (analytic)"]]
        if ratios:
            print(f"| {v} | {sum(ratios) / len(ratios):.3f} | {min(ratios):.3f} | {sum(r >= 0.98 for r in ratios)} / {len(ratios)} |")
    json.dump(study, open(os.path.join(a.out, "study.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
