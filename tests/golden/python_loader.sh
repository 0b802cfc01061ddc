#!/usr/bin/env bash
# The Python package (python/coinfer): every loader on real outputs of this build, checked against
# what the program itself reports (summary.json is computed in C++; the DataFrames must agree), names
# decoded, clear errors; and the worked example (examples/) reproducing ACE-GNN Fig. 15 from a sweep.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
/usr/bin/python3 -c "import pandas" 2>/dev/null || { echo "FAIL python3-pandas is missing (scripts/setup.sh installs it)"; exit 1; }

"$coinfer" run scenarios/quickstart.yaml --set duration_s=20 --set warmup_s=4 --out "$work/run" -q > /dev/null || bad "run"
PYTHONPATH=python /usr/bin/python3 - "$work/run" <<'PY' && ok || bad "load_requests/summary/devices/decisions"
import sys, math, json
import coinfer
run = sys.argv[1]
req = coinfer.load_requests(run)                      # the folder
req2 = coinfer.load_requests(run + "/results.h5")      # or the file
assert len(req) == len(req2) > 0
summ = coinfer.load_summary(run)
total = summ[summ.scope == "total"].iloc[0]
counted = req[~req.warmup & (req.status == "ok")]
# The DataFrame reproduces the C++ summary: completed count and mean latency of counted requests.
assert len(counted) == total.completed, (len(counted), total.completed)
assert math.isclose(counted.latency_ms.mean(), total.latency_mean_ms, rel_tol=1e-9), (counted.latency_ms.mean(), total.latency_mean_ms)
for dev, g in counted.groupby("device"):
    row = summ[summ.scope == dev].iloc[0]
    assert len(g) == row.completed, dev
# Names, not indices; strings, not bytes.
devs = coinfer.load_devices(run)
assert set(req.device) <= set(devs.id) and all(isinstance(d, str) for d in devs.id), devs.id
assert all(isinstance(s, str) for s in req.strategy)
assert set(req.status) <= {"ok", "failed"}
assert req.attrs["scenario"] == "quickstart" and isinstance(req.attrs["scenario"], str), req.attrs
assert req.attrs["warmup_s"] == 4.0
# Decisions: the journal and results.h5 agree.
dj, dh = coinfer.load_decisions(run), coinfer.load_decisions(run + "/results.h5")
assert len(dj) == len(dh) >= 1 and list(dj.scheme) == list(dh.scheme) and list(dj.trigger) == list(dh.trigger)
# Errors name the file.
for bad_path, fn in [(run + "/summary.json", coinfer.load_requests), (run + "/nope", coinfer.load_summary),
                     (run + "/results.h5", coinfer.load_sweep)]:
    try:
        fn(bad_path)
        raise SystemExit(f"no error for {bad_path}")
    except coinfer.CoinferFileError as e:
        assert bad_path.split("/")[-1] in str(e), str(e)
PY

# The loader's column lists are the program's (coinfer schema prints the tables that write the files),
# and a run's results.h5 holds exactly those columns.
"$coinfer" schema --json > "$work/schema.json" || bad "coinfer schema --json"
PYTHONPATH=python /usr/bin/python3 - "$work/schema.json" "$work/run" <<'PY' && ok || bad "python/coinfer's schema against coinfer schema"
import sys, json
import h5py
import coinfer
schema = json.load(open(sys.argv[1]))
tables = schema["results.h5"]
assert sorted(tables) == sorted(coinfer.RESULTS_COLUMNS), (sorted(tables), sorted(coinfer.RESULTS_COLUMNS))
for group, cols in tables.items():
    names = [c["name"] for c in cols]
    assert names == coinfer.RESULTS_COLUMNS[group], (group, names, coinfer.RESULTS_COLUMNS[group])
assert [c["name"] for c in schema["decisions.jsonl"]] == coinfer.DECISION_KEYS, schema["decisions.jsonl"]
assert [c["name"] for c in schema["sweep.h5"]["metrics"]] == coinfer.SWEEP_METRICS, schema["sweep.h5"]
with h5py.File(sys.argv[2] + "/results.h5", "r") as f:
    for group, cols in tables.items():
        always = {c["name"] for c in cols if not c.get("only_when_some_row_has_it")}
        assert always <= set(f[group]) <= {c["name"] for c in cols}, (group, sorted(f[group]))
ev, srv = coinfer.load_events(sys.argv[2]), coinfer.load_servers(sys.argv[2])
assert "t_s" in ev.columns and list(srv.id) == ["edge0"], (ev.columns, srv)
PY

"$coinfer" sweep scenarios/paper/fig14_15_gpu.yaml --grid devices=1..3 --grid scheduler=hierarchical,local \
  --seeds 2 --set duration_s=6 --set warmup_s=1 --out "$work/sweep" -q > /dev/null 2>&1 || bad "sweep"
PYTHONPATH=python /usr/bin/python3 - "$work/sweep" <<'PY' && ok || bad "load_sweep"
import sys
import coinfer
df = coinfer.load_sweep(sys.argv[1])
# 3 device counts x 2 schedulers; one seed each: closed loops on LUTs without distributions do not
# depend on the seed, so the sweep runs each point once (cli/cmd_sweep.cpp, scenario_uses_seed).
assert len(df) == 3 * 2, len(df)
assert {"devices", "scheduler", "seed", "ok", "throughput_rps", "latency_p95_ms"} <= set(df.columns), df.columns
assert df.ok.all() and df["devices"].dtype.kind == "f" and all(isinstance(s, str) for s in df["scheduler"])
assert df.attrs["axes"] == ["devices", "scheduler"], df.attrs
PY
/usr/bin/python3 examples/fig15_throughput_vs_devices.py "$work/sweep" --out "$work/fig15.png" > "$work/fig15.txt" 2>&1 \
  && [ -s "$work/fig15.png" ] && grep -q "hierarchical" "$work/fig15.txt" && grep -q "wrote" "$work/fig15.txt" && ok \
  || { bad "example"; cat "$work/fig15.txt"; }
/usr/bin/python3 examples/fig15_throughput_vs_devices.py "$work/run" > "$work/ex_bad.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "error: .*sweep.h5: no such file" "$work/ex_bad.txt" && ok || { bad "example on a run folder: exit $rc"; cat "$work/ex_bad.txt"; }
# A sweep that also varies the bandwidth: the example refuses to average over it silently,
# and draws it with --where.
"$coinfer" sweep scenarios/paper/fig14_15_gpu.yaml --grid devices=1..2 --grid scheduler=local --grid bandwidth_mbps=5,40 \
  --set duration_s=3 --set warmup_s=1 --out "$work/sweep_bw" -q > /dev/null 2>&1 || bad "sweep with a bandwidth axis"
/usr/bin/python3 examples/fig15_throughput_vs_devices.py "$work/sweep_bw" --out "$work/f.png" > "$work/ex_pool.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "varies bandwidth_mbps" "$work/ex_pool.txt" && [ ! -e "$work/f.png" ] && ok || { bad "example pools silently: exit $rc"; cat "$work/ex_pool.txt"; }
/usr/bin/python3 examples/fig15_throughput_vs_devices.py "$work/sweep_bw" --where bandwidth_mbps=40 --out "$work/f.png" > "$work/ex_where.txt" 2>&1 \
  && [ -s "$work/f.png" ] && ok || { bad "example with --where"; cat "$work/ex_where.txt"; }
finish python_loader
