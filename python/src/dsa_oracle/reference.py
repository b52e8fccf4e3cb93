"""The bit-exact reference: every op of the golden schema under any profile.

Inputs are the golden schema's tensors (docs/golden-format.md) as numpy arrays
or torch tensors; parameters that are not tensors are keywords named as the
schema's metadata keys. Each op runs through the same reader and reference as
`dsa-oracle reference`, so the results are those bytes. An op returns its
primary output (the one a kernel's outputs must hold); `return_all=True`
returns every output as a dict. Outputs are numpy arrays (bf16 as uint16
bits), or torch tensors on the first torch input's device (bf16 as
torch.bfloat16). Bad input raises dsa_oracle.InvalidInput (a ValueError)
naming the argument, what was given and what was expected.
"""

import numpy as np

from . import _core
from ._arrays import _invalid, from_host, host_dict, int_array, is_torch, to_host

SCHEMA = "dsa-oracle/golden/1"

PROFILES = tuple(_core.profile_names())


def profile_info(name):
    """A profile's matrix-unit model, element formats and precisions (docs/profiles.md)."""
    return _core.profile_info(name)


def _default_fp8(profile):
    elements = _core.profile_info(profile)["elements"]
    for fmt in ("e4m3fn", "e4m3fnuz"):
        if fmt in elements:
            return fmt
    return None


def run(op, tensors, *, profile="exact", outputs=None, **params):
    """Runs golden-schema op `op` on {name: array} with metadata keys as keywords; returns {name: array} of its outputs."""
    host, like, fp8_of_dtype = host_dict(tensors)
    meta = {"schema": SCHEMA}
    meta.update({k: v for k, v in params.items() if v is not None})
    reads_codes = "q" in host
    if reads_codes and "layout" not in meta and "k" not in host:
        meta["layout"] = "mxfp4" if "q_scales" in host else "block_flat"
    if reads_codes and "fp8" not in meta and meta.get("layout") != "mxfp4":
        meta["fp8"] = fp8_of_dtype or _default_fp8(profile)
    if "q" in host and "k" not in host:
        meta.setdefault("compress_ratio", 1)
    elif "logits" in host and "seq_lens" in host:
        meta.setdefault("compress_ratio", 1)
    for key, value in list(meta.items()):
        meta[key] = str(value).lower() if isinstance(value, bool) else str(value)
    result = _core.reference_run(op, profile, host, meta, outputs)
    return {name: from_host(array, dtype, like) for name, (array, dtype) in result.items()}


def _op(op, return_all, tensors, profile, params):
    out = run(op, tensors, profile=profile, **params)
    return out if return_all else out[_core.primary_output(op)]


def _decode_tensors(q, kv_cache, weights, seq_lens, block_table, q_scales, decode_lens, logits, **more):
    t = {"q": q, "q_scales": q_scales, "kv_cache": kv_cache, "weights": weights, "seq_lens": seq_lens,
         "block_table": block_table, "decode_lens": decode_lens, "logits": logits}
    t.update(more)
    return t


def decode_logits(q, kv_cache, weights, seq_lens, block_table, *, profile="exact", max_model_len=None, next_n=None,
                  compress_ratio=None, layout=None, fp8=None, q_scales=None, decode_lens=None, padded_lengths=None,
                  page_size=None, return_all=False):
    """Decode logits [B * next_n, max_model_len / compress_ratio] over the paged K cache (SPEC 4, 5); -inf past each row."""
    t = _decode_tensors(q, kv_cache, weights, seq_lens, block_table, q_scales, decode_lens, None)
    return _op("decode_logits", return_all, t, profile,
               dict(max_model_len=max_model_len, next_n=next_n, compress_ratio=compress_ratio, layout=layout, fp8=fp8,
                    padded_lengths=padded_lengths, page_size=page_size))


