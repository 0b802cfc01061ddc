#!/usr/bin/python3
"""Copy a LUT file keeping only batch sizes 1..B (a held-out split for `coinfer lut fill --check-against`).

    /usr/bin/python3 bench/lut_holdout.py SRC.h5 DST.h5 --max-batch 4

Every dataset with a batch axis (latency_*: axis 2) is cut to its first B batch sizes, max_batch is set
to B, everything else (bytes per split, peak memory, wire bytes, provenance) is copied unchanged, and a
provenance attribute says what was held out. Used by tests/golden/lut_fill.sh and bench/lut_fill_accuracy.py.
"""
import argparse
import sys

import h5py


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--max-batch", type=int, required=True)
    a = ap.parse_args()
    with h5py.File(a.src, "r") as src, h5py.File(a.dst, "w") as dst:
        for k, v in src.attrs.items():
            dst.attrs[k] = v
        for model in src:
            for dataset in src[model]:
                g = src[model][dataset]
                out = dst.create_group(f"{model}/{dataset}")
                for k, v in g.attrs.items():
                    out.attrs[k] = v
                if a.max_batch < 1 or a.max_batch > int(g.attrs["max_batch"]):
                    sys.exit(f"error: --max-batch {a.max_batch} is outside 1..{int(g.attrs['max_batch'])} for {model}/{dataset}")
                out.attrs["max_batch"] = a.max_batch
                out.attrs["provenance:held_out"] = f"batch sizes above {a.max_batch} removed by bench/lut_holdout.py from {a.src}"
                for name, d in g.items():
                    data = d[...]
                    if name.startswith("latency_") and name != "latency_quantile_levels":
                        data = data[:, :, : a.max_batch, ...]
                    nd = out.create_dataset(name, data=data, track_times=False)
                    for k, v in d.attrs.items():
                        nd.attrs[k] = v


if __name__ == "__main__":
    main()
