"""A user's own pytest with a wrong torch kernel fails with the oracle's report;
the vLLM-style example file (python/examples/test_torch_indexer.py) passes."""

import os
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR

WRONG_KERNEL_TEST = '''
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


def run_pytest(path, cwd):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def test_a_wrong_torch_kernel_fails_with_the_report(tmp_path):
    pytest.importorskip("torch")
    test_file = tmp_path / "test_my_kernel.py"
    test_file.write_text(WRONG_KERNEL_TEST)
    result = run_pytest(test_file, tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "OracleAssertionError" in out and "topk: FAIL  1 of 4 rows" in out, out
    assert "missing 1" in out and "extra 1" in out, out


def test_the_vllm_style_example_passes(tmp_path):
    pytest.importorskip("torch")
    example = os.path.join(SOURCE_DIR, "python", "examples", "test_torch_indexer.py")
    result = run_pytest(example, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout
