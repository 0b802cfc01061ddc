# Shared by scripts/debian13.sh (a Debian 13 root with SimGrid 4.0) and scripts/board.sh (an arm64
# Debian 12 root, a board under emulation): making a Debian root with debootstrap, installing packages
# in it, and running commands inside it with host folders bound at their own paths. Sourced; the caller
# sets `me` (its name in messages), `root` (the root's folder), `tree` (this repository) and `bind_var`
# (the name of the environment variable listing more folders to bind, separated by ':').

die() { echo "$me: $*" >&2; exit 2; }

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
  [ -x "$root/usr/bin/env" ] || die "no root at $root: run scripts/$me.sh setup first"
  local binds=("$tree" "$PWD" /tmp)
  if [ -n "${!bind_var:-}" ]; then
    local extra
    IFS=: read -r -a extra <<< "${!bind_var}"
    binds+=("${extra[@]}")
  fi
  local b
  for b in "${binds[@]}"; do
    [ -d "$b" ] || die "$bind_var: '$b' is not a folder"
    # A host system folder bound over the root's own would replace the root's files with the host's.
    case "$(cd "$b" && pwd -P)/" in
      //|/usr/*|/etc/*|/bin/*|/sbin/*|/lib/*|/lib32/*|/lib64/*|/libx32/*|/proc/*|/sys/*|/dev/*|/run/*|/boot/*|/var/|/var/lib/*|/var/cache/*)
        die "will not bind the host's system folder '$b' into the root: run from your project or results folder (the working directory is bound in)" ;;
    esac
  done
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  unshare --mount --propagation private -- /bin/bash "$tree/scripts/root_enter.sh" "$root" "$PWD" "${binds[*]}" "$@"
}

# Installs Debian packages on the host when a command is missing: host_install COMMAND PACKAGE...
host_install() {
  local cmd="$1"; shift
  command -v "$cmd" > /dev/null && return 0
  echo "$me: installing $* on the host"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "$@" > /dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" > /dev/null; }
}

# make_root SUITE WHAT [DEBOOTSTRAP-OPTION...]: a minbase root of SUITE at $root, unless one is there.
# An interrupted debootstrap leaves no half-made root (it works in ROOT.partial and renames at the end).
make_root() {
  local suite="$1" what="$2"; shift 2
  [ -x "$root/usr/bin/env" ] && return 0
  host_install debootstrap debootstrap
  local mirror
  mirror="$(host_mirror)"
  echo "$me: making $what at $root from $mirror (debootstrap --variant=minbase $* $suite)"
  rm -rf "$root.partial"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase "$@" "$suite" "$root.partial" "$mirror" > "$root.partial.log" 2>&1 || {
    tail -20 "$root.partial.log" >&2
    die "debootstrap failed (log: $root.partial.log)"
  }
  mv "$root.partial.log" "$root.partial/debootstrap.log"
  mv "$root.partial" "$root"
}

# install_in_root PACKAGE...: installs the packages the root lacks (apt-get update only then).
install_in_root() {
  local missing=() p installed
  installed=" $(in_root dpkg-query -W -f='${Package}:${Status}\n' "$@" 2>/dev/null \
    | awk -F: '/install ok installed/ { printf "%s ", $1 }' || true)"
  for p in "$@"; do
    [[ "$installed" == *" $p "* ]] || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "$me: root at $root has all $# packages"
  else
    echo "$me: installing in the root: ${missing[*]}"
    in_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  fi
}
