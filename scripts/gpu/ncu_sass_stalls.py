#!/usr/bin/env python3
"""Where a launch's warps wait, from ncu's SASS page (`ncu --import R --page source --print-source sass --csv`).

Sums the warp-state samples by stall reason, then by execution count: the instructions of one loop execute the same
number of times (a unit loop: units x warps), so a group of equal counts is a loop body and its share of the samples
says how much of the launch it is. Lists the instructions with the most samples last.
    ncu_sass_stalls.py SOURCE.csv[.gz] [TOP]
"""
import collections
import csv
import gzip
import sys


def read_rows(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = list(csv.reader(f))
    # The first row names the kernel, the second the columns.
    header_at = next((i for i, r in enumerate(rows) if "Address" in r and "Source" in r), None)
    if header_at is None:
        sys.exit(f"ncu_sass_stalls: {path} has no SASS page header (Address, Source)")
    return rows[header_at], rows[header_at + 1:]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    header, body = read_rows(sys.argv[1])
    col = {name: i for i, name in enumerate(header)}
    for needed in ("Warp Stall Sampling (All Samples)", "Instructions Executed"):
        if needed not in col:
            sys.exit(f"ncu_sass_stalls: no column '{needed}' (run ncu with --set full or the SourceCounters section)")
    reasons = [n for n in header if n.startswith("stall_") and not n.endswith("(Not Issued)")]
    instructions = []
    for r in body:
        if len(r) < len(header) or not r[col["Warp Stall Sampling (All Samples)"]].isdigit():
            continue
        stalls = {k[len("stall_"):]: int(r[col[k]] or 0) for k in reasons}
        instructions.append((r[col["Address"]], r[col["Source"]].strip(), int(r[col["Warp Stall Sampling (All Samples)"]]),
                             int(r[col["Instructions Executed"]] or 0), stalls))
    samples = sum(i[2] for i in instructions)
    if samples == 0:
        sys.exit("ncu_sass_stalls: no warp-state samples in the page")
    share = lambda n: f"{n / samples:.1%}"
    totals = collections.Counter()
    groups = collections.defaultdict(lambda: [0, 0, collections.Counter()])
    for _, _, n, executed, stalls in instructions:
        totals.update(stalls)
        group = groups[executed]
        group[0] += 1
        group[1] += n
        group[2].update(stalls)
    print(f"instructions {len(instructions)} samples {samples}")
    print("by reason:", ", ".join(f"{k} {share(v)}" for k, v in totals.most_common(12)))
    print("\nexecution count groups with most samples (count: instructions, share of samples, top reasons)")
    for executed, (count, n, stalls) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:10]:
        print(f"{executed:>10}: {count:4d} instr, {share(n):>6}  " +
              ", ".join(f"{k} {share(v)}" for k, v in stalls.most_common(5)))
    print("\ntop instructions")
    for address, source, n, executed, stalls in sorted(instructions, key=lambda i: -i[2])[:top]:
        reasons_here = ", ".join(f"{k} {v}" for k, v in sorted(stalls.items(), key=lambda kv: -kv[1])[:3] if v)
        print(f"{address[-5:]} {share(n):>6} ex {executed:>9}  {source[:60]:60s} {reasons_here}")


if __name__ == "__main__":
    main()
