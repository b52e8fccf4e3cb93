#!/usr/bin/env python3
"""numpy_topk.py with a classic bug, for the fuzzer to catch and shrink.

The row end is off by one: row r reads columns [ks, ke] instead of [ks, ke),
so the column just past the row (garbage, or the next row's data in a packed
buffer) can be chosen, and a row of L <= k columns writes L + 1 indices.

    dsa-oracle fuzz --impl "external:python3 python/examples/numpy_topk_wrong.py" --property topk_agrees
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_topk  # noqa: E402


def window_one_past_the_end(logits, r, start, end):
    return logits[r, start:end + 1]  # the bug: `end + 1`


if __name__ == "__main__":
    sys.exit(numpy_topk.main(window=window_one_past_the_end))
