#!/usr/bin/env bash
# The arm64 build's own tests (unit and middleware: the runtime's rules and its sockets, frames and
# server) inside the arm64 Debian 12 root under qemu-user emulation (scripts/board.sh test). The
# models and learned labels take ~15 more minutes there: `scripts/board.sh test` runs everything.
# Exit 77 (skip, with the reason) without root or without the root and build-arm64/.
set -u
root="$1"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (chroot, binfmt_misc)"; exit 77; }
if ! msg=$(bash "$root/scripts/board.sh" check 2>&1); then
  echo "SKIP: $msg: make it with scripts/board.sh setup && scripts/board.sh build"; exit 77
fi
bash "$root/scripts/board.sh" test -L 'unit|hw'
