"""Bring your own inputs: write a decode case for `dsa-oracle reference` from
numpy arrays you already have (docs/golden-format.md). Usage:
    python3 bring_your_own_inputs.py OUT.safetensors
then: dsa-oracle reference --op decode_topk --profile deepgemm_sm90 --in OUT.safetensors --out expected.safetensors
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from dsa_oracle_io import write_safetensors  # noqa: E402

# Stand-ins for arrays dumped from a model run (random here, of the right shapes).
rng = np.random.default_rng(0)
B, next_n, H, D, page, pages = 2, 1, 64, 128, 64, 8
q = rng.integers(0, 0x7f, size=(B, next_n, H, D), dtype=np.uint8)          # e4m3fn codes, no NaN (0x7f)
values = rng.integers(0, 0x7f, size=(pages, page * D), dtype=np.uint8)
scales = np.full((pages, page), 0.01, dtype=np.float32)
# Block-flat pages: page_size x D fp8 bytes, then page_size fp32 scales.
kv_cache = np.concatenate([values, scales.view(np.uint8)], axis=1).reshape(pages, page, 1, D + 4)
weights = rng.standard_normal((B * next_n, H)).astype(np.float32)
seq_lens = np.array([200, 130], dtype=np.int32)
block_table = np.array([[5, 2, 7, 0], [1, 6, 3, 4]], dtype=np.int32)       # pages in any order

# ---- the ten lines a user writes:
write_safetensors(
    sys.argv[1],
    {"q": q, "kv_cache": kv_cache, "weights": weights, "seq_lens": seq_lens, "block_table": block_table},
    metadata={"schema": "dsa-oracle/golden/1", "fp8": "e4m3fn", "layout": "block_flat",
              "page_size": str(page), "next_n": str(next_n), "heads": str(H), "head_dim": str(D),
              "topk": "128", "compress_ratio": "1", "max_model_len": str(4 * page)},
    dtypes={"q": "F8_E4M3", "kv_cache": "U8"},
)
