"""The in-process fuzzer: a right kernel passes; a deliberately wrong torch
top-k is caught, shrunk to a small case, and the replay line reproduces it."""

import numpy as np
import pytest

import dsa_oracle


def order_keys(v):
    """Integer keys in the SPEC's value order: -inf lowest, -0 == +0, NaN above +inf."""
    bits = v.astype(np.float32).view(np.uint32).astype(np.int64)
    keys = np.where(bits >> 31 == 1, 0xFFFFFFFF - bits, bits | 0x80000000)
    keys = np.where(v == 0, 0x80000000, keys)
    return np.where(np.isnan(v), 0x100000000, keys)


def numpy_topk(logits, ks, ke, k):
    out = np.full((logits.shape[0], k), -1, np.int32)
    for r in range(logits.shape[0]):
        row = logits[r, ks[r]:ke[r]]
        n = min(len(row), k)
        out[r, :n] = np.argsort(-order_keys(row), kind="stable")[:n]
    return out


def test_a_right_kernel_passes():
    result = dsa_oracle.fuzz(numpy_topk, op="topk", cases=30, seed=3,
                             properties=["topk_agrees", "columns_past_length_ignored", "logits_agree"])
    assert result.passed == 60
    table = str(result)
    assert "topk_agrees" in table and "does not apply" in table  # logits_agree: no decode_logits kernel


def test_in_place_kernel_and_every_entry_written():
    def writes_into_out(logits, ks, ke, k, out):
        out[...] = numpy_topk(logits, ks, ke, k)

    dsa_oracle.fuzz(writes_into_out, op="topk", cases=20, properties=["every_entry_written", "topk_agrees"])

    def leaves_the_last_slot(logits, ks, ke, k, out):
        out[:, :-1] = numpy_topk(logits, ks, ke, k)[:, :-1]

    with pytest.raises(dsa_oracle.FuzzFailure, match="every_entry_written"):
        dsa_oracle.fuzz(leaves_the_last_slot, op="topk", cases=50, properties=["every_entry_written"])


def torch_topk_off_by_one(logits, ks, ke, k):
    """torch.topk over [ks, ke] instead of [ks, ke): the column past the row can be chosen."""
    import torch

    out = torch.full((logits.shape[0], k), -1, dtype=torch.int32)
    for r in range(logits.shape[0]):
        row = logits[r, int(ks[r]):int(ke[r]) + 1]
        n = min(row.numel(), k)
        if n:
            out[r, :n] = torch.topk(torch.nan_to_num(row, nan=float("inf")), n).indices.to(torch.int32)
    return out


def numpy_topk_off_by_one(logits, ks, ke, k):
    """The same bug in numpy: the column past the row can be chosen."""
    return numpy_topk(logits, ks, ke + (ke < logits.shape[1]), k)


def caught_and_shrunk(kernel, framework):
    with pytest.raises(dsa_oracle.FuzzFailure) as info:
        dsa_oracle.fuzz(kernel, op="topk", seconds=30, seed=1, properties=["topk_agrees"], framework=framework,
                        shrink_seconds=5)
    f = info.value.failure
    text = str(info.value)
    assert f["property"] == "topk_agrees" and f["reproduced"]
    assert f["replay_attempts"] == 1 and f["replay_note"] == ""  # failed again on its first replay
    assert "topk: FAIL" in text and f"replay: dsa_oracle.replay({kernel.__name__}" in text
    assert f["summary"].count("[") <= 3, f["summary"]  # one or two rows left
    # The replay line runs the same case again and fails again.
    with pytest.raises(dsa_oracle.FuzzFailure, match="topk: FAIL"):
        dsa_oracle.replay(kernel, op="topk", property=f["property"], case=f["case"], framework=framework)
    # The right kernel passes on that case.
    assert dsa_oracle.replay(numpy_topk, op="topk", property=f["property"], case=f["case"]) == "pass"


def wrong_on_call(n):
    """numpy_topk, except that its n-th call (1-based) puts a column no row has at the head of the output."""
    calls = [0]

    def sometimes_wrong_topk(logits, ks, ke, k):
        calls[0] += 1
        out = numpy_topk(logits, ks, ke, k)
        if calls[0] == n:
            out[0, 0] = logits.shape[1] + 7
        return out
    return sometimes_wrong_topk


