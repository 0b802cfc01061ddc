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
# (6) runs DGCNN's stages placed on the CPU and the GPU (local[cpu], local[gpu], local[cpu:0-1,gpu:1-9]:
# KNN on the CPU, the rest on the GPU, ACE-GNN's premise) on the real runtime (a loopback testbed, one
# request at a time) and compares each with its simulation: the LUT times of its segments, the copies
# between them at the host-GPU bandwidth measured in (1) (`coinfer-rt check --plan`: what the simulator
# gives one request alone). placement.txt has the table; `coinfer run $OUT/placement/<name>.yaml` here
# re-makes the simulated side with the full simulator.
#
# Rehearsal on a CPU-only machine with a CPU LibTorch (hw/README.md "On a GPU machine"): the GPU test
# skips, saying so; the "gpu" processor's LUT is measured on the CPU (coinfer profile --as-processor
# gpu) and the runtime computes it there (--processor-device gpu=cpu), so every step still runs.
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
if torch.cuda.is_available():
    import time
    print("gpu_memory_gb", torch.cuda.get_device_properties(0).total_memory / 1e9)
    # Host -> GPU copies as the runtime makes them (pageable memory, .to()): a 4-byte tensor's time is
    # the latency, a 64 MB one's gives the bandwidth; medians of 20.
    def median_copy_s(n):
        x = torch.ones(n // 4)
        ts = []
        for _ in range(25):
            torch.cuda.synchronize(); t = time.perf_counter(); x.to("cuda"); torch.cuda.synchronize(); ts.append(time.perf_counter() - t)
        ts = sorted(ts[5:]); return ts[len(ts) // 2]
    lat = median_copy_s(4); big = median_copy_s(64 << 20)
    print("copy_latency_us", lat * 1e6)
    print("copy_gbps", (64 << 20) / max(big - lat, 1e-9) / 1e9)
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

# 5. LUTs of two models on both processors of this machine, one device type (gpu-machine: tables
# gpu-machine:gpu and gpu-machine:cpu, one file per processor in luts/): per-stage GPU latencies, and
# what the placement needs.
# Without a GPU (the rehearsal) the "gpu" table is the CPU's, measured again under that name.
gpu_available=$(sed -n 's/^cuda_available //p' "$out/torch.txt")
if [ "$gpu_available" = "True" ]; then gpu_profile=(--processor cuda); gpu_device=cuda:0
else gpu_profile=(--processor cpu --as-processor gpu); gpu_device=cpu; say "no GPU: rehearsal (the 'gpu' processor is this machine's CPU)"; fi
luts="$out/luts"
mkdir -p "$luts"
# profile_table PROCESSOR ARGS...: into luts/gpu-machine-PROCESSOR.h5; a table a previous run of this
# script wrote into the same $OUT is kept (run it again after a failure: nothing is measured twice).
profile_table() {
  local proc=$1; shift
  local t0; t0=$(date +%s)
  if "$bdir/coinfer-profile" "$@" --device-type gpu-machine --batch 1..4 --repeats 5 --warmup 2 --out "$luts/gpu-machine-$proc.h5" \
       >> "$out/profile.txt" 2>&1; then
    say "$proc LUT of $model written in $(( $(date +%s) - t0 )) s (luts/gpu-machine-$proc.h5)"
  elif tail -1 "$out/profile.txt" | grep -q "already holds"; then
    say "$proc LUT of $model: kept from an earlier run into this folder"
  else
    say "$proc LUT of $model: $(tail -1 "$out/profile.txt")"; failed+=("${proc}_lut_${model%%/*}")
  fi
}
if [ -x "$bdir/coinfer-profile" ]; then
  for m in "gcn mr" "dgcnn modelnet40"; do
    set -- $m
    model="$1/$2"
    profile_table gpu "${gpu_profile[@]}" --model "$1" --dataset "$2"
    profile_table cpu --processor cpu --model "$1" --dataset "$2"
  done
fi

# 6. The placement on the real runtime against its simulation.
if [ -x "$bdir/coinfer-rt" ] && [ -f "$luts/gpu-machine-gpu.h5" ] && [ -f "$luts/gpu-machine-cpu.h5" ]; then
  pdir="$out/placement"; mkdir -p "$pdir"
  copy_gbps=$(sed -n 's/^copy_gbps //p' "$out/torch.txt"); copy_us=$(sed -n 's/^copy_latency_us //p' "$out/torch.txt")
  gpu_gb=$(sed -n 's/^gpu_memory_gb //p' "$out/torch.txt")
  if [ -n "$copy_gbps" ]; then
    memory="{capacity_gb: 64, gpu: separate, gpu_gb: ${gpu_gb}, source: \"MEASURED by scripts/gpu_check.sh: torch.cuda.get_device_properties; host memory ASSUMED 64 GB\"}"
    interconnect="{kind: copy, gbps: ${copy_gbps}, latency_us: ${copy_us}, source: \"MEASURED by scripts/gpu_check.sh: median host-to-GPU copy of 4 B and 64 MB (PyTorch, pageable memory)\"}"
  else
    memory="{capacity_gb: 64, gpu: shared, source: \"rehearsal on a CPU-only machine: the 'gpu' is this machine's CPU; ASSUMED 64 GB\"}"
    interconnect="{kind: shared, source: \"rehearsal: both processors are this machine's CPU (no copy)\"}"
  fi
  cat > "$pdir/hardware.yaml" <<YAML
# The GPU machine as a board with two processors, for the placement check (scripts/gpu_check.sh step 6).
# Its LUTs are MEASURED (luts.h5); the peak figures below only satisfy the profile format (unused: a
# measured LUT replaces every synthesised time).
profiles:
  gpu-machine:
    role: device
    description: "the machine scripts/gpu_check.sh ran on: $(sed -n 's/^gpu //p' "$out/torch.txt") and its CPU"
    default_processor: cpu
    memory: $memory
    interconnect: $interconnect
    processors:
      cpu: {kind: cpu, cores: $(nproc), description: "this machine's CPU (LibTorch)", peak_gflops: 100, mem_gbps: 10, stage_overhead_ms: 0.05, batch_half: 0.3, efficiency: 0.5, efficiency_note: "unused: measured LUT"}
      gpu: {kind: gpu, cores: 1, description: "this machine's GPU (LibTorch CUDA)", peak_gflops: 1000, mem_gbps: 100, stage_overhead_ms: 0.1, batch_half: 3, efficiency: 0.5, efficiency_note: "unused: measured LUT"}
YAML
  printf "%-28s %12s %12s %8s\n" placement "simulated_ms" "real_ms" "error" > "$pdir/placement.txt"
  for p in "cpu local[cpu]" "gpu local[gpu]" "knn_cpu local[cpu:0-1,gpu:1-9]"; do
    set -- $p
    cat > "$pdir/$1.yaml" <<YAML
# scripts/gpu_check.sh step 6: DGCNN on the GPU machine as a board, placed $2, one request at a time.
name: gpu_check_$1
seed: 1
duration_s: 15
warmup_s: 3
drain_s: 5
hardware: hardware.yaml
# The server is never asked (every request stays on the board): any type with a DGCNN table will do.
luts: [$luts/, $tree/traces/lut/gtx1060.h5]
servers:
  - {id: edge, type: gtx1060}
devices:
  - {id: board, type: gpu-machine, model: dgcnn, dataset: modelnet40, link: {bandwidth_mbps: 1000}, processor: cpu, workload: {arrival: closed_loop, in_flight: 1}, strategy: '$2'}
YAML
    sim=$("$bdir/coinfer-rt" check "$pdir/$1.yaml" --plan 2>&1 | tee -a "$pdir/plans.txt" | sed -n 's/.* = \([0-9.]*\) ms per request alone/\1/p')
    if "$bdir/coinfer-rt" testbed "$pdir/$1.yaml" --loopback --device-memory off --processor-device gpu=$gpu_device --out "$pdir/$1-real" > "$pdir/$1.log" 2>&1; then
      real=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['total']; print('%.3f' % t['latency_ms']['mean'] if t['failed'] == 0 else 'failed:%d' % t['failed'])" "$pdir/$1-real/summary.json")
      err=$(python3 -c "import sys; s,r=float(sys.argv[1]),float(sys.argv[2]); print('%+.1f%%' % (100*(r-s)/s))" "$sim" "$real" 2>/dev/null || echo "n/a")
      printf "%-28s %12s %12s %8s\n" "$2" "${sim:-n/a}" "$real" "$err" >> "$pdir/placement.txt"
    else
      say "placement $2: the testbed failed: $(tail -2 "$pdir/$1.log")"; failed+=("placement_$1")
    fi
  done
  cat "$pdir/placement.txt" | tee -a "$report"
fi

say "finished in $(( $(date +%s) - start )) s; failed: ${failed[*]:-nothing}"
[ ${#failed[@]} -eq 0 ]
