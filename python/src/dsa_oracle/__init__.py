"""dsa-oracle in Python: the bit-exact reference, the oracle and the fuzzer of
the DeepSeek sparse-attention indexer, inside your own pytest (docs/python.md).

    import dsa_oracle
    expected = dsa_oracle.reference.decode_logits(q, kv_cache, weights, seq_lens, block_table,
                                                  profile="deepgemm_sm90", max_model_len=4096)
    dsa_oracle.testing.assert_topk_valid(my_topk(logits, 2048), logits, lengths=lens)
    dsa_oracle.fuzz(my_topk, op="topk", seconds=60)

Arrays: numpy arrays or torch tensors (CPU in place, CUDA copied to the host);
fp8 as torch.float8_e4m3fn / float8_e4m3fnuz or uint8 codes; bf16 as
torch.bfloat16 or uint16 bits.
"""

import numpy as np

from . import _core
from ._core import InvalidInput, Unsupported
from . import golden, oracle, reference, testing
from ._arrays import require_torch as _require_torch
from ._fuzz import FuzzFailure, FuzzResult, fuzz, ops, properties, replay
from .oracle import Report
from .testing import OracleAssertionError

__all__ = ["reference", "oracle", "testing", "golden", "fuzz", "replay", "ops", "properties", "Report", "FuzzFailure",
           "FuzzResult", "OracleAssertionError", "InvalidInput", "Unsupported", "poisoned", "profiles", "implementations",
           "POISON_F32_BITS", "POISON_BF16_BITS", "POISON_I32", "bf16_to_float32"]

POISON_F32_BITS = _core.POISON_F32_BITS  # 0x7FA5A5A5, a signalling NaN (docs/oracle.md 5)
POISON_BF16_BITS = _core.POISON_BF16_BITS  # 0x7FA5
POISON_I32 = _core.POISON_I32  # 0x80005A5A


def implementations():
    """The table of implementations under test (optimized/implementations.hpp): name, description, device,
    available, ops, profile, contract. `golden.check(dir, impl=NAME)` runs one on a golden set."""
    return list(_core.implementations())


def profiles():
    """The arithmetic profiles (docs/profiles.md)."""
    return list(_core.profile_names())


def poisoned(shape, dtype, like=None, device=None):
    """An output buffer filled with the oracle's poison: dtype "float32", "bfloat16" or "int32"; torch when `like` is a tensor or `device` is given."""
    if dtype == "float32":
        array = np.full(shape, POISON_F32_BITS, np.uint32).view(np.float32)
    elif dtype == "bfloat16":
        array = np.full(shape, POISON_BF16_BITS, np.uint16)
    elif dtype == "int32":
        array = np.full(shape, POISON_I32, np.int32)
    else:
        raise ValueError(f"dtype: {dtype!r}, expected 'float32', 'bfloat16' or 'int32'")
    if like is None and device is None:
        return array
    _torch = _require_torch()
    target = device if device is not None else getattr(like, "device", "cpu")
    if dtype == "bfloat16":
        return _torch.from_numpy(array.view(np.int16)).view(_torch.bfloat16).to(target)
    return _torch.from_numpy(array).to(target)


def bf16_to_float32(bits):
    """uint16 bf16 bit patterns as float32 values (a shift: NaN payloads and the poison survive)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
