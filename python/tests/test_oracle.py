"""The comparators' reports and the assertion helpers: pass on right answers
(any tie-break, any order), fail on wrong ones with a readable table naming
the row, the column, both values and their bits, and JSON of schema
dsa-oracle/report/1."""

import json

import numpy as np
import pytest

import dsa_oracle
from dsa_oracle import oracle, reference, testing


def logits_rows():
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((4, 64)).astype(np.float32)
    logits[1, :] = 1.0  # every entry ties
    logits[2, 10:] = -np.inf
    lens = np.array([64, 40, 64, 5], np.int64)
    return logits, lens


def test_right_topk_passes_with_any_tie_break():
    logits, lens = logits_rows()
    k = 8
    mine = reference.topk(logits, k, lengths=lens)
    # Another legal answer: row 1 ties everywhere, so the highest indices are as good; order is free.
    other = mine.copy()
    other[1] = np.arange(39, 31, -1, dtype=np.int32)
    other[0] = other[0][::-1]
    for answer in (mine, other):
        report = oracle.check_topk(answer, logits, lengths=lens)
        assert report.ok and bool(report), str(report)
        testing.assert_topk_valid(answer, logits, lengths=lens, k=k)


def test_wrong_topk_fails_with_the_row_and_indices():
    logits, lens = logits_rows()
    wrong = reference.topk(logits, 8, lengths=lens)
    chosen = set(wrong[0].tolist())
    below = next(i for i in np.argsort(logits[0])[::-1] if i not in chosen)  # the best unchosen index
    wrong[0, 0] = below  # one chosen index swapped for one below the cut: one missing, one extra
    report = oracle.check_topk(wrong, logits, lengths=lens)
    assert not report.ok
    assert report["topk"].details["missing"] == 1 and report["topk"].details["extra"] == 1
    assert report.failed_rows[0]["row"] == 0
    with pytest.raises(testing.OracleAssertionError) as info:
        testing.assert_topk_valid(wrong, logits, lengths=lens)
    text = str(info.value)
    assert "topk: FAIL" in text and "missing 1, extra 1" in text
    assert info.value.report is not None and not info.value.report.ok
    assert isinstance(info.value, AssertionError)


def test_poison_left_in_the_indices_is_named():
    logits, lens = logits_rows()
    out = reference.topk(logits, 8, lengths=lens)
    out[3, 7] = dsa_oracle.POISON_I32
    report = oracle.check_topk(out, logits, lengths=lens)
    assert not report["written"].passed
    assert report["written"].details["first_survivors"][0] == {"row": 3, "col": 7}


def test_logits_report_names_row_column_values_and_bits():
    logits, lens = logits_rows()
    actual = logits.copy()
    actual[2, 3] = np.nextafter(actual[2, 3], np.float32(np.inf))
    report = oracle.check_logits(actual, logits, lengths=lens)
    assert not report.ok
    first = report.first_mismatches[0]
    assert (first["row"], first["col"], first["ulps"]) == (2, 3, 1)
    assert first["actual_bits"] == "0x%08x" % actual[2:3, 3:4].view(np.uint32)[0, 0]
    text = str(report)
    assert "first differing entries" in text and first["actual_bits"] in text and first["expected_bits"] in text
    # Within one ulp it passes; outside the window it is ignored.
    assert oracle.check_logits(actual, logits, lengths=lens, ulps=1).ok
    assert oracle.check_logits(actual, logits, lengths=np.array([64, 40, 3, 5])).ok


def test_nan_equals_nan_but_not_the_poison():
    logits, lens = logits_rows()
    expected = logits.copy()
    expected[0, 0] = np.nan
    actual = expected.copy()
    actual.view(np.uint32)[0, 0] = 0xFFC00000  # another NaN payload: passes
    assert oracle.check_logits(actual, expected, lengths=lens).ok
    actual.view(np.uint32)[0, 0] = dsa_oracle.POISON_F32_BITS  # never written: fails
    report = oracle.check_logits(actual, expected, lengths=lens)
    assert not report.ok and not report["written"].passed


def test_json_report():
    logits, lens = logits_rows()
    report = oracle.check_logits(logits, logits, lengths=lens)
    j = json.loads(report.to_json())
    assert j["schema"] == oracle.REPORT_SCHEMA and j["passed"] is True
    assert [c["check"] for c in j["checks"]] == ["written", "logits"]
    assert report.counts["entries_compared"] == int(lens.sum())
    assert report.to_dict() == j


def test_assert_logits_equal_tolerance():
    logits, lens = logits_rows()
    off = logits + np.float32(1e-6)
    off[~np.isfinite(logits)] = logits[~np.isfinite(logits)]
    with pytest.raises(AssertionError, match="logits: FAIL"):
        testing.assert_logits_equal(off, logits, lengths=lens)
    testing.assert_logits_equal(off, logits, lengths=lens, atol=1e-5)


def test_candidate_blocks():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((2, 64)).astype(np.float32)
    ends = np.array([64, 30], np.int64)
    blocks = reference.candidate_select(logits=logits, seq_lens=ends.astype(np.int32).reshape(2, 1), next_n=1,
                                        candidate_block_size=8, candidate_topk_blocks=3)
    testing.assert_candidates_valid(blocks, logits, 8, row_ends=ends)
    scores = oracle.candidate_block_scores(logits, 8, row_ends=ends)
    assert scores.shape == (2, 8) and np.isinf(scores[0, 7]) and scores[1, 4:].max() == -np.inf
    wrong = blocks.copy()
    worst = int(np.argmin(np.where(np.isin(np.arange(8), wrong[0]), np.inf, scores[0])))
    wrong[0, 1] = worst
    if wrong[0, 1] != blocks[0, 1]:
        with pytest.raises(testing.OracleAssertionError, match="candidate_blocks: FAIL"):
            testing.assert_candidates_valid(wrong, logits, 8, row_ends=ends)


def test_determinism():
    a = np.array([[1, 2, 3], [4, 5, -1]], np.int32)
    testing.assert_deterministic(a, a[:, ::-1].copy())
    b = a.copy()
    b[1, 0] = 6
    with pytest.raises(AssertionError, match="determinism: FAIL"):
        testing.assert_deterministic(a, b)


def test_torch_values_and_bf16(torch):
    logits, lens = logits_rows()
    t = torch.from_numpy(logits).to(torch.bfloat16)
    idx = torch.topk(t[3, :5].float(), 5).indices.to(torch.int32)
    report = oracle.check_logits(t, t.clone(), lengths=torch.from_numpy(lens))
    assert report.ok and report["logits"].details["mode"] == "bitwise"
    testing.assert_topk_valid(idx.reshape(1, 5), t[3:4].clone(), lengths=[5])
