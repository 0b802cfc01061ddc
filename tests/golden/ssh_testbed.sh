#!/usr/bin/env bash
# coinfer testbed --inventory: the real-testbed path over SSH, without boards. Each network namespace
# this test creates plays a host (the edge server and two boards): its own sshd on its own address on a
# bridge, keys generated here, coinfer started through ssh exactly as on real hosts. Checked:
#   - a run: results in the simulator's schema, a board's clock set 3 s off measured and corrected to
#     within 1 ms, a board's interface shaped with tc while it runs and unshaped after, no process and no
#     run folder left on any host;
#   - a board that becomes unreachable mid-run (its link cut): the run completes, its requests after the
#     cut are reported failed with the reason, the other board is unaffected;
#   - Ctrl-C mid-run: exit 130, nothing left on any host;
#   - a wrong coinfer version on one host, a coinfer built for another architecture, an unreachable host, a host without coinfer, a device the
#     scenario lacks, two boards for one device, a missing key: exit 2 naming the inventory's file, line
#     and key, before anything starts (no run folder, no process, no output).
# Exit 77 (skip) without root, namespaces, sshd or coinfer-rt.
set -u
rt=$(readlink -f "$1"); root=$(readlink -f "$2")
[ -x "$rt" ] || { echo "SKIP: built without LibTorch (no coinfer-rt)"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
[ -x /usr/sbin/sshd ] || { echo "SKIP: no sshd (scripts/setup.sh installs openssh-server)"; exit 77; }
command -v ssh > /dev/null || { echo "SKIP: no ssh client"; exit 77; }
tag="cfssh$$"; tag=${tag:0:9}
ip netns add "${tag}x" 2>/dev/null || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip netns del "${tag}x"
source "$root/tests/golden/lib.sh"
cd "$root"
hosts=(s b0 b1)
source "$root/tests/golden/ssh_hosts.sh"
cleanup() {
  ssh_hosts_down "$tag" "${hosts[@]}"
  rm -rf "$work"
}
trap cleanup EXIT

# --- the hosts -------------------------------------------------------------------------------------
ssh_hosts_up "$tag" 10.203.0 "${hosts[@]}" || { echo "FAIL: making the hosts"; exit 1; }
for h in "${hosts[@]}"; do
  ip netns exec "$tag$h" /usr/sbin/sshd -f "$work/sshd_$h.conf" -E "$work/sshd_$h.log" || { echo "FAIL: sshd in $tag$h"; exit 1; }
done
# Each sshd answers (the bridge works) before anything else.
ssh_wait_for 10.203.0.1 10.203.0.2 10.203.0.3

cat > "$work/s.yaml" <<YAML
name: sshtb
seed: 3
duration_s: 8
warmup_s: 1
drain_s: 3
luts: [$root/traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 1, batch: {window_ms: 5, max_size: 4}}
devices:
  - {id: pi0, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 40, latency_ms: 2}, strategy: offload}
  - {id: pi1, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 20, latency_ms: 2}, strategy: pp(1)}
events:
  - {at_s: 4, device: pi0, bandwidth_mbps: 10}
YAML
inventory() {  # inventory FILE [b1 coinfer] [b0 device] [extra board lines]
  cat > "$1" <<INV
# hosts of the namespace test (tests/golden/ssh_testbed.sh)
$(ssh_inventory_defaults "$rt")
server:
  address: 10.203.0.1
  service_port: 7171
boards:
  - device: ${3:-pi0}
    address: 10.203.0.2
    interface: ${tag}pb0
    shape: true
  - device: pi1
    address: 10.203.0.3
    coinfer: ${2:-$rt}
${4:-}
INV
}
nothing_left() {  # nothing of ours on any host: no coinfer process, no run folder, no tc shaping
  local left=""
  for h in "${hosts[@]}"; do
    for p in $(ip netns pids "$tag$h" 2>/dev/null); do
      grep -q "coinfer-rt" "/proc/$p/cmdline" 2>/dev/null && left="$left $h:coinfer($p)"
    done
  done
  [ -z "$(ls -A "$work/remote")" ] || left="$left folders:$(ls "$work/remote" | tr '\n' ' ')"
  ip netns exec "${tag}b0" tc qdisc show dev "${tag}pb0" | grep -q tbf && left="$left tbf-on-b0"
  [ -z "$left" ] || { echo "left behind:$left"; return 1; }
}

# --- a run ------------------------------------------------------------------------------------------
inventory "$work/hosts.yaml"
t0=$(date +%s.%N)
"$rt" testbed "$work/s.yaml" --inventory "$work/hosts.yaml" --out "$work/run" --startup 2 --device-clock-skew pi1=3 \
  > "$work/run.txt" 2>&1 &
