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
#   scripts/debian13.sh --cuda ...     the CUDA flavour: its own root with contrib and non-free and Debian's
#                                      CUDA LibTorch (libtorch-cuda-dev 2.6; the root is 11 GB), built into
#                                      build-debian13-cuda/ (hw/README.md "The CUDA build")
#   scripts/coinfer13 ARGS...          = run build-debian13/coinfer ARGS (builds first when needed)
#
# Idempotent (scripts/root_lib.sh): setup reuses a finished root and only installs packages it lacks; an interrupted
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
suite=trixie
flavour=""
if [ "${1:-}" = "--cuda" ]; then
  flavour=cuda
  shift
fi
if [ "$flavour" = cuda ]; then
  root="${COINFER_DEBIAN13_CUDA_ROOT:-/var/cache/coinfer/debian13-cuda}"
  build_dir=build-debian13-cuda
else
  root="${COINFER_DEBIAN13_ROOT:-/var/cache/coinfer/debian13}"
  build_dir=build-debian13
fi

# What the simulator, the schedulers and their tests need (no LibTorch: the simulator builds and tests
# without it; docs/ARCHITECTURE.md).
packages=(
  g++ cmake ninja-build pkg-config ccache
  libsimgrid-dev libboost-dev libyaml-cpp-dev libhdf5-dev libcli11-dev libspdlog-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libssl-dev libzstd-dev libasio-dev
  python3 python3-h5py python3-numpy python3-yaml hdf5-tools git
)
# The CUDA flavour adds the runtime's LibTorch built with CUDA (contrib; its CUDA libraries from
# non-free) and what the LibTorch half of the tree links (XGBoost for the latency regressors). cuDNN
# comes as nvidia-cudnn, an installer that downloads NVIDIA's library only when its licence is
# accepted in debconf (COINFER_CUDNN_LICENSE=accept); otherwise scripts/cudnn_absent.sh makes a
# stand-in so that programs link and start (hw/README.md "The CUDA build" says what that costs).
cuda_packages=(libtorch-cuda-dev nvidia-cuda-toolkit libxgboost-dev libopenblas0-pthread)

me=debian13
bind_var=COINFER_DEBIAN13_BIND
# shellcheck source=scripts/root_lib.sh
source "$tree/scripts/root_lib.sh"
usage() { sed -n '9,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

cmd_setup() {
  need_root
  if [ "$flavour" = cuda ]; then
    make_root "$suite" "a Debian 13 root for the CUDA build" --components=main,contrib,non-free
    # nvidia-cudnn downloads NVIDIA's cuDNN from NVIDIA (not Debian) when its licence is accepted:
    # declined unless the user accepts it; without it scripts/cudnn_absent.sh makes the stand-in.
    local answer="I Decline"
    [ "${COINFER_CUDNN_LICENSE:-}" = accept ] && answer="I Agree"
    echo "nvidia-cudnn nvidia-cudnn/question select $answer" | in_root debconf-set-selections
    install_in_root "${packages[@]}" "${cuda_packages[@]}"
    in_root bash "$tree/scripts/cudnn_absent.sh"
    echo "debian13: LibTorch $(in_root dpkg-query -W -f='${Version}' libtorch-cuda-dev) with CUDA $(in_root dpkg-query -W -f='${Version}' libcudart12)"
  else
    make_root "$suite" "a Debian 13 root"
    install_in_root "${packages[@]}"
  fi
  echo "debian13: $(in_root pkg-config --modversion simgrid | sed 's/^/SimGrid /'), $(in_root g++ --version | head -1)"
}

cmd_build() {
  need_root
  cd "$tree"
  in_root cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" > /dev/null
  # DEBIAN13_TARGETS: only these targets (scripts/test_debian13.sh: what its tests run); default all.
  # shellcheck disable=SC2086
  in_root ninja -C "$build_dir" -j"${COINFER_JOBS:-2}" ${DEBIAN13_TARGETS:-}
}

case "${1:-}" in
  setup) shift; [ $# -eq 0 ] || usage; cmd_setup ;;
  build) shift; cmd_build "$@" ;;
  run) shift; [ $# -gt 0 ] || usage; need_root; in_root "$@" ;;
  path) echo "$root" ;;
  mirror) host_mirror ;;
  *) usage ;;
esac
