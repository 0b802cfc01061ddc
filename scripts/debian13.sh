#!/usr/bin/env bash
# coinfer on SimGrid 4.0 from a Debian 12 host: a Debian 13 (trixie) root made with debootstrap from
# Debian's own packages, the coinfer tree built inside it, and commands run inside it with the tree,
# the working directory and /tmp bound in at their own paths (so absolute paths in results are the
# same inside and outside). Why: Debian 12's SimGrid 3.32 spends most of a 10,000-device run in a
# linear list scan that 4.0 no longer has (bench/RESULTS.md "SimGrid 4.0"); Debian 13's binaries need
# glibc 2.38 and cannot be installed on the host itself.
#
#   scripts/debian13.sh setup          make the root (cached) and install the build dependencies in it
#   scripts/debian13.sh build [ARGS]   configure and build coinfer into build-debian13/ (ARGS go to CMake)
#   scripts/debian13.sh run CMD...     run CMD inside the root, in the current directory
#   scripts/debian13.sh path           print where the root is
#   scripts/coinfer13 ARGS...          = run build-debian13/coinfer ARGS (builds first when needed)
#
# Idempotent: setup reuses a finished root and only installs packages it lacks; an interrupted
# debootstrap leaves no half-made root (it works in ROOT.partial and renames at the end). Needs root
# (debootstrap, chroot, bind mounts); the mounts live in a private mount namespace and vanish with the
# command. Environment:
#   COINFER_DEBIAN13_ROOT   where the root lives (default /var/cache/coinfer/debian13)
#   COINFER_DEBIAN_MIRROR   the Debian mirror (default: the one the host's own apt sources name)
#   COINFER_DEBIAN13_BIND   more host folders to bind in, separated by ':' (e.g. a results disk)
#   COINFER_APT_DIR, COINFER_HOST_CODENAME   the apt folder and the release the mirror is looked up for
#                           (default /etc/apt and /etc/os-release; for tests)
# Users on Debian 13, or any system with SimGrid >= 4.0 installed, need none of this: scripts/build.sh
# builds against whatever `pkg-config simgrid` finds (a user's own build through PKG_CONFIG_PATH or
# CMAKE_PREFIX_PATH).
set -euo pipefail

tree="$(cd "$(dirname "$0")/.." && pwd)"
root="${COINFER_DEBIAN13_ROOT:-/var/cache/coinfer/debian13}"
suite=trixie

# What the simulator, the schedulers and their tests need (no LibTorch: the simulator builds and tests
# without it; docs/ARCHITECTURE.md).
packages=(
  g++ cmake ninja-build pkg-config ccache
  libsimgrid-dev libboost-dev libyaml-cpp-dev libhdf5-dev libcli11-dev libspdlog-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev libzstd-dev libasio-dev
  python3 python3-h5py python3-numpy python3-yaml hdf5-tools git
)

die() { echo "debian13: $*" >&2; exit 2; }
usage() { sed -n '9,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot and bind mounts): run it with sudo"
}

# The host's own Debian mirror: the URI of the first apt source whose suite is the host's release
# (deb822 .sources files and one-line .list files). No host name is written in the project.
host_mirror() {
  if [ -n "${COINFER_DEBIAN_MIRROR:-}" ]; then echo "$COINFER_DEBIAN_MIRROR"; return; fi
  local codename apt="${COINFER_APT_DIR:-/etc/apt}"
  codename="${COINFER_HOST_CODENAME:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}"
  [ -n "$codename" ] || die "cannot tell the host's Debian release from /etc/os-release; set COINFER_DEBIAN_MIRROR"
  local f uri
  for f in "$apt"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri="$(awk -v c="$codename" '
      BEGIN { RS=""; FS="\n" }
      { u=""; s=""; t="";
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/)   { sub(/^URIs:[ \t]*/, "", $i); split($i, a, /[ \t]+/); u = a[1] }
          if ($i ~ /^Suites:/) { s = " " $i " " }
          if ($i ~ /^Types:/)  { t = $i }
        }
        if (t ~ /(^|[ \t])deb([ \t]|$)/ && s ~ (" " c " ") && u != "") { print u; exit }
      }' "$f")"
    if [ -n "$uri" ]; then echo "$uri"; return; fi
  done
  for f in "$apt"/sources.list "$apt"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri="$(awk -v c="$codename" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i+1) == c) { print $i; exit } }' "$f")"
    if [ -n "$uri" ]; then echo "$uri"; return; fi
  done
  die "no apt source for '$codename' in $apt: set COINFER_DEBIAN_MIRROR to a Debian mirror"
}