pid=$!
shaped=no
for i in $(seq 300); do
  kill -0 $pid 2>/dev/null || break
  ip netns exec "${tag}b0" tc qdisc show dev "${tag}pb0" 2>/dev/null | grep -q "tbf.*rate 40Mbit" && { shaped=yes; break; }
  sleep 0.1
done
wait $pid; rc=$?
echo "a run over ssh: $(/usr/bin/python3 -c "import time; print(round(time.time() - $t0, 1))") s wall for an 8 s scenario (checks, start-up, drain, copies)"
[ $rc -eq 0 ] && [ $shaped = yes ] && /usr/bin/python3 - "$work/run" <<'PY' && ok "run over ssh" || { bad "run over ssh: exit $rc, shaped $shaped"; tail -20 "$work/run.txt"; }
import json, sys, h5py, numpy as np
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
tb = json.load(open(d + "/testbed.json"))
assert tb["mode"] == "ssh" and len(tb["hosts"]) == 3, tb
for dev in ("pi0", "pi1"):
    assert s["devices"][dev]["completed"] > 10 and s["devices"][dev]["failed"] == 0, (dev, s["devices"][dev])
clock = s["clock"]["devices"]
# pi1's clock is 3 s ahead: measured offset (server - device) -3 s, known to better than 1 ms on this link.
assert abs(clock["pi1"]["offset_s"] + 3) < 0.001 and clock["pi1"]["uncertainty_s"] < 0.001, clock
assert abs(clock["pi0"]["offset_s"]) < 0.001, clock
with h5py.File(d + "/results.h5") as f:
    g = f["requests"]
    dev = g["device"][()]
    created, up, b_start, result = (g[k][()] for k in ("t_created", "t_uplink_end", "t_batch_start", "t_result"))
# Corrected to the server's clock: pi1's uploads reach the server after their creation, and results come
# back after the batch started, by less than a second (the raw journal is 3 s off).
m = (dev == 1) & np.isfinite(up) & np.isfinite(result)
assert m.sum() > 10, m.sum()
assert np.all(up[m] > created[m]) and np.all(up[m] - created[m] < 1), (up[m] - created[m]).min()
assert np.all(result[m] > b_start[m]) and np.all(result[m] - b_start[m] < 1)
print("pi1 clock offset %.6f s (set: -3), uncertainty %.6f s, %d probe samples; pi0 %.6f s; %d requests completed"
      % (clock["pi1"]["offset_s"], clock["pi1"]["uncertainty_s"], clock["pi1"]["samples"], clock["pi0"]["offset_s"], s["total"]["completed"]))
PY
grep -q "shaping 1 boards" "$work/run.txt" && ok || bad "the run does not say it shapes: $(grep -c . "$work/run.txt") lines"
nothing_left && ok "nothing left after a run" || bad "after a run"

# --- a board that becomes unreachable mid-run ------------------------------------------------------
"$rt" testbed "$work/s.yaml" --inventory "$work/hosts.yaml" --out "$work/cut" --startup 2 > "$work/cut.txt" 2>&1 &
pid=$!
cut=no
for i in $(seq 400); do
  kill -0 $pid 2>/dev/null || break
  done_lines=$(grep -c '"ev":"done"' "$work/cut.work/stream-1.jsonl" 2>/dev/null)
  if [ "${done_lines:-0}" -ge 10 ]; then
    ip -n "${tag}b1" link set "${tag}pb1" down && cut=yes
    break
  fi
  sleep 0.05
done
wait $pid; rc=$?
# Exit 1: the run completed with a fault (the lost board), results written.
[ $rc -eq 1 ] && [ $cut = yes ] && /usr/bin/python3 - "$work/cut" <<'PY' && ok "unreachable board" || { bad "unreachable board: exit $rc, cut $cut"; tail -20 "$work/cut.txt"; }
import json, sys, h5py, numpy as np
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
tb = json.load(open(d + "/testbed.json"))
lost = {h["name"]: h["lost_at_s"] for h in tb["hosts"]}
assert lost["pi1"] is not None and lost["pi0"] is None, lost
assert s["devices"]["pi0"]["completed"] > 10 and s["devices"]["pi0"]["failed"] == 0, s["devices"]["pi0"]
with h5py.File(d + "/results.h5") as f:
    g = f["requests"]
    dev, status = g["device"][()], g["status"][()]
    failure = [x.decode() if isinstance(x, bytes) else x for x in g["failure"][()]]
    names = [x.decode() if isinstance(x, bytes) else x for x in f["devices/id"][()]]
