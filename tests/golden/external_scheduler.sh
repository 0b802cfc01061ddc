#!/usr/bin/env bash
# scheduler: external (sched/external_scheduler.hpp): the Python example scheduler decides a whole run
# (each decision checked against its rule and the bandwidth the run records), deterministically; and
# every way such a scheduler can fail is exit 2 with the reason and nothing written: a command that
# does not start, a hello never answered, a process that exits, hangs or answers garbage mid-run, an
# invalid scheme, bad keys. Then the same scheduler under `coinfer serve` on the loopback testbed.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"
cd "$root"
example="$root/sched/examples/threshold_scheduler.py"

# scenario NAME SCHEDULER-YAML: the quickstart (20 s) with another scheduler block.
scenario() {
  sed -e "s|^scheduler: .*|scheduler: $2|" -e "s|^duration_s: 60|duration_s: 50|" -e "s|^luts: \[traces/lut/\]|luts: [$root/traces/lut/]|" \
      -e "s|trace: traces/|trace: $root/traces/|" scenarios/quickstart.yaml > "$work/$1.yaml"
}

# --- a whole run ---
scenario good "{name: external, command: \"python3 '$example' --offload-above 20 --local-below 5\"}"
"$coinfer" run "$work/good.yaml" --out "$work/good" -q > "$work/good.out" 2>&1 && ok || { bad "run with the example scheduler"; cat "$work/good.out"; }
/usr/bin/python3 - "$work/good" <<'PY' && ok || bad "decisions follow the example's rule"
import json, sys, h5py
d = sys.argv[1]
f = h5py.File(d + "/results.h5")
bw = {}
for t, dev, mbps in zip(f["bandwidth/t"][()], f["bandwidth/device"][()], f["bandwidth/mbps"][()]):
    bw.setdefault(int(dev), []).append((float(t), float(mbps)))
ids = [x.decode() if isinstance(x, bytes) else x for x in f["devices/id"][()]]
def mbps(dev, t):
    return [m for (tt, m) in sorted(bw[ids.index(dev)]) if tt <= t][-1]
def rule(m):  # threshold_scheduler.py --offload-above 20 --local-below 5, DGCNN: 9 stages
    return "offload" if m >= 20 else "local" if m < 5 else "pp(4)"
decisions = [json.loads(l) for l in open(d + "/decisions.jsonl")]
assert [x["t_s"] for x in decisions] == [0, 20, 30, 40, 45], [x["t_s"] for x in decisions]
for x in decisions:
    parts = dict(p.split("=", 1) for p in x["scheme"].split() if not p.startswith("helpers"))
    assert parts, x
    for dev, strategy in parts.items():
        assert strategy == rule(mbps(dev, x["t_s"])), (x, dev, strategy, mbps(dev, x["t_s"]))
# 5 Mbit/s is the middle split, 1 Mbit/s local, a device that left is no longer decided.
assert "pi0=pp(4)" in decisions[1]["scheme"] and "pi0=local pi1=local" in decisions[2]["scheme"], decisions[:3]
assert "pi2" not in decisions[3]["scheme"], decisions[3]
s = json.load(open(d + "/summary.json"))
assert s["scheduler"] == "external" and s["total"]["completed"] > 0, s
PY
cp -r "$work/good" "$work/good1"  # the same command again (same --out: results record their command)
"$coinfer" run "$work/good.yaml" --out "$work/good" -q > /dev/null 2>&1 && cmp -s "$work/good/results.h5" "$work/good1/results.h5" \
  && ok || bad "same scheduler, same results (byte-identical results.h5)"