# Runs "$@" inside the root. A private mount namespace holds the bind mounts, so nothing is left
# mounted on the host afterwards, whatever happens to the command.
in_root() {
  [ -x "$root/usr/bin/env" ] || die "no Debian 13 root at $root: run scripts/debian13.sh setup first"
  local binds=("$tree" "$PWD" /tmp)
  if [ -n "${COINFER_DEBIAN13_BIND:-}" ]; then
    local extra
    IFS=: read -r -a extra <<< "$COINFER_DEBIAN13_BIND"
    binds+=("${extra[@]}")
  fi
  local b
  for b in "${binds[@]}"; do
    [ -d "$b" ] || die "COINFER_DEBIAN13_BIND: '$b' is not a folder"
    # A host system folder bound over the root's own would replace Debian 13's files with Debian 12's.
    case "$(cd "$b" && pwd -P)/" in
      //|/usr/*|/etc/*|/bin/*|/sbin/*|/lib/*|/lib32/*|/lib64/*|/libx32/*|/proc/*|/sys/*|/dev/*|/run/*|/boot/*|/var/|/var/lib/*|/var/cache/*)
        die "will not bind the host's system folder '$b' into the root: run from your project or results folder (the working directory is bound in)" ;;
    esac
  done
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  unshare --mount --propagation private -- /bin/bash "$tree/scripts/debian13_enter.sh" "$root" "$PWD" "${binds[*]}" "$@"
}

cmd_setup() {
  need_root
  if [ ! -x "$root/usr/bin/env" ]; then
    command -v debootstrap > /dev/null || {
      echo "debian13: installing debootstrap on the host"
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -qq --no-install-recommends debootstrap > /dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap > /dev/null; }
    }
    local mirror
    mirror="$(host_mirror)"
    echo "debian13: making a Debian 13 root at $root from $mirror (debootstrap --variant=minbase $suite; ~20 s)"
    rm -rf "$root.partial"
    mkdir -p "$(dirname "$root")"
    debootstrap --variant=minbase "$suite" "$root.partial" "$mirror" > "$root.partial.log" 2>&1 || {
      tail -20 "$root.partial.log" >&2
      die "debootstrap failed (log: $root.partial.log)"
    }
    mv "$root.partial.log" "$root.partial/debootstrap.log"
    mv "$root.partial" "$root"
  fi
  local missing=() p installed
  installed=" $(in_root dpkg-query -W -f='${Package}:${Status}\n' "${packages[@]}" 2>/dev/null \
    | awk -F: '/install ok installed/ { printf "%s ", $1 }' || true)"
  for p in "${packages[@]}"; do
    [[ "$installed" == *" $p "* ]] || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "debian13: root at $root has all ${#packages[@]} packages"
  else
    echo "debian13: installing in the root: ${missing[*]}"
    in_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  fi
  echo "debian13: $(in_root pkg-config --modversion simgrid | sed 's/^/SimGrid /'), $(in_root g++ --version | head -1)"
}

cmd_build() {
  need_root
  cd "$tree"
  in_root cmake -S . -B build-debian13 -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > /dev/null
  # DEBIAN13_TARGETS: only these targets (scripts/test_debian13.sh: what its tests run); default all.
  # shellcheck disable=SC2086
  in_root ninja -C build-debian13 -j"${COINFER_JOBS:-2}" ${DEBIAN13_TARGETS:-}
}

case "${1:-}" in
  setup) shift; [ $# -eq 0 ] || usage; cmd_setup ;;
  build) shift; cmd_build "$@" ;;
  run) shift; [ $# -gt 0 ] || usage; need_root; in_root "$@" ;;
  path) echo "$root" ;;
  mirror) host_mirror ;;
  *) usage ;;
esac