def prefill_logits(q, k, k_scales, weights, ks, ke, *, profile="exact", fp8=None, return_all=False):
    """Prefill logits [S, N]: row r over K entries [ks, ke); -inf elsewhere."""
    return _op("prefill_logits", return_all, {"q": q, "k": k, "k_scales": k_scales, "weights": weights, "ks": ks, "ke": ke},
               profile, dict(fp8=fp8))


def decode_topk(q=None, kv_cache=None, weights=None, seq_lens=None, block_table=None, *, topk, logits=None,
                profile="exact", max_model_len=None, next_n=None, compress_ratio=None, layout=None, fp8=None,
                q_scales=None, decode_lens=None, padded_lengths=None, page_size=None, return_all=False):
    """Top-k indices [rows, topk] of each decode row's [0, L_r): from q and the cache, or from given `logits` and seq_lens."""
    t = _decode_tensors(q, kv_cache, weights, seq_lens, block_table, q_scales, decode_lens, logits)
    return _op("decode_topk", return_all, t, profile,
               dict(topk=topk, max_model_len=max_model_len, next_n=next_n, compress_ratio=compress_ratio, layout=layout,
                    fp8=fp8, padded_lengths=padded_lengths, page_size=page_size))


def prefill_topk(q=None, k=None, k_scales=None, weights=None, ks=None, ke=None, *, topk, logits=None,
                 profile="exact", fp8=None, return_all=False):
    """Top-k of each prefill row's [ks, ke), indices relative to ks: from q and K, or from given `logits`."""
    t = {"q": q, "k": k, "k_scales": k_scales, "weights": weights, "ks": ks, "ke": ke, "logits": logits}
    return _op("prefill_topk", return_all, t, profile, dict(topk=topk, fp8=fp8))


def topk(logits, k, *, lengths=None, ks=None, ke=None):
    """Top-k of given logits rows: over [0, lengths[r]), over [ks[r], ke[r]) (indices relative to ks), or whole rows."""
    array, _, _ = to_host("logits", logits)
    rows = array.shape[0] if array.ndim >= 1 else 0
    if lengths is not None:
        if ks is not None or ke is not None:
            raise ValueError("topk: give lengths or ks/ke, not both")
        lens = int_array("lengths", lengths, np.int32).reshape(-1, 1)
        return decode_topk(logits=logits, seq_lens=np.ascontiguousarray(lens), next_n=1, topk=k)
    width = array.shape[1] if array.ndim == 2 else 0
    ks = np.zeros(rows, np.int32) if ks is None else int_array("ks", ks, np.int32)
    ke = np.full(rows, width, np.int32) if ke is None else int_array("ke", ke, np.int32)
    return prefill_topk(logits=logits, ks=ks, ke=ke, topk=k)


def candidate_select(q=None, kv_cache=None, weights=None, seq_lens=None, block_table=None, *, candidate_block_size,
                     candidate_topk_blocks, logits=None, topk=None, profile="exact", max_model_len=None, next_n=None,
                     compress_ratio=None, layout=None, fp8=None, q_scales=None, decode_lens=None, page_size=None,
                     return_all=False):
    """The V4.1 source layer's candidate blocks [rows, candidate_topk_blocks] (SPEC 7), -1 for empty slots."""
    t = _decode_tensors(q, kv_cache, weights, seq_lens, block_table, q_scales, decode_lens, logits)
    return _op("candidate_select", return_all, t, profile,
               dict(candidate_block_size=candidate_block_size, candidate_topk_blocks=candidate_topk_blocks, topk=topk,
                    max_model_len=max_model_len, next_n=next_n, compress_ratio=compress_ratio, layout=layout, fp8=fp8,
                    page_size=page_size))


def _consumer(op, return_all, q, kv_cache, weights, seq_lens, block_table, candidate_blocks, logits, profile, params,
              q_scales=None, decode_lens=None):
    t = _decode_tensors(q, kv_cache, weights, seq_lens, block_table, q_scales, decode_lens, logits,
                        candidate_blocks=candidate_blocks)
    return _op(op, return_all, t, profile, params)


