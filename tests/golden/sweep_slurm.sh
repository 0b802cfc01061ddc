#!/usr/bin/env bash
# The Slurm backend on a real single-node Slurm cluster (started here, on loopback, as root; skipped
# with the reason otherwise): its merged results equal the local backend's on the same grid.
set -u
coinfer="$1"; root="$2"
source "$root/tests/golden/slurm_cluster.sh"
work=$(mktemp -d)
trap 'stop_slurm_cluster; rm -rf "$work"' EXIT
cd "$root"
grid=(--grid devices=1..2 --grid scheduler=hierarchical,gcode --seeds 2)
timeout 240 "$coinfer" sweep scenarios/paper/fig14_15_gpu.yaml "${grid[@]}" --backend slurm --chunk 3 --wait --out "$work/slurm" \
  || { echo "FAIL: slurm sweep"; ls "$work/slurm"; cat "$work"/slurm/slurm-*.out 2>/dev/null | tail; exit 1; }
ls "$work"/slurm/slurm-*_*.out > /dev/null 2>&1 || { echo "FAIL: no array task ran"; exit 1; }
"$coinfer" sweep scenarios/paper/fig14_15_gpu.yaml "${grid[@]}" --out "$work/local" -q || { echo "FAIL: local sweep"; exit 1; }
cmp "$work/slurm/sweep.csv" "$work/local/sweep.csv" || { echo "FAIL: csv differs"; diff "$work/slurm/sweep.csv" "$work/local/sweep.csv"; exit 1; }
cmp "$work/slurm/sweep.h5" "$work/local/sweep.h5" || { echo "FAIL: sweep.h5 differs"; exit 1; }
echo "1 passed, 0 failed"
