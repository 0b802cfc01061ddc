#!/usr/bin/env bash
# coinfer-rt testbed with two edge servers (hw/README.md "Several edge
# servers"): the first server (edge0) holds the scheduler, edge1 is its peer. Four devices start on
# edge0; static with scheduler.choose_servers moves pi0 and pi1 to edge1 at the start, back to edge0
# when edge1 fails (the testbed really kills it at 4 s) and to edge1 again when it recovers (started
# again at 6 s). Checked against the simulator: the same decisions (triggers and schemes), every
# request accounted for, the devices served where the scheme had them, failures only edge1's; both
# servers' logs show the peer registering and the devices moving (scenarios/servers/failover_two_servers.yaml).
# Loopback, then network namespaces
# (root). Then the first server fails instead (its coordinator runs on), and a peer forwards to its
# helpers. Also: a peer without
# --coordinator and an SSH testbed with two servers are refused (exit 2).
# Exit 77 (skip) without coinfer-rt.
set -u
rt="$1"; root="$2"
source "$(dirname "$0")/rt_processes.sh"  # skips without coinfer-rt; $work, ok, bad, finish, $sim, strays
cp scenarios/servers/failover_two_servers.yaml "$work/s.yaml"  # edge1 fails at 4 s, recovers at 6 s

"$sim" run "$work/s.yaml" --out "$work/sim" -q || { echo "FAIL simulator run"; exit 1; }

check() {  # $1: the testbed run's folder, $2: its output
  /usr/bin/python3 - "$1" "$work/sim" <<'PY' && ok || { bad "two-server records ($1)"; tail -20 "$2"; tail -20 "$1/logs/coordinator.log"; tail -20 "$1/logs/server-edge1.log"; }
import json, sys, h5py, numpy as np
d, sim = sys.argv[1], sys.argv[2]
def decisions(x):
    return [(r["trigger"], r["scheme"]) for r in map(json.loads, open(x + "/decisions.jsonl"))]
tb, sm = decisions(d), decisions(sim)
# The simulator's decisions: start (pi0, pi1 to edge1), fail:edge1 (back to edge0), recover:edge1.
assert [t for t, _ in sm] == ["start", "fail:edge1", "recover:edge1"], sm
assert tb == sm, (tb, sm)
with h5py.File(d + "/results.h5") as f:
    g = f["requests"]
    txt = lambda a: [x.decode() if isinstance(x, bytes) else x for x in a]
    status, device, server = g["status"][()], g["device"][()], g["server"][()]
    created, failure = g["t_created"][()], txt(g["failure"][()])
    servers = txt(f["servers/id"][()]) if "servers/id" in f else None
# Nothing lost silently, and every failure is edge1's (held at the kill, or sent while it was down).
assert all(s == 0 or failure[i] for i, s in enumerate(status)), "a failed request without a reason"
others = sorted({x for x in failure if x and not x.startswith(("server edge1 failed at 4 s", "server edge1 is down (failed at 4 s)"))})
assert not others, others
# The moved devices ask the coordinator 50 ms after their connection broke and are redirected to edge0
# (the simulator moves them at the failure itself; ~8 failures measured): at most a second of their
# 2 x 20 inputs/s may fail, where the simulator fails the one or two edge1 held.
assert sum(1 for x in failure if x) <= 40, sum(1 for x in failure if x)
# Where the scheme had them: pi0 and pi1 on edge1 before the failure and after the recovery (once it
# listens again), on edge0 in between; pi2 and pi3 on edge0 throughout. Half a second of slack at each
# change (the scheduling message, a registration; edge1 starts again in about a second).
done = status == 0
def share_on(devs, srv, t0, t1):
    m = done & np.isin(device, devs) & (created >= t0) & (created < t1)
    return (server[m] == srv).mean() if m.sum() else float("nan"), int(m.sum())
for (t0, t1, srv) in [(0.5, 4.0, 1), (4.5, 6.0, 0), (8.0, 10.0, 1)]:
    share, n = share_on([0, 1], srv, t0, t1)
    assert n > 10 and share > 0.95, (t0, t1, srv, share, n)
share, n = share_on([2, 3], 0, 0, 10)
assert n > 100 and share == 1.0, (share, n)
logc = open(d + "/logs/coordinator.log").read()
log1 = open(d + "/logs/server-edge1.log").read()
assert logc.count("server edge1 registered from") == 2, "edge1 did not register twice with the coordinator"
assert logc.count("server edge0 registered from") == 1, "edge0 did not register with the coordinator"
assert log1.count("serving edge1 of scenario failover_two_servers") == 2, "edge1 did not start twice"
info = json.load(open(d + "/testbed.json"))
assert [x["id"] for x in info["servers"]] == ["edge0", "edge1"] and info["coordinator"]["log"] == "logs/coordinator.log", info
for dv in ("pi0", "pi1"):
    dl = open(d + "/logs/device-" + dv + ".log").read()
    assert "moved to server edge1" in dl and "(server edge1)" in dl, dv
PY
}

