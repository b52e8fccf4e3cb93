#!/usr/bin/env python3
"""A whole indexer step in numpy, as an implementation under test: the decode
logits of SPEC 4 and the top-k of SPEC 6, for docs/regression.md ("I changed my
kernel: is it still right?").

    dsa-oracle golden --record --impl "external:python3 python/examples/numpy_indexer.py" --in GOLDEN --out BASE
    dsa-oracle check --baseline BASE --impl "external:python3 python/examples/numpy_indexer_reordered.py"

`dsa-oracle` runs this script once per call with `--in CASE --out OUT`
(safetensors files, docs/fuzzing.md). It takes
  - decode_logits: block-flat pages of e4m3fn or e4m3fnuz codes; each head's
    dot product exact in double, rounded once to fp32, then
    logit = RN(sum_h RN(w_h * relu(dot_h)), heads in HEAD_ORDER, unfused fp32) * s;
  - the top-k of given logits (op `topk`, or `prefill_topk`): rows [ks, ke),
    the k largest, lowest index first among ties.
Any other call exits 3, "unsupported". The arithmetic is this script's own (no
profile copies it): a baseline is what holds it to its previous version.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsa_oracle_io import (bf16_to_float32, e4m3fn_to_float32, e4m3fnuz_to_float32,  # noqa: E402
                           read_safetensors, write_safetensors)
from numpy_topk import topk_row  # noqa: E402

UNSUPPORTED = 3


def head_order(heads):
    """The order of the head sum. numpy_indexer_reordered.py changes only this."""
    return range(heads)


def visible_lengths(tensors, meta, next_n):
    """L_r of every decode row (SPEC 4, 5)."""
    seq, ratio = tensors["seq_lens"], int(meta.get("compress_ratio", "1"))
    decode_lens = tensors.get("decode_lens")
    lengths = []
    for b in range(seq.shape[0]):
        for j in range(next_n):
            if decode_lens is not None and j >= decode_lens[b]:
                lengths.append(0)
            elif seq.ndim == 2:
                lengths.append(int(seq[b, j]))
            elif decode_lens is not None and meta.get("padded_lengths", "causal") == "causal":
                lengths.append(max(0, int(seq[b]) - int(decode_lens[b]) + j + 1) // ratio)
            else:
                lengths.append(max(0, int(seq[b]) - next_n + j + 1) // ratio)
    return lengths


def decode_logits(tensors, meta, order):
    if meta.get("layout") != "block_flat" or meta.get("fp8") not in ("e4m3fn", "e4m3fnuz"):
        return None
    decode = e4m3fn_to_float32 if meta["fp8"] == "e4m3fn" else e4m3fnuz_to_float32
    q = tensors["q"]
    batch, next_n, heads, dim = q.shape
    cache = tensors["kv_cache"]
    pages, page_size = cache.shape[0], cache.shape[1]
    raw = cache.reshape(pages, page_size * (dim + 4))
    values = decode(raw[:, : page_size * dim]).reshape(pages, page_size, dim).astype(np.float64)
    scales = np.ascontiguousarray(raw[:, page_size * dim :]).view(np.float32).reshape(pages, page_size)
    weights = tensors["weights"]
    weights = bf16_to_float32(weights) if weights.dtype == np.uint16 else weights.astype(np.float32)
    table = tensors["block_table"]
    lengths = visible_lengths(tensors, meta, next_n)
    if "logits" in tensors:  # the caller's (poisoned) buffer: written where the kernel writes
        out = tensors["logits"].copy()
    else:
        width = int(meta["max_model_len"]) // int(meta.get("compress_ratio", "1"))
        out = np.full((batch * next_n, width), -np.inf, dtype=np.float32)
    for r, length in enumerate(lengths):
        if length == 0:
            continue
        b, j = divmod(r, next_n)
        tokens = np.arange(length)
        page_ids = table[b, tokens // page_size]
        k = values[page_ids, tokens % page_size]  # [L, D], exact in double
        s = scales[page_ids, tokens % page_size]
        dots = (decode(q[b, j]).astype(np.float64) @ k.T).astype(np.float32)  # exact sums, one rounding each
        relu = np.maximum(dots, np.float32(0))
        acc = np.zeros(length, dtype=np.float32)
        for h in order(heads):
            acc = acc + weights[r, h] * relu[h]  # fp32 multiply, then fp32 add
        out[r, :length] = acc * s
    return {"logits": out}


def topk(tensors, meta):
    logits, ks, ke = tensors["logits"], tensors["ks"], tensors["ke"]
    if logits.dtype != np.float32:
        return None
    k = int(meta["topk"])
    out = np.full((logits.shape[0], k), -1, dtype=np.int32)
    for r in range(logits.shape[0]):
        out[r] = topk_row(logits[r, int(ks[r]) : int(ke[r])], k)
    return {"topk_indices": out}


def main(order=head_order):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in", dest="inp", required=True, help="the case (safetensors)")
    parser.add_argument("--out", required=True, help="where to write the outputs (safetensors)")
    args = parser.parse_args()

    tensors, meta = read_safetensors(args.inp)
    op = meta.get("op")
    if op == "decode_logits":
        outputs = decode_logits(tensors, meta, order)
    elif op in ("topk", "prefill_topk") and "logits" in tensors and "ks" in tensors and "q" not in tensors:
        outputs = topk(tensors, meta)
    else:
        outputs = None
    if outputs is None:
        return UNSUPPORTED
    write_safetensors(args.out, outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
