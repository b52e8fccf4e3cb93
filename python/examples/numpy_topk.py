#!/usr/bin/env python3
"""A top-k "kernel" in numpy, as an implementation under test for the fuzzer.

    dsa-oracle fuzz --impl "external:python3 python/examples/numpy_topk.py" --property topk_agrees

`dsa-oracle fuzz` runs this script once per call with `--in CASE --out OUT`
(safetensors files, docs/fuzzing.md). It takes the `topk` op: the logits
[rows, W] and row bounds `ks`, `ke`; row r selects among columns [ks, ke),
indices relative to ks (SPEC 6). Any other op exits with status 3,
"unsupported", which the fuzzer counts apart and never as a pass.

Replace `topk_row` with a call into your own kernel to fuzz it.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from dsa_oracle_io import read_safetensors, write_safetensors  # noqa: E402

UNSUPPORTED = 3


def order_keys(values):
    """Integer keys in the SPEC's value order: -inf lowest, -0 == +0, NaN above +inf."""
    v = np.asarray(values, dtype=np.float32)
    bits = v.view(np.uint32).astype(np.int64)
    keys = np.where(bits >> 31 == 1, 0xFFFFFFFF - bits, bits | 0x80000000)
    keys = np.where(v == 0, 0x80000000, keys)
    return np.where(np.isnan(v), 0x100000000, keys)


def topk_row(values, k):
    """The k largest of one row (lowest index first among ties); a short row gives 0..L-1 then -1."""
    out = np.full(k, -1, dtype=np.int32)
    n = len(values)
    if n <= k:
        out[:n] = np.arange(n, dtype=np.int32)
        return out
    out[:] = np.argsort(-order_keys(values), kind="stable")[:k]
    return out


def row_window(logits, r, start, end):
    return logits[r, start:end]


def main(window=row_window):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in", dest="inp", required=True, help="the case (safetensors)")
    parser.add_argument("--out", required=True, help="where to write the outputs (safetensors)")
    args = parser.parse_args()

    tensors, meta = read_safetensors(args.inp)
    if meta.get("op") != "topk":
        return UNSUPPORTED
    logits, ks, ke = tensors["logits"], tensors["ks"], tensors["ke"]
    k = int(meta["topk"])
    out = np.full((logits.shape[0], k), -1, dtype=np.int32)
    for r in range(logits.shape[0]):
        out[r] = topk_row(window(logits, r, int(ks[r]), int(ke[r])), k)
    write_safetensors(args.out, {"topk_indices": out})
    return 0


if __name__ == "__main__":
    sys.exit(main())
