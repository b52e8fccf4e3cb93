"""dsa_oracle.testing.relocate_pages: a golden step's pages moved past 2 GiB of a larger cache, as a
serving engine's cache hands them to a kernel, and a kernel that computes a page's byte offset in 32
bits (vLLM #52109, AITER's gfx942 paged logits) caught on them by the oracle."""

import os

import numpy as np
import pytest

import dsa_oracle
from dsa_oracle import reference
from dsa_oracle.testing import OracleAssertionError, assert_logits_equal, relocate_pages

from conftest import GOLDEN, TORCH_MISSING

CASE = os.path.join(GOLDEN, "deepgemm_sm90", "v32_decode", "v32_decode_01_nn2.safetensors")


def step():
    case = dsa_oracle.golden.read_case(CASE)
    return case.inputs, case.params


def logits_of(i, p, kv_cache, block_table):
    return reference.decode_logits(i["q"], kv_cache, i["weights"], i["seq_lens"], block_table,
                                   profile="deepgemm_sm90", max_model_len=p["max_model_len"], next_n=p["next_n"])


def lens_of(i, p):
    return reference.visible_lens(i["seq_lens"], p["next_n"])


def test_relocated_pages_are_the_same_pages_and_give_the_same_logits():
    i, p = step()
    cache, table = relocate_pages(i["kv_cache"], i["block_table"], first_page=37)
    pages = i["kv_cache"].shape[0]
    assert cache.shape == (37 + pages,) + i["kv_cache"].shape[1:] and cache.dtype == i["kv_cache"].dtype
    assert np.array_equal(cache[37:], i["kv_cache"]) and not cache[:37].any()
    named = (i["block_table"] >= 0) & (i["block_table"] < pages)
    assert named.any()
    assert np.array_equal(table[named], i["block_table"][named] + 37)
    assert np.array_equal(table[~named], i["block_table"][~named])
    assert table.dtype == i["block_table"].dtype
    assert_logits_equal(logits_of(i, p, cache, table), logits_of(i, p, i["kv_cache"], i["block_table"]),
                        lengths=lens_of(i, p))


def test_by_default_the_third_page_crosses_2_gib():
    i, p = step()
    page_bytes = i["kv_cache"][0].nbytes
    cache, table = relocate_pages(i["kv_cache"], i["block_table"])
    first = cache.shape[0] - i["kv_cache"].shape[0]
    assert (first + 2) * page_bytes <= 2**31 < (first + 3) * page_bytes
    assert cache.nbytes > 2**31
    assert np.array_equal(cache[first:], i["kv_cache"])
    assert table.max() >= first + 3 and table.max() < cache.shape[0]


def offset_gather(kv_cache, block_table, offset_dtype):
    """What a kernel reads for each page the table names when it computes the page's byte offset as
    page * page_bytes in `offset_dtype`: a wrapped (negative) offset reads zeros, as a gfx942 buffer
    load out of its range does. Returns the pages read and the table over them."""
    pages, page_bytes = kv_cache.shape[0], kv_cache[0].nbytes
    flat = kv_cache.reshape(-1)
    named = sorted({int(x) for x in block_table.ravel() if 0 <= x < pages})
    read = np.zeros((len(named),) + kv_cache.shape[1:], dtype=kv_cache.dtype)
    with np.errstate(over="ignore"):
        offsets = np.asarray(named, dtype=offset_dtype) * np.asarray(page_bytes, dtype=offset_dtype)
    for n, offset in enumerate(offsets.tolist()):
        if offset >= 0:
            read[n] = flat[offset:offset + page_bytes].reshape(kv_cache.shape[1:])
    index = {page: n for n, page in enumerate(named)}
    table = block_table.copy()
    for pos, page in np.ndenumerate(block_table):
        if int(page) in index:
            table[pos] = index[int(page)]
    return read, table


