#!/usr/bin/env bash
# Faults of the real runtime on loopback (real coinfer-rt processes, real LibTorch, real sockets):
#  1. a device killed mid-run: the server logs it, the other device carries on, and the killed device's
#     journal shows its unfinished requests (the testbed merge reports them failed);
#  2. the server killed and restarted on the same port: the device reconnects and carries on; the
#     requests lost with the connection are recorded failed with the reason, none silently;
#  3. a wrong secret: the device exits 2 naming the reason, the server keeps serving;
#  4. a testbed killed with -9: the processes it started stop by themselves.
set -u
rt="$1"; root="$2"
source "$(dirname "$0")/rt_processes.sh"
echo "faults-secret" > "$work/secret"
cat > "$work/s.yaml" <<YAML
name: faults
seed: 3
duration_s: 9
drain_s: 3
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1, batch: {window_ms: 5, max_size: 4}}
devices:
  - {id: pi0, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 50}, strategy: offload}
  - {id: pi1, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 50}, strategy: pp(1)}
YAML
start_server() {  # $1 = port (0 = any), $2 = log
  "$rt" serve "$work/s.yaml" --bind 127.0.0.1 --port "$1" --port-file "$work/port" --secret-file "$work/secret" --epoch "$epoch" > "$2" 2>&1 &
  server=$!; pids+=($server)
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  port=$(cat "$work/port")
}
start_device() {  # $1 = id, $2 = secret file
  "$rt" device "$work/s.yaml" --id "$1" --port "$port" --epoch "$epoch" --secret-file "$2" --records "$work/$1.jsonl" > "$work/$1.log" 2>&1 &
  pids+=($!)
  last=$!
}

# 1. A device killed mid-run.
epoch=$(date +%s.%N | awk '{printf "%.3f", $1 + 2}')
rm -f "$work/port"; start_server 0 "$work/server1.log"
start_device pi0 "$work/secret"; dev0=$last
start_device pi1 "$work/secret"; dev1=$last
sleep 5; kill -9 "$dev1"
kill_t=$(awk -v e="$epoch" -v n="$(date +%s.%N)" 'BEGIN{print n - e}')
wait "$dev0"; rc0=$?
[ $rc0 -eq 0 ] && ok || bad "device pi0 exit $rc0: $(tail -3 $work/pi0.log)"
for _ in $(seq 50); do grep -q "device pi1 disconnected" "$work/server1.log" && break; sleep 0.1; done
grep -q "device pi1 disconnected" "$work/server1.log" && ok || bad "server did not notice pi1 died: $(cat $work/server1.log)"
/usr/bin/python3 - "$work" "$kill_t" <<'PY' && ok || bad "journals after the kill"
import json, sys
work, kill_t = sys.argv[1], float(sys.argv[2])
def load(p):
    created, done = {}, {}
    for line in open(p):
        try: j = json.loads(line)
        except ValueError: continue
        if j["ev"] == "created": created[j["id"]] = j
        elif j["ev"] == "done": done[j["id"]] = j
    return created, done
c0, d0 = load(f"{work}/pi0.jsonl")
assert set(c0) == set(d0), "pi0 left requests without an outcome"
ok_after = [d for d in d0.values() if d["status"] == "ok" and d["t_created"] > kill_t + 0.5]
assert len(ok_after) > 10, f"pi0 did not carry on after the kill ({len(ok_after)} completed)"
c1, d1 = load(f"{work}/pi1.jsonl")
assert len(d1) > 5, "pi1 completed nothing before the kill"
pending = set(c1) - set(d1)
assert len(pending) >= 1, "the killed device had no unfinished request in its journal"
print(f"pi0 completed {len(ok_after)} after the kill; pi1 left {len(pending)} unfinished")
PY
kill "$server"; wait "$server" 2>/dev/null

