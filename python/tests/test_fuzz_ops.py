"""Every op of IndexerOps takes a Python kernel in dsa_oracle.fuzz: numpy
kernels written from the ops' definitions (the logits taken from
dsa_oracle.reference) pass each op's property, and a wrong kernel of each
kind of op is caught. Small case counts: this file runs in CI."""

import numpy as np
import pytest

import dsa_oracle
from dsa_oracle import reference as ref

NEG_INF = np.float32(-np.inf)


def order_keys(v):
    """Integer keys in the SPEC's value order: -inf lowest, -0 == +0, NaN above +inf."""
    bits = v.astype(np.float32).view(np.uint32).astype(np.int64)
    keys = np.where(bits >> 31 == 1, 0xFFFFFFFF - bits, bits | 0x80000000)
    keys = np.where(v == 0, 0x80000000, keys)
    return np.where(np.isnan(v), 0x100000000, keys)


def top(values, k):
    """Indices of the k largest of a 1-D row (lowest index first among ties), then -1."""
    out = np.full(k, -1, np.int32)
    n = min(len(values), k)
    out[:n] = np.argsort(-order_keys(values), kind="stable")[:n]
    return out


def as_f32(values):
    return dsa_oracle.bf16_to_float32(values) if values.dtype == np.uint16 else values


def dense_decode(q, kv_cache, weights, seq_lens, block_table, **p):
    logits = ref.decode_logits(q, kv_cache, weights, seq_lens, block_table, profile=p["profile"],
                               max_model_len=p["max_model_len"], compress_ratio=p["compress_ratio"],
                               layout=p["layout"], fp8=p["fp8"], q_scales=p.get("q_scales"),
                               decode_lens=p.get("decode_lens"),
                               padded_lengths=p["padded_lengths"] if p.get("decode_lens") is not None else None)
    return as_f32(logits)


def lens_of(seq_lens, **p):
    return ref.visible_lens(seq_lens, p["next_n"], compress_ratio=p["compress_ratio"], decode_lens=p.get("decode_lens"),
                            padded_lengths=p["padded_lengths"])