i1 = names.index("pi1")
ok1 = (dev == i1) & (status == 0)
fail1 = [failure[k] for k in range(len(dev)) if dev[k] == i1 and status[k] != 0]
assert ok1.sum() >= 10, ok1.sum()
# pi1 runs a closed loop: a request is always in flight, so the cut leaves at least one unfinished,
# failed with the reason; every failure of pi1 is the cut.
assert fail1 and all("became unreachable" in x for x in fail1), fail1[:5]
PY
grep -q "lost board pi1" "$work/cut.txt" && ok || bad "no warning about the lost board"
ip -n "${tag}b1" link set "${tag}pb1" up
for p in $(ip netns pids "${tag}b1"); do grep -q coinfer-rt "/proc/$p/cmdline" 2>/dev/null && kill -9 "$p"; done
rm -rf "$work/remote/"*-pi1
nothing_left && ok "nothing left on reachable hosts after the cut" || bad "after the cut"

# --- Ctrl-C while the devices run: exit 130, every remote process stopped, nothing left -----------
"$rt" testbed "$work/s.yaml" --inventory "$work/hosts.yaml" --out "$work/int" --startup 2 > "$work/int.txt" 2>&1 &
pid=$!
for i in $(seq 400); do
  kill -0 $pid 2>/dev/null || break
  done_lines=$(grep -c '"ev":"done"' "$work/int.work/stream-0.jsonl" 2>/dev/null)
  [ "${done_lines:-0}" -ge 5 ] && break
  sleep 0.05
done
kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 130 ] && [ ! -e "$work/int/results.h5" ] && nothing_left && ok "Ctrl-C" || { bad "Ctrl-C: exit $rc"; tail -5 "$work/int.txt"; }

# --- refused before anything starts ----------------------------------------------------------------
refused() {  # refused NAME EXPECTED-TEXT... : exit 2, the message has each text, nothing started or written
  local name="$1"; shift
  "$rt" testbed "$work/s.yaml" --inventory "$work/bad.yaml" --out "$work/bad-out" --startup 1 > "$work/bad.txt" 2>&1; local rc=$?
  local missing=""
  for t in "$@"; do grep -qF -- "$t" "$work/bad.txt" || missing="$missing '$t'"; done
  if [ $rc -eq 2 ] && [ -z "$missing" ] && [ ! -e "$work/bad-out" ] && nothing_left; then ok "$name"; else bad "$name: exit $rc, missing$missing: $(cat "$work/bad.txt")"; fi
}
printf '#!/bin/sh\necho "{\\"coinfer\\":\\"0.0.9\\",\\"protocol\\":1,\\"built_for\\":\\"x86_64\\",\\"machine\\":\\"%s\\"}"\n' "$(uname -m)" > "$work/old-coinfer"
chmod +x "$work/old-coinfer"
inventory "$work/bad.yaml" "$work/old-coinfer"
refused "wrong version" "bad.yaml:19" "boards[1].coinfer" "runs coinfer 0.0.9"
# A program built for another architecture (a copy of a small ELF program with its machine field set to
# another architecture's): the host cannot execute it. Not one that qemu-user runs here through
# binfmt_misc (scripts/board.sh registers aarch64): the first of aarch64, riscv64, s390x, ppc64 without
# an enabled handler, else x86_64 where this is not an x86_64 machine.
foreign=""
for a in "aarch64 \xb7" "riscv64 \xf3" "s390x \x16" "ppc64 \x15" "x86_64 \x3e"; do
  set -- $a
  [ "$1" = "$(uname -m)" ] && continue
  grep -qs '^enabled' "/proc/sys/fs/binfmt_misc/qemu-$1" && continue
  foreign="$2"; break
done
cp /bin/true "$work/foreign-coinfer"
printf "$foreign\x00" | dd of="$work/foreign-coinfer" bs=1 seek=18 conv=notrunc status=none
inventory "$work/bad.yaml" "$work/foreign-coinfer"
refused "coinfer built for another architecture" "bad.yaml:19" "boards[1].coinfer" "built for another architecture"
inventory "$work/bad.yaml" "/nonexistent/coinfer-rt"
refused "host without coinfer" "bad.yaml:19" "boards[1].coinfer" "is not installed"
inventory "$work/bad.yaml" "" "pi7"
refused "device the scenario lacks" "bad.yaml:13" "boards[0].device" "has no device 'pi7'"
inventory "$work/bad.yaml" "" "pi1"
refused "two boards for one device" "bad.yaml:17" "boards[1].device" "already has a board"
inventory "$work/bad.yaml" "" "" "  - {device: pi2, address: 10.203.0.99}"
refused "a board the scenario lacks, listed last" "boards[2].device" "has no device 'pi2'"
sed "s|key: $work/id|key: $work/no-such-key|" "$work/hosts.yaml" > "$work/bad.yaml"
refused "missing key" "bad.yaml:4" "defaults.key" "no-such-key' is not a readable file"
sed "s|address: 10.203.0.3|address: 10.203.0.99|" "$work/hosts.yaml" > "$work/bad.yaml"
refused "unreachable host" "bad.yaml:18" "boards[1].address" "cannot reach root@10.203.0.99"
finish ssh_testbed