def candidate_mask(q=None, kv_cache=None, weights=None, seq_lens=None, block_table=None, candidate_blocks=None, *,
                   candidate_block_size, topk, logits=None, profile="exact", max_model_len=None, next_n=None,
                   compress_ratio=None, layout=None, fp8=None, q_scales=None, decode_lens=None, page_size=None,
                   return_all=False):
    """vLLM's apply_candidate_mask: logits with -inf outside the candidate blocks of [0, E_r) (then its top-k)."""
    return _consumer("candidate_mask", return_all, q, kv_cache, weights, seq_lens, block_table, candidate_blocks, logits,
                     profile, dict(candidate_block_size=candidate_block_size, topk=topk, max_model_len=max_model_len,
                                   next_n=next_n, compress_ratio=compress_ratio, layout=layout, fp8=fp8,
                                   page_size=page_size), q_scales, decode_lens)


def candidate_topk(q=None, kv_cache=None, weights=None, seq_lens=None, block_table=None, candidate_blocks=None, *,
                   candidate_block_size, topk, logits=None, profile="exact", max_model_len=None, next_n=None,
                   compress_ratio=None, layout=None, fp8=None, q_scales=None, decode_lens=None, page_size=None,
                   return_all=False):
    """The consumer top-k: the k largest logits among the candidate blocks' columns in [0, L_r), as positions."""
    return _consumer("candidate_topk", return_all, q, kv_cache, weights, seq_lens, block_table, candidate_blocks, logits,
                     profile, dict(candidate_block_size=candidate_block_size, topk=topk, max_model_len=max_model_len,
                                   next_n=next_n, compress_ratio=compress_ratio, layout=layout, fp8=fp8,
                                   page_size=page_size), q_scales, decode_lens)


def consumer_step(q, kv_cache, weights, seq_lens, block_table, candidate_blocks, *, candidate_block_size, topk,
                  profile="exact", max_model_len=None, next_n=None, compress_ratio=None, layout=None, fp8=None,
                  q_scales=None, decode_lens=None, page_size=None, return_all=False):
    """A V4.1 consumer layer: logits, then the top-k among the candidate columns (return_all: the logits too)."""
    return _consumer("consumer_step", return_all, q, kv_cache, weights, seq_lens, block_table, candidate_blocks, None,
                     profile, dict(candidate_block_size=candidate_block_size, topk=topk, max_model_len=max_model_len,
                                   next_n=next_n, compress_ratio=compress_ratio, layout=layout, fp8=fp8,
                                   page_size=page_size), q_scales, decode_lens)


def compact_candidate_logits(q, kv_cache, weights, seq_lens, block_table, candidate_blocks, *, candidate_block_size,
                             topk=None, profile="exact", max_model_len=None, next_n=None, compress_ratio=None,
                             layout=None, fp8=None, q_scales=None, decode_lens=None, page_size=None, return_all=False):
    """Compact logits [rows, C * S]: compact[r][c*S + t] = logits[r][block_c*S + t], scored at those positions only."""
    return _consumer("compact_candidate_logits", return_all, q, kv_cache, weights, seq_lens, block_table,
                     candidate_blocks, None, profile,
                     dict(candidate_block_size=candidate_block_size, topk=topk, max_model_len=max_model_len,
                          next_n=next_n, compress_ratio=compress_ratio, layout=layout, fp8=fp8, page_size=page_size),
                     q_scales, decode_lens)


def sparse_sm100(q, q_scales, kv_cache, weights, seq_lens, block_table, candidate_blocks, *, candidate_block_size, topk,
                 profile="deepgemm_sm100_bf16", max_model_len=None, next_n=None, compress_ratio=None, page_size=None,
                 return_all=False):
    """The SM100 sparse form: top-k positions; return_all adds sparse_block_ids, sparse_end and the bf16 sparse_logits."""
    return _consumer("sparse_sm100", return_all, q, kv_cache, weights, seq_lens, block_table, candidate_blocks, None,
                     profile, dict(candidate_block_size=candidate_block_size, topk=topk, max_model_len=max_model_len,
                                   next_n=next_n, compress_ratio=compress_ratio, layout="mxfp4", page_size=page_size),
                     q_scales)


