#!/usr/bin/python3
"""One self-contained HTML page for a run, a sweep or a validation. `coinfer report DIR` runs this.

usage: /usr/bin/python3 plots/coinfer_report.py DIR [--out FILE.html] [--python-dir DIR]

DIR is (or holds) one of:
  run         results.h5 + summary.json (`coinfer run`, or `coinfer testbed` with testbed.json)
  sweep       sweep.h5 (+ sweep.json, sweep.csv) from `coinfer sweep`
  validation  validate.json from `coinfer validate` (its <scheduler>/sim and /testbed runs beside it)
The page holds the summary tables, the figures (PNG embedded as data: URIs), the provenance (every
attribute the files record, the data files a run read and where they came from) and the scenario file
as text. Nothing is loaded from elsewhere: it opens offline, and can be mailed as one file. The bytes
are the same for the same inputs. Written atomically (default DIR/report.html). Exit code 2, and no
file, when DIR is none of these or a file in it cannot be read.
"""
import argparse
import base64
import html
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

MAX_ROWS = 500  # rows of a table printed before "... N more" (the files hold them all)

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555}
pre{background:#f7f7f7;padding:.8em;overflow-x:auto;font-size:.85em}.bad{color:#b00020;font-weight:bold}.good{color:#1b5e20}
.note{color:#555;font-size:.9em}.scroll{max-height:30em;overflow:auto}
"""

# Run in the browser after loading: counts the figures that decoded and the tables, so a headless
# browser can check the page (tests/golden/report.sh). Changes nothing visible.
SELF_CHECK = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  document.body.setAttribute('data-figures', imgs.length);
  document.body.setAttribute('data-figures-decoded', imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length);
  document.body.setAttribute('data-tables', document.getElementsByTagName('table').length);
});
"""


class ReportError(Exception):
    pass


def esc(v):
    return html.escape("" if v is None else str(v), quote=True)


def fmt(v):
    """Numbers as people read them in a table: 4 significant digits, integers as integers."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "—"
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.10g}"  # Unix times keep their decimals
    try:
        import numpy as np
        if isinstance(v, np.integer):
            return str(int(v))
        if isinstance(v, np.floating):
            return fmt(float(v))
    except ImportError:
        pass
    return str(v)


def is_num(v):
    try:
        import numpy as np
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    except ImportError:
        return isinstance(v, (int, float)) and not isinstance(v, bool)


def table(ident, header, rows, caption=None):
    """An HTML table; rows beyond MAX_ROWS are counted, not printed."""
    out = [f'<table id="{esc(ident)}">']
    if caption:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead><tbody>")
    for r in rows[:MAX_ROWS]:
        out.append("<tr>" + "".join(f'<td class="num">{esc(fmt(c))}</td>' if is_num(c) else f"<td>{esc(fmt(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    if len(rows) > MAX_ROWS:
        out.append(f'<p class="note">... {len(rows) - MAX_ROWS} more rows (in the files)</p>')
    return "\n".join(out)


def kv_table(ident, pairs):
    return table(ident, ["key", "value"], [[k, v if is_num(v) else (json.dumps(v) if isinstance(v, (dict, list)) else v)] for k, v in pairs])


def figure(ident, png_path, caption):
    """The PNG embedded under a short caption (the figure's own caption, drawn in it, says what it averages)."""
    with open(png_path, "rb") as f:
        data = f.read()
    # The figure carries its own caption (what each point averages over) at its bottom: the page's caption
    # names the figure only, so the caption is read once.
    cap = caption
    b64 = base64.b64encode(data).decode()
    return (f'<figure id="{esc(ident)}"><img alt="{esc(caption)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{esc(cap)}</figcaption></figure>")


def scenario_section(path, made_by=None):
    """The scenario as the run recorded it (after --set, paths resolved), else the file as it is now."""
    if made_by and made_by.get("scenario_as_run"):
        sets = made_by.get("overrides") or []
        how = (f"{len(sets)} --set override{'s' if len(sets) != 1 else ''} applied: " + ", ".join(sets)) if sets else "no --set overrides"
        cmd = f"<br>command: <code id=\"command\">{esc(made_by['command'])}</code>" if made_by.get("command") else ""
        where = f" in {esc(made_by['working_directory'])}" if made_by.get("working_directory") else ""
        prog = f"<br>made by {esc(made_by.get('program', '?'))} (commit {esc(made_by.get('commit', '?'))}){where}"
        return (f'<h2>Scenario</h2><p class="note">{esc(path or "?")} as the run read it ({esc(how)}; file paths resolved)'
                f'{prog}{cmd}</p><pre id="scenario">{esc(made_by["scenario_as_run"])}</pre>')
    if not path:
        return "<h2>Scenario</h2><p class=\"note\">The files do not name the scenario file.</p>"
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return f'<h2>Scenario</h2><p class="note">{esc(path)}: cannot be read now ({esc(e.strerror)}).</p>'
    return f'<h2>Scenario</h2><p class="note">{esc(path)} as it is now (the run may have changed keys with --set)</p><pre id="scenario">{esc(text)}</pre>'


def page(title, subtitle, sections):
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"generator\" content=\"coinfer report\"><title>{esc(title)}</title><style>{CSS}</style></head>\n"
            f"<body><h1>{esc(title)}</h1><p class=\"note\">{esc(subtitle)}</p>\n" + "\n".join(sections) +
            f"\n<script>{SELF_CHECK}</script></body></html>\n")


# --- a run ------------------------------------------------------------------------------------------------

def metrics_row(name, m, strategy=""):
    lat = m.get("latency_ms") or {}
    return [name, strategy, m.get("completed"), m.get("failed"), m.get("throughput_rps"), lat.get("mean"), lat.get("p50"),
            lat.get("p95"), lat.get("p99"), m.get("energy_j_per_inference")]


METRIC_HEADER = ["device", "strategy", "completed", "failed", "throughput (req/s)", "mean (ms)", "p50 (ms)", "p95 (ms)",
                 "p99 (ms)", "energy / inference (J)"]


def run_sections(d, tmp, cp, co, prefix="run", timeline_caption=None):
    summary = json.load(open(os.path.join(d, "summary.json")))
    results = os.path.join(d, "results.h5")
    attrs = co.run_attributes(results)
    devices = co.load_devices(results)
    strategies = {r["id"]: r["strategy"] for _, r in devices.iterrows()} if "strategy" in devices else {}
    rows = [metrics_row(k, v, strategies.get(k, "")) for k, v in summary.get("devices", {}).items()]
    if "total" in summary:
        rows.append(metrics_row("total", summary["total"]))
    header = METRIC_HEADER
    # Deadlines (workload.deadline_ms): each device's attainment and dropped requests, where any has one.
    everyone = list(summary.get("devices", {}).values()) + ([summary["total"]] if "total" in summary else [])
    if any("slo_attainment" in m or "dropped" in m for m in everyone):
        header = METRIC_HEADER + ["deadline met", "SLO attainment", "dropped"]
        for row, m in zip(rows, everyone):
            row += [m.get("deadline_met"), m.get("slo_attainment"), m.get("dropped", 0)]
    s = [f"<h2>Summary</h2><p class=\"note\">{esc(summary.get('note', ''))}</p>", table(f"{prefix}-summary", header, rows)]
    servers = (summary.get("servers") or {}).get("servers") or {}
    if servers:
        failing = any("down_s" in v for v in servers.values())  # server failures (events fail/recover)
        srows = [[k, v.get("busy_s"), v.get("utilisation"), v.get("batches"), v.get("requests"), v.get("energy_j"),
                  v.get("energy_j_per_inference")] + ([v.get("failures", 0), v.get("down_s", 0)] if failing else []) for k, v in servers.items()]
        s += [f"<h3>Servers</h3><p class=\"note\">{esc(summary['servers'].get('note', ''))}</p>",
              table(f"{prefix}-servers", ["server", "busy (s)", "utilisation", "batches", "requests", "energy (J)", "energy / inference (J)"] +
                    (["failures", "down (s)"] if failing else []), srows)]
    energy = summary.get("energy") or {}
    if energy.get("devices"):
        def erow(name, e):
            per = e.get("per_inference_j") or {}
            radio = e.get("radio") or {}
            return [name, e.get("compute_j"), e.get("idle_j"), e.get("radio_j"), per.get("compute"), per.get("idle"), per.get("radio"),
                    radio.get("tail_j", "")]
        erows = [erow(k, v) for k, v in energy["devices"].items()] + [erow("total", energy.get("total") or {})]
        s += [f"<h3>Energy</h3><p class=\"note\">{esc(energy.get('note', ''))}</p>",
              table(f"{prefix}-energy", ["device", "compute (J)", "idle (J)", "radio (J)", "compute / inference (J)", "idle / inference (J)",
                                         "radio / inference (J)", "radio tail (J)"], erows)]
    png = os.path.join(tmp, f"{prefix}-timeline.png")
    cp.timeline_plot(results, png, "screen")
    s.append("<h2>Timeline</h2>" + figure(f"{prefix}-timeline", png, timeline_caption or "bandwidth, scheme switches and per-request latency"))
    dec = co.load_decisions(d)
    s.append(f"<h2>Decisions</h2><p>{len(dec)} decisions by scheduler {esc(summary.get('scheduler'))}"
             f"{' ranking with ' + esc(summary['estimator']) if summary.get('estimator') else ''}.</p>")
    cols = [c for c in ["t_s", "trigger", "scheme", "predicted_throughput_rps", "predicted_latency_ms", "switched"] if c in dec.columns]
    s.append(table(f"{prefix}-decisions", cols, dec[cols].values.tolist()))
    prov = [(k, v) for k, v in sorted(attrs.items()) if k != "scenario_yaml"]  # the scenario has its own section
    for k in ("window_s", "service_time", "transfer_bytes", "estimated_lut_entries", "estimator"):
        if k in summary and k not in attrs:
            prov.append((k, summary[k]))
    prov.sort(key=lambda kv: kv[0])
    s.append("<h2>Provenance</h2>" + kv_table(f"{prefix}-provenance", prov))
    files = summary.get("data_files", [])
    if files:
        s.append("<h3>Data files</h3>" + table(f"{prefix}-data-files", ["role", "path", "origin"], [[f["role"], f["path"], f["origin"]] for f in files]))
    clock = summary.get("clock", {}).get("devices", {})
    if clock:
        s.append("<h3>Board clocks</h3><p class=\"note\">Each board's journal was moved onto the server's clock by its offset "
                 "(NTP-style probes over heartbeats; hw/README.md).</p>" +
                 table(f"{prefix}-clocks", ["device", "offset (ms)", "uncertainty (ms)", "probes"],
                       [[k, None if v.get("offset_s") is None else v["offset_s"] * 1e3,
                         None if v.get("uncertainty_s") is None else v["uncertainty_s"] * 1e3, v.get("samples")] for k, v in clock.items()]))
    tb = os.path.join(d, "testbed.json")
    if os.path.exists(tb):
        s.append("<h3>Testbed</h3>" + kv_table(f"{prefix}-testbed", sorted(json.load(open(tb)).items())))
    scen = next((f["path"] for f in files if f["role"] == "scenario"), None) or attrs.get("scenario_file")
    return summary, s, scen


def run_report(d, tmp, cp, co):
    summary, s, scen = run_sections(d, tmp, cp, co)
    kind = "testbed run" if os.path.exists(os.path.join(d, "testbed.json")) else "simulation"
    s.append(scenario_section(scen, summary.get("made_by")))
    return page(f"coinfer report: {summary.get('scenario', '?')} ({kind})", os.path.abspath(d), s)


# --- a sweep ----------------------------------------------------------------------------------------------

FACETS = 6  # figures per kind at most: one per combination of the axes a figure does not show
SWEEP_FIGURES = [("latency-vs-bandwidth", "bandwidth_mbps"), ("throughput-vs-devices", "devices"), ("throughput-vs-batch", "max_batch"),
                 ("energy", None)]


def sweep_report(d, tmp, cp, co):
    path = os.path.join(d, "sweep.h5")
    df = co.load_sweep(path)
    axes = df.attrs.get("axes", [])
    manifest = {}
    if os.path.exists(os.path.join(d, "sweep.json")):
        manifest = json.load(open(os.path.join(d, "sweep.json")))
    s = ["<h2>Grid</h2>"]
    grid_rows = []
    for a in axes:
        vals = cp.sort_values([str(v) for v in df[a].tolist()])
        grid_rows.append([a, ", ".join(cp.fmt_value(v) for v in vals)])
    if "seed" in df.columns:
        grid_rows.append(["seed", ", ".join(str(v) for v in sorted(set(int(x) for x in df["seed"].tolist())))])
    s.append(table("sweep-grid", ["axis", "values"], grid_rows))
    s.append(f"<p>{len(df)} points collected.</p>")
    s.append("<h2>Figures</h2>")
    for kind, needs in SWEEP_FIGURES:
        if needs is not None and needs not in axes:
            continue
        # Never pooled: one figure per combination of the axes it neither plots nor uses
        # as series, each fixed by --where; beyond kFacets combinations, the first ones and a note.
        shown_axes = {needs, "scheduler" if "scheduler" in axes and needs != "scheduler" else None}
        others = [a for a in axes if a not in shown_axes and len(set(str(v) for v in df[a].tolist())) > 1]
        combos = [[]]
        for a in others:
            vals = cp.sort_values([str(v) for v in df[a].tolist()])
            combos = [c + [f"{a}={cp.fmt_value(v)}"] for c in combos for v in vals]
        for n, where in enumerate(combos[:FACETS]):
            png = os.path.join(tmp, f"{kind}-{n}.png")
            try:
                cp.sweep_plot(path, kind, png, None, None, where, "screen")
            except cp.PlotError as e:
                s.append(f'<p class="note">{esc(kind)} {esc(" ".join(where))}: not drawn ({esc(e)})</p>')
                continue
            what = cp.KINDS[kind][2] + (" vs " + cp.KINDS[kind][3] if cp.KINDS[kind][3] else " per scheduler")
            s.append(figure(f"figure-{kind}" + (f"-{n}" if where else ""), png, what + (f" ({', '.join(where)})" if where else "")))
        if len(combos) > FACETS:
            s.append(f'<p class="note">{esc(kind)}: {len(combos) - FACETS} more combinations of {esc(", ".join(others))} not drawn; '
                     f'draw one with coinfer plot {esc(d)} --kind {esc(kind)} --where AXIS=V</p>')
    s.append("<h2>Points</h2>")
    s.append('<div class="scroll">' + table("sweep-points", list(df.columns), df.values.tolist()) + "</div>")
    prov = [(k, v) for k, v in sorted(manifest.items()) if k != "points"]
    prov += [("sweep.h5 attribute " + k, v) for k, v in sorted(df.attrs.items()) if k != "axes"]
    s.append("<h2>Provenance</h2>" + kv_table("sweep-provenance", prov))
    scen = manifest.get("scenario") if isinstance(manifest.get("scenario"), str) else None
    s.append(scenario_section(scen))
    return page(f"coinfer report: sweep of {df.attrs.get('scenario', '?')}", os.path.abspath(d), s)


# --- a validation -----------------------------------------------------------------------------------------

def ranking_text(rank):
    """validate.json's ranking ("a > b" strings) as a sentence; none with one scheduler (the page
    once read "ranking did not hold ( ; )", joining the strings' characters)."""
    if not rank:
        return "no ranking to check (one scheduler validated)"
    def order(v):
        return esc(v if isinstance(v, str) else " > ".join(v))
    return (f"ranking {'held' if rank.get('held') else 'did NOT hold'} "
            f"(simulated {order(rank.get('simulated', ''))}; testbed {order(rank.get('testbed', ''))})")


def validation_report(d, tmp, cp, co):
    import matplotlib.pyplot as plt
    df = co.load_validation(os.path.join(d, "validate.json"))
    j = json.load(open(os.path.join(d, "validate.json")))
    missed, failed = j.get("checks_missed", 0), j.get("failed_runs", 0)
    rank = j.get("ranking", {})
    verdict = (f'<p><span class="{"bad" if missed or failed else "good"}">{missed} checks outside tolerance, {failed} failed runs</span>; '
               f"{ranking_text(rank)}. "
               f"Tolerance {fmt(j.get('tolerance_pct'))} % (p95: {fmt(j.get('p95_tolerance_pct'))} %).</p>")
    # Conditions that weaken the comparison are part of the verdict, not only of the JSON.
    caveats = []
    if j.get("machine", {}).get("loaded"):
        m = j["machine"]
        caveats.append(f"measured on a loaded machine ({fmt(m.get('busy_pct_before'))} % busy, {fmt(m.get('steal_pct_before'))} % "
                       "stolen; --allow-loaded): the testbed may run slower than on an idle machine")
    cal = j.get("calibration")
    if isinstance(cal, dict) and cal.get("done") is False:
        caveats.append(f"calibration skipped ({html.escape(str(cal.get('why', '')))})")
    if caveats:
        verdict += "<p class=\"bad\">Caveats: " + "; ".join(caveats) + ".</p>"
    s = ["<h2>Verdict</h2>", verdict]
    rows = df[["scheduler", "scope", "metric", "sim", "testbed", "error_pct", "checked", "within_tolerance"]].values.tolist()
    s.append("<h2>Simulator against testbed</h2>" + table("validation-metrics", ["scheduler", "scope", "metric", "simulated", "testbed",
                                                                                  "error (%)", "checked", "within tolerance"], rows))
    # One figure: total throughput and mean latency per scheduler, simulated next to measured.
    tot = df[df["scope"] == "total"]
    scheds = list(dict.fromkeys(tot["scheduler"].tolist()))
    if scheds:
        fig, axs = plt.subplots(1, 2, figsize=(9, 3.4))
        for ax, metric, label in ((axs[0], "throughput_rps", "throughput (req/s)"), (axs[1], "latency_mean_ms", "mean latency (ms)")):
            sub = tot[tot["metric"] == metric]
            sim = [float(sub[sub["scheduler"] == x]["sim"].iloc[0]) if (sub["scheduler"] == x).any() else float("nan") for x in scheds]
            real = [float(sub[sub["scheduler"] == x]["testbed"].iloc[0]) if (sub["scheduler"] == x).any() else float("nan") for x in scheds]
            xs = range(len(scheds))
            ax.bar([x - 0.2 for x in xs], sim, 0.4, label="simulated", color="#4c72b0")
            ax.bar([x + 0.2 for x in xs], real, 0.4, label="testbed", color="#dd8452", hatch="//")
            ax.set_xticks(list(xs))
            ax.set_xticklabels(scheds)
            ax.set_ylabel(label)
            ax.legend()
        png = os.path.join(tmp, "validation.png")
        cp.save(fig, png, {"title": "simulated vs testbed", "aggregation": "whole system over the measurement window"})
        s.append(figure("figure-validation", png, "total throughput and mean latency, simulated next to the testbed"))
    for sched in sorted(set(df["scheduler"].tolist()) | set(j.get("not_reported", {}).keys())):
        for side in ("sim", "testbed"):
            sd = os.path.join(d, sched, side)
            if os.path.exists(os.path.join(sd, "results.h5")):
                png = os.path.join(tmp, f"{sched}-{side}.png")
                try:
                    cp.timeline_plot(os.path.join(sd, "results.h5"), png, "screen")
                except cp.PlotError as e:
                    s.append(f'<p class="note">{esc(sched)} {side}: timeline not drawn ({esc(e)})</p>')
                    continue
                s.append(f"<h3>{esc(sched)}: {'simulated' if side == 'sim' else 'testbed'}</h3>" +
                         figure(f"figure-{sched}-{side}", png, f"{sched}, {'simulated' if side == 'sim' else 'testbed'}: timeline"))
    prov = [(k, v) for k, v in sorted(j.items()) if k not in ("schedulers",)]
    s.append("<h2>Provenance</h2>" + kv_table("validation-provenance", prov))
    s.append(scenario_section(j.get("scenario_file")))
    return page(f"coinfer report: validation of {j.get('scenario', '?')}", os.path.abspath(d), s)


def main():
    ap = argparse.ArgumentParser(description="coinfer report: one self-contained HTML page")
    ap.add_argument("dir", help="a run, sweep or validation folder (or a file in it)")
    ap.add_argument("--out", help="HTML file (default: DIR/report.html)")
    ap.add_argument("--python-dir", help="folder holding the coinfer Python package (default: ../python beside this script)")
    args = ap.parse_args()
    sys.path.insert(0, args.python_dir or os.path.join(os.path.dirname(HERE), "python"))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import coinfer as co
    import coinfer_plots as cp
    plt.rcParams.update(cp.STYLES["screen"]["rc"])
    plt.rcParams["svg.hashsalt"] = "coinfer"
    d = args.dir
    if os.path.isfile(d):
        d = os.path.dirname(os.path.abspath(d))
    if not os.path.isdir(d):
        print(f"error: {args.dir}: no such folder", file=sys.stderr)
        return 2
    out = args.out or os.path.join(d, "report.html")
    try:
        with tempfile.TemporaryDirectory(prefix="coinfer-report-") as tmp:
            if os.path.exists(os.path.join(d, "validate.json")):
                text = validation_report(d, tmp, cp, co)
            elif os.path.exists(os.path.join(d, "sweep.h5")):
                text = sweep_report(d, tmp, cp, co)
            elif os.path.exists(os.path.join(d, "results.h5")) and os.path.exists(os.path.join(d, "summary.json")):
                text = run_report(d, tmp, cp, co)
            else:
                raise ReportError(f"{args.dir}: not a run (results.h5 + summary.json), sweep (sweep.h5) or validation (validate.json) folder")
    except (ReportError, cp.PlotError, co.CoinferFileError, KeyError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    tmp_out = out + ".tmp"
    try:
        with open(tmp_out, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp_out, out)
    except OSError as e:
        if os.path.exists(tmp_out):
            os.remove(tmp_out)
        print(f"error: {out}: cannot write ({e.strerror})", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
