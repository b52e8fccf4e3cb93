"""A user's own pytest with a wrong kernel fails with the oracle's report; the
vLLM-style example file (python/examples/test_torch_indexer.py) passes. Both
run in this process (pytest's pytester): no interpreter or torch start-up."""

import os

import pytest

from conftest import SOURCE_DIR

WRONG_NUMPY_KERNEL_TEST = '''
import numpy as np
from dsa_oracle.testing import assert_topk_valid


def my_topk(logits, k):
    return np.argsort(-logits[:, :-1], axis=1)[:, :k].astype(np.int32)  # the bug: the last column is never read


def test_my_topk():
    logits = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    logits[:, -1] = -100.0
    logits[2, -1] = 100.0  # only row 2's answer needs the last column
    assert_topk_valid(my_topk(logits, 8), logits)
'''

WRONG_TORCH_KERNEL_TEST = '''
import torch
from dsa_oracle.testing import assert_topk_valid


def my_topk(logits, k):
    return torch.topk(logits[:, :-1], k).indices.to(torch.int32)  # the bug: the last column is never read


def test_my_topk():
    logits = torch.randn(4, 64, generator=torch.Generator().manual_seed(0))
    logits[:, -1] = -100.0
    logits[2, -1] = 100.0  # only row 2's answer needs the last column
    assert_topk_valid(my_topk(logits, 8), logits)
'''


def fails_with_the_report(pytester, source):
    pytester.makepyfile(test_my_kernel=source)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "OracleAssertionError" in out and "topk: FAIL  1 of 4 rows" in out, out
    assert "missing 1" in out and "extra 1" in out, out


def test_a_wrong_numpy_kernel_fails_with_the_report(pytester):
    fails_with_the_report(pytester, WRONG_NUMPY_KERNEL_TEST)


def test_a_wrong_torch_kernel_fails_with_the_report(pytester, torch):
    fails_with_the_report(pytester, WRONG_TORCH_KERNEL_TEST)


def test_the_vllm_style_example_passes(pytester, torch):
    example = os.path.join(SOURCE_DIR, "python", "examples", "test_torch_indexer.py")
    text = open(example, encoding="utf-8").read()
    golden = 'GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "golden")'
    assert golden in text  # the copy below reads the golden cases from the checkout
    pytester.makepyfile(test_torch_indexer=text.replace(golden, f'GOLDEN = {os.path.join(SOURCE_DIR, "data", "golden")!r}'))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 10 and set(outcomes) == {"passed"}, result.stdout.str()
