#!/usr/bin/env bash
# Two Raspberry-Pi-like arm64 devices on the namespace testbed: the devices run the arm64 coinfer-rt
# (scripts/board.sh build) inside the arm64 Debian 12 root under qemu-user emulation, the edge server
# runs natively; the device LUT is profiled the same way, under emulation, so that the simulator and
# the testbed describe the same (slow) device. Checks: the run completes, every request is accounted
# for (each device's requests all ended ok), and the decisions (trigger -> scheme) are the simulator's.
# Also: a device program that cannot run here, or another coinfer, is refused before anything starts.
# Then the SSH testbed (`coinfer testbed --inventory`) with an `arch: aarch64` board: the arm64 root's
# own sshd (arm64, emulated) in a network namespace of its own, the edge server a native sshd in
# another, on a bridge; the run completes, every request ok, testbed.json names the board aarch64.
# Exit 77 (skip, with the reason) without root, namespaces or the arm64 root and build.
set -u
rt=$(readlink -f "$1"); root=$(readlink -f "$2")
source "$root/tests/golden/lib.sh"
[ -x "$rt" ] || { echo "SKIP: built without LibTorch (no coinfer-rt)"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (namespaces, the arm64 root)"; exit 77; }
if ! bash "$root/scripts/board.sh" check > "$work/check.txt" 2>&1; then
  echo "SKIP: $(cat "$work/check.txt"): make it with scripts/board.sh setup && scripts/board.sh build"; exit 77
fi
ip netns add cfprobe$$ 2>/dev/null || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip netns del cfprobe$$
cd "$root"
coinfer="$(dirname "$rt")/coinfer"
launcher="bash $root/scripts/board.sh run"

# A program for another architecture without its launcher: refused naming the launcher, nothing started.
cat > "$work/tiny.yaml" <<YAML
name: tiny
duration_s: 1
luts: [traces/lut]
servers: [{id: edge, type: gtx1060}]
devices: [{id: pi0, type: rpi4b, model: gcn, dataset: mr, strategy: offload, link: {bandwidth_mbps: 40, latency_ms: 2}}]
YAML
"$rt" testbed "$work/tiny.yaml" --device-rt build-arm64/coinfer-rt --out "$work/refused" > "$work/refused.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q -- "--device-launcher" "$work/refused.txt" && [ ! -e "$work/refused" ] && ok || bad "arm64 program without launcher: exit $rc: $(tail -3 "$work/refused.txt")"
"$rt" testbed "$work/tiny.yaml" --device-rt "$work/none" --out "$work/refused2" > "$work/refused2.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no such program" "$work/refused2.txt" && ok || bad "missing device program: exit $rc: $(tail -3 "$work/refused2.txt")"

# The LUTs: the device's measured under emulation by the arm64 profiler, the server's natively.
mkdir -p "$work/lut"
t0=$(date +%s)
$launcher build-arm64/coinfer-profile --model gcn --dataset mr --device-type qemu-arm64 --batch 1..1 --repeats 3 --warmup 1 \
  --out "$work/lut/qemu-arm64.h5" -q > "$work/prof_dev.txt" 2>&1 || { bad "profiling under emulation: $(tail -5 "$work/prof_dev.txt")"; finish board_testbed; exit 1; }
"$(dirname "$rt")/coinfer-profile" --model gcn --dataset mr --device-type x86-server --batch 1..2 --repeats 3 --warmup 1 \
  --out "$work/lut/x86-server.h5" -q > "$work/prof_srv.txt" 2>&1 || { bad "profiling the server: $(tail -5 "$work/prof_srv.txt")"; finish board_testbed; exit 1; }
echo "note: LUTs profiled in $(( $(date +%s) - t0 )) s (the device's under emulation)"
"$coinfer" lut show "$work/lut/qemu-arm64.h5" 2>&1 | grep -q "machine: aarch64" && "$coinfer" lut show "$work/lut/qemu-arm64.h5" 2>&1 | grep -q "emulated: qemu-user aarch64" && ok || bad "the emulated device's LUT does not say it was measured on aarch64: $("$coinfer" lut show "$work/lut/qemu-arm64.h5" | head -20)"

cat > "$work/board.yaml" <<YAML
name: board-arm64
seed: 1
duration_s: 24
warmup_s: 2
drain_s: 30
luts: [$work/lut]
servers:
  - {id: edge, type: x86-server, workers: 1, batch: {window_ms: 0, max_size: 1}}
devices:
  - {id: pi, count: 2, type: qemu-arm64, model: gcn, dataset: mr,
     link: {bandwidth_mbps: 40, latency_ms: 2}, workload: {arrival: closed_loop}, strategy: offload}
scheduler: {name: hierarchical}
events:
  - {at_s: 8, device: pi0, bandwidth_mbps: 0.2}
  - {at_s: 14, device: pi1, bandwidth_mbps: 0.2}
YAML
"$coinfer" run "$work/board.yaml" --out "$work/sim" -q > "$work/sim.txt" 2>&1 || { bad "simulator: $(tail -5 "$work/sim.txt")"; finish board_testbed; exit 1; }
"$rt" testbed "$work/board.yaml" --device-rt build-arm64/coinfer-rt --device-launcher "$launcher" --startup 30 \
  --out "$work/tb" > "$work/tb.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || { bad "testbed with arm64 devices: exit $rc"; tail -20 "$work/tb.txt"; for f in "$work"/tb*/logs/device-*.log; do echo "== $f"; tail -5 "$f"; done; }
grep -q "the devices run .*build-arm64/coinfer-rt (aarch64, on aarch64)" "$work/tb.txt" && ok || bad "the testbed did not say the devices run the arm64 program: $(head -5 "$work/tb.txt")"
/usr/bin/python3 - "$work/sim" "$work/tb" <<'PY' && ok || bad "arm64 testbed against the simulator (above)"
import json, sys, h5py, numpy as np
sim, tb = sys.argv[1], sys.argv[2]
info = json.load(open(tb + "/testbed.json"))
prog = info["device_program"]
assert prog["built_for"] == "aarch64" and prog["machine"] == "aarch64", prog
with h5py.File(tb + "/results.h5") as f:
    r = f["requests"]
    dev, status = r["device"][:], r["status"][:]
    for d in (0, 1):
        mine = status[dev == d]
        assert len(mine) >= 3, f"device {d}: only {len(mine)} requests"
        assert np.all(mine == 0), f"device {d}: statuses {np.unique(mine, return_counts=True)}"
def seq(d):
    return [f'{x["trigger"]} -> {x["scheme"]}' for x in map(json.loads, open(d + "/decisions.jsonl"))]
a, b = seq(sim), seq(tb)
assert a == b, f"decisions differ:\n simulator {a}\n testbed   {b}"
assert len(a) >= 3, a  # the start and the two bandwidth drops
print(f"arm64 testbed: {len(status)} requests, all ok; {len(a)} decisions, the simulator's: {a}")
PY

# --- the SSH testbed with an emulated aarch64 board ---------------------------------------------------
tag="cfbd$$"; tag=${tag:0:9}
ssh_hosts=(s b)
source "$root/tests/golden/ssh_hosts.sh"
ssh_cleanup() {
  ssh_hosts_down "$tag" "${ssh_hosts[@]}"
  rm -rf "$work"
}
trap ssh_cleanup EXIT
if [ ! -x /usr/sbin/sshd ] || ! command -v ssh > /dev/null; then
  echo "note: no sshd or ssh client here: the SSH part is not run"
else
  ssh_hosts_up "$tag" 10.206.0 "${ssh_hosts[@]}" || bad "making the SSH hosts"
  ip netns exec "${tag}s" /usr/sbin/sshd -f "$work/sshd_s.conf" -E "$work/sshd_s.log"
  # The board: the arm64 root's sshd (its /work, /tmp and this tree are the host's, bound in).
  (ip netns exec "${tag}b" bash "$root/scripts/board.sh" run bash -c "mkdir -p /run/sshd && exec /usr/sbin/sshd -D -f $work/sshd_b.conf -E $work/sshd_b.log" \
    > "$work/sshd_b.out" 2>&1 &)
  ssh_wait_for 10.206.0.1 10.206.0.2 10.206.0.2  # the emulated sshd starts slowly: asked twice
  arch=$(ssh -T -o BatchMode=yes -o UserKnownHostsFile="$work/known_hosts" -i "$work/id" root@10.206.0.2 uname -m 2>&1)
  [ "$arch" = aarch64 ] && ok || bad "the emulated board's sshd: uname -m says '$arch' ($(tail -3 "$work/sshd_b.out" "$work/sshd_b.log" 2>/dev/null))"
  cat > "$work/ssh.yaml" <<YAML
name: board-ssh
seed: 4
duration_s: 10
warmup_s: 1
drain_s: 20
luts: [$work/lut]
servers:
  - {id: edge, type: x86-server, workers: 1, batch: {window_ms: 0, max_size: 1}}
devices:
  - {id: pi0, type: qemu-arm64, model: gcn, dataset: mr, link: {bandwidth_mbps: 40, latency_ms: 2}, workload: {arrival: closed_loop}, strategy: offload}
YAML
  cat > "$work/hosts.yaml" <<INV
# tests/golden/board_testbed.sh: a native edge server and an emulated arm64 board, each behind its sshd
$(ssh_inventory_defaults "$rt")
server:
  address: 10.206.0.1
  service_port: 7172
boards:
  - device: pi0
    address: 10.206.0.2
    arch: aarch64
    coinfer: $root/build-arm64/coinfer-rt
INV
  t0=$(date +%s)
  "$rt" testbed "$work/ssh.yaml" --inventory "$work/hosts.yaml" --out "$work/sshrun" --startup 30 > "$work/sshrun.txt" 2>&1; rc=$?
  echo "note: the SSH testbed with an emulated aarch64 board: $(( $(date +%s) - t0 )) s wall for a 10 s scenario"
  [ $rc -eq 0 ] && /usr/bin/python3 - "$work/sshrun" <<'PY' && ok || { bad "SSH testbed with an aarch64 board: exit $rc"; tail -20 "$work/sshrun.txt"; }
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
tb = json.load(open(d + "/testbed.json"))
assert tb["mode"] == "ssh", tb["mode"]
text = json.dumps(tb["hosts"])
assert "aarch64" in text, tb["hosts"]
dev = s["devices"]["pi0"]
assert dev["completed"] >= 3 and dev["failed"] == 0 and dev["completed"] == dev["created"], dev
print(f"SSH testbed, emulated aarch64 board: {dev['completed']} requests, all ok")
PY
  # An inventory saying x86_64 for the emulated board: refused before anything starts, naming the key.
  sed 's/    arch: aarch64/    arch: x86_64/' "$work/hosts.yaml" > "$work/hosts_wrong.yaml"
  "$rt" testbed "$work/ssh.yaml" --inventory "$work/hosts_wrong.yaml" --out "$work/sshwrong" --startup 30 > "$work/sshwrong.txt" 2>&1; rc=$?
  [ $rc -eq 2 ] && grep -q "arch" "$work/sshwrong.txt" && grep -q "aarch64" "$work/sshwrong.txt" && [ ! -e "$work/sshwrong" ] && ok \
    || bad "an inventory with the wrong arch: exit $rc: $(tail -3 "$work/sshwrong.txt")"
fi
finish board_testbed
