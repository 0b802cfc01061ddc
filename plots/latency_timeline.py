#!/usr/bin/python3
"""Per-request latency over time, with each device's link bandwidth underneath (ACE-GNN Fig. 10 style).

With more than one server, a third panel shows the server each request went to (by its creation
time), so that a device moved among servers (scheduler.choose_servers) or away from a failed one can
be followed. Failed and dropped requests are crosses along the bottom of the latency panel; handovers
(dashed, "DEVICE -> ACCESS POINT"), server failures and recoveries, joins and leaves are marked.

usage: python3 plots/latency_timeline.py RESULTS.h5 [--out FILE.png] [--pdf]

Reads the results.h5 schema documented in sim/README.md. Deterministic output (fixed style, no dates).
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "coinfer"
import h5py  # noqa: E402
import matplotlib.pyplot as plt
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402


def text(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="results.h5 written by `coinfer run`")
    ap.add_argument("--out", help="output PNG (default: latency_timeline.png beside the results)")
    ap.add_argument("--pdf", action="store_true", help="also write a PDF next to the PNG")
    args = ap.parse_args()
    try:
        f = h5py.File(args.results, "r")
    except OSError as e:
        print(f"error: {args.results}: cannot read HDF5 file ({e})", file=sys.stderr)
        return 2
    with f:
        if f.attrs.get("format") not in (b"coinfer-results", "coinfer-results"):
            print(f"error: {args.results}: not a coinfer results file", file=sys.stderr)
            return 2
        ids = text(f["devices/id"][:])
        server_ids = text(f["servers/id"][:]) if "servers/id" in f else []
        req = f["requests"]
        dev = req["device"][:]
        used_server = req["server"][:]
        created = req["t_created"][:]
        result = req["t_result"][:]
        status = req["status"][:]
        bw_t, bw_dev, bw_mbps = f["bandwidth/t"][:], f["bandwidth/device"][:], f["bandwidth/mbps"][:]
        end_s = float(f.attrs["end_s"])
        duration_s = float(f.attrs["duration_s"])
        ev_t, ev_kind, ev_dev = f["events/t"][:], text(f["events/kind"][:]), text(f["events/device"][:])
        # Handovers: the access point joined; results written before it have no such column.
        ev_ap = text(f["events/access_point"][:]) if "events/access_point" in f else [""] * len(ev_t)
        ev_server = text(f["events/server"][:]) if "events/server" in f else [""] * len(ev_t)
        scenario = f.attrs["scenario"]
        scenario = scenario.decode() if isinstance(scenario, bytes) else str(scenario)

    servers_panel = len(server_ids) > 1
    if servers_panel:
        fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(9, 7.5), sharex=True, gridspec_kw={"height_ratios": [3, 1.4, 1.2]})
    else:
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1.4]})
    # Device colours: tab10 without red, green and grey, which mark server failures, recoveries, joins and leaves.
    palette = [plt.get_cmap("tab10")(i) for i in (0, 1, 4, 5, 6, 8, 9)]

    def colours(i):
        return palette[i % len(palette)]
    left_at = {d: t for t, k, d in zip(ev_t, ev_kind, ev_dev) if k == "leave"}
    styles = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
    bottom = ax1.get_xaxis_transform()  # x in data, y in axes fraction: a failure has no latency to plot
    for d, name in enumerate(ids):
        ok = (dev == d) & (status == 0) & np.isfinite(result)
        ax1.plot(created[ok], (result[ok] - created[ok]) * 1e3, ".", ms=2.5, color=colours(d), label=name)
        bad = (dev == d) & (status != 0)
        if bad.any():
            ax1.plot(created[bad], np.full(bad.sum(), 0.02), "x", color=colours(d), ms=4, transform=bottom)
        if servers_panel:
            went = (dev == d) & (used_server >= 0)
            # Each device a little above or below its server's line, so that devices sharing one stay apart.
            offset = (d % 10 - 4.5) * 0.06
            ax3.plot(created[went], used_server[went] + offset, "|", ms=4, color=colours(d))
        m = bw_dev == d
        if m.any():
            # Its line ends where it leaves; each device its own line style (equal links would hide one another).
            stop = min(left_at.get(name, np.inf), max(end_s, duration_s))
            keep = bw_t[m] <= stop
            if keep.any():
                t = np.append(bw_t[m][keep], stop)
                v = np.append(bw_mbps[m][keep], bw_mbps[m][keep][-1])
                ax2.step(t, v, where="post", color=colours(d), ls=styles[d % len(styles)], label=name)
    for t, k, d, ap, sv in zip(ev_t, ev_kind, ev_dev, ev_ap, ev_server):
        if k in ("leave", "join"):
            ax1.axvline(t, color="grey", ls=":", lw=0.8)
            ax1.annotate(f"{d} {k}s", (t, 0.97), xycoords=("data", "axes fraction"), fontsize=7, rotation=90, va="top")
        elif k == "handover":
            d_index = ids.index(d) if d in ids else 0
            for ax in (ax1, ax2):
                ax.axvline(t, color=colours(d_index), ls="--", lw=0.8)
            ax1.annotate(f"{d} -> {ap}", (t, 0.97), xycoords=("data", "axes fraction"), fontsize=7, rotation=90, va="top")
        elif k in ("fail", "recover"):
            for ax in (ax1, ax3) if servers_panel else (ax1,):
                ax.axvline(t, color="red" if k == "fail" else "green", ls="-.", lw=0.8)
            ax1.annotate(f"{sv} {k}", (t, 0.97), xycoords=("data", "axes fraction"), fontsize=7, rotation=90, va="top")
    ax1.set_ylabel("latency (ms)")
    ax1.set_yscale("log")
    ax1.set_title(f"{scenario}: per-request latency (created time on x)")
    ax1.legend(loc="upper left", fontsize=8, markerscale=3)
    ax1.grid(alpha=0.3)
    ax2.set_ylabel("link (Mbit/s)")
    ax2.set_xlabel("simulated time (s)")
    ax2.set_yscale("log")
    # Plain numbers on the log axes (1, 2, 5, 10, ...), not 2x10^1.
    for ax in (ax1, ax2):
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if len(ids) > 1:
        ax2.legend(loc="lower left", fontsize=7, ncol=min(6, len(ids)))
    ax2.grid(alpha=0.3)
    if servers_panel:
        ax2.set_xlabel("")
        ax3.set_yticks(range(len(server_ids)))
        ax3.set_yticklabels(server_ids, fontsize=8)
        ax3.set_ylim(-0.6, len(server_ids) - 0.4)
        ax3.set_ylabel("server")
        ax3.set_xlabel("simulated time (s)")
        ax3.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.results)), "latency_timeline.png")
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=120, metadata={"Software": None})
    os.replace(tmp, out)
    if args.pdf:
        pdf = os.path.splitext(out)[0] + ".pdf"
        fig.savefig(pdf + ".tmp.pdf", metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None})
        os.replace(pdf + ".tmp.pdf", pdf)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
