#!/usr/bin/env bash
# Times the README's first command on a fresh Debian 12 (target under 5 minutes).
# Makes a bookworm root with `debootstrap --variant=minbase` from the mirror the host's apt sources
# name (scripts/debian13.sh mirror), clones this checkout's HEAD into it, and runs
# `bash scripts/quickstart.sh` inside (chroot, with /proc, /sys and /dev bound in a private mount
# namespace that vanishes with it), timing the whole command: package installation, build, run, figure.
# Needs root and the network to the mirror. The root is removed afterwards unless KEEP=1.
#   sudo bash bench/quickstart_fresh.sh [ROOT (default /var/tmp/coinfer-fresh-bookworm)]
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "quickstart_fresh: needs root (debootstrap, chroot)" >&2; exit 2; }
root="${1:-/var/tmp/coinfer-fresh-bookworm}"
case "$root" in /|/usr*|/etc*|/home|/root|/var|/tmp) echo "quickstart_fresh: refusing ROOT=$root" >&2; exit 2 ;; esac
command -v debootstrap > /dev/null || apt-get install -y -qq --no-install-recommends debootstrap > /dev/null
mirror="$(bash scripts/debian13.sh mirror)"
rm -rf "$root"
t0=$(date +%s.%N)
debootstrap --variant=minbase bookworm "$root" "$mirror" > /tmp/quickstart_fresh.debootstrap.log 2>&1 \
  || { echo "quickstart_fresh: debootstrap failed (/tmp/quickstart_fresh.debootstrap.log)" >&2; exit 1; }
t1=$(date +%s.%N)
git clone -q "$PWD" "$root/src/coinfer"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
echo "quickstart_fresh: fresh bookworm root in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}') s; running the README's first command in a clean clone of $(git rev-parse --short HEAD)"
set +e
unshare -m bash -c "
  set -e
  mount --make-rprivate /
  mount -t proc proc '$root/proc'; mount --rbind /sys '$root/sys'; mount --rbind /dev '$root/dev'
  chroot '$root' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    bash -c 'cd /src/coinfer && start=\$(date +%s.%N) && bash scripts/quickstart.sh > /tmp/quickstart.log 2>&1; rc=\$?; \
             end=\$(date +%s.%N); echo \"rc=\$rc seconds=\$(awk -v a=\$start -v b=\$end \"BEGIN{printf \\\"%.1f\\\", b-a}\")\" > /tmp/quickstart.time'
"
rc=$?
set -e
cat "$root/tmp/quickstart.time" 2>/dev/null || echo "quickstart_fresh: no timing (rc $rc)"
tail -5 "$root/tmp/quickstart.log" 2>/dev/null || true
[ "${KEEP:-0}" = 1 ] || rm -rf "$root"
