#!/usr/bin/python3
"""Python half of bench/model_speed.py: the same GNNs written with Debian's python3-torch (1.13, eager),
built from the stage lists bench_models writes, run on the very same inputs (HDF5 files it writes).
usage: /usr/bin/python3 bench/models_ref.py DIR THREADS REPEATS NAME...   (NAME = model_dataset)
prints "model dataset median_ms" per model."""
import json
import statistics
import sys
import time

import h5py
import torch
import torch.nn.functional as F


class Ref(torch.nn.Module):
    def __init__(self, stages):
        super().__init__()
        self.stages = stages
        self.lins = torch.nn.ModuleList()
        self.extra = []
        for s in stages:
            op, i, o = s["op"], s["in"], s["out"]
            lin = []
            extra = []
            if op == "edgeconv":
                lin = [torch.nn.Linear(2 * i, o)]
            elif op in ("combine", "linear", "fc"):
                lin = [torch.nn.Linear(i, o)]
            elif op == "gcn":
                lin = [torch.nn.Linear(i, o, bias=False)]
                extra = [torch.zeros(o)]
            elif op == "sage":
                lin = [torch.nn.Linear(i, o), torch.nn.Linear(i, o, bias=False)]
            elif op == "gat":
                d = o // s["heads"]
                lin = [torch.nn.Linear(i, o, bias=False)]
                extra = [torch.randn(s["heads"], d), torch.randn(s["heads"], d), torch.zeros(o)]
            self.lins.append(torch.nn.ModuleList(lin))
            self.extra.append(extra)
        self.norm = None

    @staticmethod
    def knn(x, k):
        sq = (x * x).sum(-1, keepdim=True)
        d = sq - 2 * x @ x.transpose(1, 2) + sq.transpose(1, 2)
        return d.topk(min(k, x.size(1)), dim=-1, largest=False)[1]

    @staticmethod
    def gather(x, idx):
        b, n, k = idx.shape
        f = x.size(2)
        return x.gather(1, idx.reshape(b, n * k, 1).expand(b, n * k, f)).reshape(b, n, k, f)

    def forward(self, x, edge_index):
        out = {-1: x}
        n_stages = len(self.stages)
        for si, s in enumerate(self.stages):
            op, last, lin = s["op"], si + 1 == n_stages, self.lins[si]
            feats = [out[p] for p in s["inputs"] if p < 0 or self.stages[p]["op"] != "knn"]
            h = feats[0] if len(feats) == 1 else torch.cat(feats, -1)
            if op == "knn":
                y = self.knn(h, s["k"])
            elif op == "edgeconv":
                nb = self.gather(h, self.knn(h, s["k"]))
                xi = h.unsqueeze(2).expand_as(nb)
                y = F.leaky_relu(lin[0](torch.cat([xi, nb - xi], -1)), 0.2).amax(2)
            elif op == "aggregate":
                idx = [out[p] for p in s["inputs"] if p >= 0 and self.stages[p]["op"] == "knn"][0]
                y = self.gather(h, idx).amax(2)
            elif op in ("combine", "linear"):
                y = torch.relu(lin[0](h))
            elif op == "fc":
                y = lin[0](h) if last else torch.relu(lin[0](h))
            elif op == "pool":
                dim = h.dim() - 2
                mx, mean = h.amax(dim, keepdim=h.dim() == 2), h.mean(dim, keepdim=h.dim() == 2)
                y = {"max": mx, "mean": mean}.get(s["mode"], None)
                if y is None:
                    y = torch.cat([mx, mean], -1)
            else:
                n = h.size(0)
                src, dst = edge_index[0], edge_index[1]
                if op == "gcn":
                    if self.norm is None:  # cached once per graph, as in the C++ model
                        loops = torch.arange(n)
                        s2, d2 = torch.cat([src, loops]), torch.cat([dst, loops])
                        deg = torch.zeros(n).index_add_(0, d2, torch.ones(d2.numel()))
                        self.norm = (s2, d2, deg[s2].rsqrt() * deg[d2].rsqrt())
                    s2, d2, w = self.norm
                    hw = lin[0](h)
                    y = torch.zeros(n, hw.size(1)).index_add_(0, d2, hw[s2] * w.unsqueeze(1)) + self.extra[si][0]
                    y = y if last else torch.relu(y)
                elif op == "sage":
                    deg = torch.zeros(n).index_add_(0, dst, torch.ones(dst.numel())).clamp_min(1)
                    mean = torch.zeros(n, h.size(1)).index_add_(0, dst, h[src]) / deg.unsqueeze(1)
                    y = lin[0](h) + lin[1](mean)
                    y = y if last else torch.relu(y)
                else:  # gat
                    H = s["heads"]
                    D = s["out"] // H
                    loops = torch.arange(n)
                    s2, d2 = torch.cat([src, loops]), torch.cat([dst, loops])
                    hh = lin[0](h).view(n, H, D)
                    a_s, a_d = (hh * self.extra[si][0]).sum(-1), (hh * self.extra[si][1]).sum(-1)
                    e = F.leaky_relu(a_s[s2] + a_d[d2], 0.2)
                    mx = torch.full((n, H), float("-inf")).scatter_reduce(0, d2.unsqueeze(1).expand(-1, H), e, "amax")
                    ex = (e - mx[d2]).exp()
                    den = torch.zeros(n, H).index_add_(0, d2, ex)
                    alpha = ex / den[d2]
                    y = torch.zeros(n, H, D).index_add_(0, d2, hh[s2] * alpha.unsqueeze(2)).reshape(n, H * D)
                    y = y + self.extra[si][2]
                    y = y if last else F.elu(y)
            out[si] = y
        return out[n_stages - 1]


def main():
    d, threads, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    for name in sys.argv[4:]:
        with open(f"{d}/{name}.json") as f:
            spec = json.load(f)
        with h5py.File(f"{d}/{name}.h5") as f:
            if spec["kind"] == "point_cloud":
                x, ei = torch.from_numpy(f["data"][:]), None
            else:
                x, ei = torch.from_numpy(f["x"][:]), torch.from_numpy(f["edge_index"][:].astype("int64"))
        m = Ref(spec["stages"]).eval()
        times = []
        with torch.no_grad():
            for r in range(2 + repeats):
                t0 = time.perf_counter()
                m(x, ei)
                if r >= 2:
                    times.append((time.perf_counter() - t0) * 1e3)
        print(f"{spec['model']} {spec['dataset']} {statistics.median(times):.4f}", flush=True)


if __name__ == "__main__":
    main()
