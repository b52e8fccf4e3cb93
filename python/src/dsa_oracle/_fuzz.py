"""Fuzzing a Python kernel in-process (docs/python.md, docs/fuzzing.md).

dsa_oracle.fuzz(kernel, op="topk", seconds=60) draws cases with the C++
generators, calls `kernel` in this process for each one, judges it with the
oracle and, on a failure, shrinks it with RapidCheck and raises FuzzFailure
(an AssertionError) holding the shrunk case, the oracle's report and the
one-line replay. The kernel is called with keywords: the tensors and
parameters of its op (below) that its signature names (all of them if it
takes **kwargs), and `out`, the output buffer filled with the oracle's poison.
It returns its output, or None after writing into `out`.
"""

import inspect

import numpy as np

from . import _core
from ._arrays import is_torch, loaded_torch, require_torch, torch_fp8

_SELECTION = ("logits", "ks", "ke")
_DECODE = ("q", "q_scales", "kv_cache", "weights", "seq_lens", "block_table", "decode_lens", "fp8", "layout",
           "page_size", "next_n", "heads", "head_dim", "compress_ratio", "logits_width", "max_model_len",
           "padded_lengths", "profile")

# op -> (the names a kernel may take, its output)
OPS = {
    "topk": (_SELECTION + ("k",), "topk_indices"),
    "candidate_select": (_SELECTION + ("candidate_block_size", "candidate_topk_blocks"), "candidate_blocks"),
    "candidate_topk": (_SELECTION + ("candidate_blocks", "k", "candidate_block_size"), "topk_indices"),
    "decode_logits": (_DECODE, "logits"),
    "prefill_logits": (("q", "k", "k_scales", "weights", "ks", "ke", "fp8", "heads", "head_dim", "profile"), "logits"),
    "compact_candidate_logits": (_DECODE + ("candidate_blocks", "candidate_block_size"), "compact_logits"),
}


class FuzzFailure(AssertionError):
    """A property failed (`failure`: property, case JSON, message, replay, ...), or the campaign checked nothing."""

    def __init__(self, message, failure=None, result=None):
        super().__init__(message)
        self.failure = failure
        self.result = result


class FuzzResult:
    """A passed campaign: per property cases, passed, unsupported, seconds; str() a table."""

    def __init__(self, raw):
        self.properties = raw["properties"]
        self.seconds = raw["seconds"]

    @property
    def cases(self):
        return sum(p["cases"] for p in self.properties)

    @property
    def passed(self):
        return sum(p["passed"] for p in self.properties)

    def __str__(self):
        lines = [f"{'property':<40} {'cases':>7} {'passed':>7} {'unsupp.':>7} {'seconds':>8}"]
        for p in self.properties:
            if not p["applicable"]:
                lines.append(f"{p['property']:<40} {'does not apply':>32}")
                continue
            lines.append(f"{p['property']:<40} {p['cases']:>7} {p['passed']:>7} {p['unsupported']:>7} {p['seconds']:>8.2f}")
        lines.append(f"{self.cases} cases, {self.passed} passed in {self.seconds:.1f} s")
        return "\n".join(lines)


def _accepted(name, fn, op):
    """The keywords `fn` takes for `op` (all it may take when it has **kwargs); a required one it cannot get is an error."""
    names, _ = OPS[op]
    available = set(names) | {"out"}
    sig = inspect.signature(fn)
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return available
    taken = set()
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL,):
            continue
        if p.name in available:
            taken.add(p.name)
        elif p.default is p.empty:
            raise TypeError(f"{name}: parameter '{p.name}' is not an input of op {op} "
                            f"(its inputs: {', '.join(names)}, and out)")
    return taken


class _Dispatcher:
    """What the C++ PythonOps calls for each op: converts, calls the kernel, normalises its output."""

    def __init__(self, kernels, framework, device):
        self.kernels = kernels
        self.framework = framework
        self.device = device
        self.accepted = {op: _accepted(getattr(fn, "__name__", op), fn, op) for op, fn in kernels.items()}

    def _tensor(self, name, array, params):
        if self.framework == "numpy" or not isinstance(array, np.ndarray):
            return array
        if name in ("q", "k") and params.get("fp8"):
            return torch_fp8(array, params["fp8"]).to(self.device)
        return require_torch().from_numpy(array).to(self.device)

    def __call__(self, op, tensors, params, output, out):
        fn = self.kernels.get(op)
        if fn is None:
            raise _core.Unsupported(f"no kernel for op {op}")
        args = {name: self._tensor(name, array, params) for name, array in tensors.items()}
        args.update(params)
        args["out"] = self._tensor(output, out, {})
        accepted = self.accepted[op]
        result = fn(**{name: value for name, value in args.items() if name in accepted})
        return _normalise(output, args["out"] if result is None else result)


