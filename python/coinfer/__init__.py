"""Read coinfer's outputs into pandas DataFrames, one line each.

    import sys; sys.path.insert(0, "python")   # or PYTHONPATH=/path/to/coinfer/python
    import coinfer
    req = coinfer.load_requests("results/quickstart/results.h5")   # one row per request
    req[~req.warmup].groupby("device").latency_ms.mean()

Pure Python on Debian's python3-h5py, python3-numpy and python3-pandas. Every loader takes a file or
the folder that holds it (a run's folder, a sweep's folder, a validation's folder), raises
`CoinferFileError` naming the file and what is wrong, and decodes every string (devices are names, not
indices into another dataset). File formats: sim/README.md (results.h5, summary.json,
decisions.jsonl), plots/README.md (sweep.h5) and hw/README.md (validate.json). Old and new files read alike:
strings stored as fixed-length bytes or as variable-length UTF-8 both come back as `str`.
"""
import json
import os

import numpy as np

__all__ = ["CoinferFileError", "load_requests", "load_devices", "load_servers", "load_events", "load_summary", "load_sweep",
           "load_decisions", "load_validation", "run_attributes", "RESULTS_COLUMNS", "SWEEP_METRICS", "DECISION_KEYS"]

# What coinfer writes, as its record tables declare it (`coinfer schema --json` prints them;
# tests/golden/python_loader.sh checks these lists against it). results.h5: one dataset per column
# under each group (the radio_* columns only where a device's radio has power states).
RESULTS_COLUMNS = {
    "requests": ["id", "device", "server", "strategy", "split", "bytes_up", "bytes_down", "t_created", "t_device_start",
                 "t_device_end", "t_uplink_end", "t_queued", "t_batch_start", "t_batch_end", "batch_size", "helper",
                 "resends", "cloud", "bytes_to_cloud", "t_cloud_queued",
                 "t_cloud_batch_start", "t_cloud_batch_end", "cloud_batch_size",
                 "t_result", "status", "failure"],
    "devices": ["id", "type", "model", "dataset", "server", "strategy", "energy_compute_j", "energy_idle_j", "energy_radio_j",
                "radio_active_j", "radio_tail_j", "radio_promotion_j", "radio_idle_j", "bytes_sent", "bytes_received",
                "throughput_rps", "throughput_incl_drain_rps", "offered_rps", "saturated"],
    "servers": ["id", "busy_s", "energy_j", "down_s", "failures", "batches", "requests"],
    "events": ["t", "kind", "device", "server", "value", "access_point", "from_access_point"],
    "decisions": ["t", "trigger", "scheme", "predicted_throughput_rps", "predicted_latency_ms", "switched"],
    "bandwidth": ["t", "device", "mbps"],
}
# sweep.h5: one dataset per metric under /metrics (beside /point, /seed, /ok and /grid/AXIS).
SWEEP_METRICS = ["throughput_rps", "throughput_incl_drain_rps", "offered_rps", "saturated", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms",
                 "energy_j_per_inference", "completed", "failed", "decisions"]
# decisions.jsonl: one object per line with these keys (detail only for schedulers that explain
# themselves, e.g. sac).
DECISION_KEYS = ["t_s", "trigger", "scheme", "predicted_throughput_rps", "predicted_latency_ms", "switched", "wall_s", "detail"]
# A decision as a DataFrame row: results.h5's columns, its time named as in decisions.jsonl.
_DECISION_COLUMNS = ["t_s" if c == "t" else c for c in RESULTS_COLUMNS["decisions"]]


class CoinferFileError(Exception):
    """A file that is missing or is not the coinfer output it should be."""


def _pd():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise CoinferFileError("pandas is missing: apt-get install python3-pandas (scripts/setup.sh installs it)") from e
    return pandas


def _h5():
    try:
        import h5py
    except ImportError as e:  # pragma: no cover
        raise CoinferFileError("h5py is missing: apt-get install python3-h5py") from e
    return h5py


def _text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.shape == ():
        return _text(v.item())
    return str(v)


def _strings(ds):
    return [_text(v) for v in ds[()]]


def _file(path, name):
    """`path` itself, or `name` inside the folder `path`."""
    if os.path.isdir(path):
        path = os.path.join(path, name)
    if not os.path.exists(path):
        raise CoinferFileError(f"{path}: no such file")
    return path


def _open(path, name, fmt):
    path = _file(path, name)
    h5py = _h5()
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise CoinferFileError(f"{path}: not an HDF5 file ({e})") from e
    got = _text(f.attrs.get("format", b""))
    if got != fmt:
        f.close()
        raise CoinferFileError(f"{path}: format attribute is '{got}', not '{fmt}'")
    return path, f


