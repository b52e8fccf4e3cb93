#!/usr/bin/env python3
"""Load a dsa-oracle golden case with numpy, recompute its top-k from the
stored logits, and check both top-k (numpy's and the stored one) by the
oracle's rule, which accepts any tie-break at the cut (docs/oracle.md).

    python3 load_golden_example.py data/golden/exact/v32_decode/v32_decode_00_nn1.safetensors

Works for the cases whose top-k is a plain top-k of the logits: ops
decode_topk, prefill_topk and candidate_select (the source layer's own top-k).
numpy only; the reader is python/dsa_oracle_io.py.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dsa_oracle_io import bf16_to_float32, read_safetensors  # noqa: E402

PLAIN_TOPK_OPS = ("decode_topk", "prefill_topk", "candidate_select")


def order_keys(values):
    """The SPEC's value order as integers: -inf lowest, -0 == +0, NaN above +inf (all NaNs equal)."""
    v = np.where(values == 0, np.float32(0), values.astype(np.float32))  # -0 -> +0
    bits = v.view(np.uint32).astype(np.int64)
    keys = np.where(bits >> 31 == 1, 0x7FFFFFFF - (bits & 0x7FFFFFFF), bits + 0x80000000)
    return np.where(np.isnan(values), np.int64(1) << 33, keys)


def row_windows(tensors, meta):
    """Per row: [begin, end), the entries its top-k selects among (SPEC 4-6)."""
    if "ks" in tensors:
        return tensors["ks"].astype(np.int64), tensors["ke"].astype(np.int64)
    seq, next_n = tensors["seq_lens"], int(meta["next_n"])
    ratio = int(meta.get("compress_ratio", "1"))
    decode_lens = tensors.get("decode_lens")
    ends = []
    for b in range(seq.shape[0]):
        for j in range(next_n):
            padded = decode_lens is not None and j >= decode_lens[b]
            if seq.ndim == 2:
                ends.append(0 if padded else int(seq[b, j]))
                continue
            length = int(seq[b])
            if padded:
                tokens = 0
            elif decode_lens is None:
                tokens = max(0, length - next_n + j + 1)
            elif meta.get("padded_lengths", "causal") == "causal":
                tokens = max(0, length - int(decode_lens[b]) + j + 1)
            else:
                tokens = max(0, length - next_n + 1 + j)
            ends.append(tokens // ratio)
    ends = np.array(ends, dtype=np.int64)
    return np.zeros_like(ends), ends


def numpy_topk(values, k):
    """k largest by the SPEC order, lowest index first among equals; then -1."""
    order = np.argsort(-order_keys(values), kind="stable")[:k]
    return np.concatenate([order, -np.ones(k - len(order), dtype=np.int64)]).astype(np.int32)


def topk_rule_violations(chosen, values, k):
    """What breaks the oracle's rule in one row (an empty list: the row is right)."""
    n, valid = len(values), min(k, len(values))
    head, tail = chosen[:valid], chosen[valid:]
    problems = []
    if np.any(tail != -1):
        problems.append(f"slots past {valid} must be -1")
    if np.any((head < 0) | (head >= n)):
        return problems + ["indices outside the row"]
    if len(np.unique(head)) != valid:
        problems.append("duplicate indices")
    if valid:
        keys = order_keys(values)
        cut = np.sort(keys)[::-1][valid - 1]  # the k-th largest value
        picked = np.zeros(n, dtype=bool)
        picked[head] = True
        if np.any(picked & (keys < cut)):
            problems.append("an index below the cut was chosen")
        if np.any(~picked & (keys > cut)):
            problems.append("an index above the cut was left out")
    return problems


def check_case(path):
    """Returns the number of rows whose stored or recomputed top-k breaks the rule."""
    tensors, meta = read_safetensors(path)
    if meta["op"] not in PLAIN_TOPK_OPS or "topk_indices" not in tensors:
        print(f"{path}: op {meta['op']} has no plain top-k of its logits; skipped")
        return 0
    logits = tensors["logits"]
    if logits.dtype == np.uint16:  # BF16 logits (bf16 profiles) come as their bits
        logits = bf16_to_float32(logits)
    k, stored = int(meta["topk"]), tensors["topk_indices"]
    begins, ends = row_windows(tensors, meta)
    bad, ties = 0, 0
    for r in range(logits.shape[0]):
        values = logits[r, begins[r] : ends[r]]
        mine = numpy_topk(values, k)
        for name, chosen in (("stored", stored[r]), ("numpy", mine)):
            problems = topk_rule_violations(chosen, values, k)
            if problems:
                bad += 1
                print(f"{path}: row {r}, {name} top-k: {', '.join(problems)}")
        ties += int(set(mine[mine >= 0]) != set(stored[r][stored[r] >= 0]))
    print(f"{path}: {logits.shape[0]} rows, k = {k}: {'OK' if bad == 0 else f'{bad} rows FAIL'}"
          f" ({ties} rows where the two top-k differ, at ties)")
    return bad


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(1 if sum(check_case(p) for p in sys.argv[1:]) else 0)
