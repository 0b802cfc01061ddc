#!/usr/bin/python3
"""Paper-style figures from coinfer outputs (PNG and PDF, deterministic). `coinfer plot` runs this.

usage: /usr/bin/python3 plots/coinfer_plots.py FILE --kind KIND [--out FILE.png] [--x AXIS] [--series AXIS]

kinds (FILE is a sweep's sweep.h5 unless said otherwise):
  latency-vs-bandwidth   mean latency vs link bandwidth, one line per scheduler (ACE-GNN Table III / Fig. 13)
  throughput-vs-devices  system throughput vs number of devices, per scheduler (Figs. 15 and 20)
  throughput-vs-batch    system throughput vs maximum batch size, per scheduler (Fig. 21a)
  energy                 energy per inference per scheduler, bars (Fig. 12)
  timeline               FILE is one run's results.h5: bandwidth, scheme switches and per-request latency (Fig. 10)
  predictor-accuracy     FILE is `coinfer predictor eval --json` output: per estimator, the share of samples
                         within 10 % and 20 % and the pairwise ranking accuracy, bars (ACE-GNN Fig. 18)
  learning-curve         FILE is a `coinfer train sac` POLICY.learning.csv: episode return and throughput
                         (points per episode, a moving mean of 10), temperature, against episodes and wall time
Each point is the mean over the rows it pools: its seeds and every grid axis that is neither the x
axis, the series, nor fixed by --where AXIS=V; the figure says so in its bottom line; error bars are one
standard deviation. Series get distinct markers, line styles and a small sideways offset, so
coinciding lines stay visible; swept values are the x ticks (integers without ".0"); legends in numeric
order. --style paper sizes for one column of a two-column paper. Writes PNG (with a JSON description of
titles, labels, legend and aggregation in its metadata), PDF and SVG. Exit code 2 on a missing file,
axis or value, with the reason.
"""
import argparse
import math
import os
import textwrap
import sys

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

