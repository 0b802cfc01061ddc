#!/usr/bin/env bash
# The Slurm backend on a real single-node Slurm cluster (started here, on loopback, as root; skipped
# with the reason otherwise): its merged results equal the local backend's on the same grid, for a
# sweep and for a predictor sample set.
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
samples=(predictor samples --systems 3 --schemes 3 --devices 1..2 --duration 3 --models gcn/mr gat/siot)
timeout 240 "$coinfer" "${samples[@]}" --backend slurm --chunk 4 --wait --out "$work/ps-slurm" > "$work/ps.out" 2>&1 \
  && grep -q "wrote [0-9]* samples" "$work/ps.out" || { echo "FAIL: slurm samples"; cat "$work/ps.out"; exit 1; }
"$coinfer" "${samples[@]}" --out "$work/ps-local" -q || { echo "FAIL: local samples"; exit 1; }
# The same samples (the provenance and sources name the same options and relative scenario files).
cmp "$work/ps-slurm/samples.h5" "$work/ps-local/samples.h5" || { echo "FAIL: samples.h5 differs"; exit 1; }
# coinfer reproduce's Fig. 18 with its samples drawn on the cluster: the item runs and reads the held-out 30 %.
timeout 240 "$coinfer" reproduce ace-gnn/fig18 --quick --backend slurm --out "$work/rep" > "$work/rep.out" 2>&1 \
  && /usr/bin/python3 -c "
import json, sys
rows = json.load(open(sys.argv[1]))['papers'][0]['items'][0]['rows']
assert len(rows) == 3 and all(r['coinfer'] is not None for r in rows), rows" "$work/rep/reproduce.json" \
  || { echo "FAIL: reproduce ace-gnn/fig18 --backend slurm"; cat "$work/rep.out"; exit 1; }
echo "3 passed, 0 failed"
