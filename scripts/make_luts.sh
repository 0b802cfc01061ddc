#!/usr/bin/env bash
# Regenerates the shipped synthesised LUTs from traces/devices.yaml and models/: traces/lut/*.h5 (each
# type's default processor) and traces/lut_processors/TYPE-PROCESSOR.h5 (the other processors of the
# boards that have several, for placements: scenarios/README.md "Placement").
set -euo pipefail
cd "$(dirname "$0")/.."
./build/coinfer lut synth --device all --kinds graph,point_cloud --out-dir traces/lut
mkdir -p traces/lut_processors
for pair in jetson-tx2:cpu jetson-nano:cpu jetson-orin-nano:cpu jetson-agx-orin:cpu core-ultra-165h:gpu core-ultra-165h:cpu core-ultra-256v:gpu \
  core-ultra-256v:cpu; do
  ./build/coinfer lut synth --device "${pair%%:*}" --processor "${pair##*:}" --kinds graph,point_cloud --out "traces/lut_processors/${pair%%:*}-${pair##*:}.h5"
done
# The image models (SparOA's CNNs, models/README.md "Images") in a folder of their own: their range tables
# are ~10x the GNNs' (MobileNet-v2 has 64 stages), and every process loads every table of the folders its
# scenario names. SparOA's two boards, both processors, batches 1-8: traces/lut_images/TYPE-PROCESSOR.h5.
rm -rf traces/lut_images
mkdir -p traces/lut_images
for pair in jetson-orin-nano:gpu jetson-orin-nano:cpu jetson-agx-orin:gpu jetson-agx-orin:cpu; do
  ./build/coinfer lut synth --device "${pair%%:*}" --processor "${pair##*:}" --kinds image --max-batch 8 \
    --out "traces/lut_images/${pair%%:*}-${pair##*:}.h5"
done
# The server their one-device scenarios name (scenarios/processors/orin_sparoa_cnn.yaml): the simulator binds
# a device's server table whatever its strategy (the wire's bytes per stage).
./build/coinfer lut synth --device i7-7700 --kinds image --max-batch 8 --out traces/lut_images/i7-7700-default.h5
# Feature decomposition (variant fdP) of the wide GCN on Pubmed, for the 1 GB board of the feature
# decomposition paper (scenarios/processors/pi_1gb_feature_decomposition.yaml): the board and its server.
mkdir -p traces/lut_variants
for type in rpi4b i7-7700; do
  for p in 2 4 8; do
    ./build/coinfer lut synth --device "$type" --model "gcn_wide@fd$p" --dataset pubmed --out "traces/lut_variants/$type-gcn_wide-fd$p.h5"
  done
done
# GraNNite's Fig. 20 on the Series 2 AI PC (scenarios/processors/grannite_npu_fig20.yaml), on each of the
# board's processors (GraphSplit places stages on them) and the scenario's server (i7-7700, one processor,
# "default"): traces/lut_grannite/TYPE.PROCESSOR.MODEL[@VARIANT][.DATASET].h5 (no DATASET: every one of the
# model's). GCN out of the box (dense_mask+uncached) and with StaGr (dense_mask); GrAd's gcn_grad with
# NodePad (cap3000: Cora padded to 3,000 nodes, GraNNite Sec. V), with GraSp (grasp) and with QuantGr (int8), on Cora; and
# for Fig. 21 the same on the Series 1 AI PC (core-ultra-165h), and the most optimised step on Citeseer
# (cap3500: its 3,327 nodes padded to 3,500, ASSUMED: the paper gives NodePad's capacity for Cora only).
mkdir -p traces/lut_grannite
for tp in core-ultra-256v.npu core-ultra-256v.cpu core-ultra-256v.gpu core-ultra-165h.npu core-ultra-165h.cpu core-ultra-165h.gpu \
  i7-7700.default; do
  for m in gcn@dense_mask gcn@dense_mask+uncached; do
    ./build/coinfer lut synth --device "${tp%.*}" --processor "${tp##*.}" --model "$m" --out "traces/lut_grannite/$tp.$m.h5"
  done
  for m in gcn_grad@cap3000 gcn_grad@cap3000+grasp gcn_grad@cap3000+int8; do
    ./build/coinfer lut synth --device "${tp%.*}" --processor "${tp##*.}" --model "$m" --dataset cora --out "traces/lut_grannite/$tp.$m.cora.h5"
  done
  ./build/coinfer lut synth --device "${tp%.*}" --processor "${tp##*.}" --model gcn_grad@cap3500+int8 --dataset citeseer \
    --out "traces/lut_grannite/$tp.gcn_grad@cap3500+int8.citeseer.h5"
done
# Fig. 23's forms of GCN that the GraNNite scenario's other tables lack: QuantGr's INT8 on PyG's sparse layers
# (int8) and on StaGr's dense form (dense_mask+int8), on every processor of the Series 2 AI PC and on its server
# (bench/grannite_power_calibration.py FORMS: each processor's most efficient form is the least of them).
for tp in core-ultra-256v.npu core-ultra-256v.cpu core-ultra-256v.gpu i7-7700.default; do
  for m in gcn@int8 gcn@dense_mask+int8; do
    ./build/coinfer lut synth --device "${tp%.*}" --processor "${tp##*.}" --model "$m" --out "traces/lut_grannite/$tp.$m.h5"
  done
done
# GAT's steps of Fig. 20 on the Series 2 AI PC: out of the box (the mask made in every run, Greater and
# Select: dense_mask+uncached+select_mask), EffOp (the mask precomputed and multiplied in: dense_mask) and
# EffOp + GrAx2 (dense_mask+grax2), on Cora and Citeseer; and SAGE with StaGr's row-mean matrix (dense_mask)
# for Fig. 22 (bench/grannite_cpu_gpu_calibration.py).
for tp in core-ultra-256v.npu core-ultra-256v.cpu core-ultra-256v.gpu i7-7700.default; do
  for m in gat@dense_mask+uncached+select_mask gat@dense_mask gat@dense_mask+grax2 sage@dense_mask; do
    for ds in cora citeseer; do
      ./build/coinfer lut synth --device "${tp%.*}" --processor "${tp##*.}" --model "$m" --dataset "$ds" --out "traces/lut_grannite/$tp.$m.$ds.h5"
    done
  done
done