run() {  # $1: name, rest: options
  local name=$1; shift
  # The default start-up: the check counts from 0.5 s, so the devices must have registered (and the
  # start decision moved pi0 and pi1) by time zero; a busy machine (CI) took longer than 2 s to start them.
  "$rt" testbed "$work/s.yaml" "$@" --out "$work/$name" --startup 4 > "$work/$name.txt" 2>&1; local rc=$?
  [ $rc -eq 0 ] && grep -q "started 2 edge servers" "$work/$name.txt" && grep -q "killed the edge server (edge1" "$work/$name.txt" \
    && grep -q "started the edge server again (edge1" "$work/$name.txt" && ok || { bad "$name run: exit $rc"; tail -20 "$work/$name.txt"; }
  [ -s "$work/$name/results.h5" ] && check "$work/$name" "$work/$name.txt"
  [ "$(strays)" -eq 0 ] && ok || bad "processes left behind: $(pgrep -af 'coinfer-rt (serve|device)')"
}
run lo --loopback
if [ "$(id -u)" -eq 0 ] && ip netns add cf_probe_$$ 2>/dev/null; then
  ip netns del cf_probe_$$
  run ns
  ip netns list | grep -q "^cf$$" && bad "namespaces left behind" || ok
fi

# The first server fails instead: the coordinator is a process of its own (--coordinate-only), which
# no fail event stops, so the testbed's decisions are the simulator's here too (pi2 and pi3 go to edge1
# at the failure, pi0 and pi1 back to edge0 at the recovery). Loopback only.
sets=(--set events.0.server=edge0 --set events.1.server=edge0)
"$sim" run "$work/s.yaml" "${sets[@]}" --out "$work/sim0" -q || bad "simulator run, edge0 failing"
"$rt" testbed "$work/s.yaml" "${sets[@]}" --loopback --out "$work/lo0" --startup 4 > "$work/lo0.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "killed the edge server (edge0" "$work/lo0.txt" && ok || { bad "loopback run, edge0 failing: exit $rc"; tail -20 "$work/lo0.txt"; }
/usr/bin/python3 - "$work/lo0" "$work/sim0" <<'PY' && ok || { bad "edge0 failing: decisions or records"; tail -20 "$work/lo0/logs/coordinator.log"; }
import json, sys, h5py
d, sim = sys.argv[1], sys.argv[2]
dec = lambda x: [(r["trigger"], r["scheme"]) for r in map(json.loads, open(x + "/decisions.jsonl"))]
assert [t for t, _ in dec(sim)] == ["start", "fail:edge0", "recover:edge0"], dec(sim)
assert dec(d) == dec(sim), (dec(d), dec(sim))
with h5py.File(d + "/results.h5") as f:
    failure = [x.decode() if isinstance(x, bytes) else x for x in f["requests/failure"][()]]
    status, created = f["requests/status"][()], f["requests/t_created"][()]
assert all(s == 0 or failure[i] for i, s in enumerate(status))
# A device the coordinator moves (pi2 and pi3 to edge1 at the failure, 4 s; pi0 and pi1 back at the
# recovery, 6 s) records an arrival it takes while reconnecting as failed, "not connected to the
# server" (hw/device_work.cpp): a CI run under load saw 6 such. Allowed within 1.5 s of a move only.
moving = lambda i: any(t <= created[i] < t + 1.5 for t in (4.0, 6.0))
others = sorted({x for i, x in enumerate(failure) if x and not x.startswith(("server edge0 failed at 4 s", "server edge0 is down (failed at 4 s)"))
                 and not (x == "not connected to the server" and moving(i))})
assert not others and sum(1 for x in failure if x) <= 40, (others, sum(1 for x in failure if x))
PY
[ "$(strays)" -eq 0 ] && ok || bad "processes left behind: $(pgrep -af 'coinfer-rt (serve|device)')"

# Helpers of a peer: the coordinator's scheme names them (peer_scheme's server_helpers), the peer
# forwards to them (tests/golden/testbed.sh's helper run, its devices on the second server).
cat > "$work/h.yaml" <<YAML
name: helpers_on_a_peer
seed: 1
duration_s: 5
drain_s: 5
luts: [traces/lut_measured]
servers:
  - {id: edge0, type: x86-epyc-2vcpu, workers: 1, batch: {window_ms: 0, max_size: 1}}
  - {id: edge1, type: x86-epyc-2vcpu, workers: 1, batch: {window_ms: 0, max_size: 1}}
devices:
  - {id: d, count: 3, type: x86-epyc-0.3cpu, model: dgcnn, dataset: modelnet40, server: edge1, link: {bandwidth_mbps: 100}, strategy: offload}
  - {id: idle, type: x86-epyc-2vcpu, model: dgcnn, dataset: modelnet40, server: edge1, link: {bandwidth_mbps: 100}, strategy: offload,
     workload: {arrival: none}}
scheduler: {name: static, helpers: true}
YAML
"$rt" testbed "$work/h.yaml" --loopback --out "$work/h" --startup 2 > "$work/h.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || { bad "helpers on a peer: exit $rc"; tail -5 "$work/h.txt"; }
/usr/bin/python3 - "$work/h/results.h5" <<'PY' && ok || bad "no request ran on the peer's helper"
import sys, h5py, numpy as np
r = h5py.File(sys.argv[1])["requests"]
helper, status, server = r["helper"][:], r["status"][:], r["server"][:]
assert np.sum((helper == 3) & (status == 0)) >= 3, np.unique(helper, return_counts=True)
assert np.sum(status != 0) == 0 and np.all(server == 1), (np.sum(status != 0), np.unique(server))
PY

# A peer needs to know where the coordinator is; refused before it listens.
COINFER_SECRET=x "$rt" serve "$work/s.yaml" --server edge1 --port 0 > "$work/peer.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--coordinator" "$work/peer.txt" && ok || { bad "peer without --coordinator: exit $rc"; cat "$work/peer.txt"; }
# Listening on every address, a server of several must say where devices reach it.
COINFER_SECRET=x "$rt" serve "$work/s.yaml" --server edge0 --port 0 > "$work/adv.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--advertise" "$work/adv.txt" && ok || { bad "0.0.0.0 without --advertise: exit $rc"; cat "$work/adv.txt"; }
# An inventory names one server host: refused before anything starts.
printf 'defaults: {coinfer: /opt/coinfer/coinfer-rt, arch: x86_64}\nserver: {address: 127.0.0.1}\nboards:\n' > "$work/inv.yaml"
for i in 0 1 2 3; do printf '  - {device: pi%s, address: 127.0.0.1}\n' $i >> "$work/inv.yaml"; done
"$rt" testbed "$work/s.yaml" --inventory "$work/inv.yaml" --out "$work/ssh" > "$work/ssh.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "an inventory names one server host" "$work/ssh.txt" && [ ! -e "$work/ssh" ] && ok \
  || { bad "SSH testbed with two servers: exit $rc"; cat "$work/ssh.txt"; }

# Access points tied to servers (scenarios/servers/walk_two_servers.yaml): car0 hands over from ap0
# (edge0's) to ap1 (edge1's) at ~5 s and moves to edge1 then, at the scenario's time, without a
# scheduler choosing servers; still1 is edge1's from the start (its first access point). The simulator
# and the testbed (namespaces when root, else loopback): a handover decision naming the move at the
# same time, the same decisions (triggers and schemes: the handover with its outage's rate change,
# then the outage's end; the coordinator offers a moving device's rate changes at their times, as the
# simulator does), and each device's requests served where its access point's server is.
walk="scenarios/servers/walk_two_servers.yaml"
"$sim" run "$walk" --out "$work/wsim" -q || bad "simulator run of $walk"
wopt=(--loopback); [ "$(id -u)" -eq 0 ] && wopt=()
"$rt" testbed "$walk" "${wopt[@]}" --out "$work/wtb" --startup 2 > "$work/wtb.txt" 2>&1 && ok || { bad "testbed run of $walk"; tail -20 "$work/wtb.txt"; }
for d in "$work/wsim" "$work/wtb"; do
  /usr/bin/python3 - "$d" <<'PY' && ok || bad "access points tied to servers ($d)"
import json, sys, h5py, numpy as np
d = sys.argv[1]
dec = [json.loads(l) for l in open(d + "/decisions.jsonl")]
ho = [x for x in dec if "handover:car0" in x["trigger"]]
assert len(ho) == 1 and 5.0 <= ho[0]["t_s"] < 5.6 and ho[0]["scheme"].endswith("servers=[car0:edge1]"), dec
schemes = [x["scheme"] for x in dec]
schemes = [x for i, x in enumerate(schemes) if i == 0 or x != schemes[i - 1]]
assert schemes == ["car0=offload still0=offload still1=offload helpers=[]",
                   "car0=offload still0=offload still1=offload helpers=[] servers=[car0:edge1]"], schemes
with h5py.File(d + "/results.h5") as f:
    g = f["requests"]
    dev, srv, t, st = g["device"][()], g["server"][()], g["t_created"][()], g["status"][()]
assert (st == 0).all(), "failed requests"
on = lambda i, t0, t1: set(srv[(dev == i) & (t >= t0) & (t < t1)].tolist())
# After the handover: from 0.4 s after the decision (which may come as late as 5.6 s on the testbed; the
# device learns it over the network), never before 5.4 s.
after = max(5.4, ho[0]["t_s"] + 0.4)
assert on(0, 0, 4.9) == {0} and on(0, after, 10) == {1}, (on(0, 0, 4.9), on(0, after, 10), ho[0]["t_s"])
assert on(1, 0, 10) == {0} and on(2, 0, 10) == {1}
PY
done
/usr/bin/python3 - "$work/wsim" "$work/wtb" <<'PY' && ok || bad "access points tied to servers: the testbed's decisions are not the simulator's"
import json, sys
dec = lambda d: [(x["trigger"], x["scheme"]) for x in map(json.loads, open(d + "/decisions.jsonl"))]
sm, tb = dec(sys.argv[1]), dec(sys.argv[2])
assert [t for t, _ in sm] == ["start", "bandwidth:car0+handover:car0", "bandwidth:car0"], sm
assert tb == sm, (tb, sm)
PY

finish testbed_two_servers
