#!/usr/bin/python3
"""Paper-style figures from coinfer outputs (PNG and PDF, deterministic). `coinfer plot` runs this.

usage: /usr/bin/python3 plots/coinfer_plots.py FILE --kind KIND [--out FILE.png] [--x AXIS] [--series AXIS]

kinds (FILE is a sweep's sweep.h5 unless said otherwise):
  latency-vs-bandwidth   mean latency vs link bandwidth, one line per scheduler (ACE-GNN Table III / Fig. 13)
  throughput-vs-devices  system throughput vs number of devices, per scheduler (Figs. 15 and 20)
  throughput-vs-batch    system throughput vs maximum batch size, per scheduler (Fig. 21a)
  energy                 energy per inference per scheduler, bars (Fig. 12)
  timeline               FILE is one run's results.h5: bandwidth, scheme switches and per-request latency (Fig. 10)
Error bars: one standard deviation over the rows averaged into a point (seeds, and any grid axis that
is neither the x axis nor the series). Exit code 2 on a missing file or axis, with the reason.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

KINDS = {
    "latency-vs-bandwidth": ("bandwidth_mbps", "latency_mean_ms", "mean latency (ms)", "link bandwidth (Mbit/s)"),
    "throughput-vs-devices": ("devices", "throughput_rps", "system throughput (req/s)", "devices"),
    "throughput-vs-batch": ("max_batch", "throughput_rps", "system throughput (req/s)", "maximum batch size"),
    "energy": (None, "energy_j_per_inference", "energy per inference (J)", None),
}


class PlotError(Exception):
    pass


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def save(fig, out, pdf=True):
    fig.tight_layout()
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=120, metadata={"Software": None})
    os.replace(tmp, out)
    if pdf:
        p = os.path.splitext(out)[0] + ".pdf"
        fig.savefig(p + ".tmp.pdf", metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
        os.replace(p + ".tmp.pdf", p)
    plt.close(fig)


def sweep_plot(path, kind, out, x_axis, series_axis):
    default_x, metric, ylabel, xlabel = KINDS[kind]
    x_axis = x_axis or default_x
    with h5py.File(path, "r") as f:
        if text(f.attrs.get("format", b"")) != "coinfer-sweep":
            raise PlotError(f"{path}: not a sweep file (format attribute is not coinfer-sweep)")
        axes = [a for a in text(f.attrs["axes"]).split(",") if a]
        ok = f["ok"][:].astype(bool)
        y = f[f"metrics/{metric}"][:]
        grid = {a: [text(v) for v in f[f"grid/{a}"][:]] for a in axes}
        scenario = text(f.attrs["scenario"])
    if series_axis is None:
        series_axis = "scheduler" if "scheduler" in axes and x_axis != "scheduler" else None
    for a in (x_axis, series_axis):
        if a is not None and a not in axes:
            raise PlotError(f"{path}: the sweep has no grid axis '{a}' (axes: {', '.join(axes) or 'none'}); "
                            f"give --x/--series")
    series = sorted(set(grid[series_axis]), key=str) if series_axis else [""]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    if kind == "energy" or x_axis is None:
        cats = series if series_axis else ["all"]
        means, stds = [], []
        for s in cats:
            m = ok & (np.array(grid[series_axis]) == s) if series_axis else ok
            means.append(np.nanmean(y[m]) if m.any() else np.nan)
            stds.append(np.nanstd(y[m]) if m.any() else 0)
        ax.bar(range(len(cats)), means, yerr=stds, capsize=4, color=[plt.get_cmap("tab10")(i % 10) for i in range(len(cats))])
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=20)
    else:
        xs_all = sorted(set(float(v) for v in grid[x_axis]))
        for i, s in enumerate(series):
            xs, means, stds = [], [], []
            for xv in xs_all:
                m = ok & (np.array([float(v) for v in grid[x_axis]]) == xv)
                if series_axis:
                    m &= np.array(grid[series_axis]) == s
                if m.any():
                    xs.append(xv)
                    means.append(np.nanmean(y[m]))
                    stds.append(np.nanstd(y[m]))
            ax.errorbar(xs, means, yerr=stds, marker="o", capsize=3, label=s or None, color=plt.get_cmap("tab10")(i % 10))
        ax.set_xlabel(xlabel if x_axis == default_x else x_axis)
        if kind == "latency-vs-bandwidth":
            ax.set_xscale("log")
        if series_axis:
            ax.legend(fontsize=8, title=series_axis)
    ax.set_ylabel(ylabel)
    ax.set_title(f"{os.path.basename(scenario)}: {kind}", fontsize=10)
    ax.grid(alpha=0.3)
    save(fig, out)


def timeline_plot(path, out):
    with h5py.File(path, "r") as f:
        if text(f.attrs.get("format", b"")) != "coinfer-results":
            raise PlotError(f"{path}: not a results file (format attribute is not coinfer-results)")
        ids = [text(v) for v in f["devices/id"][:]]
        dev, t0, t1, st = (f["requests/device"][:], f["requests/t_created"][:], f["requests/t_result"][:],
                           f["requests/status"][:])
        split = f["requests/split"][:]
        bw_t, bw_d, bw_v = f["bandwidth/t"][:], f["bandwidth/device"][:], f["bandwidth/mbps"][:]
        end = max(float(f.attrs["end_s"]), float(f.attrs["duration_s"]))
        dec_t = f["decisions/t"][:] if "decisions" in f else np.array([])
        dec_sw = f["decisions/switched"][:] if "decisions" in f else np.array([])
        dec_scheme = [text(v) for v in f["decisions/scheme"][:]] if "decisions" in f else []
        scenario = text(f.attrs["scenario"])
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(9, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1.2, 1.2]})
    cm = plt.get_cmap("tab10")
    for d, name in enumerate(ids):
        m = (dev == d) & (st == 0) & np.isfinite(t1)
        if m.any():
            a1.plot(t0[m], (t1[m] - t0[m]) * 1e3, ".", ms=2.5, color=cm(d % 10), label=name)
            a3.plot(t0[m], split[m], "-", lw=1, drawstyle="steps-post", color=cm(d % 10))
        b = bw_d == d
        if b.any():
            a2.step(np.append(bw_t[b], end), np.append(bw_v[b], bw_v[b][-1]), where="post", color=cm(d % 10))
    for t, sw in zip(dec_t, dec_sw):
        for a in (a1, a2, a3):
            a.axvline(t, color="red" if sw else "grey", ls="--" if sw else ":", lw=0.8)
    a1.set_yscale("log")
    a1.set_ylabel("latency (ms)")
    a1.legend(loc="upper left", fontsize=7, markerscale=3)
    a1.set_title(f"{scenario}: latency, bandwidth and scheme switches (red: a decision that switched devices)", fontsize=9)
    a2.set_yscale("log")
    a2.set_ylabel("Mbit/s")
    a3.set_ylabel("split k")
    a3.set_xlabel("simulated time (s)")
    for a in (a1, a2, a3):
        a.grid(alpha=0.3)
    save(fig, out)
    return dec_scheme


def main():
    ap = argparse.ArgumentParser(description="coinfer figures")
    ap.add_argument("file")
    ap.add_argument("--kind", required=True, choices=sorted(list(KINDS) + ["timeline"]))
    ap.add_argument("--out", help="PNG path (a PDF is written beside it); default: <kind>.png beside FILE")
    ap.add_argument("--x", help="grid axis on the x axis (default depends on the kind)")
    ap.add_argument("--series", help="grid axis for one line per value (default: scheduler, if swept)")
    args = ap.parse_args()
    if not os.path.exists(args.file):
        print(f"error: {args.file}: file not found", file=sys.stderr)
        return 2
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.file)), args.kind + ".png")
    try:
        if args.kind == "timeline":
            timeline_plot(args.file, out)
        else:
            sweep_plot(args.file, args.kind, out, args.x, args.series)
    except (PlotError, KeyError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out} and {os.path.splitext(out)[0]}.pdf")
    return 0


if __name__ == "__main__":
    sys.exit(main())
