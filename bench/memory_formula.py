#!/usr/bin/env python3
"""The cost model's memory against what LibTorch allocates.

For every model and dataset of the catalog (or those given), `coinfer profile --ranges stages` measures
each stage [s, s+1) at batch 1 and 2 on this machine: the peak of LibTorch's CPU allocator above the
state the stage starts from (its weights and inputs are already there). The model spec charges a stage
its output + workspace + gathered messages on top of its live inputs and weights (models/README.md
"Peak memory of a range"); this prints both per stage and their ratio, and per op the median ratio.
A ratio far below 1 is memory the simulator does not charge (a board it says fits would run out on
the real runtime); far above 1, memory it charges that LibTorch never holds at once.

  /usr/bin/python3 bench/memory_formula.py [--coinfer build/coinfer] [--only gcn/mr,dgcnn/modelnet40]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

import h5py


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--only", default="", help="model/dataset pairs, comma-separated (default: every model's datasets)")
    a = ap.parse_args()
    pairs = []
    if a.only:
        pairs = [tuple(p.split("/")) for p in a.only.split(",")]
    else:
        for line in subprocess.check_output([a.coinfer, "model", "list"], text=True).splitlines():  # "gcn    datasets: yelp, siot, mr"
            name, _, rest = line.partition("datasets:")
            for ds in rest.split(","):
                pairs.append((name.strip(), ds.strip()))
    by_op = {}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, ds in pairs:
            spec = json.loads(subprocess.check_output([a.coinfer, "model", "show", model, "--dataset", ds, "--json"]))[0]
            out = os.path.join(tmp, f"{model}-{ds}.h5")
            subprocess.check_call([a.coinfer, "profile", "--model", model, "--dataset", ds, "--ranges", "stages", "--batch", "1..2",
                                   "--repeats", "1", "--warmup", "1", "--out", out, "-q"], stdout=subprocess.DEVNULL)
            g = h5py.File(out)[f"{model}/{ds}"]
            peak = g["peak_memory_bytes_by_batch"][:] if "peak_memory_bytes_by_batch" in g else None
            for s, st in enumerate(spec["stages"]):
                charged = st["memory_bytes"]
                m1 = float(peak[s, s + 1, 0]) if peak is not None else float(g["peak_memory_bytes"][s, s + 1])
                m2 = float(peak[s, s + 1, 1]) if peak is not None else float("nan")
                ratio = m1 / charged if charged > 0 else float("nan")
                rows.append((f"{model}/{ds}", st["name"], st["op"], charged, m1, m2, ratio))
                by_op.setdefault(st["op"], []).append(ratio)
    print(f"{'model/dataset':28s} {'stage':12s} {'op':9s} {'charged MB':>11s} {'measured b1':>12s} {'b2':>9s} {'measured/charged':>17s}")
    for r in rows:
        print(f"{r[0]:28s} {r[1]:12s} {r[2]:9s} {r[3]/1e6:11.3f} {r[4]/1e6:12.3f} {r[5]/1e6:9.3f} {r[6]:17.2f}")
    print("\nper op, median measured/charged (batch 1):")
    for op, v in sorted(by_op.items()):
        v = [x for x in v if x == x]
        if v:
            print(f"  {op:10s} {statistics.median(v):6.2f}  (min {min(v):.2f}, max {max(v):.2f}, {len(v)} stages)")


if __name__ == "__main__":
    sys.exit(main())
