"""fp8 as torch's dtypes: a torch.float8_e4m3fn / float8_e4m3fnuz tensor goes in
as its codes with the format its dtype says; golden F8_E4M3 tensors come out as
torch.float8_e4m3fn; the fuzzer hands a torch kernel its q and k in the fp8
dtype of the case's format. Debian's torch 1.13 has no fp8 dtype: the tests of
the real dtypes skip there, and the same code paths run once more with a
stand-in 1-byte dtype (torch.int8) registered as torch.float8_e4m3fn."""

import os

import numpy as np
import pytest

import dsa_oracle
from conftest import GOLDEN

E4M3FN_CASE = os.path.join(GOLDEN, "deepgemm_sm90/v32_decode/v32_decode_01_nn2.safetensors")
E4M3FNUZ_CASE = os.path.join(GOLDEN, "aiter_gfx942_gluon/edge/edge_00_short_rows.safetensors")
PREFILL_CASE = os.path.join(GOLDEN, "exact/prefill/prefill_00_chunk.safetensors")
FORMATS = {"e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz"}


def fp8_dtype(torch, fmt):
    dtype = getattr(torch, FORMATS[fmt], None)
    if dtype is None:
        pytest.skip(f"torch {torch.__version__} has no torch.{FORMATS[fmt]} (Debian's 1.13 has none: uint8 codes there)")
    return dtype


@pytest.fixture
def stand_in_e4m3fn(torch, monkeypatch):
    """torch.float8_e4m3fn where torch has none: int8, a 1-byte dtype that is neither uint8 nor bf16."""
    if getattr(torch, "float8_e4m3fn", None) is not None:
        pytest.skip(f"torch {torch.__version__} has the real torch.float8_e4m3fn (tested without a stand-in)")
    monkeypatch.setattr(torch, "float8_e4m3fn", torch.int8, raising=False)
    return torch.int8


def decode_logits(case, q, profile, fp8=None):
    i, p = case.inputs, case.params
    return dsa_oracle.reference.decode_logits(q, i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"],
                                              profile=profile, max_model_len=p["max_model_len"], fp8=fp8)


def same_bits(torch, a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(torch.int32), b.view(torch.int32))


def check_decode_in(torch, dtype, path, fmt):
    case = dsa_oracle.golden.read_case(path)
    codes = torch.from_numpy(case.inputs["q"].view(np.uint8))
    # Under "exact" (it takes both formats) the dtype alone says which one the codes are.
    from_dtype = decode_logits(case, codes.view(dtype), "exact")
    assert same_bits(torch, from_dtype, decode_logits(case, codes, "exact", fp8=fmt))
    other = "e4m3fnuz" if fmt == "e4m3fn" else "e4m3fn"
    assert not same_bits(torch, from_dtype, decode_logits(case, codes, "exact", fp8=other))
    # Under the case's own profile: the golden file's expected logits.
    expected = torch.from_numpy(case.expected["logits"])
    assert same_bits(torch, decode_logits(case, codes.view(dtype), case.profile), expected)


def check_golden_out(torch, dtype):
    case = dsa_oracle.golden.read_case(E4M3FN_CASE, framework="torch")
    assert case.inputs["q"].dtype == dtype
    assert case.check(case.reference()).ok


def check_prefill_in(torch, dtype):
    case = dsa_oracle.golden.read_case(PREFILL_CASE)
    i = case.inputs
    q, k = (torch.from_numpy(i[name].view(np.uint8)).view(dtype) for name in ("q", "k"))
    logits = dsa_oracle.reference.prefill_logits(q, k, i["k_scales"], i["weights"], i["ks"], i["ke"], profile="exact")
    assert same_bits(torch, logits, torch.from_numpy(case.expected["logits"]))


def check_fuzz_hands_fp8(torch, formats):
    """A torch decode-logits "kernel" (the reference) that checks q's dtype passes logits_agree."""
    seen = set()

    def reference_logits(q, kv_cache, weights, seq_lens, block_table, fp8, **p):
        if fp8 is not None:  # MXFP4 cases have none
            want = getattr(torch, FORMATS[fp8], None) if fp8 in formats else None
            assert q.dtype == (want or torch.uint8), (fp8, q.dtype)
            seen.add(fp8)
        return dsa_oracle.reference.decode_logits(
            q, kv_cache, weights, seq_lens, block_table, profile=p["profile"], max_model_len=p["max_model_len"],
            compress_ratio=p["compress_ratio"], layout=p["layout"], fp8=fp8, q_scales=p.get("q_scales"),
            decode_lens=p.get("decode_lens"),
            padded_lengths=p["padded_lengths"] if p.get("decode_lens") is not None else None)

    result = dsa_oracle.fuzz(reference_logits, op="decode_logits", cases=12, seed=4, properties=["logits_agree"],
                             framework="torch")
    assert result.passed == 12 and seen & set(formats), (str(result), seen)


@pytest.mark.parametrize("fmt,path", [("e4m3fn", E4M3FN_CASE), ("e4m3fnuz", E4M3FNUZ_CASE)])
def test_fp8_tensors_in(torch, fmt, path):
    check_decode_in(torch, fp8_dtype(torch, fmt), path, fmt)


def test_fp8_prefill_and_golden_out(torch):
    dtype = fp8_dtype(torch, "e4m3fn")
    check_prefill_in(torch, dtype)
    check_golden_out(torch, dtype)


def test_fuzz_hands_a_torch_kernel_fp8(torch):
    fp8_dtype(torch, "e4m3fn")
    check_fuzz_hands_fp8(torch, [f for f, name in FORMATS.items() if hasattr(torch, name)])


def test_fp8_paths_with_a_stand_in_dtype(torch, stand_in_e4m3fn):
    check_decode_in(torch, stand_in_e4m3fn, E4M3FN_CASE, "e4m3fn")
    check_prefill_in(torch, stand_in_e4m3fn)
    check_golden_out(torch, stand_in_e4m3fn)
    check_fuzz_hands_fp8(torch, ["e4m3fn"])
