#!/usr/bin/env python3
"""DeepGEMM's SM90 fp8_paged_mqa_logits, timed as bench/gpu/logits_speed.cu times ours.

Same shapes, same input distribution (e4m3fn codes of exponent -3..3 with both signs, positive
scales), the K cache rotated over enough page sets that every launch reads from HBM, 8 launches per
CUDA graph and each replay timed by CUDA events after warm-up: the median of --iters replays over 8.
The schedule metadata is made once per shape, outside the timing (as DeepGEMM's own benchmark does).
  deepgemm_bench.py [--json FILE] [--iters N] [--shapes B:L,...] [--next-n 1,2]
"""
import argparse
import json
import math
import sys

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--json')
    ap.add_argument('--iters', type=int, default=20)
    ap.add_argument('--shapes', default='64:65536,16:131072,128:32768,4:131072')
    ap.add_argument('--next-n', default='1,2')
    args = ap.parse_args()
    import deep_gemm

    dev = torch.device('cuda')
    props = torch.cuda.get_device_properties(0)
    l2 = props.L2_cache_size
    H, D, page = 64, 128, 64
    results = []
    for item in args.shapes.split(','):
        batch, context = (int(x) for x in item.split(':'))
        for next_n in (int(x) for x in args.next_n.split(',')):
            pages_per = math.ceil(context / page)
            k_bytes = batch * pages_per * page * (D + 4)
            sets = max(2, math.ceil(4 * l2 / k_bytes))
            pool = sets * batch * pages_per
            cache = torch.empty((pool, page * (D + 4)), dtype=torch.uint8, device=dev)
            codes = torch.randint(0x20, 0x58, (pool, page * D), dtype=torch.int32, device=dev)
            signs = torch.randint(0, 2, (pool, page * D), dtype=torch.int32, device=dev) * 0x80
            cache[:, :page * D] = (codes | signs).to(torch.uint8)
            scales = (1.0 + torch.rand((pool, page), device=dev)) / 448.0
            cache[:, page * D:] = scales.view(torch.uint8)
            del codes, signs
            q_codes = (torch.randint(0x20, 0x58, (batch, next_n, H, D), dtype=torch.int32, device=dev) |
                       torch.randint(0, 2, (batch, next_n, H, D), dtype=torch.int32, device=dev) * 0x80)
            q = q_codes.to(torch.uint8).view(torch.float8_e4m3fn)
            weights = torch.rand((batch * next_n, H), device=dev) * 2 - 1
            lens = torch.full((batch,), context, dtype=torch.int32, device=dev)
            tables = torch.randperm(pool, device=dev, dtype=torch.int32).view(sets, batch, pages_per).contiguous()
            kv = cache.view(pool, page, 1, D + 4)
            schedule = deep_gemm.get_paged_mqa_logits_metadata(lens, page, deep_gemm.get_num_sms())

            def launch(i):
                return deep_gemm.fp8_paged_mqa_logits(q, kv, weights, lens, tables[i % sets], schedule, context, False)

            for i in range(5):  # the first call JIT-compiles the kernel
                launch(i)
            torch.cuda.synchronize()
            # K launches per CUDA graph (host work between launches costs nothing, as in logits_speed),
            # each replay timed by events; the median replay over --iters, divided by K.
            per_graph = 8
            graph = torch.cuda.CUDAGraph()
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                launch(0)
                torch.cuda.synchronize()
                with torch.cuda.graph(graph, stream=stream):
                    for i in range(per_graph):
                        launch(i)
            for _ in range(2):
                graph.replay()
            torch.cuda.synchronize()
            times = []
            for i in range(args.iters):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                graph.replay()
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b) * 1000.0 / per_graph)
            times.sort()
            us = times[len(times) // 2]
            results.append({'batch': batch, 'context': context, 'next_n': next_n, 'k_bytes': k_bytes, 'us_deepgemm': us})
            print(f'DeepGEMM B {batch:4d} x {context:6d} next_n {next_n}: {us:8.1f} us '
                  f'({k_bytes / (us * 1e-6) / 1e12:.2f} TB/s, {sets} page sets)', flush=True)
            del graph, cache, kv, tables, q, weights
            torch.cuda.empty_cache()
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'gpu': props.name, 'torch': torch.__version__, 'iters': args.iters, 'shapes': results}, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