def _json(path, name):
    """The JSON document `name` (in the folder `path`, or `path` itself) and its path."""
    path = _file(path, name)
    try:
        with open(path) as f:
            return path, json.load(f)
    except json.JSONDecodeError as e:
        raise CoinferFileError(f"{path}: not JSON ({e})") from e


def run_attributes(path):
    """The root attributes of a results.h5 (scenario, seed, scheduler, duration_s, warmup_s, end_s,
    service_time, ...) as a dict of Python values."""
    _, f = _open(path, "results.h5", "coinfer-results")
    with f:
        return {k: (_text(v) if isinstance(v, (bytes, np.bytes_, str)) else v.item() if hasattr(v, "item") else v)
                for k, v in f.attrs.items()}


def load_devices(path):
    """One row per device of a run: id, type, model, dataset, server, strategy (at the end of the run),
    energies, bytes, and (results schema 3) throughput_rps (results delivered inside the measurement
    window), throughput_incl_drain_rps, offered_rps and saturated."""
    pd = _pd()
    _, f = _open(path, "results.h5", "coinfer-results")
    with f:
        g = f["devices"]
        cols = {}
        for k in g:
            ds = g[k]
            cols[k] = _strings(ds) if ds.dtype.kind in ("O", "S", "U") else ds[()]
    return pd.DataFrame(cols)


def _group(path, group):
    """Every dataset of results.h5's `group` as DataFrame columns (strings decoded), the device names and
    the server names."""
    pd = _pd()
    path, f = _open(path, "results.h5", "coinfer-results")
    with f:
        if group not in f:
            raise CoinferFileError(f"{path}: no /{group} group")
        g = f[group]
        cols = {k: (_strings(g[k]) if g[k].dtype.kind in ("O", "S", "U") else g[k][()]) for k in g}
        devices = _strings(f["devices/id"]) if "devices/id" in f else []
    return pd.DataFrame(cols), devices


def load_servers(path):
    """One row per edge server of a run: id, busy_s, energy_j, down_s, failures, batches, requests (over
    the measurement window)."""
    df, _ = _group(path, "servers")
    return df


def load_events(path):
    """One row per event of a run: t_s, kind (bandwidth, join, leave, load, fail, recover, arrivals_end),
    device (a name, "" when not about one), server, value."""
    df, _ = _group(path, "events")
    return df.rename(columns={"t": "t_s"})


def load_requests(path):
    """One row per request of a run (results.h5): id; device, server and helper by name (helper None
    when the server ran it); split, batch_size, strategy; status 'ok', 'failed' or 'dropped' (past its deadline, workload.drop_late) and the failure
    reason; bytes_up/bytes_down; resends (transfers started again after a handover,
    mobility.mid_transfer: resend; absent in results written before it); every timestamp t_* in simulated (or testbed) seconds; latency_ms
    (t_result - t_created, NaN for failed requests); warmup (created before warmup_s: not counted in
    summaries). The run's attributes are in `df.attrs`."""
    pd = _pd()
    path, f = _open(path, "results.h5", "coinfer-results")
    with f:
        if "requests" not in f:
            raise CoinferFileError(f"{path}: no /requests group")
        g = f["requests"]
        devices = _strings(f["devices/id"])
        servers = _strings(f["servers/id"]) if "servers/id" in f else []
        cols = {}
        for k in g:
            ds = g[k]
            cols[k] = _strings(ds) if ds.dtype.kind in ("O", "S", "U") else ds[()]
        attrs = {k: (_text(v) if isinstance(v, (bytes, np.bytes_, str)) else v.item() if hasattr(v, "item") else v)
                 for k, v in f.attrs.items()}
    df = pd.DataFrame(cols)
    if "device" in df:
        df["device_index"] = df["device"]
        df["device"] = [devices[i] if 0 <= i < len(devices) else None for i in df["device_index"]]
    if "server" in df:
        df["server"] = [servers[i] if 0 <= i < len(servers) else None for i in df["server"]]
    if "helper" in df:
        df["helper"] = [devices[i] if 0 <= i < len(devices) else None for i in df["helper"]]
    if "status" in df:
        df["status"] = np.select([df["status"] == 0, df["status"] == 2], ["ok", "dropped"], "failed")
    if "t_result" in df and "t_created" in df:
        ok = df["status"] == "ok" if "status" in df else True
        df["latency_ms"] = np.where(ok, (df["t_result"] - df["t_created"]) * 1e3, np.nan)
        df["warmup"] = df["t_created"] < float(attrs.get("warmup_s", 0))
    df.attrs.update(attrs)
    return df


