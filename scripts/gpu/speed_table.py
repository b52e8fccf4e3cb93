#!/usr/bin/env python3
"""Merges logits_speed's and deepgemm_bench.py's JSON into the speed table (markdown and JSON).
  speed_table.py OURS.json DEEPGEMM.json --md OUT.md --json OUT.json [--meta KEY=VALUE ...]
DeepGEMM may be missing (its build failed): the table then says so in its columns."""
import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('ours')
    ap.add_argument('deepgemm')
    ap.add_argument('--md', required=True)
    ap.add_argument('--json', required=True)
    ap.add_argument('--meta', action='append', default=[])
    args = ap.parse_args()
    ours = json.load(open(args.ours))
    dg = json.load(open(args.deepgemm)) if os.path.exists(args.deepgemm) else {'shapes': []}
    dg_at = {(s['batch'], s['context'], s['next_n']): s['us_deepgemm'] for s in dg['shapes']}
    read = ours['read_tbps']
    rows = []
    for s in ours['shapes']:
        key = (s['batch'], s['context'], s['next_n'])
        us, acc, kb = s['us_dsa_sm90'], s['us_dsa_sm90_accurate'], s['k_bytes']
        d = dg_at.get(key)
        tbps = kb / (us * 1e-6) / 1e12
        rows.append({'batch': key[0], 'context': key[1], 'next_n': key[2], 'us_dsa_sm90': us,
                     'us_dsa_sm90_accurate': acc, 'us_deepgemm': d, 'speedup_vs_deepgemm': (d / us) if d else None,
                     # the median of the rounds' ratios (logits_speed times the two in turn), else of the medians
                     'accurate_over_ours': s.get('accurate_over_ours', acc / us), 'k_tbps': tbps,
                     'read_fraction': tbps / read, 'deepgemm_k_tbps': (kb / (d * 1e-6) / 1e12) if d else None,
                     'us_schedule': s['us_schedule'], 'mhz': (s.get('mhz_dsa_sm90'), s.get('mhz_dsa_sm90_accurate')),
                     'power_capped': (s.get('power_capped_dsa_sm90'), s.get('power_capped_dsa_sm90_accurate'))})
    meta = dict(kv.split('=', 1) for kv in args.meta)
    meta.update({'gpu': ours['gpu'], 'driver': ours['driver'], 'read_tbps': read, 'iters': ours['iters'],
                 'rounds': ours.get('rounds', 1), 'clock': ours.get('clock', 'not sampled')})
    clocked = any(r['mhz'][0] for r in rows)
    json.dump({'meta': meta, 'rows': rows}, open(args.json, 'w'), indent=1)
    with open(args.md, 'w') as f:
        f.write('| batch x context | next_n | dsa_sm90 us | DeepGEMM us | DeepGEMM / ours | K TB/s (ours) | '
                'of read BW | DeepGEMM K TB/s | accurate us | accurate / ours |' +
                (' SM MHz ours / accurate | power-capped ours / accurate |\n' if clocked else '\n'))
        f.write('|---|---|---|---|---|---|---|---|---|---|' + ('---|---|\n' if clocked else '\n'))
        for r in rows:
            d = r['us_deepgemm']
            f.write(f"| {r['batch']} x {r['context'] // 1024}k | {r['next_n']} | {r['us_dsa_sm90']:.1f} | "
                    f"{d:.1f} | {r['speedup_vs_deepgemm']:.3f} | " if d else
                    f"| {r['batch']} x {r['context'] // 1024}k | {r['next_n']} | {r['us_dsa_sm90']:.1f} | n/a | n/a | ")
            f.write(f"{r['k_tbps']:.2f} | {100 * r['read_fraction']:.0f} % | "
                    f"{(format(r['deepgemm_k_tbps'], '.2f') if d else 'n/a')} | {r['us_dsa_sm90_accurate']:.1f} | "
                    f"{r['accurate_over_ours']:.3f} |")
            if clocked:
                (m0, m1), (c0, c1) = r['mhz'], r['power_capped']
                f.write(f" {m0} / {m1} | {100 * (c0 or 0):.0f} % / {100 * (c1 or 0):.0f} % |")
            f.write('\n')
        f.write(f"\nRead bandwidth (4 GiB reduction, same run): {read:.2f} TB/s. Median of {ours['iters']} "
                "CUDA-graph replays of 8 launches each (CUDA events) after warm-up, the K cache rotated over >= 4x "
                "the L2; DeepGEMM timed the same way (scripts/gpu/deepgemm_bench.py).")
        if meta['rounds'] > 1:
            f.write(f" Ours: the median of {meta['rounds']} rounds, dsa_sm90 and the accurate variant timed in turn; "
                    "accurate / ours is the median of the rounds' ratios.")
        if clocked:
            f.write(" SM MHz: the median of the SM clock sampled (NVML, every 2 ms) while each was timed; "
                    "power-capped: the share of those samples with a power-cap reason active.")
        f.write('\n')
    print(open(args.md).read())


if __name__ == '__main__':
    main()