def _normalise(output, value):
    """The kernel's output as a C-contiguous numpy array: int32 indices, float32 or bf16 bits for logits."""
    if is_torch(value):
        torch = loaded_torch()
        value = value.detach().cpu()
        if value.dtype == torch.bfloat16:
            value = value.view(torch.int16).numpy().view(np.uint16)
        else:
            value = value.numpy()
    value = np.ascontiguousarray(value)
    if output in ("topk_indices", "candidate_blocks") and value.dtype.kind in "iu" and value.dtype != np.int32:
        lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        if value.size and (value.min() < lo or value.max() > hi):
            raise ValueError(f"{output}: values outside int32 ({value.min()} .. {value.max()})")
        value = value.astype(np.int32)
    return value


def _kernels(kernel, op):
    kernels = kernel if isinstance(kernel, dict) else {op: kernel}
    for name, fn in kernels.items():
        if name not in OPS:
            raise ValueError(f"op: {name!r} is not an op a Python kernel can take ({', '.join(OPS)})")
        if not callable(fn):
            raise TypeError(f"the kernel for {name} is not callable")
    return kernels


def _framework(framework, device):
    if framework is None:
        framework = "torch" if device is not None else "numpy"
    if framework not in ("numpy", "torch"):
        raise ValueError(f"framework: {framework!r}, expected 'numpy' or 'torch'")
    if framework == "torch":
        require_torch()
    return framework, device or "cpu"


def _name(kernel, op):
    if isinstance(kernel, dict):
        return "{" + ", ".join(f"{k!r}: {getattr(v, '__name__', 'kernel')}" for k, v in kernel.items()) + "}"
    return getattr(kernel, "__name__", "kernel")


def replay_line(kernel, op, failure, framework, device):
    extra = "" if framework == "numpy" else f", framework={framework!r}, device={device!r}"
    op_arg = "" if isinstance(kernel, dict) else f", op={op!r}"
    return (f"dsa_oracle.replay({_name(kernel, op)}{op_arg}, property={failure['property']!r}, "
            f"case={failure['case']!r}{extra})")


def fuzz(kernel, op="topk", *, seconds=None, cases=None, seed=1, properties=None, framework=None, device=None,
         progress=False, shrink_seconds=30.0, shrink_steps=5000):
    """Fuzz `kernel` (or {op: kernel}) in-process; raises FuzzFailure on the first shrunk failure or when nothing was checked."""
    kernels = _kernels(kernel, op)
    framework, device = _framework(framework, device)
    if seconds is None and cases is None:
        seconds = 60.0
    dispatch = _Dispatcher(kernels, framework, device)
    raw = _core.fuzz_run(dispatch, list(properties or []), int(seed), float(seconds or 0), int(cases or 0), 10,
                         float(shrink_seconds), int(shrink_steps), bool(progress))
    result = FuzzResult(raw)
    for p in raw["properties"]:
        f = p["failure"]
        if f is None:
            continue
        f["replay"] = replay_line(kernel, op, f, framework, device)
        again = "" if f["reproduced"] else "\n  (WARNING: the shrunk case did not fail again on replay)"
        message = (f"{f['property']} failed after {f['cases']} cases ({f['seconds']:.1f} s); shrunk in "
                   f"{f['shrink_steps']} steps ({f['shrink_seconds']:.1f} s) to: {f['summary']}{again}\n"
                   f"  case:\n{_indent(f['describe'], 4)}\n  oracle:\n{_indent(f['message'], 4)}\n"
                   f"  replay: {f['replay']}")
        raise FuzzFailure(message, f, result)
    if result.passed == 0:
        raise FuzzFailure(f"the campaign checked nothing (no case passed: every property either does not apply to "
                          f"op(s) {', '.join(kernels)} or every case was unsupported)\n{result}", None, result)
    return result


def replay(kernel, op="topk", *, property, case, framework=None, device=None):
    """Runs one printed case of one property once; raises FuzzFailure while it fails."""
    kernels = _kernels(kernel, op)
    framework, device = _framework(framework, device)
    verdict, message, described = _core.fuzz_replay(_Dispatcher(kernels, framework, device), property, case)
    if verdict == "fail":
        raise FuzzFailure(f"{property} fails on the replayed case:\n{_indent(described, 4)}\n  oracle:\n{_indent(message, 4)}")
    if verdict == "unsupported":
        raise FuzzFailure(f"{property}: the kernel answered Unsupported on the replayed case (nothing checked)")
    return verdict


def properties():
    """The fuzzer's properties: name, description, opt_in (run only when named)."""
    return _core.fuzz_properties()


def _indent(text, n):
    pad = " " * n
    return "\n".join(pad + line for line in str(text).rstrip("\n").splitlines())
