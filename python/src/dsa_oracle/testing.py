"""Assertions for a kernel's own pytest: each raises OracleAssertionError (an
AssertionError) whose message is the oracle's report, with the row, column,
both values and their bits, and whose `report` is the Report object.

    from dsa_oracle.testing import assert_topk_valid
    assert_topk_valid(my_topk(logits, k), logits, lengths=seq_lens)
"""

from . import oracle


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