KINDS = {
    "latency-vs-bandwidth": ("bandwidth_mbps", "latency_mean_ms", "mean latency (ms)", "link bandwidth (Mbit/s)"),
    "throughput-vs-devices": ("devices", "throughput_rps", "system throughput (req/s)", "devices"),
    "throughput-vs-batch": ("max_batch", "throughput_rps", "system throughput (req/s)", "maximum batch size"),
    "energy": (None, "energy_j_per_inference", "energy per inference (J)", None),
}
# Axes whose values are counts: integer ticks.
COUNT_AXES = {"devices", "max_batch", "workers", "seed"}
MARKERS = ["o", "s", "D", "^", "v", "<", ">", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
# --style paper: one column of a two-column paper (3.4 in wide), 8 pt text.
STYLES = {
    "screen": {"figsize": (6.4, 4.2), "timeline_figsize": (9, 7), "rc": {"font.size": 10}},
    "paper": {"figsize": (3.4, 2.4), "timeline_figsize": (7.0, 5.2),
              "rc": {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "legend.fontsize": 7, "xtick.labelsize": 7,
                     "ytick.labelsize": 7, "lines.linewidth": 1.0, "lines.markersize": 4, "font.family": "serif"}},
}


class PlotError(Exception):
    pass


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def fmt_value(v):
    """A swept value as people write it: 5 not 5.0, 0.5 as is."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):  # a tick matplotlib asks about at an axis' infinite end
        return f"{f:g}"
    return str(int(f)) if f == int(f) else f"{f:g}"


def is_number(v):
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def sort_values(values):
    """Numeric order when every value is a number (1, 5, 20, 100), else text order."""
    vals = list(set(values))
    return sorted(vals, key=float) if all(is_number(v) for v in vals) else sorted(vals, key=str)


def clipped_texts(fig):
    """Every piece of text that reaches beyond the figure's edges (and so is cut off in the saved image),
    measured with the renderer: titles, axis labels, drawn tick labels, legends and the figure's own
    texts (the caption). Returns short descriptions; [] when nothing is clipped."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    fb = fig.bbox
    out = []

    def check(what, bb):
        if bb is None or bb.width == 0 or bb.height == 0:
            return
        if bb.x0 < fb.x0 - 0.5 or bb.x1 > fb.x1 + 0.5 or bb.y0 < fb.y0 - 0.5 or bb.y1 > fb.y1 + 0.5:
            out.append(what)
    for i, ax in enumerate(fig.axes):
        for name, t in (("title", ax.title), ("xlabel", ax.xaxis.label), ("ylabel", ax.yaxis.label)):
            if t.get_visible() and t.get_text().strip():
                check(f"axes {i} {name}: {t.get_text()[:50]!r}", t.get_window_extent(r))
        for name, axis in (("x tick labels", ax.xaxis), ("y tick labels", ax.yaxis)):
            check(f"axes {i} {name}", axis.get_tightbbox(r))
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            check(f"axes {i} legend", leg.get_window_extent(r))
    for t in fig.texts:
        if t.get_visible() and t.get_text().strip():
            check(f"figure text: {t.get_text()[:50]!r}", t.get_window_extent(r))
    if fig._suptitle is not None and fig._suptitle.get_text().strip():
        check(f"suptitle: {fig._suptitle.get_text()[:50]!r}", fig._suptitle.get_window_extent(r))
    return out


def wrap_to_width(fig, artist, words, max_px):
    """Sets `artist`'s text to `words`, wrapped so that its rendered width fits max_px (pixels)."""
    r = fig.canvas.get_renderer()
    artist._coinfer_words = words  # the unwrapped text, for fit_titles()
    artist.set_text(words)
    width = max(10, len(words))
    for _ in range(12):
        if artist.get_window_extent(r).width <= max_px or width <= 10:
            break
        width = max(10, int(width * max_px / artist.get_window_extent(r).width * 0.97))
        artist.set_text("\n".join(textwrap.wrap(words, width)))


def fit_titles(fig):
    """Wraps every axes title to fit the figure: a title is centred over its axes, so it may be at most
    twice as wide as the distance from the axes' centre to the nearer edge of the figure."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    for ax in fig.axes:
        t = ax.title
        words = getattr(t, "_coinfer_words", None) or " ".join(t.get_text().split("\n"))
        if not words.strip():
            continue
        box = ax.get_window_extent(r)
        centre = (box.x0 + box.x1) / 2
        wrap_to_width(fig, t, words, 2 * min(centre - fig.bbox.x0, fig.bbox.x1 - centre) * 0.97)


def caption(fig, words, style):
    """The figure's caption (what each point averages over), once, at the bottom, wrapped to the
    figure's width. Returns the fraction of the figure's height it takes (for the layout's rect)."""
    t = fig.text(0.01, 0.005, words, fontsize=6 if style == "paper" else 7, color="0.35", ha="left", va="bottom")
    fig.canvas.draw()
    wrap_to_width(fig, t, words, fig.bbox.width * 0.98)
    return (t.get_window_extent(fig.canvas.get_renderer()).height + 4) / fig.bbox.height


def save(fig, out, describe, rect=(0, 0, 1, 1)):
    """PNG (with the figure's description as metadata: title, axis labels, legend, ticks, aggregation,
    and any text that the figure's edges cut off), PDF and SVG beside it; deterministic bytes. The
    layout leaves `rect` (figure fractions) for the axes: the caption sits below it."""
    fig.tight_layout(rect=rect)
    fit_titles(fig)
    fig.tight_layout(rect=rect)
    import json
    describe = dict(describe)
    describe["clipped"] = clipped_texts(fig)  # draws the figure: tick labels are known from here on

    def tick_labels(ax):
        lo, hi = sorted(ax.get_ylim())
        return [t.get_text() for t, v in zip(ax.get_yticklabels(), ax.get_yticks()) if lo <= v <= hi and t.get_text()]
    describe["ytick_labels"] = [tick_labels(ax) for ax in fig.axes]
    if describe["clipped"]:
        print(f"warning: {out}: text cut off by the figure's edges: {'; '.join(describe['clipped'])}", file=sys.stderr)
    meta = {"Software": None, "Description": json.dumps(describe, sort_keys=True), "Title": describe.get("title", "")}
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=150, metadata=meta)
    os.replace(tmp, out)
    base = os.path.splitext(out)[0]
    fig.savefig(base + ".tmp.pdf", metadata={"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None,
                                              "Title": describe.get("title", "")}, format="pdf")
    os.replace(base + ".tmp.pdf", base + ".pdf")
    fig.savefig(base + ".tmp.svg", metadata={"Date": None, "Creator": None, "Title": describe.get("title", "")}, format="svg")
    os.replace(base + ".tmp.svg", base + ".svg")
    plt.close(fig)


def plain_log_ticks(axis):
    """A log axis labelled with plain numbers (1, 2, 5, 10, 20, ...), not 2x10^1."""
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: fmt_value(v)))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


# What a grid axis is called in a figure when the sweep recorded no words for it (its label is then
# "NAME (KEY.PATH)", the key, not words).
AXIS_WORDS = {"scheduler": "scheduler", "max_batch": "maximum batch size", "window_ms": "batch window (ms)",
              "workers": "server workers", "devices": "devices", "bandwidth_mbps": "link bandwidth (Mbit/s)"}


def axis_words(axis, labels):
    """The words for a grid axis: the sweep's recorded label (sweep.json / sweep.h5 axis_labels), or a
    plain name for the common axes."""
    lab = labels.get(axis, "")
    if lab and not lab.startswith(axis + " (") and lab != axis:
        return lab
    return AXIS_WORDS.get(axis, axis)


def parse_where(where, axes, grid, path):
    """--where AXIS=V[,V...] filters: returns {axis: set of values as in the grid}."""
    fixed = {}
    for w in where or []:
        if "=" not in w:
            raise PlotError(f"--where {w}: expected AXIS=VALUE[,VALUE...]")
        a, v = w.split("=", 1)
        if a not in axes:
            raise PlotError(f"{path}: --where {w}: the sweep has no grid axis '{a}' (axes: {', '.join(axes) or 'none'})")
        want = v.split(",")
        have = set(grid[a])
        chosen = set()
        for x in want:
            match = [h for h in have if h == x or (is_number(h) and is_number(x) and float(h) == float(x))]
            if not match:
                raise PlotError(f"{path}: --where {w}: '{x}' is not a value of {a} (values: {', '.join(fmt_value(h) for h in sort_values(have))})")
            chosen.update(match)
        fixed[a] = chosen
    return fixed


def sweep_plot(path, kind, out, x_axis, series_axis, where, style, pool=False, logy=False, ylim=None):
    default_x, metric, ylabel, xlabel = KINDS[kind]
    x_axis = x_axis or default_x
    with h5py.File(path, "r") as f:
        if text(f.attrs.get("format", b"")) != "coinfer-sweep":
            raise PlotError(f"{path}: not a sweep file (format attribute is not coinfer-sweep)")
        axes = [a for a in text(f.attrs["axes"]).split(",") if a]
        ok = f["ok"][:].astype(bool)
        y = f[f"metrics/{metric}"][:]
        # Points whose run was saturated (sweep schema 3; older sweeps: none known).
        saturated = f["metrics/saturated"][:].astype(bool) if "metrics/saturated" in f else np.zeros(len(ok), bool)
        grid = {a: [fmt_value(text(v)) if is_number(text(v)) else text(v) for v in f[f"grid/{a}"][:]] for a in axes}
        seeds = f["seed"][:]
        scenario = text(f.attrs["scenario"])
        # What each axis varies on this scenario, in the sweep's words (older sweeps: none).
        labels = dict(zip(axes, text(f.attrs["axis_labels"]).split("\n"))) if "axis_labels" in f.attrs else {}
    if series_axis is None:
        series_axis = "scheduler" if "scheduler" in axes and x_axis != "scheduler" else None
    for a in (x_axis, series_axis):
        if a is not None and a not in axes:
            raise PlotError(f"{path}: the sweep has no grid axis '{a}' (axes: {', '.join(axes) or 'none'}); give --x/--series")
    fixed = parse_where(where, axes, grid, path)
    keep = ok.copy()
    for a, vals in fixed.items():
        keep &= np.array([g in vals for g in grid[a]])
    if not keep.any():
        raise PlotError(f"{path}: no completed point left after --where {' '.join(where or [])}")
    # What each point averages over: the seeds and every axis that is neither plotted nor fixed.
    pooled = [a for a in axes if a not in (x_axis, series_axis) and not (a in fixed and len(fixed[a]) == 1)]
    # Averaging over an axis the figure does not show mixes different systems into one point
    # (the README's throughput-vs-devices averaged 1-100 Mbit/s): refused unless asked for.
    varied = [a for a in pooled if len(set(np.array(grid[a])[keep])) > 1]
    if varied and not pool:
        def vals(a):
            return ", ".join(fmt_value(v) for v in sort_values(list(set(np.array(grid[a])[keep]))))
        raise PlotError(f"{path}: the sweep varies {'; '.join(f'{a} ({vals(a)})' for a in varied)}, which this figure neither plots "
                        f"nor fixes: each point would average over {'it' if len(varied) == 1 else 'them'}. Fix a value "
                        f"(--where {varied[0]}=V), plot it (--x or --series {varied[0]}), or pass --pool to average over it")
    pooled_text = [f"{a} in {{{', '.join(fmt_value(v) for v in sort_values([grid[a][i] for i in np.flatnonzero(keep)]))}}}"
                   for a in pooled]
    n_seeds = len(set(seeds[keep]))
    agg = f"points: mean over {n_seeds} seed{'s' if n_seeds != 1 else ''}"
    if pooled_text:
        agg += " and " + "; ".join(pooled_text)
    agg += "; bars: 1 standard deviation over " + ("the seeds" if not pooled_text else "all pooled points")
    fixed_text = ", ".join(f"{a}={'/'.join(fmt_value(v) for v in sort_values(vs))}" for a, vs in fixed.items())
    fixed_words = ", ".join(f"{axis_words(a, labels)}: {'/'.join(fmt_value(v) for v in sort_values(vs))}" for a, vs in fixed.items())
    sat_points = 0
    st = STYLES[style]
    series = sort_values(np.array(grid[series_axis])[keep]) if series_axis else [""]
    fig, ax = plt.subplots(figsize=st["figsize"])
    legend, ticks = [], []
    if kind == "energy" or x_axis is None:
        cats = series if series_axis else ["all"]
        means, stds = [], []
        for s in cats:
            m = keep & (np.array(grid[series_axis]) == s) if series_axis else keep
            means.append(np.nanmean(y[m]) if m.any() else np.nan)
            stds.append(np.nanstd(y[m]) if m.any() else 0)
        sat = [bool((saturated & (keep & (np.array(grid[series_axis]) == c) if series_axis else keep)).any()) for c in cats]
        bars = ax.bar(range(len(cats)), means, yerr=stds, capsize=3, color=[plt.get_cmap("tab10")(i % 10) for i in range(len(cats))],
                      hatch=None)
        for b, sflag in zip(bars, sat):
            if sflag:  # a bar over a saturated run: hatched, and said in the legend
                b.set_hatch("//")
                b.set_edgecolor("0.15")
        sat_points = sum(sat)
        if sat_points:
            ax.bar([0], [0], color="white", edgecolor="0.15", hatch="//", label="saturated run (queues grew)")
            ax.legend(fontsize="small")
            legend.append("saturated run (queues grew)")
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels([fmt_value(c) for c in cats], rotation=20)
        ticks = [fmt_value(c) for c in cats]
        ax.set_xlabel(axis_words(series_axis, labels) if series_axis else "")
    else:
        xgrid = np.array([float(v) if is_number(v) else np.nan for v in grid[x_axis]])
        if np.isnan(xgrid).any():
            raise PlotError(f"{path}: axis '{x_axis}' has non-numeric values; use it as --series, not --x")
        xs_all = sorted(set(xgrid[keep]))
        log_x = kind == "latency-vs-bandwidth" and min(xs_all) > 0 and max(xs_all) / min(xs_all) >= 20
        # Series that coincide stay visible: each gets its own marker and line style, and a small
        # sideways offset (a fraction of the gap between x values, in log space for log axes).
        nser = len(series)
        for i, sname in enumerate(series):
            xs, means, stds, sat = [], [], [], []
            for xv in xs_all:
                m = keep & (xgrid == xv)
                if series_axis:
                    m &= np.array(grid[series_axis]) == sname
                if m.any():
                    xs.append(xv)
                    means.append(np.nanmean(y[m]))
                    stds.append(np.nanstd(y[m]))
                    sat.append(bool(saturated[m].any()))
            if not xs:
                continue
            off = (i - (nser - 1) / 2) * 0.06 / max(1, nser)
            if log_x:
                xd = [x * (10 ** (off * np.log10(max(xs_all) / min(xs_all) if len(xs_all) > 1 else 10))) for x in xs]
            else:
                span = (max(xs_all) - min(xs_all)) if len(xs_all) > 1 else 1.0
                xd = [x + off * span for x in xs]
            label = fmt_value(sname) if series_axis else None
            ax.errorbar(xd, means, yerr=stds, marker=MARKERS[i % len(MARKERS)], linestyle=LINESTYLES[i % len(LINESTYLES)],
                        capsize=2, label=label, color=plt.get_cmap("tab10")(i % 10), markerfacecolor="none" if i % 2 else None)
            if label:
                legend.append(label)
            # A point over a saturated run (its queues grew: core/metrics.hpp) is ringed.
            ring = [(x, v) for x, v, sflag in zip(xd, means, sat) if sflag]
            if ring:
                sat_points += len(ring)
                ax.plot([r[0] for r in ring], [r[1] for r in ring], "o", ms=11, mfc="none", mec="0.15", mew=1.0, ls="none",
                        label="saturated run (queues grew)" if sat_points == len(ring) else None, zorder=5)
        ax.set_xlabel(labels.get(x_axis) if labels.get(x_axis) and not labels.get(x_axis).startswith(x_axis + " (")
                      else (xlabel if x_axis == default_x else axis_words(x_axis, labels)))
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        # The swept values are the ticks (integers for counts, no ".0").
        ax.set_xticks(xs_all)
        ticks = [fmt_value(v) for v in xs_all]
        ax.set_xticklabels(ticks)
        if sat_points:
            legend.append("saturated run (queues grew)")
        if (series_axis and legend) or sat_points:
            ax.legend(title=axis_words(series_axis, labels) if series_axis else None, fontsize="small", title_fontsize="small")
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)
    if ylim:
        ax.set_ylim(*ylim)
    # The title says what is plotted, in the sweep's words, and what is held fixed; the caption (once, at
    # the bottom) what each point averages over; the scenario is in the caption too.
    what = ylabel[0].upper() + ylabel[1:]
    title = what + (" vs " + ax.get_xlabel() if x_axis is not None and kind != "energy" else " per " + (axis_words(series_axis, labels) if series_axis else "run"))
    if fixed_words:
        title += "; " + fixed_words
    agg = f"{os.path.basename(scenario)}: " + agg
    if sat_points:
        agg += "; ringed/hatched: a saturated run, whose queues grew over the measurement window"
    t = ax.set_title(title, fontsize="medium")
    ax.grid(alpha=0.3)
    bottom = caption(fig, agg, style)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    wrap_to_width(fig, t, title, fig.bbox.width * 0.96)
    save(fig, out, {"kind": kind, "title": title, "xlabel": ax.get_xlabel(), "ylabel": ylabel, "legend": legend,
                    "legend_title": axis_words(series_axis, labels) if series_axis else "", "xticks": ticks, "aggregation": agg,
                    "caption": agg, "where": fixed_text, "saturated_points": sat_points,
                    "xscale": ax.get_xscale(), "yscale": ax.get_yscale(), "ylim": list(ax.get_ylim()) if ylim else None,
                    "pooled": varied, "style": style}, rect=(0, bottom, 1, 1))