def load_decisions(path):
    """One row per scheduling decision: t_s, trigger, scheme, predicted_throughput_rps,
    predicted_latency_ms, switched. From decisions.jsonl (a run's or a testbed's folder, or the file)
    or from results.h5."""
    pd = _pd()
    if os.path.isdir(path) and os.path.exists(os.path.join(path, "decisions.jsonl")):
        path = os.path.join(path, "decisions.jsonl")
    if path.endswith(".jsonl"):
        rows = []
        with open(_file(path, "decisions.jsonl")) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise CoinferFileError(f"{path}:{n}: not a JSON decision ({e})") from e
        return pd.DataFrame(rows, columns=_DECISION_COLUMNS)
    _, f = _open(path, "results.h5", "coinfer-results")
    with f:
        if "decisions" not in f:
            return pd.DataFrame(columns=_DECISION_COLUMNS)
        g = f["decisions"]
        return pd.DataFrame({name: (_strings(g[col]) if g[col].dtype.kind in ("O", "S", "U") else g[col][()])
                             for name, col in zip(_DECISION_COLUMNS, RESULTS_COLUMNS["decisions"])})


def load_summary(path):
    """A run's summary.json: one row for the total and one per device, with throughput_rps (results
    delivered inside the measurement window), throughput_incl_drain_rps (the window's requests that
    completed, drain included), offered_rps, saturated, latency_mean_ms/p50/p95/p99, energy, completed,
    delivered, failed; the run's description in `df.attrs`."""
    pd = _pd()
    path, j = _json(path, "summary.json")
    if "total" not in j:
        raise CoinferFileError(f"{path}: no 'total' key (not a coinfer summary.json)")

    def row(scope, m):
        lat = m.get("latency_ms", {}) or {}
        return {"scope": scope, "throughput_rps": m.get("throughput_rps"),
                "throughput_incl_drain_rps": m.get("throughput_incl_drain_rps"), "offered_rps": m.get("offered_rps"),
                "saturated": bool(m.get("saturated", False)), "latency_mean_ms": lat.get("mean"),
                "latency_p50_ms": lat.get("p50"), "latency_p95_ms": lat.get("p95"), "latency_p99_ms": lat.get("p99"),
                "energy_j": m.get("energy_j"), "energy_j_per_inference": m.get("energy_j_per_inference"),
                "completed": m.get("completed"), "delivered": m.get("delivered"), "failed": m.get("failed")}

    rows = [row("total", j["total"])] + [row(k, v) for k, v in j.get("devices", {}).items()]
    df = pd.DataFrame(rows).astype({c: float for c in ("throughput_rps", "throughput_incl_drain_rps", "offered_rps", "latency_mean_ms", "latency_p50_ms", "latency_p95_ms",
                                                         "latency_p99_ms", "energy_j", "energy_j_per_inference")})
    df.attrs.update({k: v for k, v in j.items() if k not in ("total", "devices")})
    return df


def load_sweep(path):
    """One row per (grid point, seed) of a sweep (sweep.h5): point, seed, one column per grid axis
    (numbers where every value is one), ok, and every metric. Rows that did not run have ok False and
    NaN metrics. The scenario and the axes are in `df.attrs`."""
    pd = _pd()
    path, f = _open(path, "sweep.h5", "coinfer-sweep")
    with f:
        axes = [a for a in _text(f.attrs["axes"]).split(",") if a]
        cols = {"point": f["point"][()], "seed": f["seed"][()]}
        for a in axes:
            ds = f["grid/" + a]
            cols[a] = _strings(ds) if ds.dtype.kind in ("O", "S", "U") else ds[()]
        cols["ok"] = f["ok"][()].astype(bool)
        for m in f["metrics"]:
            cols[m] = f["metrics/" + m][()]
        attrs = {"scenario": _text(f.attrs["scenario"]), "axes": axes}
    df = pd.DataFrame(cols)
    df.attrs.update(attrs)
    return df


def load_validation(path):
    """A validation (validate.json): one row per (scheduler, scope, metric) with sim, testbed,
    error_pct, checked and within_tolerance; ranking, decisions, calibration and machine figures in
    `df.attrs`."""
    pd = _pd()
    path, j = _json(path, "validate.json")
    if "schedulers" not in j and "failed_runs" not in j:
        raise CoinferFileError(f"{path}: no 'schedulers' key (not a coinfer validate.json)")
    rows = []
    for sched, metrics in j.get("schedulers", {}).items():
        for m in metrics:
            rows.append({"scheduler": sched, **m})
    df = pd.DataFrame(rows, columns=["scheduler", "scope", "metric", "sim", "testbed", "error_pct", "checked", "within_tolerance"])
    df.attrs.update({k: v for k, v in j.items() if k != "schedulers"})
    return df
