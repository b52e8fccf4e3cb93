"""The oracle's comparators (docs/oracle.md): each returns a Report.

Rows are judged over their window: `lengths` (decode rows, [0, L_r)), `ks`/`ke`
(prefill rows, [ks, ke), top-k indices relative to ks), `windows` (a list of
(begin, end)), or, with none of them, the whole row. Every comparator first
checks that no poison (docs/oracle.md 5) survives where the kernel had to write.
"""

import json

import numpy as np

from . import _core
from ._arrays import _invalid, int_array, to_host

REPORT_SCHEMA = "dsa-oracle/report/1"


class Check:
    """One check of a report: label, check ("logits", "topk", "candidate_blocks", "determinism", "written"), passed, summary, details."""

    def __init__(self, entry):
        self.label = entry.get("label", "")
        self.check = entry.get("check", "")
        self.passed = bool(entry.get("passed", False))
        self.summary = entry.get("summary", "")
        self.details = entry.get("details", {})

    def __repr__(self):
        return f"<Check {self.check} {'PASS' if self.passed else 'FAIL'}: {self.summary}>"


class Report:
    """The verdict of one or more checks (schema dsa-oracle/report/1).

    `ok` (also truth value), `checks`, `failed`, `checks_total`, `checks_failed`;
    `report["topk"]` is the first check of that kind; `details`, `counts` and
    `first_mismatches` / `failed_rows` are those of the main (last) failing or
    last check; str() is the readable table; to_json() the JSON text.
    """

    def __init__(self, json_text, text):
        self._data = json.loads(json_text)
        self._text = text
        self.checks = [Check(e) for e in self._data.get("checks", [])]

    @property
    def ok(self):
        return bool(self._data.get("passed", False))

    passed = ok

    def __bool__(self):
        return self.ok

    @property
    def failed(self):
        return [c for c in self.checks if not c.passed]

    @property
    def checks_total(self):
        return len(self.checks)

    @property
    def checks_failed(self):
        return len(self.failed)

    def __getitem__(self, check):
        for c in self.checks:
            if c.check == check:
                return c
        raise KeyError(f"no {check!r} check in this report (checks: {[c.check for c in self.checks]})")

    @property
    def main(self):
        """The check a person looks at first: the first failed one, else the last."""
        if self.failed:
            return self.failed[0]
        return self.checks[-1] if self.checks else None

    @property
    def details(self):
        return self.main.details if self.main else {}

    @property
    def counts(self):
        """The main check's integer counts (mismatches, missing, extra, survivors, ...)."""
        return {k: v for k, v in self.details.items() if isinstance(v, int) and not isinstance(v, bool)}

    @property
    def first_mismatches(self):
        for c in self.checks:
            if c.check == "logits":
                return c.details.get("first_mismatches", [])
        return []

    @property
    def failed_rows(self):
        for c in self.checks:
            if c.check in ("topk", "candidate_blocks"):
                return c.details.get("failed_rows", [])
        return []

    def to_dict(self):
        return json.loads(json.dumps(self._data))

    def to_json(self, indent=None):
        return json.dumps(self._data, indent=indent, sort_keys=True)

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"<Report {'PASS' if self.ok else 'FAIL'}: {self.checks_total} checks, {self.checks_failed} failed>"


def _values(name, value):
    array, dtype, _ = to_host(name, value)
    return array, dtype or ""


def row_windows(rows, width, lengths=None, ks=None, ke=None, windows=None):
    """(begin, end) int64 arrays of each row's window."""
    given = [x is not None for x in (lengths, windows)] + [ks is not None or ke is not None]
    if sum(given) > 1:
        raise ValueError("give one of lengths, ks/ke or windows")
    if lengths is not None:
        end = int_array("lengths", lengths)
        begin = np.zeros(len(end), np.int64)
    elif windows is not None:
        w = np.asarray(windows, dtype=np.int64).reshape(-1, 2)
        begin, end = np.ascontiguousarray(w[:, 0]), np.ascontiguousarray(w[:, 1])
    elif ks is not None or ke is not None:
        begin = np.zeros(rows, np.int64) if ks is None else int_array("ks", ks)
        end = np.full(rows, width, np.int64) if ke is None else int_array("ke", ke)
    else:
        begin, end = np.zeros(rows, np.int64), np.full(rows, width, np.int64)
    if len(begin) != rows or len(end) != rows:
        raise _invalid("lengths" if lengths is not None else "ke",
                       f"{len(end)} windows for {rows} rows (one per row of the output)")
    return begin, end


def _shape2(name, array):
    if array.ndim != 2:
        raise _invalid(name, f"{array.dtype} array of shape {array.shape}, expected (rows, columns)")
    return array.shape


def check_logits(actual, expected, *, lengths=None, ks=None, ke=None, windows=None, atol=None, rtol=0.0, ulps=0,
                 clean=False, bf16=None, max_listed=10, label="logits"):
    """Bitwise identity over each row's window (any NaN equals any NaN), or within atol + rtol*|e| or `ulps` fp32 ulps."""
    a, a_dtype = _values("actual", actual)
    e, e_dtype = _values("expected", expected)
    rows, width = _shape2("expected", e)
    begin, end = row_windows(rows, width, lengths, ks, ke, windows)
    if bf16 is None:
        bf16 = "BF16" in (a_dtype, e_dtype) or e.dtype == np.uint16
    return Report(*_core.check_logits(a, e, begin, end, a_dtype, e_dtype, clean, atol, float(rtol), int(ulps),
                                      bool(bf16), max_listed, label))


def check_topk(indices, logits, *, lengths=None, ks=None, ke=None, windows=None, eps=0.0, max_listed=10,
               label="topk_indices"):
    """The top-k rule (SPEC 9) on the logits the top-k read: any order, any tie-break at the cut, -1 after k' = min(k, n)."""
    v, v_dtype = _values("logits", logits)
    rows, width = _shape2("logits", v)
    begin, end = row_windows(rows, width, lengths, ks, ke, windows)
    i, _, _ = to_host("indices", indices)
    return Report(*_core.check_topk(i, v, begin, end, v_dtype, float(eps), max_listed, label))


def check_candidate_blocks(candidate_blocks, logits, candidate_block_size, *, row_ends=None, ks=None, ke=None,
                           windows=None, eps=0.0, max_listed=10, label="candidate_blocks"):
    """The selection rule on the oracle's own block scores (SPEC 7) over each row's [0, E_r) (`row_ends`) or window."""
    v, v_dtype = _values("logits", logits)
    rows, width = _shape2("logits", v)
    begin, end = row_windows(rows, width, row_ends, ks, ke, windows)
    b, _, _ = to_host("candidate_blocks", candidate_blocks)
    return Report(*_core.check_candidate_blocks(b, v, int(candidate_block_size), begin, end, v_dtype, float(eps),
                                                max_listed, label))


def check_determinism(first, second, *, max_listed=10, label="determinism"):
    """Two runs chose the same multiset per row (order free): a tie-break that changes between runs fails."""
    f, _, _ = to_host("first", first)
    s, _, _ = to_host("second", second)
    return Report(*_core.check_determinism(f, s, max_listed, label))


def candidate_block_scores(logits, candidate_block_size, *, row_ends=None, ks=None, ke=None, windows=None):
    """SPEC 7's block scores, computed by the oracle: max per block (NaN propagates), newest block +inf, past the row -inf."""
    v, v_dtype = _values("logits", logits)
    rows, width = _shape2("logits", v)
    begin, end = row_windows(rows, width, row_ends, ks, ke, windows)
    return _core.candidate_block_scores(v, int(candidate_block_size), begin, end, v_dtype)
