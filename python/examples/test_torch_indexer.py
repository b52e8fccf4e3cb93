"""A kernel developer's pytest (as in vLLM's tests/kernels/): a torch top-k
and a torch decode-logits function tested against dsa-oracle.

    python3 -m pytest python/examples/test_torch_indexer.py

Replace `torch_topk` and `torch_decode_logits` with calls into your kernels
(a Triton launch, a CUDA extension); move the tensors to "cuda" to test them
on the GPU: the oracle copies CUDA tensors to the host.
"""

import os

import pytest
import torch

import dsa_oracle
from dsa_oracle.testing import assert_logits_equal, assert_topk_valid

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "golden")


# ---- The kernels under test.

def torch_topk(logits, ks, ke, k):
    """Top-k of each row's [ks, ke), indices relative to ks, -1 after the row's length."""
    out = torch.full((logits.shape[0], k), -1, dtype=torch.int32, device=logits.device)
    for r in range(logits.shape[0]):
        row = logits[r, int(ks[r]):int(ke[r])].float()
        n = min(row.numel(), k)
        if n:
            out[r, :n] = torch.topk(row, n).indices.to(torch.int32)
    return out


def e4m3fn_table():
    """The 256 e4m3fn values (torch 2.1+ has torch.float8_e4m3fn; Debian's torch 1.13 does not)."""
    codes = torch.arange(256)
    sign = torch.where(codes >= 128, -1.0, 1.0)
    exp, man = (codes >> 3) & 0xF, (codes & 7).float()
    value = torch.where(exp == 0, man / 8 * 2.0**-6, (1 + man / 8) * torch.pow(2.0, exp.float() - 7))
    value = sign * value
    value[(codes & 0x7F) == 0x7F] = float("nan")
    return value


E4M3FN = e4m3fn_table()


def fp8_values(codes):
    if codes.dtype != torch.uint8:  # torch.float8_e4m3fn
        return codes.float()
    return E4M3FN.to(codes.device)[codes.long()]


def torch_decode_logits(q, kv_cache, weights, seq_lens, block_table, max_model_len):
    """sum_h w_h * relu(s_t * q_h . k_t) over the paged cache (block_flat layout), fp32 arithmetic."""
    B, next_n, H, D = q.shape
    pages, page_size = kv_cache.shape[0], kv_cache.shape[1]
    raw = kv_cache.view(torch.uint8).reshape(pages, -1)
    k_values = fp8_values(raw[:, :page_size * D].reshape(pages, page_size, D))
    k_scales = raw[:, page_size * D:].contiguous().view(torch.float32).reshape(pages, page_size)
    qf = fp8_values(q)
    logits = torch.full((B * next_n, max_model_len), float("-inf"), device=q.device)
    for b in range(B):
        for j in range(next_n):
            length = int(seq_lens[b]) - next_n + j + 1
            if length <= 0:
                continue
            pos = torch.arange(length, device=q.device)
            page, offset = block_table[b, pos // page_size].long(), pos % page_size
            dots = qf[b, j] @ k_values[page, offset].T  # [H, L]
            scores = torch.relu(dots * k_scales[page, offset])
            logits[b * next_n + j, :length] = weights[b * next_n + j] @ scores
    return logits


# ---- Inputs (in a real test: from the model, or from a golden case).

def quantize_e4m3fn(x):
    if hasattr(torch, "float8_e4m3fn"):
        return x.to(torch.float8_e4m3fn).view(torch.uint8)
    finite = torch.nonzero(~torch.isnan(E4M3FN)).flatten()
    return finite[(x.unsqueeze(-1) - E4M3FN[finite]).abs().argmin(-1)].to(torch.uint8)


def make_step(seed, B=2, next_n=2, H=8, D=64, page_size=16, max_model_len=256):
    g = torch.Generator().manual_seed(seed)
    seq_lens = torch.randint(next_n, max_model_len, (B,), generator=g, dtype=torch.int32)
    max_pages = max_model_len // page_size
    pages = B * max_pages
    block_table = torch.randperm(pages, generator=g).to(torch.int32).reshape(B, max_pages)
    values = quantize_e4m3fn(torch.randn(pages, page_size * D, generator=g))
    scales = (torch.rand(pages, page_size, generator=g) + 0.5).view(torch.uint8).reshape(pages, -1)
    kv_cache = torch.cat([values, scales], dim=1).reshape(pages, page_size, 1, D + 4)
    q = quantize_e4m3fn(torch.randn(B, next_n, H, D, generator=g))
    weights = torch.randn(B * next_n, H, generator=g) / H**0.5
    return dict(q=q, kv_cache=kv_cache, weights=weights, seq_lens=seq_lens, block_table=block_table), max_model_len


# ---- The tests.

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_decode_logits_against_the_reference(seed):
    step, max_model_len = make_step(seed)
    mine = torch_decode_logits(**step, max_model_len=max_model_len)
    expected = dsa_oracle.reference.decode_logits(**step, profile="exact", max_model_len=max_model_len)
    lens = dsa_oracle.reference.visible_lens(step["seq_lens"], next_n=2)
    # fp32 torch arithmetic is not any kernel's order: a tolerance. A kernel that claims a profile's
    # arithmetic (deepgemm_sm90, ...) is compared bit for bit: drop atol/rtol.
    assert_logits_equal(mine, expected, lengths=lens, atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("k", [1, 7, 64, 300])
def test_topk_on_its_own_logits(k):
    step, max_model_len = make_step(k)
    logits = torch_decode_logits(**step, max_model_len=max_model_len)
    lens = torch.from_numpy(dsa_oracle.reference.visible_lens(step["seq_lens"], next_n=2))
    indices = torch_topk(logits, torch.zeros_like(lens), lens, k)
    # Judged on the values the top-k read: any tie-break at the cut, any order, -1 after L_r.
    assert_topk_valid(indices, logits, lengths=lens, k=k)


def golden_topk_cases():
    if not os.path.isdir(GOLDEN):
        return []
    paths = dsa_oracle.golden.cases(os.path.join(GOLDEN, "exact", "edge"))
    return [p for p in paths if dsa_oracle.golden.read_case(p).op == "decode_topk"]


@pytest.mark.parametrize("path", golden_topk_cases(), ids=os.path.basename)
def test_topk_on_golden_cases(path):
    case = dsa_oracle.golden.read_case(path, framework="torch")
    logits = case.inputs.get("logits", case.expected.get("logits"))
    lens = torch.from_numpy(dsa_oracle.reference.visible_lens(
        case.inputs["seq_lens"], next_n=case.params["next_n"], compress_ratio=case.params.get("compress_ratio", 1),
        decode_lens=case.inputs.get("decode_lens")))
    indices = torch_topk(logits, torch.zeros_like(lens), lens, case.params["topk"])
    report = case.check({"topk_indices": indices})
    assert report.ok, str(report)


def test_fuzz_topk():
    # Cases drawn by the C++ generators (ties, NaN, -inf rows, rows past k, windows at an offset), judged by
    # the oracle; a failure is shrunk and raised with its replay line.
    dsa_oracle.fuzz(torch_topk, op="topk", cases=60, framework="torch", properties=["topk_agrees"])