def timeline_plot(path, out, style):
    with h5py.File(path, "r") as f:
        if text(f.attrs.get("format", b"")) != "coinfer-results":
            raise PlotError(f"{path}: not a results file (format attribute is not coinfer-results)")
        ids = [text(v) for v in f["devices/id"][:]]
        dev, t0, t1, st = (f["requests/device"][:], f["requests/t_created"][:], f["requests/t_result"][:],
                           f["requests/status"][:])
        split = f["requests/split"][:]
        strategy = [text(v) for v in f["requests/strategy"][:]]
        bw_t, bw_d, bw_v = f["bandwidth/t"][:], f["bandwidth/device"][:], f["bandwidth/mbps"][:]
        end = max(float(f.attrs["end_s"]), float(f.attrs["duration_s"]))
        duration = float(f.attrs["duration_s"])
        warmup = float(f.attrs.get("warmup_s", 0))
        dec_t = f["decisions/t"][:] if "decisions" in f else np.array([])
        dec_sw = f["decisions/switched"][:] if "decisions" in f else np.array([])
        dec_scheme = [text(v) for v in f["decisions/scheme"][:]] if "decisions" in f else []
        scenario = text(f.attrs["scenario"])
        testbed = text(f.attrs.get("service_time", "")) == "measured"
        ev_kind = [text(v) for v in f["events/kind"][:]] if "events/kind" in f else []
        ev_t = f["events/t"][:] if ev_kind else np.array([])
        ev_dev = [text(v) for v in f["events/device"][:]] if ev_kind else []
        ev_val = f["events/value"][:] if ev_kind else np.array([])
        ev_srv = [text(v) for v in f["events/server"][:]] if ev_kind and "events/server" in f else [""] * len(ev_kind)
        ev_ap = [text(v) for v in f["events/access_point"][:]] if ev_kind and "events/access_point" in f else [""] * len(ev_kind)
        server_ids = [text(v) for v in f["servers/id"][:]] if "servers/id" in f else []
        used = f["requests/server"][:]
        cloud = f["requests/cloud"][:] if "requests/cloud" in f else np.full(len(dev), -1)
    stl = STYLES[style]
    # With several servers a fourth panel: the server each request went to (scheduler.choose_servers,
    # failover), by its creation time.
    servers_panel = len(server_ids) > 1
    if servers_panel:
        w, h = stl["timeline_figsize"]
        fig, (a1, a2, a3, a4) = plt.subplots(4, 1, figsize=(w, h * 1.2), sharex=True, gridspec_kw={"height_ratios": [3, 1.2, 1.4, 1.1]})
        panels = (a1, a2, a3, a4)
    else:
        fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=stl["timeline_figsize"], sharex=True, gridspec_kw={"height_ratios": [3, 1.2, 1.4]})
        panels = (a1, a2, a3)
    # Device colours: tab10 without its red and grey, which mark decisions (red: switched, grey: not).
    palette = [plt.get_cmap("tab10")(i) for i in (0, 1, 2, 4, 5, 6, 8, 9)]

    def cm(i):
        return palette[i % len(palette)]
    # A device's bandwidth line ends where it leaves (events kind leave), not at the run's end.
    left_at = {}
    for k, dn, t in zip(ev_kind, ev_dev, ev_t):
        if k == "leave" and dn not in left_at:
            left_at[dn] = min(float(t), end)
    legend, bw_legend = [], []
    for d, name in enumerate(ids):
        m = (dev == d) & (st == 0) & np.isfinite(t1)
        if m.any():
            a1.plot(t0[m], (t1[m] - t0[m]) * 1e3, MARKERS[d % len(MARKERS)], ms=2, color=cm(d), label=name, linestyle="none")
            legend.append(name)
            # Where each request ran: the fraction of the model on the device (split / n per request
            # would comb between 0 and 1 for data_parallel); drawn as dots, one row of them per device.
            a3.plot(t0[m], split[m], MARKERS[d % len(MARKERS)], ms=1.5, color=cm(d), linestyle="none")
        if servers_panel:
            went = (dev == d) & (used >= 0)
            # Each device a little above or below its server's line, so that devices sharing one stay apart.
            a4.plot(t0[went], used[went] + (d % 10 - 4.5) * 0.06, "|", ms=3, color=cm(d), linestyle="none")
            # A cloud tier (pp(k,m)): its cloud part on the cloud's row, as an x.
            up = (dev == d) & (cloud >= 0)
            if up.any():
                a4.plot(t0[up], cloud[up] + (d % 10 - 4.5) * 0.06, "x", ms=2.5, color=cm(d), linestyle="none")
        b = bw_d == d
        if b.any():
            stop = left_at.get(name, end)
            keep_t = bw_t[b] <= stop
            ts, vs = bw_t[b][keep_t], bw_v[b][keep_t]
            if len(ts):
                # Devices on equal links would hide one another: each its own line style, and a legend.
                a2.step(np.append(ts, stop), np.append(vs, vs[-1]), where="post", color=cm(d),
                        ls=LINESTYLES[d % len(LINESTYLES)], lw=1.0, label=name)
                bw_legend.append(name)
    # Background load (events[].load): each loaded device's share over time, on a second axis of the
    # bandwidth panel (dashed, its colour).
    loaded = sorted({d for k, d in zip(ev_kind, ev_dev) if k == "load"})
    if loaded:
        a2b = a2.twinx()
        for name in loaded:
            d = ids.index(name) if name in ids else 0
            pts = [(0.0, 0.0)] + [(float(t), float(v)) for k, dn, t, v in zip(ev_kind, ev_dev, ev_t, ev_val) if k == "load" and dn == name]
            xs = [p[0] for p in pts] + [end]
            ys = [p[1] for p in pts] + [pts[-1][1]]
            a2b.step(xs, ys, where="post", color=cm(d), ls="--", lw=1)
        a2b.set_ylim(0, 1)
        a2b.set_ylabel("load (dashed)", fontsize="x-small")
    # Servers down (events fail/recover): a hatched band per outage on the latency panel.
    outages, down_since = [], {}
    for k, sv, t in zip(ev_kind, ev_srv, ev_t):
        if k == "fail":
            down_since[sv] = float(t)
        elif k == "recover" and sv in down_since:
            outages.append((sv, down_since.pop(sv), float(t)))
    outages += [(sv, t0_, end) for sv, t0_ in down_since.items()]
    outages = [(sv, a, min(b, end)) for sv, a, b in outages if a < end]  # those after the run's end were never seen
    for sv, a, b in outages:
        a1.axvspan(a, b, color="tab:red", alpha=0.12, hatch="//", zorder=0)
        a1.annotate(f"{sv} down", (a, 0.02), xycoords=("data", "axes fraction"), fontsize=6, rotation=90, va="bottom")
    # Handovers between access points (mobility): a dash-dot line in the device's colour on the latency
    # and bandwidth panels, labelled "DEVICE -> ACCESS POINT".
    handovers = [(float(t), dn, ap) for k, dn, t, ap in zip(ev_kind, ev_dev, ev_t, ev_ap) if k == "handover" and t <= end]
    for t, dn, ap in handovers:
        d = ids.index(dn) if dn in ids else 0
        for a in (a1, a2):
            a.axvline(t, color=cm(d), ls="-.", lw=0.7)
        a1.annotate(f"{dn} -> {ap}", (t, 0.98), xycoords=("data", "axes fraction"), fontsize=5, rotation=90, va="top")
    shown = 0
    for t, sw in zip(dec_t, dec_sw):
        if t > end:  # a decision after the run's end is not part of the run
            continue
        shown += 1
        for a in panels:
            a.axvline(t, color="red" if sw else "grey", ls="--" if sw else ":", lw=0.8)
    for a in panels:
        if warmup > 0:
            a.axvspan(0, warmup, color="0.9", zorder=0)
        a.axvline(duration, color="0.4", lw=0.8)
        a.grid(alpha=0.3)
    a1.set_yscale("log")
    a1.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: fmt_value(v)))
    a1.set_ylabel("latency (ms)")
    a1.legend(loc="upper left", fontsize="x-small", markerscale=3, ncol=max(1, min(4, len(legend) // 6 + 1)))
    title = (f"{scenario}: latency, bandwidth{', background load (dashed)' if loaded else ''} and scheme switches (red: a decision that switched devices; "
             f"grey band: warm-up, not counted{'; hatched: a server down' if outages else ''})")
    tt = a1.set_title(title, fontsize="small")
    a2.set_yscale("log")
    plain_log_ticks(a2.yaxis)
    a2.set_ylabel("Mbit/s")
    if len(bw_legend) > 1:
        a2.legend(loc="lower left", fontsize="xx-small", ncol=max(1, min(6, len(bw_legend) // 3 + 1)))
    a3.set_ylabel("split k\n(stages on device)")
    # The split is a whole number of stages: integer ticks, never 2.95 .. 3.05 for a constant split.
    a3.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    a3.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: fmt_value(v)))
    done = np.isfinite(t1) & (st == 0)
    if done.any():
        lo, hi = int(np.min(split[done])), int(np.max(split[done]))
        a3.set_ylim(lo - 0.5, hi + 0.5)
    xlabel = "time since the testbed's time zero (s)" if testbed else "simulated time (s)"
    if servers_panel:
        for sv, a, b in outages:
            a4.axvspan(a, b, color="tab:red", alpha=0.12, hatch="//", zorder=0)
        a4.set_yticks(range(len(server_ids)))
        a4.set_yticklabels(server_ids, fontsize="x-small")
        a4.set_ylim(-0.6, len(server_ids) - 0.4)
        a4.set_ylabel("server" + (" (x: cloud part)" if (cloud >= 0).any() else ""))
    panels[-1].set_xlabel(xlabel)
    fig.tight_layout()
    wrap_to_width(fig, tt, title, fig.bbox.width * 0.96)
    save(fig, out, {"kind": "timeline", "title": title, "bandwidth_legend": bw_legend, "left_at": left_at, "xlabel": xlabel, "ylabel": "latency (ms)", "legend": legend,
                    "decisions_drawn": shown, "warmup_s": warmup, "testbed": testbed, "style": style, "loaded_devices": loaded,
                    "server_outages": [[sv, a, b] for sv, a, b in outages], "handovers": len(handovers),
                    "servers_panel": servers_panel, "cloud_requests": int((cloud >= 0).sum())})
    return dec_scheme


def predictor_plot(path, out, style):
    """ACE-GNN Fig. 18: accuracy of each estimator (grouped bars) from `coinfer predictor eval --json`."""
    import json
    try:
        d = json.load(open(path))
        rows = d["rows"]
    except (ValueError, KeyError, TypeError) as e:
        raise PlotError(f"{path}: not the JSON of coinfer predictor eval ({e})")
    if not rows:
        raise PlotError(f"{path}: no estimator rows")
    metrics = [("within_10", "within 10 %"), ("within_20", "within 20 %"), ("pairwise", "pairwise ranking")]
    fig, ax = plt.subplots(figsize=STYLES[style]["figsize"])
    width = 0.8 / len(rows)
    hatches = ["", "//", "..", "xx", "\\\\", "--"]
    legend = []
    for i, r in enumerate(rows):
        vals = [100 * r[m] if r[m] is not None and r[m] == r[m] else 0 for m, _ in metrics]
        xs = [k + (i - (len(rows) - 1) / 2) * width for k in range(len(metrics))]
        ax.bar(xs, vals, width, label=r["estimator"], hatch=hatches[i % len(hatches)], edgecolor="black", linewidth=0.5)
        legend.append(r["estimator"])
    ax.set_xticks(range(len(metrics)))
    ax.set_xticklabels([label for _, label in metrics])
    ax.set_ylabel("share of samples / pairs (%)")
    ax.set_ylim(0, 105)
    title = f"predictor accuracy: {d.get('samples', '?')} samples, {d.get('pairs', '?')} pairs"
    ax.set_title(title)
    ax.legend(fontsize="small", loc="lower right")
    save(fig, out, {"kind": "predictor-accuracy", "title": title, "ylabel": "share of samples / pairs (%)", "legend": legend,
                    "style": style})


def learning_plot(path, out, style):
    """SAC learning curves from POLICY.learning.csv (coinfer train sac)."""
    import csv
    try:
        rows = list(csv.DictReader(open(path)))
        ep = np.array([int(r["episode"]) for r in rows])
        ret = np.array([float(r["return"]) for r in rows])
        thr = np.array([float(r["throughput_rps"]) for r in rows])
        alpha = np.array([float(r["alpha"]) for r in rows])
        wall = np.array([float(r["wall_s"]) for r in rows])
        scen = [r["scenario"] for r in rows]
    except (KeyError, ValueError, TypeError) as e:
        raise PlotError(f"{path}: not a learning curve of coinfer train sac ({e})")
    if len(rows) == 0:
        raise PlotError(f"{path}: no episodes")
    w, h = STYLES[style]["figsize"]
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(w, h * 1.8), sharex=True)

    def moving(y, n=10):
        return np.array([y[max(0, i - n + 1):i + 1].mean() for i in range(len(y))])

    legend = []
    for name in sort_values(scen):
        m = np.array([s == name for s in scen])
        a1.plot(ep[m], ret[m], ".", alpha=0.4)
        a1.plot(ep[m], moving(ret[m]), "-", label=name)
        a2.plot(ep[m], thr[m], ".", alpha=0.4)
        a2.plot(ep[m], moving(thr[m]), "-", label=name)
        legend.append(name)
    a1.set_ylabel("episode return")
    a2.set_ylabel("throughput (req/s)\nwhile exploring")
    a3.plot(ep, alpha, "-k")
    a3.set_ylabel("temperature α")
    a3.set_xlabel("episode")
    a1.legend(fontsize="small")
    top = a1.secondary_xaxis("top", functions=(lambda e: np.interp(e, ep, wall), lambda t: np.interp(t, wall, ep)))
    top.set_xlabel("wall time (s)")
    title = f"SAC training: {len(rows)} episodes, {wall[-1]:.0f} s"
    fig.suptitle(title)
    save(fig, out, {"kind": "learning-curve", "title": title, "xlabel": "episode", "ylabel": "episode return", "legend": legend,
                    "episodes": int(len(rows)), "style": style})


def main():
    ap = argparse.ArgumentParser(description="coinfer figures")
    ap.add_argument("file")
    ap.add_argument("--kind", required=True, choices=sorted(list(KINDS) + ["timeline", "predictor-accuracy", "learning-curve"]))
    ap.add_argument("--out", help="PNG path (a PDF is written beside it); default: <kind>.png beside FILE")
    ap.add_argument("--x", help="grid axis on the x axis (default depends on the kind)")
    ap.add_argument("--series", help="grid axis for one line per value (default: scheduler, if swept)")
    ap.add_argument("--where", action="append", default=[], help="AXIS=V[,V...]: keep only these values of a grid axis (repeatable)")
    ap.add_argument("--style", choices=sorted(STYLES), default="screen", help="paper: one column of a two-column paper")
    ap.add_argument("--pool", action="store_true", help="average over grid axes the figure neither plots nor fixes (else refused)")
    ap.add_argument("--logy", action="store_true", help="logarithmic y axis")
    ap.add_argument("--ylim", help="LO,HI: the y axis range")
    args = ap.parse_args()
    ylim = None
    if args.ylim:
        try:
            ylim = [float(v) for v in args.ylim.split(",")]
            if len(ylim) != 2 or not ylim[0] < ylim[1]:
                raise ValueError
        except ValueError:
            print(f"error: --ylim {args.ylim}: expected LO,HI with LO < HI", file=sys.stderr)
            return 2
    if os.path.isdir(args.file):  # a run or sweep folder: its file for this kind
        name = "results.h5" if args.kind == "timeline" else "sweep.h5" if args.kind in KINDS else None
        if name is None or not os.path.exists(os.path.join(args.file, name)):
            print(f"error: {args.file}: a folder without {name or 'the file this kind reads'} (give the file)", file=sys.stderr)
            return 2
        args.file = os.path.join(args.file, name)
    plt.rcParams.update(STYLES[args.style]["rc"])
    plt.rcParams["svg.hashsalt"] = "coinfer"
    if not os.path.exists(args.file):
        print(f"error: {args.file}: file not found", file=sys.stderr)
        return 2
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(args.file)), args.kind + ".png")
    try:
        if args.kind == "timeline":
            timeline_plot(args.file, out, args.style)
        elif args.kind == "predictor-accuracy":
            predictor_plot(args.file, out, args.style)
        elif args.kind == "learning-curve":
            learning_plot(args.file, out, args.style)
        else:
            sweep_plot(args.file, args.kind, out, args.x, args.series, args.where, args.style, args.pool, args.logy, ylim)
    except (PlotError, KeyError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    base = os.path.splitext(out)[0]
    print(f"wrote {out}, {base}.pdf and {base}.svg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
