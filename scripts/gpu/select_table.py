#!/usr/bin/env python3
"""The selection speed table from one GPU job: select_speed's JSON (ours, the read-once floor,
vLLM's top_k_per_row_decode), select_torch_bench.py's (torch.topk) and candidate_path_speed's (the
consumer layer's step: the dense path against the fused launch's work), as Markdown for people and
one JSON for programs.
  select_table.py SELECT_JSON TORCH_JSON [--path PATH_JSON] [--md FILE] [--json FILE] [--meta key=value ...]
"""
import argparse
import json


def clock_text(ours):
    """The SM clock select_speed sampled while it timed (NVML), as a sentence; empty where it was not sampled."""
    c = ours.get("clock") or {}
    if not c.get("samples"):
        return ""
    return (f"SM clock while timed: median {c['median_mhz']} MHz ({c['min_mhz']}-{c['max_mhz']}), "
            f"{c['median_watts']:.0f} W, power-capped in {100 * c['power_capped']:.0f} % of {c['samples']} samples. ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("select_json")
    ap.add_argument("torch_json")
    ap.add_argument("--path")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--meta", action="append", default=[])
    args = ap.parse_args()
    ours = json.load(open(args.select_json))
    try:
        torch = json.load(open(args.torch_json))
    except (OSError, ValueError):
        torch = {"torch_topk": []}
    meta = dict(m.split("=", 1) for m in args.meta)
    try:
        path = json.load(open(args.path)).get("candidate_path", []) if args.path else []
    except (OSError, ValueError):
        path = []
    torch_us = {(r["rows"], r["columns"], r["k"], r["data"]): r["torch_topk_us"] for r in torch.get("torch_topk", [])}
    rows = []
    for r in ours["decode_top_k"]:
        key = (r["rows"], r["columns"], r["k"], r["data"])
        row = dict(r)
        row["torch_topk_us"] = torch_us.get(key)
        rows.append(row)

    def f(x, d=1):
        return "-" if x is None or x < 0 else f"{x:.{d}f}"

    lines = [
        f"# Selection kernels on the {ours.get('device', 'GPU')}: decode top-k speed",
        "",
        f"Date {meta.get('date', '?')}, GPU {ours.get('device', '?')} ({ours.get('sms', '?')} SMs), driver "
        f"{meta.get('driver_smi', meta.get('driver', '?'))}, commit {meta.get('commit', '?')}, torch {torch.get('torch', '?')}. Read "
        f"bandwidth measured in the same run: {ours.get('read_bandwidth_gbs', 0):.0f} GB/s. {clock_text(ours)}Times are medians of "
        "CUDA-graph replays (CUDA events), inputs rotated over several times the L2. Floor: rows x columns x 4 bytes "
        "at the measured read bandwidth. `ours` is `cuda_select` (its dispatch: `row` yes is the row kernel, a block "
        "per row, no the group kernel, a row per cluster of `G` blocks, one block per SM), `row us` and `group us` "
        "each of the two on its own, `1024t` the group kernel at 1024 threads of 8 keys (run 5: `2/SM`, two blocks per SM with a smaller cache), `tree` the previous tree "
        "kernel; `rows != tree`: rows where the kernels' outputs are not the same array (must be 0). `det`: our sets bit for bit identical on a second run; `vLLM runs differ`: rows whose set "
        "changed between two runs of vLLM's kernel; `vs vLLM`: rows where our set differs from vLLM's (ties at the "
        "cut allow it; untied data must give 0). `vLLM persistent us`: vLLM's `persistent_topk` op (k 512, 1024 and 2048) with its own "
        "dispatch: `persistent_topk_kernel` for up to 32 rows, FilteredTopK for more; `pers runs differ` and `vs pers` "
        "as for the decode op.",
        "",
        "| shape | k | data | floor us | G | row | ours us | row us | group us | 1024t us | tree us | ours / floor | vLLM decode us | vLLM / ours "
        "| torch.topk us | torch / ours | det | rows != tree | vLLM runs differ | vs vLLM | vLLM persistent us "
        "| persistent / ours | pers runs differ | vs pers |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t = r["torch_topk_us"]
        v = r["vllm_top_k_per_row_decode_us"]
        pers = r.get("vllm_persistent_topk_us")
        lines.append(
            f"| {r['rows']} x {r['columns'] // 1024}k | {r['k']} | {r['data']} | {f(r['floor_us'])} | "
            f"{r.get('group', '-')} | {'yes' if r.get('row_kernel') else 'no'} | {f(r['ours_us'])} | "
            f"{f(r.get('row_kernel_us'))} | {f(r.get('group_kernel_us'))} | {f(r.get('ours_1024_threads_us', r.get('ours_two_blocks_per_sm_us')))} | "
            f"{f(r.get('tree_us'))} | {f(r['ours_us'] / r['floor_us'], 2)} | "
            f"{f(v)} | {f(v / r['ours_us'] if v and v > 0 else None, 2)} | {f(t)} | "
            f"{f(t / r['ours_us'] if t else None, 2)} | {'yes' if r['ours_deterministic'] else 'NO'} | {r.get('rows_differing_ours_vs_tree', '-')} | "
            f"{r['vllm_rows_differing_between_runs'] if r['vllm_rows_differing_between_runs'] >= 0 else '-'} | "
            f"{r['rows_differing_ours_vs_vllm'] if r['rows_differing_ours_vs_vllm'] >= 0 else '-'} | "
            f"{f(pers)} | {f(pers / r['ours_us'] if pers and pers > 0 else None, 2)} | "
            f"{r.get('vllm_persistent_rows_differing_between_runs', -1) if r.get('vllm_persistent_rows_differing_between_runs', -1) >= 0 else '-'} | "
            f"{r.get('rows_differing_ours_vs_vllm_persistent', -1) if r.get('rows_differing_ours_vs_vllm_persistent', -1) >= 0 else '-'} |")
    cands = ours.get("candidates", [])
    if cands:
        lines += [
            "",
            "## Candidate launches against the dense selection path (128k context, 2048 candidate blocks of 8, top 512)",
            "",
            "Selection only (the logits kernels are in bench/gpu/RESULTS.md). `select`: the source layer's candidate "
            "selection (block scores over the dense row). Dense path: the candidate mask over the row, then top-k of "
            "the whole row. `cand tk`: the candidate top-k reading only the candidate blocks' columns of the dense row; "
            "`compact tk`: the fused launch's top-k half, over the compact row (16384 logits), as dispatched (`kernel`: "
            "the one it took), `compact group`, `compact row` and `compact short`: the same by the group kernel, the row "
            "kernel and the short-row kernel (`same`: the three wrote the same array). "
            "The bytes ratio is dense row / compact "
            "row = 8.",
            "",
            "| rows | select us | mask us | dense top-k us | mask + top-k us | cand tk us | compact tk us | kernel "
            "| compact group us | compact row us | compact short us | same | dense path / compact tk | floor dense row us "
            "| floor compact row us |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in cands:
            dense = c["mask_us"] + c["dense_topk_us"]
            lines.append(
                f"| {c['rows']} | {f(c['candidate_select_us'])} | {f(c['mask_us'])} | {f(c['dense_topk_us'])} | "
                f"{f(dense)} | {f(c['candidate_topk_us'])} | {f(c['compact_topk_us'])} | "
                f"{c.get('compact_kernel', 'row' if c.get('compact_row_kernel') else 'group')} | "
                f"{f(c.get('compact_topk_group_kernel_us'))} | {f(c.get('compact_topk_row_kernel_us'))} | "
                f"{f(c.get('compact_topk_short_kernel_us'))} | "
                f"{'yes' if c.get('compact_kernels_same_array', True) else 'NO'} | "
                f"{f(dense / c['compact_topk_us'], 2)} | {f(c['floor_dense_row_us'])} | {f(c['floor_compact_row_us'])} |")
    if path:
        lines += [
            "",
            "## The consumer layer's step: the dense path against the fused launch's work (128k, 2048 blocks of 8, top 512)",
            "",
            "candidate_path_speed, H 64, D 128, one query row per request. Dense path: the dense paged logits "
            "(dsa_sm90), the candidate mask over the row, the top-k of the whole row (as cuda_select dispatches it). "
            "Fused: `sm90_candidate_logits_top_k`, the compact candidate logits and their top-k (one launch where "
            "`launches` says 1, its blocks ranking the rows they complete); `2 kernels`: the same work as the compact "
            "logits kernel and the selection's kernel, with `= 2 kernels` whether the fused launch wrote exactly "
            "their array; each part also timed alone. Bytes ratio: the K cache bytes the dense logits read over those "
            "the compact logits read. Gather: the compact launch's reads alone (the candidate blocks' values and "
            "scales at its pages, plain loads); dense path / gather is the best ratio a launch reading those bytes "
            "could reach. `rows !=`: rows whose sets differ between the paths; `!= values`: of those, rows whose "
            "chosen values differ (must be 0; a tie at the cut may go to other positions).",
            "",
            "| batch | dense logits us | mask us | dense top-k us | dense path us | compact logits us | compact top-k us "
            "| 2 kernels us | fused us | launches | = 2 kernels | dense path / fused | gather us | dense path / gather "
            "| bytes ratio | rows != | != values |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in path:
            lines.append(
                f"| {c['batch']} | {f(c['dense_logits_us'])} | {f(c['mask_us'])} | {f(c['dense_topk_us'])} | "
                f"{f(c['dense_path_us'])} | {f(c['compact_logits_us'])} | {f(c['compact_topk_us'])} | "
                f"{f(c.get('two_kernels_us'))} | {f(c['fused_us'])} | "
                f"{'1' if c.get('fused_one_launch') else '2'} | "
                f"{'yes' if c.get('fused_is_two_kernels_array', True) else 'NO'} | "
                f"{f(c['dense_path_us'] / c['fused_us'], 2)} | {f(c.get('gather_us'))} | "
                f"{f(c['dense_path_us'] / c['gather_us'], 2) if c.get('gather_us') else '-'} | "
                f"{f(c['dense_k_bytes'] / c['compact_k_bytes'], 2)} | "
                f"{c['rows_differing']} | {c['rows_differing_beyond_ties']} |")
    for extra in ours.get("notes", []):
        lines += ["", extra]
    text = "\n".join(lines) + "\n"
    if args.md:
        open(args.md, "w").write(text)
    else:
        print(text)
    if args.json:
        json.dump({"meta": meta, "device": ours.get("device"), "read_bandwidth_gbs": ours.get("read_bandwidth_gbs"),
                   "torch": torch.get("torch"), "decode_top_k": rows,
                   "candidates": ours.get("candidates", []), "candidate_path": path}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