# 2. The server killed and restarted on the same port.
epoch=$(date +%s.%N | awk '{printf "%.3f", $1 + 2}')
rm -f "$work/port"; start_server 0 "$work/server2.log"
start_device pi0 "$work/secret"; dev0=$last
sleep 4; kill -9 "$server"; wait "$server" 2>/dev/null
sleep 1
rm -f "$work/port"; start_server "$port" "$work/server3.log"
restart_t=$(awk -v e="$epoch" -v n="$(date +%s.%N)" 'BEGIN{print n - e}')
wait "$dev0"; rc=$?
[ $rc -eq 0 ] && ok || bad "device exit $rc after the restart: $(tail -3 $work/pi0.log)"
[ "$(grep -c 'registered with' "$work/pi0.log")" -ge 2 ] && ok || bad "device did not reconnect: $(cat $work/pi0.log)"
/usr/bin/python3 - "$work/pi0.jsonl" "$restart_t" <<'PY' && ok || bad "journal across the restart"
import json, sys
created, done = {}, {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j["ev"] == "created": created[j["id"]] = j
    elif j["ev"] == "done": done[j["id"]] = j
restart_t = float(sys.argv[2])
assert set(created) == set(done), "requests without an outcome"
failed = [d for d in done.values() if d["status"] == "failed"]
assert failed, "the kill of the server failed no request?"
assert all(d["failure"] for d in failed), "a failure without a reason"
after = [d for d in done.values() if d["status"] == "ok" and d["t_created"] > restart_t]
assert len(after) > 10, f"only {len(after)} completed after the restart"
print(f"{len(failed)} failed with reasons {sorted(set(d['failure'] for d in failed))}; {len(after)} completed after the restart")
PY

# 3. A wrong secret: exit 2 with the reason; the server still serves a correct device.
echo "wrong" > "$work/wrong"
epoch=$(date +%s.%N | awk '{printf "%.3f", $1 + 1}')
"$rt" device "$work/s.yaml" --id pi1 --port "$port" --epoch "$epoch" --secret-file "$work/wrong" --records "$work/w.jsonl" > "$work/w.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "authentication failed" "$work/w.log" && ok || bad "wrong secret: exit $rc: $(cat $work/w.log)"
grep -q "rejected .*authentication failed" "$work/server3.log" && ok || bad "server did not log the rejection"
kill -0 "$server" 2>/dev/null && ok || bad "server died after the wrong secret"
# Unknown device id: refused before connecting, exit 2.
"$rt" device "$work/s.yaml" --id ghost --port "$port" --secret-file "$work/secret" --records "$work/g.jsonl" > "$work/g.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "unknown device 'ghost'" "$work/g.log" && ok || bad "unknown device: exit $rc: $(cat $work/g.log)"
# Stages placed on a board's GPU: this runtime computes on the CPU; refused before connecting,
# exit 2, saying what a GPU would need (a CUDA LibTorch with a visible GPU; Debian's has none).
"$rt" device tests/golden/tx2_cpu_gpu.yaml --id tx --port "$port" --secret-file "$work/secret" --records "$work/gpu.jsonl" > "$work/gpu.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "devices (id tx).strategy.*placement on 'gpu' is simulated only.*needs a CUDA LibTorch with a visible GPU" "$work/gpu.log" \
  && [ ! -s "$work/gpu.jsonl" ] && ok || bad "a GPU placement on the CPU runtime: exit $rc: $(cat $work/gpu.log)"
kill "$server"; wait "$server" 2>/dev/null

# 4. A board with too little memory: the real runtime's tensors may not pass memory_gb, so a
#    local DGCNN request (its edge features and distances, tens of MB) fails with the simulator's
#    reason; the weights (~7 MB) fit. The simulator says the same of the same scenario.
cat > "$work/m.yaml" <<YAML
name: memory
seed: 3
duration_s: 3
drain_s: 2
luts: [traces/lut]
servers:
  - {id: edge, type: gtx1060}
devices:
  - {id: pi0, type: rpi4b, memory_gb: 0.02, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 50}, strategy: local}
YAML
epoch=$(date +%s.%N | awk '{printf "%.3f", $1 + 2}')
rm -f "$work/port"
"$rt" serve "$work/m.yaml" --bind 127.0.0.1 --port 0 --port-file "$work/port" --secret-file "$work/secret" --epoch "$epoch" > "$work/server4.log" 2>&1 &
server=$!; pids+=($server)
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
"$rt" device "$work/m.yaml" --id pi0 --port "$(cat "$work/port")" --epoch "$epoch" --secret-file "$work/secret" --records "$work/m.jsonl" > "$work/m.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || bad "device with little memory: exit $rc: $(tail -3 $work/m.log)"
/usr/bin/python3 - "$work/m.jsonl" <<'PY' && ok || bad "out-of-memory failures on the real runtime"
import json, sys
done = [j for j in map(json.loads, open(sys.argv[1])) if j["ev"] == "done"]
assert done, "no request finished"
assert all(d["status"] == "failed" and d["failure"].startswith("out of memory on pi0:cpu (needs ") and d["failure"].endswith("MB, has 20.0 MB)")
           for d in done), sorted(set(d["failure"] for d in done))
print(f"{len(done)} requests failed: {done[0]['failure']}")
PY
"$(dirname "$rt")/coinfer" run "$work/m.yaml" -q --out "$work/m_sim" > /dev/null 2>&1 \
  && /usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["total"]
assert t["completed"] == 0 and t["failed"] > 0, t' "$work/m_sim/summary.json" && ok || bad "the simulator on the same board"
kill "$server"; wait "$server" 2>/dev/null

# 4. `kill -9` of a testbed (its server ran on, parent PID 1): the processes it
# started stop by themselves within a few seconds; --cleanup finds none left.
"$rt" testbed "$work/s.yaml" --loopback --out "$work/tb9" > "$work/tb9.log" 2>&1 &
tb=$!
kids=""
for _ in $(seq 150); do
  kids=$(pgrep -P "$tb" 2>/dev/null | tr '\n' ' ')
  [ "$(echo $kids | wc -w)" -ge 2 ] && break   # the server and at least one device
  sleep 0.1
done
kill -9 "$tb"; wait "$tb" 2>/dev/null
gone=1
for _ in $(seq 100); do
  gone=1
  for k in $kids; do kill -0 "$k" 2>/dev/null && gone=0; done
  [ $gone -eq 1 ] && break
  sleep 0.1
done
[ -n "$kids" ] && [ $gone -eq 1 ] && ok || { bad "processes of a testbed killed with -9 still run: $kids"; for k in $kids; do kill -9 "$k" 2>/dev/null; done; }
"$rt" testbed --cleanup > "$work/cleanup.out" 2>&1 && grep -q "stopped 0 stray processes" "$work/cleanup.out" && ok || { bad "--cleanup after the kill"; cat "$work/cleanup.out"; }
finish runtime_faults
