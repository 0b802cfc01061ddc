#!/usr/bin/env bash
# The GPU check: one prepared command for a machine with a GPU, CUDA, CMake, ninja, a C++ compiler and
# a PyTorch whose LibTorch a C++ build can use, and no network (hw/README.md "On a GPU machine").
#
#   bash scripts/gpu_check.sh --bundle   HERE (Debian 12, network): download the Debian 12 packages of
#                                        the runtime's other libraries into .gpu-deps/ (~20 MB; ignored
#                                        by git), to be carried to the GPU machine with the tree
#   bash scripts/gpu_check.sh            THERE: build and check; results under $OUT (default gpu-check-out/)
#
# There it: (1) reads PyTorch's version, CUDA and GPU, and its LibTorch's CMake folder; (2) unpacks the
# carried packages into /tmp/coinfer-deps (never over /), when the machine lacks them; (3) builds the
# runtime (coinfer-rt, coinfer-profile) and its tests against that LibTorch (-DCOINFER_RUNTIME_ONLY=ON
# -DCOINFER_RUNTIME_TESTS=ON); (4) runs the GPU tests (GpuModels.*: every model computes on the GPU
# what it computes on the CPU, split at every stage) and the models tests; (5) profiles a GPU LUT of two
# models (gcn/mr, dgcnn/modelnet40: per-stage GPU latencies) and the same on the CPU. Every step's log
# and result goes to $OUT; the step that failed is named and later steps still run where they can.
# Not yet: a cpu+gpu placement on the real runtime compared with its simulation (the device runtime
# does not place stages on a GPU yet; hw/README.md "On a GPU machine").
#
# On a CPU-only machine with a CPU LibTorch steps (4) and (5) skip, saying so (that rehearsal has not
# been run yet: hw/README.md "On a GPU machine").
# Environment: OUT (results folder), COINFER_JOBS (build jobs; default: the machine's cores),
# COINFER_TORCH_DIR (LibTorch's CMake folder, when python3 cannot tell).
set -uo pipefail
cd "$(dirname "$0")/.."
tree="$PWD"
deps_dir="$tree/.gpu-deps"

# What the runtime needs besides LibTorch, as Debian 12 amd64 packages (their files unpacked, not
# installed). Library packages with the -dev ones, since the GPU machine may have neither.
bundle_packages=(
  libhdf5-dev libhdf5-103-1 libhdf5-cpp-103-1 libhdf5-hl-100 libhdf5-hl-cpp-100 libhdf5-fortran-102 libhdf5-hl-fortran-100 libsz2 libaec0 libaec-dev libcurl4 libcurl4-openssl-dev
  libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev libboost1.74-dev libboost-dev
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 nlohmann-json3-dev libasio-dev
  libzstd-dev libssl-dev libssl3 libgtest-dev libgmock-dev googletest libxgboost-dev libxgboost0 libdmlc0 libjpeg-dev zlib1g-dev
)

