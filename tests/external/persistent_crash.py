#!/usr/bin/env python3
"""A persistent kernel (tests/fuzz_external_robustness_test.cpp) that answers
its first request as "unsupported", then dies in the middle of the second."""
import os
import sys

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
served = 0
while True:
    header = stdin.read(8)
    if len(header) < 8:
        sys.exit(0)
    stdin.read(int.from_bytes(header, "little"))
    served += 1
    if served >= 2:
        print("persistent_crash.py: giving up on request", served, file=sys.stderr, flush=True)
        os.kill(os.getpid(), 9)
    # An answer of no tensors whose metadata says "unsupported": {"__metadata__":{"status":"unsupported"}}
    text = b'{"__metadata__":{"status":"unsupported"}}'
    text += b" " * ((8 - len(text) % 8) % 8)
    blob = len(text).to_bytes(8, "little") + text
    stdout.write(len(blob).to_bytes(8, "little") + blob)
    stdout.flush()