RUN_DEPENDENT_CASE = ('{"k":4,"kind":"topk","rows":[[0,5,"few_levels",297787]],"seed":729985,"tail":"garbage",'
                      '"width_pad":0}')


def test_replay_tries_until_an_attempt_fails():
    # One call per attempt: calls 1 and 2 pass, the third fails.
    with pytest.raises(dsa_oracle.FuzzFailure, match=r"fails on the replayed case \(attempt 3 of 5\)"):
        dsa_oracle.replay(wrong_on_call(3), op="topk", property="topk_agrees", case=RUN_DEPENDENT_CASE, attempts=5)
    assert dsa_oracle.replay(wrong_on_call(3), op="topk", property="topk_agrees", case=RUN_DEPENDENT_CASE,
                             attempts=2) == "pass"
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="attempts"):
            dsa_oracle.replay(numpy_topk, op="topk", property="topk_agrees", case=RUN_DEPENDENT_CASE, attempts=bad)


def test_a_run_dependent_failure_replays_with_the_campaigns_attempts():
    from dsa_oracle._fuzz import replay_line
    failure = {"property": "topk_agrees", "case": RUN_DEPENDENT_CASE}
    at_once = replay_line(numpy_topk, "topk", dict(failure, replay_attempts=1), "numpy", None)
    assert "attempts=" not in at_once
    for attempts in (0, 4):
        line = replay_line(numpy_topk, "topk", dict(failure, replay_attempts=attempts), "numpy", None)
        assert line.endswith(", attempts=16)"), line


def test_a_wrong_numpy_topk_is_caught_and_shrunk():
    caught_and_shrunk(numpy_topk_off_by_one, "numpy")


def test_a_wrong_torch_topk_is_caught_and_shrunk(torch):
    caught_and_shrunk(torch_topk_off_by_one, "torch")


def test_a_kernel_that_raises_is_a_failure():
    def broken(logits, ks, ke, k):
        raise RuntimeError("kernel launch failed")

    with pytest.raises(dsa_oracle.FuzzFailure, match="kernel launch failed"):
        dsa_oracle.fuzz(broken, op="topk", cases=5, properties=["topk_agrees"], shrink_seconds=2)


def test_unsupported_everywhere_checks_nothing():
    def refuses(logits, ks, ke, k):
        raise dsa_oracle.Unsupported("not this one")

    with pytest.raises(dsa_oracle.FuzzFailure, match="checked nothing"):
        dsa_oracle.fuzz(refuses, op="topk", cases=5)


def test_signature_errors():
    def wants_more(logits, lengths, k):
        return None

    with pytest.raises(TypeError, match="'lengths' is not an input of op topk"):
        dsa_oracle.fuzz(wants_more, op="topk", cases=1)
    with pytest.raises(ValueError, match="is not an op"):
        dsa_oracle.fuzz(numpy_topk, op="topk_v2", cases=1)


def test_a_wrong_output_shape_is_reported():
    def one_short(logits, ks, ke, k):
        return numpy_topk(logits, ks, ke, k)[:, :-1] if k > 1 else np.zeros((logits.shape[0], 0), np.int32)

    with pytest.raises(dsa_oracle.FuzzFailure, match="expected an int32 array of shape"):
        dsa_oracle.fuzz(one_short, op="topk", cases=20, properties=["topk_agrees"], shrink_seconds=2)


def test_logits_kernel_from_the_reference():
    """A decode-logits "kernel" that is the reference itself passes logits_agree (the inputs arrive intact)."""

    def reference_logits(q, kv_cache, weights, seq_lens, block_table, **params):
        return dsa_oracle.reference.decode_logits(
            q, kv_cache, weights, seq_lens, block_table, profile=params["profile"],
            max_model_len=params["max_model_len"], compress_ratio=params["compress_ratio"], layout=params["layout"],
            fp8=params["fp8"], q_scales=params.get("q_scales"), decode_lens=params.get("decode_lens"),
            padded_lengths=params["padded_lengths"] if params.get("decode_lens") is not None else None)

    result = dsa_oracle.fuzz(reference_logits, op="decode_logits", cases=15, properties=["logits_agree"])
    assert result.passed == 15
