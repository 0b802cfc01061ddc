#!/usr/bin/env bash
# scripts/debian13.sh finds the host's own Debian mirror in its apt sources (no host is written in the
# project): deb822 .sources files and one-line .list files, options in brackets, the release's own
# suite and not its -security or -updates suites, an explicit COINFER_DEBIAN_MIRROR first, and a clear
# error (exit 2) when no source names the release; and `run` refuses to bind a host system folder.
# Runs no debootstrap and mounts nothing.
set -u
root="$2"
source "$(dirname "$0")/lib.sh"
mirror() { COINFER_APT_DIR="$work/apt" COINFER_HOST_CODENAME=bookworm bash "$root/scripts/debian13.sh" mirror 2>"$work/err"; }
expect() {  # NAME EXPECTED
  local got; got="$(mirror)"
  if [ "$got" = "$2" ]; then ok; else bad "$1: expected '$2', got '$got' ($(cat "$work/err"))"; fi
}
reset() { rm -rf "$work/apt"; mkdir -p "$work/apt/sources.list.d"; }

# deb822, as Debian 12's installer writes it; the security stanza comes first and must be skipped.
reset
cat > "$work/apt/sources.list.d/debian.sources" <<'S'
Types: deb
URIs: http://security.example.org/debian-security
Suites: bookworm-security
Components: main

Types: deb deb-src
URIs: http://mirror.example.org/debian http://other.example.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
S
expect deb822 http://mirror.example.org/debian

# deb-src only does not count; a third-party .sources for another suite does not either.
reset
printf 'Types: deb-src\nURIs: http://src.example.org/debian\nSuites: bookworm\n' > "$work/apt/sources.list.d/a.sources"
printf 'Types: deb\nURIs: https://deb.nodesource.example/node_20.x\nSuites: nodistro\n' > "$work/apt/sources.list.d/b.sources"
printf 'deb [arch=amd64 signed-by=/k.gpg] http://list.example.org/debian bookworm main\n' > "$work/apt/sources.list"
expect one_line_with_options http://list.example.org/debian

# One-line format: comments, deb-src and the security suite skipped.
reset
printf '# deb http://old.example.org/debian bookworm main\ndeb-src http://src.example.org/debian bookworm main\ndeb http://sec.example.org/debian-security bookworm-security main\ndeb http://plain.example.org/debian bookworm main contrib\n' > "$work/apt/sources.list"
expect one_line http://plain.example.org/debian

# An explicit mirror wins over the sources.
got="$(COINFER_DEBIAN_MIRROR=http://given.example.org/debian COINFER_APT_DIR="$work/apt" bash "$root/scripts/debian13.sh" mirror)"
[ "$got" = http://given.example.org/debian ] && ok || bad "COINFER_DEBIAN_MIRROR ignored: got '$got'"

# Nothing for the release: exit 2 naming the release and the way out.
reset
printf 'deb http://plain.example.org/debian bullseye main\n' > "$work/apt/sources.list"
mirror > /dev/null; rc=$?
if [ $rc -eq 2 ] && grep -q "no apt source for 'bookworm'" "$work/err" && grep -q COINFER_DEBIAN_MIRROR "$work/err"; then ok; else bad "no source: exit $rc, $(cat "$work/err")"; fi

# Usage errors exit 2.
bash "$root/scripts/debian13.sh" nonsense > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown subcommand did not exit 2"
# run never binds a host system folder over the root's own (checked before anything is mounted).
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p "$work/fakeroot/usr/bin" && printf '#!/bin/sh\n' > "$work/fakeroot/usr/bin/env" && chmod +x "$work/fakeroot/usr/bin/env"
  for d in / /usr/share /etc; do
    (cd "$d" && COINFER_DEBIAN13_ROOT="$work/fakeroot" bash "$root/scripts/debian13.sh" run true) > /dev/null 2> "$work/err"; rc=$?
    if [ $rc -eq 2 ] && grep -q "will not bind the host's system folder '$d'" "$work/err"; then ok; else bad "run from $d: exit $rc, $(cat "$work/err")"; fi
  done
fi
finish debian13_mirror
