"""Assertions for a kernel's own pytest: each raises OracleAssertionError (an
AssertionError) whose message is the oracle's report, with the row, column,
both values and their bits, and whose `report` is the Report object.

    from dsa_oracle.testing import assert_topk_valid
    assert_topk_valid(my_topk(logits, k), logits, lengths=seq_lens)
"""

import numpy as np

from . import oracle
from ._arrays import _invalid, is_torch, loaded_torch


class OracleAssertionError(AssertionError):
    """A kernel's output broke the oracle's rule; `report` holds the verdict."""

    def __init__(self, report, msg=None):
        self.report = report
        text = str(report)
        super().__init__(f"{msg}\n{text}" if msg else text)


def _require(report, msg):
    if not report.ok:
        raise OracleAssertionError(report, msg)
    return report


def assert_logits_equal(actual, expected, *, lengths=None, ks=None, ke=None, windows=None, atol=None, rtol=0.0, ulps=0,
                        clean=False, bf16=None, max_listed=10, msg=None):
    """Logits equal to the expected ones over each row's window: bitwise, or within the tolerance given."""
    return _require(oracle.check_logits(actual, expected, lengths=lengths, ks=ks, ke=ke, windows=windows, atol=atol,
                                        rtol=rtol, ulps=ulps, clean=clean, bf16=bf16, max_listed=max_listed), msg)


def assert_topk_valid(indices, logits, *, k=None, lengths=None, ks=None, ke=None, windows=None, eps=0.0, max_listed=10,
                      msg=None):
    """Top-k indices valid for the logits they were chosen from (pass the kernel's own logits to judge the top-k alone)."""
    if k is not None and (len(getattr(indices, "shape", ())) != 2 or indices.shape[1] != k):
        raise OracleAssertionError(
            oracle.check_topk(indices, logits, lengths=lengths, ks=ks, ke=ke, windows=windows, eps=eps),
            f"indices have shape {tuple(getattr(indices, 'shape', ()))}, expected (rows, {k})")
    return _require(oracle.check_topk(indices, logits, lengths=lengths, ks=ks, ke=ke, windows=windows, eps=eps,
                                      max_listed=max_listed), msg)


def assert_candidates_valid(candidate_blocks, logits, candidate_block_size, *, row_ends=None, ks=None, ke=None,
                            windows=None, eps=0.0, max_listed=10, msg=None):
    """Candidate blocks valid for the logits: the selection rule on SPEC 7's block scores over [0, E_r)."""
    return _require(oracle.check_candidate_blocks(candidate_blocks, logits, candidate_block_size, row_ends=row_ends, ks=ks,
                                                  ke=ke, windows=windows, eps=eps, max_listed=max_listed), msg)


def assert_deterministic(first, second, *, msg=None):
    """Two runs on the same input chose the same sets."""
    return _require(oracle.check_determinism(first, second), msg)


def assert_golden_case(path, outputs, *, tolerance=None, msg=None):
    """A kernel's outputs for one golden case, judged as `dsa-oracle check` judges them."""
    from . import golden

    return _require(golden.check_case(path, outputs, tolerance=tolerance), msg)


TWO_GIB = 1 << 31


def relocate_pages(kv_cache, block_table, *, first_page=None, boundary=TWO_GIB):
    """The step's K cache and block table as a serving engine's cache of many GB hands them to a kernel:
    the same pages from page `first_page` of a larger cache on, the block table's ids moved with them.
    Returns (kv_cache, block_table), numpy or torch as given (torch: on kv_cache's device).

    A page's byte offset computed in 32 bits wraps past 2^31 bytes: vLLM #52109 found AITER's gfx942
    paged logits scoring every page there exactly 0.0. A test's cache of a few pages never gets there.
    Run the kernel under test on the relocated cache and table and hold it to the oracle's answer for
    the original ones: where a page lies never changes the logits.

    first_page: by default two whole pages below `boundary` bytes, so that the third page crosses it
    and the rest lie past it. The pages below `first_page` are zeros, never meant to be read (numpy and
    CPU torch: allocated lazily, no memory is used until written). Block-table entries that name no page
    of the cache are left as they are.
    """
    pages = int(kv_cache.shape[0]) if len(getattr(kv_cache, "shape", ())) >= 1 else 0
    if pages < 1:
        raise _invalid("kv_cache", f"needs at least one page (shape {tuple(getattr(kv_cache, 'shape', ()))})")
    page_bytes = int(kv_cache[0].numel() * kv_cache.element_size()) if is_torch(kv_cache) else int(kv_cache[0].nbytes)
    if first_page is None:
        if boundary < 1:
            raise _invalid("boundary", f"must be a positive byte offset, got {boundary}")
        first_page = max(0, boundary // page_bytes - 2)
    first_page = int(first_page)
    if first_page < 0:
        raise _invalid("first_page", f"must be 0 or positive, got {first_page}")
    if first_page + pages > 2**31 - 1:
        raise _invalid("first_page", f"{first_page} + {pages} pages passes int32 page ids")
    shape = (first_page + pages,) + tuple(kv_cache.shape[1:])
    if is_torch(kv_cache) != is_torch(block_table):
        raise _invalid("block_table", "must be a torch tensor with a torch kv_cache, a numpy array with a numpy one")
    if is_torch(kv_cache):
        torch = loaded_torch()
        if kv_cache.device.type == "cpu" and kv_cache.element_size() == 1:
            # numpy's zeros come from calloc: untouched pages of the big cache cost no memory.
            cache = torch.from_numpy(np.zeros(shape, dtype=np.uint8)).view(kv_cache.dtype)
        else:
            cache = torch.zeros(shape, dtype=kv_cache.dtype, device=kv_cache.device)
        cache[first_page:] = kv_cache
        table = block_table.clone()
        named = (table >= 0) & (table < pages)
        table[named] += first_page
        return cache, table
    if not isinstance(kv_cache, np.ndarray) or not isinstance(block_table, np.ndarray):
        raise _invalid("kv_cache", "expected numpy arrays or torch tensors for kv_cache and block_table")
    if block_table.dtype.kind not in "iu":
        raise _invalid("block_table", f"expected integer page ids, got {block_table.dtype}")
    cache = np.zeros(shape, dtype=kv_cache.dtype)
    cache[first_page:] = kv_cache
    table = block_table.copy()
    named = (table >= 0) & (table < pages)
    table[named] += first_page
    return cache, table
