#!/usr/bin/env bash
# Checks that every Debian package of a board's runtime-only build (scripts/setup.sh --runtime-only)
# exists for arm64 (Raspberry Pi OS bookworm, Debian 12 on a Jetson or any arm64 board) in this
# machine's Debian archive, without changing this machine's apt state: the package lists go to a
# temporary folder. Needs the network to the archive. Exit 0 when all exist, 1 when one is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
arch="${1:-arm64}"
# The list, read from setup.sh itself so the two cannot drift.
mapfile -t pkgs < <(bash scripts/setup.sh --runtime-only --list)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
opts=(-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o "Dir::State::status=/dev/null"
      -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" -o "Debug::NoLocking=1")
echo "fetching the $arch package lists of $(grep -h '^deb \|^URIs' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -1) ..."
apt-get -qq "${opts[@]}" update
missing=0
for p in "${pkgs[@]}"; do
  v=$(apt-cache "${opts[@]}" policy "$p:$arch" 2>/dev/null | sed -n 's/^  Candidate: //p')
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "MISSING $p ($arch)"; missing=1
  else
    echo "ok      $p $v ($arch)"
  fi
done
exit $missing
