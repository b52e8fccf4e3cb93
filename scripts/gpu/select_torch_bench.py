#!/usr/bin/env python3
"""torch.topk on the decode top-k shapes of bench/gpu/select_speed.cu, in the same GPU job.

The same shapes, k and kinds of data (normal, 7 of 8 blocks of 8 columns -inf, 16 levels); each
time is the median over CUDA-graph replays after warm-up, a replay running every input set once,
the sets together several times the L2 (as select_speed does). Writes JSON for speed_table.py.
  select_torch_bench.py [--json FILE] [--reps N] [--quick]
"""
import argparse
import json
import math
import statistics

import torch


def make(rows, cols, kind, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if kind == "16 levels":
        return torch.randint(0, 16, (rows, cols), generator=g, device="cuda").float() * 0.25
    x = torch.randn(rows, cols, generator=g, device="cuda")
    if kind == "7/8 -inf":
        keep = torch.randint(0, 8, (rows, (cols + 7) // 8), generator=g, device="cuda") == 0
        x = x.masked_fill(~keep.repeat_interleave(8, dim=1)[:, :cols], float("-inf"))
    return x


def time_us(fn, per_replay, reps):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for i in range(per_replay):  # warm-up, outside the capture
            fn(i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(per_replay):
            fn(i)
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times) * 1000.0 / per_replay


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    shapes = [(8, 131072), (64, 131072), (256, 131072), (64, 32768)]
    ks = [512, 2048]
    kinds = ["normal", "7/8 -inf", "16 levels"]
    if args.quick:
        shapes, ks, kinds = [(64, 131072)], [2048], ["normal"]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    records = []
    print(f"{'shape':11s} {'k':>5s} {'data':10s} {'torch.topk us':>14s}")
    for rows, cols in shapes:
        nbytes = rows * cols * 4
        sets = max(3, math.ceil(3 * l2 / nbytes))
        for kind in kinds:
            inputs = [make(rows, cols, kind, 1000 + i) for i in range(sets)]
            for k in ks:
                out = [None]

                def fn(i):
                    out[0] = torch.topk(inputs[i % sets], k, dim=1, sorted=False)

                us = time_us(fn, sets, args.reps)
                shape = f"{rows}x{cols // 1024}k"
                print(f"{shape:11s} {k:5d} {kind:10s} {us:14.1f}", flush=True)
                records.append({"rows": rows, "columns": cols, "k": k, "data": kind, "torch_topk_us": round(us, 2)})
            del inputs
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "torch_topk": records}, f, indent=1)


if __name__ == "__main__":
    main()
