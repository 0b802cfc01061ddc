#!/usr/bin/env bash
# Inside a private mount namespace (scripts/root_lib.sh's in_root starts it with unshare): binds /dev,
# /proc and the given host folders into a Debian root (the Debian 13 root of scripts/debian13.sh, the
# arm64 board root of scripts/board.sh) at their own paths, then runs the command there in the given
# directory with a clean environment (only the variables coinfer reads are passed on).
# usage: root_enter.sh ROOT CWD "FOLDER FOLDER..." CMD...
set -euo pipefail
root="$1"; cwd="$2"; read -r -a binds <<< "$3"; shift 3
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"   # LibTorch reads the CPUs from /sys/devices/system/cpu
for b in "${binds[@]}"; do
  mkdir -p "$root$b"
  mount --bind "$b" "$root$b"
done
pass=()
for v in COINFER_JOBS COINFER_LOG COINFER_ROOT COINFER_EMULATED GTEST_FILTER; do
  [ -n "${!v:-}" ] && pass+=("$v=${!v}")
done
exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CCACHE_DIR=/var/cache/ccache "${pass[@]}" \
  /bin/bash -c 'cd "$1" && shift && exec "$@"' bash "$cwd" "$@"