def compact_positions(blocks, S):
    """Compact column c*S + o of a row: (its position block_c*S + o, whether its slot is live)."""
    c = np.arange(len(blocks) * S)
    block = blocks[c // S].astype(np.int64)
    return block * S + c % S, block >= 0


def candidate_positions(blocks, S, n):
    """A row's candidate columns below n, in position order."""
    pos, live = compact_positions(blocks, S)
    return np.sort(pos[live & (pos < n)])


def gather_compact(dense, starts, ends, candidate_blocks, S):
    """compact[r, c*S + o] = dense[r, start + block_c*S + o] where the slot is live and the column inside the row."""
    rows, slots = candidate_blocks.shape
    compact = np.full((rows, slots * S), NEG_INF, np.float32)
    for r in range(rows):
        pos, live = compact_positions(candidate_blocks[r], S)
        cols = starts[r] + pos
        live &= cols < ends[r]
        compact[r, live] = dense[r, cols[live]]
    return compact


# ---- Kernels, one per op, written from the ops' definitions (reference/include/dsa/indexer_ops.hpp).

def prefill_logits(q, k, k_scales, weights, ks, ke, fp8, profile):
    return as_f32(ref.prefill_logits(q, k, k_scales, weights, ks, ke, profile=profile, fp8=fp8))


def topk(logits, ks, ke, k):
    out = np.full((logits.shape[0], k), -1, np.int32)
    for r in range(logits.shape[0]):
        out[r] = top(logits[r, ks[r]:ke[r]], k)
    return out


def candidate_mask(logits, ks, ke, candidate_blocks, candidate_block_size, variant):
    """In place, as vLLM's apply_candidate_mask (full) or the gfx942 launch's strided mask."""
    S = candidate_block_size
    for r in range(logits.shape[0]):
        start, end = int(ks[r]), int(ke[r])
        keep = np.zeros(-(-(end - start) // S), bool)
        for b in candidate_blocks[r]:
            if 0 <= b < len(keep):
                keep[b] = True
        row = logits[r]
        window = row[start:end]
        window[~keep[np.arange(end - start) // S]] = NEG_INF
        if variant == "full":
            row[:start] = NEG_INF
            row[end:] = NEG_INF


def candidate_topk(logits, ks, ke, candidate_blocks, candidate_block_size, k):
    out = np.full((logits.shape[0], k), -1, np.int32)
    for r in range(logits.shape[0]):
        pos = candidate_positions(candidate_blocks[r], candidate_block_size, ke[r] - ks[r])
        chosen = top(logits[r, ks[r] + pos], k)
        out[r] = np.where(chosen >= 0, pos[np.maximum(chosen, 0)] if len(pos) else -1, -1)
    return out


def compact_candidate_logits(candidate_blocks, candidate_block_size, **p):
    dense = dense_decode(**p)
    lens = lens_of(**p)
    return gather_compact(dense, np.zeros_like(lens), lens, candidate_blocks, candidate_block_size)


def prefill_compact_candidate_logits(q, k, k_scales, weights, ks, ke, fp8, profile, candidate_blocks,
                                     candidate_block_size):
    dense = prefill_logits(q, k, k_scales, weights, ks, ke, fp8, profile)
    return gather_compact(dense, ks, ke, candidate_blocks, candidate_block_size)


def candidate_logits_top_k(candidate_blocks, candidate_block_size, k, **p):
    """The gfx942 fused launch: the compact logits and their top k, remapped to positions."""
    compact = compact_candidate_logits(candidate_blocks, candidate_block_size, **p)
    lens = lens_of(**p)
    S = candidate_block_size
    out = np.full((compact.shape[0], k), -1, np.int32)
    for r in range(compact.shape[0]):
        pos, live = compact_positions(candidate_blocks[r], S)
        live &= pos < lens[r]
        chosen = top(compact[r, live], k)
        out[r] = np.where(chosen >= 0, pos[live][np.maximum(chosen, 0)] if live.any() else -1, -1)
    return compact, out


def sparse_logits(sparse_block_ids, sparse_end, sparse_block_kv, **p):
    """Column j*SBK + o scores position id_j*SBK + o (decode rows start at 0); bf16 values."""
    dense = dense_decode(**p)
    SBK = sparse_block_kv
    out = np.full((dense.shape[0], sparse_block_ids.shape[1] * SBK), NEG_INF, np.float32)
    for r in range(dense.shape[0]):
        cols = np.arange(sparse_end[r])
        out[r, cols] = dense[r, sparse_block_ids[r][cols // SBK] * SBK + cols % SBK]
    return out


def sparse_topk(sparse_logits, ks, k, sparse_block_ids, sparse_end, sparse_block_kv):
    values = as_f32(sparse_logits)
    SBK = sparse_block_kv
    out = np.full((values.shape[0], k), -1, np.int32)
    for r in range(values.shape[0]):
        chosen = top(values[r, :sparse_end[r]], k)
        live = chosen >= 0
        cols = chosen[live]
        out[r, live] = (sparse_block_ids[r][cols // SBK] - ks[r] // SBK) * SBK + cols % SBK
    return out


KERNELS = {
    "decode_logits": dense_decode,
    "prefill_logits": prefill_logits,
    "topk": topk,
    "candidate_mask": candidate_mask,
    "candidate_topk": candidate_topk,
    "compact_candidate_logits": compact_candidate_logits,
    "prefill_compact_candidate_logits": prefill_compact_candidate_logits,
    "candidate_logits_top_k": candidate_logits_top_k,
    # The reference's own Python functions take the ops' inputs by the same names.
    "pack_rows": ref.pack_rows,
    "unpack_topk": ref.unpack_topk,
    "skip_decode_fill": ref.skip_decode_fill,
    "expand_candidate_blocks": ref.expand_candidate_blocks,
    "sparse_logits": sparse_logits,
    "sparse_topk": sparse_topk,
}

PROPERTIES = ["candidate_mask_agrees", "candidate_topk_agrees", "compact_logits_agree", "prefill_logits_agree",
              "prefill_compact_equals_dense", "candidate_logits_top_k_agrees", "padding_round_trip",
              "skip_decode_fill_agrees", "sparse_blocks_agree", "sparse_logits_agree", "sparse_topk_agrees"]


def test_every_op_of_indexer_ops_takes_a_python_kernel():
    assert set(dsa_oracle.ops()) == set(dsa_oracle._core.indexer_ops())
    assert set(KERNELS) | {"candidate_select"} == set(dsa_oracle.ops())


def test_a_kernel_of_every_op_passes_its_property():
    cases = 6
    result = dsa_oracle.fuzz(KERNELS, cases=cases, seed=5, properties=PROPERTIES)
    by_name = {p["property"]: p for p in result.properties}
    for name in PROPERTIES:
        assert by_name[name]["passed"] == cases and by_name[name]["unsupported"] == 0, str(result)


def test_every_entry_written_and_determinism_reach_the_python_ops():
    result = dsa_oracle.fuzz(KERNELS, cases=4, seed=2, properties=["every_entry_written", "determinism"])
    assert result.passed == 8, str(result)


def with_kernel(op, fn):
    kernels = dict(KERNELS)
    kernels[op] = fn
    return kernels


def test_a_strided_mask_that_is_always_full_is_caught():
    def always_full(logits, ks, ke, candidate_blocks, candidate_block_size, variant):
        candidate_mask(logits, ks, ke, candidate_blocks, candidate_block_size, "full")

    with pytest.raises(dsa_oracle.FuzzFailure, match="strided"):
        dsa_oracle.fuzz(with_kernel("candidate_mask", always_full), cases=20, properties=["candidate_mask_agrees"],
                        shrink_seconds=2)


def test_pack_rows_ignoring_the_pad_byte_is_caught():
    def pads_with_zero(rows, decode_lens, next_n, pad):
        return ref.pack_rows(rows, decode_lens, next_n, 0)

    with pytest.raises(dsa_oracle.FuzzFailure, match="padding_round_trip"):
        dsa_oracle.fuzz(with_kernel("pack_rows", pads_with_zero), cases=20, properties=["padding_round_trip"],
                        shrink_seconds=2)


def test_skip_decode_fill_must_refuse_impossible_counts():
    def never_refuses(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding):
        return not has_prefill_rows and not requires_padding and num_decode_tokens == num_tokens

    with pytest.raises(dsa_oracle.FuzzFailure, match="num_decode_tokens = -1"):
        dsa_oracle.fuzz(with_kernel("skip_decode_fill", never_refuses), cases=5, properties=["skip_decode_fill_agrees"],
                        shrink_seconds=2)


def test_sparse_topk_left_in_columns_is_caught():
    def columns_not_positions(sparse_logits, ks, k, sparse_block_ids, sparse_end, sparse_block_kv):
        values = as_f32(sparse_logits)
        return topk(values, np.zeros_like(sparse_end), sparse_end, k)

    with pytest.raises(dsa_oracle.FuzzFailure, match="sparse_topk_agrees"):
        dsa_oracle.fuzz(with_kernel("sparse_topk", columns_not_positions), cases=30, properties=["sparse_topk_agrees"],
                        shrink_seconds=2)


def test_two_outputs_come_back_as_a_tuple_a_dict_or_through_out():
    def fused_into_out(out, **p):
        compact, topk = candidate_logits_top_k(**p)
        out["compact_logits"][...] = compact
        out["topk_indices"][...] = topk

    def fused_as_dict(**p):
        compact, topk = candidate_logits_top_k(**p)
        return {"topk_indices": topk, "compact_logits": compact}

    for kernel in (fused_into_out, fused_as_dict):
        result = dsa_oracle.fuzz({"candidate_logits_top_k": kernel}, cases=3, properties=["candidate_logits_top_k_agrees"])
        assert result.passed == 3

    def one_output_only(**p):
        return candidate_logits_top_k(**p)[1]

    with pytest.raises(dsa_oracle.FuzzFailure, match="expected \\(compact_logits, topk_indices\\)"):
        dsa_oracle.fuzz({"candidate_logits_top_k": one_output_only}, cases=3,
                        properties=["candidate_logits_top_k_agrees"], shrink_seconds=2)