# --- failures: exit 2, the reason, no output folder ---
expect_bad() {  # name fragment scheduler-yaml
  scenario "$1" "$3"
  local start=$SECONDS
  timeout 120 "$coinfer" run "$work/$1.yaml" --out "$work/out-$1" > "$work/$1.out" 2>&1
  local rc=$?
  if [ $rc -ne 2 ]; then bad "$1: exit $rc, expected 2"; cat "$work/$1.out"; return; fi
  grep -q -- "$2" "$work/$1.out" || { bad "$1: no '$2'"; cat "$work/$1.out"; return; }
  [ -e "$work/out-$1" ] && { bad "$1: output folder written"; return; }
  ok
}
expect_bad missing "no-such-scheduler-program: No such file" "{name: external, command: no-such-scheduler-program}"
expect_bad quote "unterminated '" "{name: external, command: \"python3 'x\"}"
expect_bad nocommand "needs a command" "{name: external}"
expect_bad badkey "unknown parameter for scheduler 'external'" "{name: external, command: true, comand: x}"
expect_bad badtimeout "scheduler.timeout_s" "{name: external, command: true, timeout_s: -1}"
expect_bad silent "did not answer within 1 s (scheduler.startup_s)" "{name: external, command: \"sleep 30\", timeout_s: 1, startup_s: 1}"
expect_bad badstartup "scheduler.startup_s" "{name: external, command: true, startup_s: 0}"
expect_bad dies "the run stopped at t = 30 s: external scheduler .* exited (exit 3) instead of answering" \
  "{name: external, command: \"python3 '$example' --fail-after 2\"}"
# (3 s, not 1: the example's Python start-up must answer the hello in time on a loaded machine.)
expect_bad hangs "the run stopped at t = 20 s: .* did not answer within 3 s" \
  "{name: external, command: \"python3 '$example' --hang-after 1\", timeout_s: 3}"
expect_bad garbage "answered something that is not JSON: 'this is not json'" \
  "{name: external, command: \"python3 '$example' --garbage-after 0\"}"
# Schemes the factory refuses: a split beyond the model, a device that does not exist.
cat > "$work/bad_scheme.py" <<'PY'
import json, sys
what = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "ready"}), flush=True)
    else:
        s = {"pi0": "pp(99)"} if what == "split" else {} if what == "helper" else {"pi9": "local"}
        helpers = ["pi1"] if what == "helper" else []
        print(json.dumps({"type": "scheme", "id": m["id"], "scheme": {"strategies": s, "helpers": helpers}}), flush=True)
PY
expect_bad split "chose pp(99) for device 'pi0', whose model dgcnn/modelnet40 has 9 stages" "{name: external, command: \"python3 $work/bad_scheme.py split\"}"
expect_bad nodevice "chose a strategy for 'pi9', which is no device of the system" "{name: external, command: \"python3 $work/bad_scheme.py device\"}"
expect_bad busyhelper "named helper 'pi1', which has inputs of its own" "{name: external, command: \"python3 $work/bad_scheme.py helper\"}"
# The process exits in its own time once coinfer closes its input: none is left behind (given up to
# 10 s to exit on a loaded machine).
for _ in $(seq 1 20); do pgrep -f "$example" > /dev/null || break; sleep 0.5; done
pgrep -f "$example" > /dev/null && { bad "example scheduler processes left running"; pgrep -af "$example"; } || ok

# --- the same scheduler under coinfer serve (loopback testbed, real sockets and LibTorch) ---
rt="$(dirname "$coinfer")/coinfer-rt"
if [ -x "$rt" ]; then
  sed -e "s|^duration_s: 50|duration_s: 6|" -e "s|^warmup_s: 5|warmup_s: 1|" "$work/good.yaml" | \
    /usr/bin/python3 -c "import sys; t=sys.stdin.read(); print(t[:t.index('events:')] + 'drain_s: 10\n')" > "$work/tb.yaml"
  "$rt" testbed "$work/tb.yaml" --loopback --out "$work/tb" --startup 2 > "$work/tb.out" 2>&1; rc=$?
  [ $rc -eq 0 ] && /usr/bin/python3 -c "
