"""Bad input raises dsa_oracle.InvalidInput, a ValueError naming the argument,
what was given and what was expected (the C++ InvalidInput message); never a
crash, and never a silent answer."""

import os

import numpy as np
import pytest

import dsa_oracle
from dsa_oracle import reference
from conftest import GOLDEN

CASE = os.path.join(GOLDEN, "deepgemm_sm90/v32_decode/v32_decode_00_nn1.safetensors")


@pytest.fixture(scope="module")
def case():
    return dsa_oracle.golden.read_case(CASE)


def decode(case, **changes):
    i, p = dict(case.inputs), case.params
    i.update({k: v for k, v in changes.items() if k in i})
    kw = {"profile": "deepgemm_sm90", "max_model_len": p["max_model_len"]}
    kw.update({k: v for k, v in changes.items() if k not in i})
    return reference.decode_logits(i["q"], i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"], **kw)


def raises(argument, *fragments):
    class Expect:
        def __enter__(self):
            self.ctx = pytest.raises(ValueError)
            self.info = self.ctx.__enter__()
            return self

        def __exit__(self, *exc):
            self.ctx.__exit__(*exc)
            err = self.info.value
            assert isinstance(err, dsa_oracle.InvalidInput)
            assert err.argument == argument, str(err)
            text = str(err)
            assert text.startswith(argument + ":"), text
            for f in fragments:
                assert f in text, text
            return True

    return Expect()


def test_seq_lens_int64(case):
    with raises("seq_lens", "I64", "expected I32", "int64 array of shape ("):
        decode(case, seq_lens=case.inputs["seq_lens"].astype(np.int64))


def test_q_wrong_rank(case):
    q = case.inputs["q"]
    with raises("q", "shape", "expected [B, next_n, H, D]", "uint8 array of shape"):
        decode(case, q=q.reshape(q.shape[0], -1))


def test_weights_float64(case):
    with raises("weights", "expected F32 or BF16", "float64 array of shape"):
        decode(case, weights=case.inputs["weights"].astype(np.float64))


def test_weights_wrong_shape(case):
    w = case.inputs["weights"]
    with raises("weights", "expected", f"float32 array of shape ({w.shape[0]}, {w.shape[1] - 1})"):
        decode(case, weights=np.ascontiguousarray(w[:, :-1]))


def test_kv_cache_wrong_token_bytes(case):
    kv = case.inputs["kv_cache"]
    with raises("kv_cache", "expected [pages, page_size, 1, 132]"):
        decode(case, kv_cache=np.ascontiguousarray(kv[..., :-1]))


def test_block_table_page_out_of_range(case):
    table = case.inputs["block_table"].copy()
    table[0, 0] = 10**6
    with raises("block_table"):
        decode(case, block_table=table)


def test_not_an_array(case):
    with raises("seq_lens", "expected a numpy array or a torch tensor, got list"):
        decode(case, seq_lens=[5])


def test_unknown_dtype(case):
    with raises("seq_lens", "not an element type of the schema", "int16"):
        decode(case, seq_lens=case.inputs["seq_lens"].astype(np.int16))


def test_big_endian(case):
    with raises("weights", "big-endian"):
        decode(case, weights=case.inputs["weights"].astype(">f4"))


def test_missing_max_model_len(case):
    with raises("max_model_len", "missing"):
        decode(case, max_model_len=None)


def test_unknown_profile(case):
    with raises("profile", "deepgemm_sm90"):
        decode(case, profile="deepgemm_sm91")


def test_wrong_fp8_for_profile(case):
    with raises("profile"):
        decode(case, profile="aiter_gfx942_gluon", fp8="e4m3fn")


def test_next_n_contradicts_q(case):
    with raises("next_n", "q's shape"):
        decode(case, next_n=3)


def test_topk_missing():
    logits = np.zeros((2, 8), np.float32)
    with pytest.raises(TypeError):
        reference.topk(logits)


def test_topk_k_zero():
    with raises("topk"):
        reference.topk(np.zeros((2, 8), np.float32), 0)


def test_topk_logits_float64():
    with raises("logits", "float64"):
        reference.topk(np.zeros((2, 8), np.float64), 2)


def test_oracle_shapes():
    logits = np.zeros((2, 8), np.float32)
    with raises("actual", "expected the shape of `expected`"):
        dsa_oracle.oracle.check_logits(np.zeros((2, 7), np.float32), logits)
    with raises("indices", "int32"):
        dsa_oracle.oracle.check_topk(np.zeros((2, 3), np.int64), logits)
    with raises("lengths", "3 windows for 2 rows"):
        dsa_oracle.oracle.check_topk(np.zeros((2, 3), np.int32), logits, lengths=np.array([1, 2, 3]))
    with raises("candidate_block_size"):
        dsa_oracle.oracle.check_candidate_blocks(np.zeros((2, 3), np.int32), logits, 0)
    with raises("logits", "expected (rows, columns)"):
        dsa_oracle.oracle.check_topk(np.zeros((2, 3), np.int32), np.zeros(8, np.float32))


def test_window_past_the_row():
    with pytest.raises(ValueError):
        dsa_oracle.oracle.check_topk(np.zeros((1, 1), np.int32), np.zeros((1, 4), np.float32), lengths=[9])


def test_golden_outputs_wrong_dtype():
    path = os.path.join(GOLDEN, "exact/v32_decode/v32_decode_00_nn1.safetensors")
    case = dsa_oracle.golden.read_case(path)
    bad = case.expected["topk_indices"].astype(np.int64)
    with raises("topk_indices", "I64"):
        dsa_oracle.golden.check_case(path, {"topk_indices": bad})


def test_golden_file_missing(tmp_path):
    with pytest.raises(ValueError, match="nope.safetensors"):
        dsa_oracle.golden.read_case(tmp_path / "nope.safetensors")


def test_corrupt_golden_file(tmp_path):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(ValueError, match="bad.safetensors"):
        dsa_oracle.golden.read_case(path)


def test_torch_wrong_dtype(torch):
    with raises("logits", "float64"):
        reference.topk(torch.zeros(2, 8, dtype=torch.float64), 2)
    with raises("seq_lens", "int64"):
        reference.decode_topk(logits=torch.zeros(2, 8), seq_lens=torch.tensor([3, 4]), next_n=1, topk=2)
