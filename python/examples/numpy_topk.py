#!/usr/bin/env python3
"""A top-k "kernel" in numpy, as an implementation under test for the fuzzer.

    dsa-oracle fuzz --impl "external:python3 python/examples/numpy_topk.py" --property topk_agrees
    dsa-oracle fuzz --impl "external:python3 python/examples/numpy_topk.py" --persistent --property topk_agrees

Each call is one golden case (docs/golden-format.md, docs/fuzzing.md): the
fuzzer's top-k arrives as op `prefill_topk` with given `logits` [rows, W] and
row bounds `ks`, `ke`; row r selects among columns [ks, ke), indices relative
to ks (SPEC 6). Any other op is "unsupported" (exit status 3, or an answer
with metadata status=unsupported), which the fuzzer counts apart and never as
a pass.

Per call, the fuzzer runs this script with `--in CASE --out OUT`. With
`--persistent` the script starts once and answers requests on its standard
input (an 8-byte little-endian length, then a safetensors image) with answers
of the same form on its standard output, so Python and numpy start only once.

Replace `topk_row` with a call into your own kernel to fuzz it.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from dsa_oracle_io import parse_safetensors, read_safetensors, serialize_safetensors, write_safetensors  # noqa: E402

UNSUPPORTED = 3

# What this kernel takes (docs/fuzzing.md, "Contracts"): the fuzzer draws only such cases.
CONTRACT = {"ops": ["topk"]}


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


def answer(tensors, meta, window):
    """The outputs of one request, as tensors; None for a call this kernel does not take."""
    if meta.get("op") == "describe":
        return {"__contract__": json.dumps(CONTRACT)}
    if meta.get("op") != "prefill_topk" or "logits" not in tensors:
        return None
    logits, ks, ke = tensors["logits"], tensors["ks"], tensors["ke"]
    k = int(meta["topk"])
    out = np.full((logits.shape[0], k), -1, dtype=np.int32)
    for r in range(logits.shape[0]):
        out[r] = topk_row(window(logits, r, int(ks[r]), int(ke[r])), k)
    return {"topk_indices": out}


def as_file(outputs):
    """(tensors, metadata) of an answer."""
    if outputs is None:
        return {}, {"status": "unsupported"}
    if "__contract__" in outputs:
        return {}, {"contract": outputs["__contract__"]}
    return outputs, None


def serve(window):
    """Persistent mode: one length-prefixed request after another until the input ends."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = stdin.read(8)
        if len(header) < 8:
            return 0
        blob = stdin.read(int.from_bytes(header, "little"))
        tensors, meta = parse_safetensors(blob, origin="request")
        reply = serialize_safetensors(*as_file(answer(tensors, meta, window)))
        stdout.write(len(reply).to_bytes(8, "little") + reply)
        stdout.flush()


def main(window=row_window):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in", dest="inp", help="the case (safetensors)")
    parser.add_argument("--out", help="where to write the outputs (safetensors)")
    parser.add_argument("--persistent", action="store_true", help="answer requests on stdin/stdout")
    args = parser.parse_args()
    if args.persistent:
        return serve(window)
    if not args.inp or not args.out:
        parser.error("--in and --out are required (or --persistent)")

    tensors, meta = read_safetensors(args.inp)
    outputs = answer(tensors, meta, window)
    if outputs is None:
        return UNSUPPORTED
    write_safetensors(args.out, *as_file(outputs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
