#!/usr/bin/env python3
"""In-process fuzzing (dsa_oracle.fuzz) against the external-command protocol
(dsa-oracle fuzz --impl external:...), on the same numpy top-k kernel
(python/examples/numpy_topk.py's topk_row), the same property and seed, so
both draw the same cases. Prints a table, then one JSON line.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_fuzz_speed.py --cli build/dsa-oracle
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "python", "examples")
sys.path.insert(0, EXAMPLES)
import numpy as np  # noqa: E402
import numpy_topk  # noqa: E402

import dsa_oracle  # noqa: E402


def kernel(logits, ks, ke, k):
    out = np.full((logits.shape[0], k), -1, dtype=np.int32)
    for r in range(logits.shape[0]):
        out[r] = numpy_topk.topk_row(logits[r, int(ks[r]):int(ke[r])], k)
    return out


def in_process(cases, seed, prop):
    t0 = time.perf_counter()
    result = dsa_oracle.fuzz(kernel, op="topk", cases=cases, seed=seed, properties=[prop])
    seconds = time.perf_counter() - t0
    return result.cases, seconds


def external(cli, cases, seed, prop, python):
    command = f"external:{python} {os.path.join(EXAMPLES, 'numpy_topk.py')}"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.jsonl")
        t0 = time.perf_counter()
        subprocess.run([cli, "fuzz", "--impl", command, "--property", prop, "--cases", str(cases), "--seed",
                        str(seed), "--quiet", "--out", out], check=True, capture_output=True)
        seconds = time.perf_counter() - t0
        records = [json.loads(line) for line in open(out)]
    done = sum(r["cases"] for r in records if r.get("type") == "property")
    return done, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cases", type=int, default=400, help="in-process cases")
    parser.add_argument("--external-cases", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--property", default="topk_agrees")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    n_in, s_in = in_process(args.cases, args.seed, args.property)
    n_ex, s_ex = external(args.cli, args.external_cases, args.seed, args.property, args.python)
    rate_in, rate_ex = n_in / s_in, n_ex / s_ex
    print(f"{'mode':<28} {'cases':>7} {'seconds':>9} {'cases/s':>9}")
    print(f"{'in-process (dsa_oracle.fuzz)':<28} {n_in:>7} {s_in:>9.2f} {rate_in:>9.1f}")
    print(f"{'external command':<28} {n_ex:>7} {s_ex:>9.2f} {rate_ex:>9.1f}")
    print(f"ratio in-process / external: {rate_in / rate_ex:.0f}x")
    print(json.dumps({"property": args.property, "seed": args.seed, "in_process": {"cases": n_in, "seconds": s_in},
                      "external": {"cases": n_ex, "seconds": s_ex}, "ratio": rate_in / rate_ex}))


if __name__ == "__main__":
    main()
