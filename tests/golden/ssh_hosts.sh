# Hosts for SSH testbed tests, each a network namespace on a bridge with its own sshd config
# (sourced by tests/golden/ssh_testbed.sh and tests/golden/board_testbed.sh; needs root).
# usage: ssh_hosts_up TAG SUBNET HOST...   e.g. ssh_hosts_up cfssh123 10.203.0 s b0 b1
#   makes $work/id (the client key), $work/host_key, $work/authorized_keys, a bridge TAGbr at
#   SUBNET.254, and per HOST (numbered from 1) the namespace TAG<HOST> at SUBNET.<n> (veth TAGv<HOST> on
#   the bridge, TAGp<HOST> inside) and $work/sshd_<HOST>.conf. Starting each sshd is the caller's (a
#   native one, or one inside an emulated root). Returns non-zero when a step fails.
# ssh_wait_for ADDRESS...: waits (up to ~10 s each) until each sshd answers; records their host keys.
# ssh_inventory_defaults RT: an inventory's `defaults:` block for these hosts (root, this key, coinfer
#   RT, $work/remote, this machine's arch).
# ssh_hosts_down TAG HOST...: kills what runs in the namespaces, removes them and the bridge.
ssh_hosts_up() {
  local tag=$1 net=$2; shift 2
  ssh-keygen -q -t ed25519 -N "" -f "$work/id" -C coinfer-test || return 1
  ssh-keygen -q -t ed25519 -N "" -f "$work/host_key" -C coinfer-test-host || return 1
  cp "$work/id.pub" "$work/authorized_keys"
  mkdir -p /run/sshd "$work/remote"
  ip link add "${tag}br" type bridge && ip addr add "$net.254/24" dev "${tag}br" && ip link set "${tag}br" up || return 1
  local n=0 h ns
  for h in "$@"; do
    n=$((n+1)); ns="$tag$h"
    ip netns add "$ns" && ip link add "${tag}v$h" type veth peer name "${tag}p$h" && ip link set "${tag}p$h" netns "$ns" \
      && ip link set "${tag}v$h" master "${tag}br" up && ip -n "$ns" addr add "$net.$n/24" dev "${tag}p$h" \
      && ip -n "$ns" link set "${tag}p$h" up && ip -n "$ns" link set lo up || return 1
    printf '%s\n' "ListenAddress $net.$n" "HostKey $work/host_key" "PidFile $work/sshd_$h.pid" "AuthorizedKeysFile $work/authorized_keys" \
      "PermitRootLogin prohibit-password" "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" "StrictModes no" \
      > "$work/sshd_$h.conf"
  done
}
ssh_wait_for() {
  local a try
  for a in "$@"; do
    for try in $(seq 100); do
      ssh -T -o BatchMode=yes -o ConnectTimeout=2 -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile="$work/known_hosts" \
        -i "$work/id" "root@$a" true 2>/dev/null && break
      sleep 0.1
    done
  done
}
ssh_hosts_down() {
  local tag=$1 h p; shift
  for h in "$@"; do
    for p in $(ip netns pids "$tag$h" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$tag$h" 2>/dev/null
  done
  ip link del "${tag}br" 2>/dev/null
}
ssh_inventory_defaults() {
  printf '%s\n' "defaults:" "  user: root" "  key: $work/id" "  known_hosts: $work/known_hosts" "  coinfer: $1" "  workdir: $work/remote" \
    "  arch: $(uname -m)"
}