@pytest.mark.parametrize("offset_dtype", [np.int64, np.int32])
def test_a_kernel_with_32_bit_page_offsets_is_caught_past_2_gib(offset_dtype):
    i, p = step()
    expected = logits_of(i, p, i["kv_cache"], i["block_table"])
    cache, table = relocate_pages(i["kv_cache"], i["block_table"])

    def kernel(kv_cache, block_table):
        read, over_read = offset_gather(kv_cache, block_table, offset_dtype)
        return logits_of(i, p, read, over_read)

    # On the step's own small cache both kernels are right: only the relocation shows the bug.
    assert_logits_equal(kernel(i["kv_cache"], i["block_table"]), expected, lengths=lens_of(i, p))
    if offset_dtype is np.int64:
        assert_logits_equal(kernel(cache, table), expected, lengths=lens_of(i, p))
    else:
        with pytest.raises(OracleAssertionError, match="mismatch"):
            assert_logits_equal(kernel(cache, table), expected, lengths=lens_of(i, p))


def test_bad_arguments_are_named():
    i, _ = step()
    with pytest.raises(dsa_oracle.InvalidInput, match="first_page"):
        relocate_pages(i["kv_cache"], i["block_table"], first_page=-1)
    with pytest.raises(dsa_oracle.InvalidInput, match="first_page"):
        relocate_pages(i["kv_cache"], i["block_table"], first_page=2**31 - 2)
    with pytest.raises(dsa_oracle.InvalidInput, match="kv_cache"):
        relocate_pages(np.zeros((0, 4), np.uint8), i["block_table"])
    with pytest.raises(dsa_oracle.InvalidInput, match="block_table"):
        relocate_pages(i["kv_cache"], i["block_table"].astype(np.float32))


def test_torch_tensors_come_back_on_their_device():
    torch = pytest.importorskip("torch", reason=TORCH_MISSING)
    i, _ = step()
    kv_cache, block_table = torch.from_numpy(i["kv_cache"]), torch.from_numpy(i["block_table"])
    cache, table = relocate_pages(kv_cache, block_table, first_page=5)
    assert isinstance(cache, torch.Tensor) and cache.dtype == kv_cache.dtype and cache.device == kv_cache.device
    assert torch.equal(cache[5:], kv_cache) and not cache[:5].any()
    named = (block_table >= 0) & (block_table < kv_cache.shape[0])
    assert torch.equal(table[named], block_table[named] + 5)


def kernel_with_offsets(offset_dtype):
    """A decode-logits kernel whose arithmetic is the reference's and whose page addressing computes
    page * page_bytes in `offset_dtype` (offset_gather)."""
    from test_fuzz_ops import dense_decode

    def decode_logits(q, kv_cache, weights, seq_lens, block_table, **params):
        read, table = offset_gather(kv_cache, block_table, offset_dtype)
        return dense_decode(q, read, weights, seq_lens, table, **params)

    return decode_logits


def test_the_fuzzer_finds_32_bit_page_offsets_only_on_relocated_pages():
    wrapped = kernel_with_offsets(np.int32)
    # The fuzzer's caches are a few MB: the bug is invisible there...
    dsa_oracle.fuzz(wrapped, op="decode_logits", cases=15, seed=3, properties=["logits_agree"])
    dsa_oracle.fuzz(kernel_with_offsets(np.int64), op="decode_logits", cases=15, seed=3, properties=["logits_agree"],
                    relocate_pages=True)
    # ...and found at once with every cache's pages past 2 GiB, the replay line saying so.
    with pytest.raises(dsa_oracle.FuzzFailure, match="logits_agree") as failure:
        dsa_oracle.fuzz(wrapped, op="decode_logits", cases=15, seed=3, properties=["logits_agree"],
                        relocate_pages=True, shrink_seconds=5)
    assert "relocate_pages=True" in failure.value.failure["replay"]
    with pytest.raises(dsa_oracle.FuzzFailure):
        dsa_oracle.replay(wrapped, op="decode_logits", property="logits_agree", case=failure.value.failure["case"],
                          relocate_pages=True)
    assert dsa_oracle.replay(wrapped, op="decode_logits", property="logits_agree",
                             case=failure.value.failure["case"]) == "pass"
