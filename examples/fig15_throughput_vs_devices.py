#!/usr/bin/python3
"""ACE-GNN Fig. 15 from a coinfer sweep: system throughput against the number of Raspberry Pi 4B
devices sharing one GPU server at 40 Mbit/s, one line per scheduler, with the data read through the
`coinfer` Python package (python/coinfer) in one line.

Make the sweep, then run this on its folder:
    ./build/coinfer sweep scenarios/paper/fig14_15_gpu.yaml --grid devices=1..5 \\
        --grid scheduler=hierarchical,local,static --seeds 2 --out results/fig15
    /usr/bin/python3 examples/fig15_throughput_vs_devices.py results/fig15 --out results/fig15/fig15.png
(a sweep that also varies another axis, e.g. bandwidth_mbps: add --where bandwidth_mbps=40, or --pool)

Prints the table behind the figure (mean and standard deviation over seeds, per scheduler and device
count) and writes the figure (PNG). The paper's Fig. 15 shows throughput rising with the number of
devices while the server has capacity, the hierarchical scheduler above local-only execution.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import coinfer  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep", help="a sweep's folder (or its sweep.h5)")
    ap.add_argument("--out", default="fig15.png")
    ap.add_argument("--devices-axis", default="devices")
    ap.add_argument("--scheduler-axis", default="scheduler")
    ap.add_argument("--where", action="append", default=[], metavar="AXIS=V",
                    help="keep the points where a grid axis has this value (repeatable), e.g. --where bandwidth_mbps=40")
    ap.add_argument("--pool", action="store_true", help="average over grid axes neither plotted nor fixed (else refused)")
    args = ap.parse_args()
    try:
        df = coinfer.load_sweep(args.sweep)
    except coinfer.CoinferFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for a in (args.devices_axis, args.scheduler_axis):
        if a not in df.columns:
            print(f"error: {args.sweep}: the sweep has no grid axis '{a}' (axes: {', '.join(df.attrs['axes'])})", file=sys.stderr)
            return 2
    df = df[df.ok]
    for w in args.where:
        axis, _, value = w.partition("=")
        if axis not in df.columns:
            print(f"error: --where {w}: the sweep has no grid axis '{axis}'", file=sys.stderr)
            return 2
        df = df[df[axis].astype(str).map(lambda v: v == value or (v.replace(".", "", 1).isdigit() and float(v) == float(value)))]
    # A grid axis the figure neither plots nor fixes would be averaged into every point silently.
    unfixed = [a for a in df.attrs["axes"] if a not in (args.devices_axis, args.scheduler_axis) and df[a].nunique() > 1]
    if unfixed and not args.pool:
        vals = "; ".join(f"{a} ({', '.join(str(v) for v in sorted(df[a].unique()))})" for a in unfixed)
        print(f"error: {args.sweep}: the sweep varies {vals}, which this figure neither plots nor fixes; give --where "
              f"{unfixed[0]}=V, or --pool to average over it", file=sys.stderr)
        return 2
    table = (df.groupby([args.scheduler_axis, args.devices_axis]).throughput_rps.agg(["mean", "std", "count"]).reset_index())
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    fig, ax = plt.subplots(figsize=(3.4, 2.6))
    markers = "osD^v<>"
    for i, (sched, g) in enumerate(table.groupby(args.scheduler_axis)):
        ax.errorbar(g[args.devices_axis], g["mean"], yerr=g["std"].fillna(0), marker=markers[i % len(markers)], ms=4,
                    capsize=2, label=sched, linestyle=["-", "--", ":", "-."][i % 4])
    ax.set_xlabel("devices (Raspberry Pi 4B)")
    ax.set_ylabel("system throughput (req/s)")
    ax.set_xticks(sorted(table[args.devices_axis].unique()))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fixed = ", ".join(args.where)
    pooled = f"; averaged over {', '.join(unfixed)}" if unfixed else ""
    ax.set_title(f"ACE-GNN Fig. 15{' (' + fixed + ')' if fixed else ''}; bars: std over seeds{pooled}", fontsize=7, wrap=True)
    fig.tight_layout()
    fig.savefig(args.out, dpi=150, metadata={"Software": None})
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