import json
d = [json.loads(l) for l in open('$work/tb/decisions.jsonl')]
assert d and d[0]['scheme'].startswith('pi0=offload pi1=offload pi2=offload'), d
s = json.load(open('$work/tb/summary.json'))
assert s['scheduler'] == 'external' and s['total']['completed'] > 0, s" \
    && ok || { bad "external scheduler on the testbed: exit $rc"; tail -20 "$work/tb.out"; tail -20 "$work/tb/logs/server.log" 2>/dev/null; }
  # Batching as a decision on the real server: no batching (0 ms / 1) from the start,
  # 200 ms / 4 from the decision at 2 s (period 1 s). The real server applies each when decided, as the
  # simulator does: before 2 s every batch is one request; after it, batches of several wait at most
  # the 200 ms window (a batch seals when full or when the window since its first request ends; the
  # worker pool's wait comes after). The simulator of the same scenario decides the same sequence.
  # Deadlines too: 1 s with drop_late on every device; this 2-core machine is
  # overloaded by the run, so requests pass their deadline waiting at the server, which drops them
  # and tells their devices (status 2, "dropped at server edge0").
  sed -e "s|^scheduler: .*|scheduler: {name: external, period_s: 1, command: \"python3 '$example' --batching edge0:0:0:1 --batching edge0:2:200:4\"}|" \
      -e "s|workload: {arrival: closed_loop}|workload: {arrival: closed_loop, deadline_ms: 1000, drop_late: true}|" \
      -e "s|workload: {arrival: poisson, rate_per_s: 20}|workload: {arrival: poisson, rate_per_s: 20, deadline_ms: 1000, drop_late: true}|" \
    "$work/tb.yaml" > "$work/tbb.yaml"
  "$rt" testbed "$work/tbb.yaml" --loopback --out "$work/tbb" --startup 2 > "$work/tbb.out" 2>&1; rc=$?
  "$coinfer" run "$work/tbb.yaml" -q --out "$work/tbb-sim" > "$work/tbb-sim.out" 2>&1; rc_sim=$?
  [ $rc -eq 0 ] && [ $rc_sim -eq 0 ] && /usr/bin/python3 - "$work/tbb" "$work/tbb-sim" <<'PY' \
    && ok || { bad "batching decided at run time on the testbed: exit $rc / $rc_sim"; tail -20 "$work/tbb.out"; cat "$work/tbb-sim.out"; grep -i batching "$work/tbb/logs/server.log"; }
import json, sys, h5py, numpy as np
tb, sim = sys.argv[1], sys.argv[2]
dt = [json.loads(l) for l in open(tb + "/decisions.jsonl")]
ds = [json.loads(l) for l in open(sim + "/decisions.jsonl")]
assert "batching=[edge0:0ms/1]" in dt[0]["scheme"], dt[0]
at2 = [d for d in dt if "batching=[edge0:200ms/4]" in d["scheme"]]  # the example repeats it in every later decision
assert at2 and abs(at2[0]["t_s"] - 2) < 0.5, [d["scheme"] for d in dt]
strip = lambda d: [(round(x["t_s"]), x["trigger"], x["scheme"]) for x in d]
assert strip(dt) == strip(ds), (strip(dt), strip(ds))
t2 = at2[0]["t_s"]
with h5py.File(tb + "/results.h5") as f:
    q, start, size, status = (f["requests/" + k][()] for k in ("t_queued", "t_batch_start", "batch_size", "status"))
served = ~np.isnan(q) & ~np.isnan(start) & (status == 0)
# From the first decision on (on the real server it takes the external process's answer, ~25 ms here;
# requests queued before it batch under the scenario's 10 ms / 5).
before, after = served & (q > dt[0]["t_s"]) & (start < t2 - 0.05), served & (q > t2 + 0.05)
assert before.sum() > 5 and after.sum() > 5, (before.sum(), after.sum())
assert (size[before] == 1).all(), (np.unique(size[before]), q[before & (size > 1)], dt[0]["t_s"])
assert (size[after] <= 4).all() and (size[after] > 1).any(), np.unique(size[after], return_counts=True)
with h5py.File(tb + "/results.h5") as f:
    failure = [x.decode() if isinstance(x, bytes) else x for x in f["requests/failure"][()]]
at_server = [failure[i] for i in np.flatnonzero(status == 2) if failure[i].startswith("dropped at server edge0: ")]
assert at_server and all("its deadline of 1000 ms cannot be met" in x for x in at_server), (np.unique(status, return_counts=True), set(failure))
PY
fi

finish external_scheduler
