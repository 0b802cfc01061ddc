#!/usr/bin/env bash
# A Raspberry Pi (or any arm64 board running Debian 12 / Raspberry Pi OS bookworm) on this x86_64
# machine: an arm64 Debian 12 root made with debootstrap from Debian's own packages, filled with the
# runtime's packages (scripts/setup.sh --runtime-only, LibTorch included) and run under qemu-user
# emulation; coinfer's runtime cross-compiled for it with Debian's cross compiler; the runtime's tests
# run inside it (hw/README.md "An arm64 board under emulation").
#
#   scripts/board.sh setup            make the root (cached), install its packages, the host's tools
#   scripts/board.sh build [ARGS]     cross-compile the runtime and its tests into build-arm64/ (ARGS go to CMake)
#   scripts/board.sh build-native [ARGS]  the same built inside the root, under emulation (build-arm64-native/; slow)
#   scripts/board.sh test [CTEST-ARGS]    the runtime's tests of build-arm64/ inside the root, under emulation
#   scripts/board.sh run CMD...       run CMD inside the root (arm64, emulated), in the current directory
#   scripts/board.sh path             print where the root is
#   scripts/board.sh check            exit 0 when the root, emulation and build-arm64/coinfer-rt are ready
#
# Idempotent (scripts/root_lib.sh): setup reuses a finished root and only installs what is missing.
# Needs root (debootstrap, chroot, bind mounts, binfmt_misc); the mounts live in a private mount
# namespace and vanish with the command. Environment:
#   COINFER_BOARD_ROOT      where the root lives (default /var/cache/coinfer/board-arm64)
#   COINFER_BOARD_BIND      more host folders to bind in, separated by ':'
#   COINFER_DEBIAN_MIRROR   the Debian mirror (default: the one the host's own apt sources name)
set -euo pipefail

tree="$(cd "$(dirname "$0")/.." && pwd)"
root="${COINFER_BOARD_ROOT:-/var/cache/coinfer/board-arm64}"
suite=bookworm
me=board
bind_var=COINFER_BOARD_BIND
# What runs in the root knows it is emulated: tests of a process's own memory and threads pass over
# those figures, which include qemu's (tests/hw/test_edge_server.cpp).
export COINFER_EMULATED="qemu-user aarch64"
# shellcheck source=scripts/root_lib.sh
source "$tree/scripts/root_lib.sh"
usage() { sed -n '8,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# What the board's runtime needs (the runtime-only set), its tests (GoogleTest) and an SSH server (the
# SSH testbed's inventory takes the root as an `arch: aarch64` host).
board_packages() {
  bash "$tree/scripts/setup.sh" --runtime-only --list
  printf '%s\n' libgtest-dev libgmock-dev openssh-server
}

# qemu-user for arm64 registered with binfmt_misc, with the F flag (the interpreter is opened when
# registered, so it works inside the root without being copied there).
emulation() {
  host_install qemu-aarch64-static qemu-user-static
  local bm=/proc/sys/fs/binfmt_misc
  [ -e "$bm/register" ] || mount -t binfmt_misc binfmt_misc "$bm" ||
    die "cannot mount binfmt_misc at $bm (a container without that permission cannot run arm64 programs)"
  if [ ! -e "$bm/qemu-aarch64" ]; then
    [ -f /usr/lib/binfmt.d/qemu-aarch64.conf ] || die "qemu-user-static has no /usr/lib/binfmt.d/qemu-aarch64.conf"
    cat /usr/lib/binfmt.d/qemu-aarch64.conf > "$bm/register" || die "cannot register qemu-aarch64 with binfmt_misc"
  fi
  grep -q '^enabled' "$bm/qemu-aarch64" || echo 1 > "$bm/qemu-aarch64"
}

cmd_setup() {
  need_root
  emulation
  host_install aarch64-linux-gnu-g++ g++-aarch64-linux-gnu
  make_root "$suite" "an arm64 Debian 12 root" --arch=arm64
  mapfile -t pkgs < <(board_packages)
  install_in_root "${pkgs[@]}"
  # The runtime's tc/ip and sshd are the root's own, started in the testbed's namespaces; nothing runs
  # at boot in a root, and the package's host keys are made here once.
  in_root ssh-keygen -A > /dev/null
  echo "board: $(in_root uname -m) root, $(in_root g++ --version | head -1), LibTorch $(in_root dpkg-query -W -f='${Version}' libtorch-dev)"
}

# The cross build: the host's compiler, the root's headers and libraries (cmake/aarch64-debian12.cmake).
cmd_build() {
  need_root
  emulation
  cd "$tree"
  [ -d "$root/usr/lib/aarch64-linux-gnu/cmake/Torch" ] || die "no arm64 LibTorch in $root: run scripts/board.sh setup first"
  cmake -S . -B build-arm64 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$tree/cmake/aarch64-debian12.cmake" -DCOINFER_SYSROOT="$root" \
    -DCOINFER_RUNTIME_ONLY=ON -DCOINFER_RUNTIME_TESTS=ON "$@" > /dev/null
  ninja -C build-arm64 -j"${COINFER_JOBS:-2}"
}

# The same, natively inside the root under emulation (to compare with the cross build's time).
cmd_build_native() {
  need_root
  emulation
  cd "$tree"
  in_root cmake -S . -B build-arm64-native -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOINFER_RUNTIME_ONLY=ON -DCOINFER_RUNTIME_TESTS=ON "$@" > /dev/null
  # shellcheck disable=SC2086
  in_root ninja -C build-arm64-native -j"${COINFER_JOBS:-2}" ${BOARD_TARGETS:-}
}

cmd_test() {
  need_root
  emulation
  cd "$tree"
  [ -x build-arm64/coinfer-rt ] || die "no build-arm64/coinfer-rt: run scripts/board.sh build first"
  in_root ctest --test-dir build-arm64 --output-on-failure -j"${COINFER_JOBS:-2}" --timeout 900 "$@"
}

cmd_check() {
  [ -x "$root/usr/bin/env" ] || { echo "board: no arm64 root at $root (scripts/board.sh setup)"; return 1; }
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { echo "board: arm64 emulation is not registered (scripts/board.sh setup)"; return 1; }
  [ -x "$tree/build-arm64/coinfer-rt" ] || { echo "board: no build-arm64/coinfer-rt (scripts/board.sh build)"; return 1; }
  echo "board: ready ($root, build-arm64/coinfer-rt)"
}

case "${1:-}" in
  setup) shift; [ $# -eq 0 ] || usage; cmd_setup ;;
  build) shift; cmd_build "$@" ;;
  build-native) shift; cmd_build_native "$@" ;;
  test) shift; cmd_test "$@" ;;
  run) shift; [ $# -gt 0 ] || usage; need_root; emulation; in_root "$@" ;;
  path) echo "$root" ;;
  check) shift; cmd_check ;;
  *) usage ;;
esac
