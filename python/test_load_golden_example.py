#!/usr/bin/env python3
"""Tests of python/load_golden_example.py with plain python3 + numpy; exits non-zero on failure.

    python3 test_load_golden_example.py [GOLDEN_ROOT]   # default: data/golden of this repository

Every committed golden case with a plain top-k passes (the stored top-k and
numpy's), the rule rejects wrong top-k, and accepts ties broken the other way.
"""

import glob
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load_golden_example as ex  # noqa: E402
from dsa_oracle_io import read_safetensors  # noqa: E402

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "golden")


def case(pattern):
    found = sorted(glob.glob(os.path.join(ROOT, pattern)))
    assert found, f"no golden file matches {pattern} under {ROOT}"
    return found[0]


def test_order_keys():
    inf, nan = np.float32(np.inf), np.float32(np.nan)
    keys = ex.order_keys(np.array([-inf, -1, -0.0, 0.0, 1e-45, 1, inf, nan, -nan], dtype=np.float32))
    assert keys[2] == keys[3], "-0 and +0 are equal"
    assert keys[7] == keys[8], "all NaNs are equal"
    assert list(keys[:4]) + list(keys[4:8]) == sorted(keys[:8]) and len(set(keys[3:8])) == 5, keys


def test_committed_cases_pass():
    files = sorted(glob.glob(os.path.join(ROOT, "*", "*", "*.safetensors")))
    assert len(files) >= 20, f"only {len(files)} golden files under {ROOT}"
    checked = 0
    for path in files:
        assert ex.check_case(path) == 0, path
        checked += read_safetensors(path)[1]["op"] in ex.PLAIN_TOPK_OPS
    assert checked >= 10, checked


def test_wrong_topk_is_rejected():
    tensors, meta = read_safetensors(case("exact/v32_decode/*_nn1.safetensors"))
    begins, ends = ex.row_windows(tensors, meta)
    k, values = int(meta["topk"]), tensors["logits"][0, begins[0] : ends[0]]
    assert len(values) > k
    stored = tensors["topk_indices"][0].copy()
    assert ex.topk_rule_violations(stored, values, k) == []
    smallest = stored.copy()
    smallest[3] = int(np.argmin(values))
    assert "an index below the cut was chosen" in ex.topk_rule_violations(smallest, values, k)
    duplicate = stored.copy()
    duplicate[3] = duplicate[4]
    assert "duplicate indices" in ex.topk_rule_violations(duplicate, values, k)
    short = tensors["topk_indices"][1].copy()
    n = int(ends[1] - begins[1])
    assert n < k and ex.topk_rule_violations(short, tensors["logits"][1, :n], k) == []
    short[n] = 0
    assert ex.topk_rule_violations(short, tensors["logits"][1, :n], k)


def test_ties_broken_the_other_way_pass():
    tensors, meta = read_safetensors(case("exact/edge/*_ties.safetensors"))
    begins, ends = ex.row_windows(tensors, meta)
    k, differ = int(meta["topk"]), 0
    for r in range(tensors["logits"].shape[0]):
        values = tensors["logits"][r, begins[r] : ends[r]]
        keys = ex.order_keys(values)
        # highest index first among equals
        order = np.lexsort((-np.arange(len(values)), -keys))[:k]
        other = np.concatenate([order, -np.ones(k - len(order), dtype=np.int64)]).astype(np.int32)
        assert ex.topk_rule_violations(other, values, k) == [], r
        differ += set(other[other >= 0]) != set(tensors["topk_indices"][r][tensors["topk_indices"][r] >= 0])
    assert differ > 0, "the ties case must have ties at the cut"


def test_padded_rows_see_nothing():
    tensors, meta = read_safetensors(case("exact/edge/*_padded.safetensors"))
    _, ends = ex.row_windows(tensors, meta)
    next_n = int(meta["next_n"])
    for b, d in enumerate(tensors["decode_lens"]):
        assert all(ends[b * next_n + j] == 0 for j in range(d, next_n))
        assert all(ends[b * next_n + j] > 0 for j in range(d))


def main():
    failures = 0
    for name, test in sorted(globals().items()):
        if name.startswith("test_") and callable(test):
            try:
                test()
                print(f"ok   {name}")
            except Exception:  # noqa: BLE001
                failures += 1
                print(f"FAIL {name}")
                traceback.print_exc()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
