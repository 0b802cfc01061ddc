#!/usr/bin/env bash
# Installs every Debian package coinfer needs. Idempotent: already-installed packages are skipped
# by apt; safe to run again. Needs root (or sudo).
#   scripts/setup.sh                 everything (simulator, runtime, tests, figures)
#   scripts/setup.sh --quickstart    only what scripts/quickstart.sh needs: the simulator `coinfer` and the
#                                    timeline figure (no LibTorch, tests, Chromium or Slurm; the full set
#                                    is installed by scripts/test.sh, or by this script without options)
#   scripts/setup.sh --runtime-only  what a board's runtime-only build needs (scripts/build.sh --runtime-only):
#                                    Debian 12 / Raspberry Pi OS bookworm (arm64, amd64), Ubuntu-based JetPack
#   scripts/setup.sh --runtime-only --no-torch
#                                    the same without Debian's LibTorch (JetPack: NVIDIA's CUDA LibTorch instead,
#                                    given to CMake with -DTorch_DIR; hw/README.md "Building on the boards")
#   scripts/setup.sh ... --list      print the packages of that set and install nothing
#   scripts/setup.sh --debian13      a Debian 13 root with SimGrid 4.0 and coinfer built in it (scripts/debian13.sh;
#                                    for runs beyond ~1,000 devices: README "Beyond ~1,000 devices")
set -euo pipefail

if [ "${1:-}" = "--debian13" ]; then
  [ $# -eq 1 ] || { echo "usage: scripts/setup.sh --debian13" >&2; exit 2; }
  here="$(dirname "$0")"
  bash "$here/debian13.sh" setup
  bash "$here/debian13.sh" build
  echo "setup: coinfer on SimGrid 4.0 is ready: scripts/coinfer13 ARGS (e.g. scripts/coinfer13 version)"
  exit 0
fi

# The runtime-only set: compilers, the libraries coinfer-rt links, LibTorch and tc/ip. Every one of
# them exists for arm64 in Debian 12 (scripts/check_arm64_packages.sh checks it against the archive).
runtime_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libhdf5-dev libyaml-cpp-dev libcli11-dev libboost-dev libspdlog-dev nlohmann-json3-dev
  libopenblas0-pthread libtorch-dev
  libasio-dev libzstd-dev libssl-dev
  iproute2                  # tc: shaping a board's interface (inventory shape: true)
  python3-yaml              # coinfer reproduce fd --here on the board (reproduce/README.md "On a board")
  libxgboost-dev            # coinfer medn's random forest (the MEDN study on the board)
)

# The quickstart set: the simulator `coinfer` (it links the middleware's socket, compression and HMAC
# libraries for `coinfer testbed`) and the quickstart's figure.
quickstart_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libsimgrid-dev libhdf5-dev libyaml-cpp-dev libcli11-dev libboost-dev libspdlog-dev nlohmann-json3-dev
  libasio-dev libzstd-dev libssl-dev
  python3 python3-matplotlib python3-h5py python3-numpy
)

packages=(
  build-essential cmake ninja-build pkg-config ccache git
  libsimgrid-dev            # SimGrid 3.32: the simulation engine (sim/)
  libhdf5-dev               # LUT and results files (io/)
  libyaml-cpp-dev           # scenario files (io/)
  libcli11-dev              # command line (cli/)
  libboost-dev              # core utilities
  libspdlog-dev             # core/log: the logging facility
  nlohmann-json3-dev        # summary.json
  libgtest-dev libgmock-dev # tests
  libbenchmark-dev          # bench/
  libopenblas0-pthread      # fast BLAS for LibTorch (measured here: 2.6 -> 76 GFLOP/s sgemm)
  python3 python3-matplotlib python3-h5py python3-numpy   # plots/
  python3-pandas            # python/coinfer: results as DataFrames
  python3-yaml              # coinfer reproduce reads the published numbers; tests/golden/matrix.py the scenarios
  chromium                  # tests/golden/report.sh opens coinfer report's pages in a headless browser
  slurm-wlm munge           # the Slurm sweep backend and its test cluster
  libtorch-dev              # models/: real GNNs in LibTorch (CPU)
  python3-torch             # the reference the C++ models' speed is compared with (bench/)
  libasio-dev               # hw/: the communication middleware's sockets
  libzstd-dev               # hw/: payload compression
  libssl-dev                # hw/: HMAC-SHA256 registration challenge
  iproute2                  # hw/: the testbed's network namespaces, veth pairs and tc shaping
  openssh-client            # hw/: coinfer testbed --inventory reaches real hosts with ssh
  openssh-server            # tests/golden/ssh_testbed.sh: an sshd per namespace plays a board (the system's sshd is left off)
  clang libclang-rt-14-dev  # the libFuzzer target of the frame parser (tests/fuzz)
  clang-format              # tests/golden/format.sh: the C++ sources stay as .clang-format has them
  libxgboost-dev            # models/random_forest: the MEDN study's random forest (XGBoost's random-forest mode)
  valgrind                  # coinfer aggregation --cache-sim: this CPU's caches simulated where no hardware counter is exposed
)

# --list (last): print the chosen set, one package per line, and install nothing (scripts/board.sh and
# scripts/check_arm64_packages.sh read the runtime-only set this way, so the lists cannot drift).
list=0
if [ $# -gt 0 ] && [ "${!#}" = "--list" ]; then
  list=1
  set -- "${@:1:$(($# - 1))}"
fi

if [ "${1:-}" = "--quickstart" ]; then
  [ $# -eq 1 ] || { echo "usage: scripts/setup.sh [--quickstart | --runtime-only [--no-torch] | --debian13] [--list]" >&2; exit 2; }
  packages=("${quickstart_packages[@]}")
elif [ "${1:-}" = "--runtime-only" ]; then
  packages=("${runtime_packages[@]}")
  if [ "${2:-}" = "--no-torch" ]; then
    packages=("${packages[@]/libtorch-dev}")
    packages=("${packages[@]/libopenblas0-pthread}")
    mapfile -t packages < <(printf '%s\n' "${packages[@]}" | grep -v '^$')
  elif [ $# -gt 1 ]; then
    echo "usage: scripts/setup.sh [--quickstart | --runtime-only [--no-torch] | --debian13] [--list]" >&2
    exit 2
  fi
elif [ $# -gt 0 ]; then
  echo "usage: scripts/setup.sh [--quickstart | --runtime-only [--no-torch] | --debian13] [--list]" >&2
  exit 2
fi

if [ $list -eq 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Installing openssh-server starts the system's sshd on every address; the tests start their own in
# network namespaces and need none. Turned off again only when this run installed it.
if [[ " ${missing[*]} " == *" openssh-server "* ]] && command -v systemctl > /dev/null && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now ssh.service ssh.socket > /dev/null 2>&1 || true
fi
