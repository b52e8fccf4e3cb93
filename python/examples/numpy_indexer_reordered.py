#!/usr/bin/env python3
"""numpy_indexer.py after a change that reorders its head sum (heads last to
first, as a kernel whose warps meet in another order would): the same top-k,
other logits bits. docs/regression.md holds it to numpy_indexer.py's baseline.

    dsa-oracle check --baseline BASE --impl "external:python3 python/examples/numpy_indexer_reordered.py"
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy_indexer  # noqa: E402


def heads_last_to_first(heads):
    return range(heads - 1, -1, -1)  # the change


if __name__ == "__main__":
    sys.exit(numpy_indexer.main(order=heads_last_to_first))