# ---- Rows, padding and the sparse blocks (the reference's free functions).

def visible_lens(seq_lens, next_n=1, *, compress_ratio=1, decode_lens=None, padded_lengths="causal"):
    """L_r per decode row (SPEC 4, 5): what each row's logits window and top-k read."""
    lens, _, _ = to_host("seq_lens", seq_lens)
    d = None if decode_lens is None else to_host("decode_lens", decode_lens)[0]
    return _core.visible_lens(lens, next_n, compress_ratio, d, padded_lengths)


def candidate_row_ends(seq_lens, next_n=1, *, compress_ratio=1, decode_lens=None, padded_lengths="causal"):
    """E_r per decode row (SPEC 7): the candidate ops' row end (1-D lengths: the request's whole length)."""
    lens, _, _ = to_host("seq_lens", seq_lens)
    d = None if decode_lens is None else to_host("decode_lens", decode_lens)[0]
    return _core.candidate_row_ends(lens, next_n, compress_ratio, d, padded_lengths)


def pack_rows(rows, decode_lens, next_n, pad=0):
    """vLLM pack_seq: ragged rows [sum d_b, ...] -> [B, next_n, ...], padding slots filled with `pad`."""
    array, _, _ = to_host("rows", rows)
    return from_host(_core.pack_rows(array, to_host("decode_lens", decode_lens)[0], next_n, pad), None,
                     rows if is_torch(rows) else None)


def unpack_rows(packed, decode_lens):
    """vLLM unpack_seq: [B, next_n, ...] -> the real rows [sum d_b, ...]."""
    array, _, _ = to_host("packed", packed)
    return from_host(_core.unpack_rows(array, to_host("decode_lens", decode_lens)[0]), None,
                     packed if is_torch(packed) else None)


def unpack_topk(topk_indices, decode_lens, next_n):
    """A padded step's top-k [B * next_n, k] without its padded rows."""
    array, _, _ = to_host("topk_indices", topk_indices)
    if array.ndim != 2 or array.shape[0] % max(next_n, 1):
        raise _invalid("topk_indices", f"shape {array.shape}, expected (B * next_n, k)")
    packed = array.reshape(array.shape[0] // next_n, next_n, array.shape[1])
    return from_host(_core.unpack_rows(packed, to_host("decode_lens", decode_lens)[0]), None,
                     topk_indices if is_torch(topk_indices) else None)


def requires_padding(decode_lens, next_n):
    return _core.requires_padding(to_host("decode_lens", decode_lens)[0], next_n)


def skip_decode_fill(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding):
    """The gfx942 design's rule: may a step skip the -1 pre-fill of its top-k buffer?"""
    return _core.skip_decode_fill(has_prefill_rows, num_decode_tokens, num_tokens, requires_padding)


def q_pad_byte(element):
    """The byte a packed q pads with: fp8's NaN code (-inf cast to fp8), 0 for MXFP4."""
    return _core.q_pad_byte(element)


def expand_candidate_blocks(candidate_blocks, candidate_block_size, *, ks=None, ke=None):
    """vLLM candidate_blocks_to_sparse_indices: {sparse_block_ids, sparse_end, sparse_block_kv}; rows read [ks, ke)."""
    blocks, _, _ = to_host("candidate_blocks", candidate_blocks)
    rows = blocks.shape[0] if blocks.ndim else 0
    ks = np.zeros(rows, np.int64) if ks is None else int_array("ks", ks)
    if ke is None:
        raise _invalid("ke", "needed: each row's end (L_r for decode rows)")
    return _core.expand_candidate_blocks(blocks, candidate_block_size, ks, int_array("ke", ke))
