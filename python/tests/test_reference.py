"""The reference from Python against the CLI's results: every committed golden
case recomputed from its inputs equals the expected outputs `dsa-oracle
golden` wrote, byte for byte and dtype for dtype; one case per op also
against `dsa-oracle reference` run on the same file; the named op functions
and the torch paths give the same bytes."""

import os

import numpy as np
import pytest

import dsa_oracle
from dsa_oracle import reference
from conftest import GOLDEN, case_id, golden_files, run_cli

FILES = golden_files()


def same_bytes(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_the_committed_sets_are_there():
    assert len(FILES) >= 40, FILES
    ops = {dsa_oracle.golden.read_case(f).op for f in FILES}
    # decode_logits and prefill_logits are the logits outputs of the top-k cases (tested by name below).
    assert ops == set(dsa_oracle._core.golden_ops()) - {"decode_logits", "prefill_logits"}, ops


@pytest.mark.parametrize("path", FILES, ids=case_id)
def test_every_golden_case_recomputed(path):
    case = dsa_oracle.golden.read_case(path)
    out = case.reference()
    assert sorted(out) == sorted(case.expected)
    for name, expected in case.expected.items():
        assert same_bytes(out[name], expected), f"{case.file}: {name} differs from the golden file"


def one_case_per_op():
    seen = {}
    for path in FILES:
        op = dsa_oracle.golden.read_case(path).op
        seen.setdefault(op, path)
    return sorted(seen.values())


@pytest.mark.parametrize("path", one_case_per_op(), ids=case_id)
def test_same_bytes_as_the_reference_command(path, cli, tmp_path):
    case = dsa_oracle.golden.read_case(path)
    out_file = tmp_path / "expected.safetensors"
    run_cli("reference", "--op", case.op, "--profile", case.profile, "--in", path, "--out", str(out_file))
    # The command's output file holds the inputs plus the expected outputs.
    from_cli = dsa_oracle.golden.read_case(out_file)
    mine = case.reference()
    for name in from_cli.expected:
        assert same_bytes(mine[name], from_cli.expected[name]), name


def read(name):
    return dsa_oracle.golden.read_case(os.path.join(GOLDEN, name))


def test_decode_logits_and_topk_by_name():
    case = read("deepgemm_sm90/v32_decode/v32_decode_01_nn2.safetensors")
    i, p = case.inputs, case.params
    logits = reference.decode_logits(i["q"], i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"],
                                     profile="deepgemm_sm90", max_model_len=p["max_model_len"], next_n=p["next_n"])
    assert same_bytes(logits, case.expected["logits"])
    topk = reference.decode_topk(i["q"], i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"],
                                 topk=p["topk"], profile="deepgemm_sm90", max_model_len=p["max_model_len"])
    assert same_bytes(topk, case.expected["topk_indices"])
    both = reference.decode_topk(logits=logits, seq_lens=i["seq_lens"], next_n=p["next_n"], topk=p["topk"],
                                 return_all=True)
    assert list(both) == ["topk_indices"] and same_bytes(both["topk_indices"], case.expected["topk_indices"])
    lens = reference.visible_lens(i["seq_lens"], p["next_n"])
    assert same_bytes(reference.topk(logits, p["topk"], lengths=lens), case.expected["topk_indices"])


def test_prefill_by_name():
    case = read("exact/prefill/prefill_00_chunk.safetensors")
    i = case.inputs
    logits = reference.prefill_logits(i["q"], i["k"], i["k_scales"], i["weights"], i["ks"], i["ke"])
    assert same_bytes(logits, case.expected["logits"])
    topk = reference.topk(logits, case.params["topk"], ks=i["ks"], ke=i["ke"])
    assert same_bytes(topk, case.expected["topk_indices"])


def test_candidate_ops_by_name():
    sets = os.path.join(GOLDEN, "deepgemm_sm90/v41_c4a")
    source, consumer, mask, compact = (dsa_oracle.golden.read_case(f) for f in dsa_oracle.golden.cases(sets))
    i, p = source.inputs, source.params
    blocks = reference.candidate_select(i["q"], i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"],
                                        candidate_block_size=p["candidate_block_size"],
                                        candidate_topk_blocks=p["candidate_topk_blocks"], profile="deepgemm_sm90",
                                        max_model_len=p["max_model_len"], compress_ratio=p["compress_ratio"])
    assert same_bytes(blocks, source.expected["candidate_blocks"])
    for case, fn in ((consumer, reference.consumer_step), (mask, reference.candidate_mask),
                     (compact, reference.compact_candidate_logits)):
        i, p = case.inputs, case.params
        out = fn(i["q"], i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"], i["candidate_blocks"],
                 candidate_block_size=p["candidate_block_size"], topk=p.get("topk"), profile="deepgemm_sm90",
                 max_model_len=p["max_model_len"], compress_ratio=p["compress_ratio"], return_all=True)
        for name, expected in case.expected.items():
            assert same_bytes(out[name], expected), (case.file, name)


def test_sparse_sm100_by_name():
    source, sparse = (dsa_oracle.golden.read_case(f)
                      for f in dsa_oracle.golden.cases(os.path.join(GOLDEN, "deepgemm_sm100_bf16/mxfp4")))
    i, p = sparse.inputs, sparse.params
    out = reference.sparse_sm100(i["q"], i["q_scales"], i["kv_cache"], i["weights"], i["seq_lens"], i["block_table"],
                                 i["candidate_blocks"], candidate_block_size=p["candidate_block_size"], topk=p["topk"],
                                 max_model_len=p["max_model_len"], compress_ratio=p["compress_ratio"], return_all=True)
    for name, expected in sparse.expected.items():
        assert same_bytes(out[name], expected), name
    assert out["sparse_logits"].dtype == np.uint16  # bf16 bits in numpy
    lens = reference.visible_lens(i["seq_lens"], p["next_n"], compress_ratio=p["compress_ratio"])
    expanded = reference.expand_candidate_blocks(i["candidate_blocks"], p["candidate_block_size"], ke=lens)
    assert same_bytes(expanded["sparse_block_ids"], sparse.expected["sparse_block_ids"])
    assert same_bytes(expanded["sparse_end"], sparse.expected["sparse_end"])


def test_one_case_under_every_profile_that_takes_it():
    case = read("exact/v32_decode/v32_decode_00_nn1.safetensors")
    ran = 0
    for profile in dsa_oracle.profiles():
        info = reference.profile_info(profile)
        if "e4m3fn" not in info["elements"] or info["weights"] != "fp32":
            continue
        out = case.reference(profile=profile)
        assert out["logits"].shape == case.expected["logits"].shape
        ran += 1
    assert ran >= 3


def test_padding_helpers():
    rows = np.arange(12, dtype=np.uint8).reshape(3, 4)
    decode_lens = np.array([1, 2], np.int32)
    packed = reference.pack_rows(rows, decode_lens, 3, pad=reference.q_pad_byte("e4m3fn"))
    assert packed.shape == (2, 3, 4)
    assert (packed[0, 0] == rows[0]).all() and (packed[1, :2] == rows[1:]).all()
    assert (packed[0, 1:] == reference.q_pad_byte("e4m3fn")).all() and reference.q_pad_byte("e4m3fn") in (0x7F, 0xFF)
    assert same_bytes(reference.unpack_rows(packed, decode_lens), rows)
    topk = np.arange(12, dtype=np.int32).reshape(6, 2)
    assert reference.unpack_topk(topk, decode_lens, 3).shape == (3, 2)
    assert reference.requires_padding(decode_lens, 3)
    assert not reference.skip_decode_fill(False, 6, 6, True)
    assert reference.skip_decode_fill(False, 6, 6, False)


def test_torch_in_torch_out(torch):
    path = os.path.join(GOLDEN, "deepgemm_sm90/v32_decode/v32_decode_02_nn2_2d.safetensors")
    case_np = dsa_oracle.golden.read_case(path)
    case = dsa_oracle.golden.read_case(path, framework="torch")
    assert isinstance(case.inputs["q"], torch.Tensor)
    out = case.reference()
    assert isinstance(out["logits"], torch.Tensor) and out["logits"].dtype == torch.float32
    assert same_bytes(out["logits"].numpy(), case_np.expected["logits"])
    assert same_bytes(out["topk_indices"].numpy(), case_np.expected["topk_indices"])
    # A non-contiguous view gives the same bytes (copied, since it is not contiguous).
    i = case.inputs
    wide = torch.zeros(i["weights"].shape[0], i["weights"].shape[1] * 2, dtype=torch.float32)
    wide[:, ::2] = i["weights"]
    logits = reference.decode_logits(i["q"], i["kv_cache"], wide[:, ::2], i["seq_lens"], i["block_table"],
                                     profile="deepgemm_sm90", max_model_len=case.params["max_model_len"])
    assert same_bytes(logits.numpy(), case_np.expected["logits"])


def test_torch_bf16_logits_out(torch):
    path = dsa_oracle.golden.cases(os.path.join(GOLDEN, "deepgemm_sm100_bf16/edge"))[0]
    case_np = dsa_oracle.golden.read_case(path)
    case = dsa_oracle.golden.read_case(path, framework="torch")
    out = case.reference()
    for name, expected in case_np.expected.items():
        got = out[name]
        if case_np.dtypes[name] == "BF16":
            assert got.dtype == torch.bfloat16
            got = got.view(torch.int16).numpy().view(np.uint16)
        else:
            got = got.numpy()
        assert same_bytes(got, expected), name