if [ "${1:-}" = "--bundle" ]; then
  mkdir -p "$deps_dir"
  cd "$deps_dir"
  rm -f ./*.deb
  apt-get download "${bundle_packages[@]}" > download.log 2>&1 || { cat download.log; echo "gpu_check: downloading the packages failed"; exit 1; }
  echo "gpu_check: $(ls ./*.deb | wc -l) packages, $(du -sh . | cut -f1) in .gpu-deps/: carry it with the tree (device tool: carry [\".gpu-deps\"])"
  exit 0
fi
[ $# -eq 0 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

out="${OUT:-$tree/gpu-check-out}"
mkdir -p "$out"
report="$out/gpu_check.txt"
: > "$report"
say() { echo "gpu_check: $*" | tee -a "$report"; }
failed=()
jobs="${COINFER_JOBS:-$(nproc)}"
start=$(date +%s)

# 1. PyTorch, CUDA, the GPU, LibTorch's CMake folder.
py=python3
python3 - > "$out/torch.txt" 2>&1 <<'PY'
import torch, os
print("torch", torch.__version__)
print("cuda_build", torch.version.cuda)
print("cuda_available", torch.cuda.is_available())
print("gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")
print("cxx11_abi", int(torch._C._GLIBCXX_USE_CXX11_ABI))
print("cmake_prefix", torch.utils.cmake_prefix_path)
PY
cat "$out/torch.txt" | tee -a "$report"
torch_dir="${COINFER_TORCH_DIR:-$(sed -n 's/^cmake_prefix //p' "$out/torch.txt")/Torch}"
if [ ! -f "$torch_dir/TorchConfig.cmake" ]; then
  for d in /usr/lib/x86_64-linux-gnu/cmake/Torch /usr/share/cmake/Torch; do [ -f "$d/TorchConfig.cmake" ] && torch_dir="$d" && break; done
fi
[ -f "$torch_dir/TorchConfig.cmake" ] || { say "no LibTorch CMake folder (TorchConfig.cmake) found: set COINFER_TORCH_DIR"; exit 1; }
say "LibTorch: $torch_dir"
abi=$(sed -n 's/^cxx11_abi //p' "$out/torch.txt")

# 2. The carried libraries.
cmake_extra=()
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
if ls "$deps_dir"/*.deb > /dev/null 2>&1; then
  deps=/tmp/coinfer-deps
  rm -rf "$deps" && mkdir -p "$deps"
  for f in "$deps_dir"/*.deb; do dpkg-deb -x "$f" "$deps"; done
  # Debian's alternatives links point into /etc: the serial HDF5 by name.
  ln -sf hdf5-serial.pc "$deps/usr/lib/x86_64-linux-gnu/pkgconfig/hdf5.pc"
  arch_lib="$deps/usr/lib/x86_64-linux-gnu"
  export PKG_CONFIG_LIBDIR="$arch_lib/pkgconfig:$deps/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$deps"
  export LD_LIBRARY_PATH="$arch_lib:$arch_lib/hdf5/serial${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  cmake_extra+=(-DCMAKE_PREFIX_PATH="$deps/usr;$arch_lib/cmake" -DCOINFER_HDF5_PKG_CONFIG=ON
                -DOPENSSL_ROOT_DIR="$deps/usr" -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include -D_GLIBCXX_USE_CXX11_ABI=${abi:-1}"
                -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$arch_lib:$arch_lib/hdf5/serial")
  say "libraries: $(ls "$deps_dir"/*.deb | wc -l) carried Debian 12 packages unpacked into $deps"
else
  say "libraries: the machine's own (no .gpu-deps/ carried: scripts/gpu_check.sh --bundle makes it)"
fi

# 3. The runtime and its tests against that LibTorch.
bdir=/tmp/coinfer-gpu-build
t0=$(date +%s)
if cmake -S "$tree" -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOINFER_RUNTIME_ONLY=ON -DCOINFER_RUNTIME_TESTS=ON \
     -DTorch_DIR="$torch_dir" "${cmake_extra[@]}" > "$out/build.log" 2>&1 &&
   ninja -C "$bdir" -j"$jobs" coinfer-rt coinfer-profile tests/models_tests tests/hw_tests >> "$out/build.log" 2>&1; then
  say "built in $(( $(date +%s) - t0 )) s: $("$bdir/coinfer-rt" version 2>&1)"
else
  say "the build failed (last lines below; all of it in build.log)"
  tail -25 "$out/build.log" | tee -a "$report"
  failed+=(build)
fi

# 4. The GPU tests, then the models tests (CPU) with the same LibTorch.
if [ -x "$bdir/tests/models_tests" ]; then
  "$bdir/tests/models_tests" --gtest_filter='GpuModels.*' > "$out/gpu_tests.txt" 2>&1; rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[ +OK|Skipped|no GPU" "$out/gpu_tests.txt" | tee -a "$report"
  [ $rc -eq 0 ] || failed+=(gpu_tests)
  (cd "$tree" && "$bdir/tests/models_tests" --gtest_brief=1) > "$out/models_tests.txt" 2>&1 || failed+=(models_tests)
  say "models tests: $(grep -E '^\[  (PASSED|FAILED)' "$out/models_tests.txt" | tr '\n' ' ')"
fi

# 5. GPU LUTs of two models (per-stage latencies), and the CPU's for comparison.
if [ -x "$bdir/coinfer-profile" ]; then
  gpu=$(sed -n 's/^gpu //p' "$out/torch.txt" | tr ' ' '-' | tr -cd 'A-Za-z0-9._-')
  for m in "gcn mr" "dgcnn modelnet40"; do
    set -- $m
    if "$bdir/coinfer-profile" --processor cuda --model "$1" --dataset "$2" --device-type "gpu-${gpu:-none}" --batch 1..8 \
         --repeats 10 --warmup 3 --out "$out/gpu_luts.h5" >> "$out/profile.txt" 2>&1; then
      say "GPU LUT of $1/$2 written (gpu_luts.h5)"
    else
      say "GPU LUT of $1/$2: $(tail -1 "$out/profile.txt")"
      grep -q "is_available() is false" "$out/profile.txt" || failed+=("gpu_lut_$1")
    fi
    "$bdir/coinfer-profile" --processor cpu --model "$1" --dataset "$2" --device-type cpu-of-gpu-machine --batch 1..8 \
      --repeats 5 --warmup 2 --threads "$jobs" --out "$out/cpu_luts.h5" >> "$out/profile.txt" 2>&1 || failed+=("cpu_lut_$1")
  done
fi

say "finished in $(( $(date +%s) - start )) s; failed: ${failed[*]:-nothing}"
[ ${#failed[@]} -eq 0 ]
