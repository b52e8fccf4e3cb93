"""Golden sets (docs/golden-format.md) from Python: read a case, write a
kernel's outputs, judge outputs for one case or a whole set.

    case = dsa_oracle.golden.read_case("data/golden/exact/v32_decode/v32_decode_00_nn1.safetensors", framework="torch")
    out = my_kernel(**case.inputs, **case.params)
    dsa_oracle.golden.write_outputs(f"{out_dir}/{case.file}", {"topk_indices": out})
    report = dsa_oracle.golden.check("data/golden/exact/v32_decode", out_dir)
"""

import json
import os

import numpy as np

from . import _core
from ._arrays import from_host, host_dict, require_torch, torch_fp8
from .oracle import Report

# Metadata keys that are numbers.
_INT_KEYS = ("topk", "next_n", "heads", "head_dim", "page_size", "compress_ratio", "max_model_len",
             "candidate_block_size", "candidate_topk_blocks")
# Metadata keys the reference and the kernels take as parameters.
_PARAM_KEYS = _INT_KEYS + ("fp8", "layout", "padded_lengths")


def _convert(name, array, dtype, framework, device, fp8):
    if framework == "numpy":
        return array
    torch = require_torch()
    if name in ("q", "k") and dtype in ("F8_E4M3", "U8") and fp8:
        return torch_fp8(array, fp8).to(device or "cpu")
    placeholder = torch.empty(0, device=device or "cpu")
    return from_host(array, dtype, placeholder)


class Case:
    """One golden case: `inputs` and `expected` ({name: array}), `dtypes` (schema dtypes), `metadata` (strings),
    `params` (metadata keys parsed: topk, next_n, ... as ints), `op`, `profile`, `path`, `file`."""

    def __init__(self, path, raw, framework="numpy", device=None):
        self.path = os.fspath(path)
        self.file = os.path.basename(self.path)
        self.op = raw["op"]
        self.profile = raw["profile"]
        self.metadata = dict(raw["metadata"])
        fp8 = self.metadata.get("fp8")
        self.dtypes = {name: dtype for name, (_, dtype) in {**raw["inputs"], **raw["expected"]}.items()}
        self.inputs = {n: _convert(n, a, d, framework, device, fp8) for n, (a, d) in raw["inputs"].items()}
        self.expected = {n: _convert(n, a, d, framework, device, fp8) for n, (a, d) in raw["expected"].items()}
        self.params = {}
        for key in _PARAM_KEYS:
            if key in self.metadata:
                self.params[key] = int(self.metadata[key]) if key in _INT_KEYS else self.metadata[key]

    def reference(self, profile=None, outputs=None):
        """The reference's outputs for this case's inputs (under another profile if given)."""
        from . import reference

        return reference.run(self.op, self.inputs, profile=profile or self.profile, outputs=outputs, **self.params)

    def check(self, outputs, tolerance=None, max_listed=10):
        """Judge a kernel's outputs ({name: array}) for this case."""
        return check_case(self.path, outputs, tolerance=tolerance, max_listed=max_listed)

    def poisoned_outputs(self, like=None):
        """Output buffers shaped like the expected outputs, filled with the oracle's poison."""
        from . import poisoned

        out = {}
        for name, value in self.expected.items():
            dtype = {"F32": "float32", "BF16": "bfloat16", "I32": "int32"}[self.dtypes[name]]
            out[name] = poisoned(tuple(value.shape), dtype, like=like)
        return out

    def __repr__(self):
        return f"<Case {self.file}: op {self.op}, profile {self.profile}, inputs {sorted(self.inputs)}, expected {sorted(self.expected)}>"


def read_case(path, framework="numpy", device=None):
    """A golden file, validated as `dsa-oracle check` reads it; framework="torch" gives torch tensors (fp8 where torch has it)."""
    if framework not in ("numpy", "torch"):
        raise ValueError(f"framework: {framework!r}, expected 'numpy' or 'torch'")
    return Case(path, _core.read_case(os.fspath(path)), framework, device)


def manifest(golden_dir):
    with open(os.path.join(golden_dir, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def cases(golden_dir):
    """The case files of a golden set, in the manifest's order."""
    return [os.path.join(golden_dir, c["file"]) for c in manifest(golden_dir)["cases"]]


def _host_outputs(outputs):
    host, _, _ = host_dict(outputs)
    return host


def write_outputs(path, outputs, metadata=None):
    """A kernel's outputs file for `dsa-oracle check` (float32 -> F32, bf16 -> BF16, int32 -> I32), written atomically."""
    _core.write_safetensors(os.fspath(path), _host_outputs(outputs), {k: str(v) for k, v in (metadata or {}).items()})


def check_case(path, outputs, tolerance=None, max_listed=10):
    """A kernel's outputs ({name: array}) for one golden case, judged as `dsa-oracle check` does."""
    return Report(*_core.check_case(os.fspath(path), _host_outputs(outputs), tolerance, max_listed))


class SetReport(Report):
    """`dsa-oracle check` on a set: `ok`, `exit_code` (0 passed, 1 a check failed or nothing was checked, 2 bad input),
    `cases` (file, op, status, error, checked), `not_run`."""

    def __init__(self, json_text, text):
        super().__init__(json_text, text)
        self.cases = self._data.get("cases", [])
        self.exit_code = int(self._data.get("exit_code", 2))
        self.not_run = self._data.get("not_run", 0)

    @property
    def ok(self):
        return self.exit_code == 0 and bool(self.cases)

    passed = ok


def check(golden_dir, outputs_dir=None, *, impl=None, tolerance=None, max_listed=10):
    """`dsa-oracle check` on a set: a kernel's outputs folder, or (impl=NAME, dsa_oracle.implementations())
    an implementation run in process on every case. Golden files are hash-checked against the manifest."""
    if (outputs_dir is None) == (impl is None):
        raise ValueError("check: give outputs_dir or impl, not both and not neither")
    if impl is not None:
        return SetReport(*_core.check_set_impl(os.fspath(golden_dir), impl, tolerance, max_listed))
    return SetReport(*_core.check_set(os.fspath(golden_dir), os.fspath(outputs_dir), tolerance, max_listed))
