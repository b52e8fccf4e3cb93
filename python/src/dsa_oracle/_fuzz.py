"""Fuzzing a Python kernel in-process (docs/python.md, docs/fuzzing.md).

dsa_oracle.fuzz(kernel, op="topk", seconds=60) draws cases with the C++
generators, calls `kernel` (or, given {op: kernel}, the kernel of each op) in
this process for each one, judges it with the oracle and, on a failure,
shrinks it with RapidCheck and raises FuzzFailure (an AssertionError) holding
the shrunk case, the oracle's report and the one-line replay. Every op of
IndexerOps takes a kernel (OPS below). A kernel is called with keywords: the
tensors and parameters of its op that its signature names (all of them if it
takes **kwargs), and `out`, the output buffer(s) filled with the oracle's
poison. It returns its output(s), or None after writing into `out`.
With relocate_pages=True every K cache reaches the kernel with its pages past
2 GiB of a larger cache (dsa_oracle.testing.relocate_pages), where a page
offset computed in 32 bits wraps.
"""

import inspect

import numpy as np

from . import _core
from ._arrays import is_torch, loaded_torch, require_torch, torch_fp8

_SELECTION = ("logits", "ks", "ke")
_DECODE = ("q", "q_scales", "kv_cache", "weights", "seq_lens", "block_table", "decode_lens", "fp8", "layout",
           "page_size", "next_n", "heads", "head_dim", "compress_ratio", "logits_width", "max_model_len",
           "padded_lengths", "profile")
_PREFILL = ("q", "k", "k_scales", "weights", "ks", "ke", "fp8", "heads", "head_dim", "profile")
_CANDIDATES = ("candidate_blocks", "candidate_block_size")
_SPARSE = ("sparse_block_ids", "sparse_end", "sparse_block_kv")

# Every op of IndexerOps (reference/include/dsa/indexer_ops.hpp): op -> (the
# names a kernel may take, its outputs). One output arrives as `out`, several
# as `out` = {name: buffer}; skip_decode_fill has none and answers a bool.
OPS = {
    "decode_logits": (_DECODE, ("logits",)),
    "prefill_logits": (_PREFILL, ("logits",)),
    "topk": (_SELECTION + ("k",), ("topk_indices",)),
    "candidate_select": (_SELECTION + ("candidate_block_size", "candidate_topk_blocks"), ("candidate_blocks",)),
    # In place, as vLLM's apply_candidate_mask: `out` is the `logits` tensor itself.
    "candidate_mask": (_SELECTION + _CANDIDATES + ("variant",), ("masked_logits",)),
    "candidate_topk": (_SELECTION + _CANDIDATES + ("k",), ("topk_indices",)),
    "compact_candidate_logits": (_DECODE + _CANDIDATES, ("compact_logits",)),
    "prefill_compact_candidate_logits": (_PREFILL + _CANDIDATES, ("compact_logits",)),
    "candidate_logits_top_k": (_DECODE + _CANDIDATES + ("k",), ("compact_logits", "topk_indices")),
    "pack_rows": (("rows", "decode_lens", "next_n", "pad"), ("packed",)),
    "unpack_topk": (("topk_indices", "decode_lens", "next_n", "k"), ("topk_indices",)),
    "skip_decode_fill": (("has_prefill_rows", "num_decode_tokens", "num_tokens", "requires_padding"), ()),
    "expand_candidate_blocks": (("candidate_blocks", "ks", "ke", "candidate_block_size", "num_sparse",
                                 "sparse_block_kv"), ("sparse_block_ids", "sparse_end")),
    "sparse_logits": (_DECODE + _SPARSE, ("sparse_logits",)),
    "sparse_topk": (("sparse_logits", "ks", "k") + _SPARSE, ("topk_indices",)),
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
    names, outputs = OPS[op]
    available = set(names) | ({"out"} if outputs else set())
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
                            f"(its inputs: {', '.join(sorted(available))})")
    return taken


class _Dispatcher:
    """What the C++ PythonOps calls for each op: converts, calls the kernel, normalises its outputs."""

    def __init__(self, kernels, framework, device, relocate=False):
        self.kernels = kernels
        self.framework = framework
        self.device = device
        self.relocate = relocate
        self.accepted = {op: _accepted(getattr(fn, "__name__", op), fn, op) for op, fn in kernels.items()}

    def _tensor(self, name, array, params):
        if self.framework == "numpy" or not isinstance(array, np.ndarray):
            return array
        if name in ("q", "k") and params.get("fp8"):
            return torch_fp8(array, params["fp8"]).to(self.device)
        torch = require_torch()
        if array.dtype == np.uint16:  # bf16 bits: the sparse logits
            return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16).to(self.device)
        return torch.from_numpy(array).to(self.device)

    def __call__(self, op, tensors, params, outputs):
        fn = self.kernels.get(op)
        if fn is None:
            raise _core.Unsupported(f"no kernel for op {op}")
        converted = {}  # by the array's id: a buffer that is also an input stays one tensor (candidate_mask)

        def convert(name, array):
            if id(array) not in converted:
                converted[id(array)] = self._tensor(name, array, params)
            return converted[id(array)]

        args = {name: convert(name, array) for name, array in tensors.items()}
        if self.relocate and args.get("kv_cache") is not None and args.get("block_table") is not None:
            from .testing import relocate_pages

            args["kv_cache"], args["block_table"] = relocate_pages(args["kv_cache"], args["block_table"])
        args.update(params)
        names = OPS[op][1]
        buffers = {name: convert(name, outputs[name]) for name in names}
        if len(names) == 1:
            args["out"] = buffers[names[0]]
        elif names:
            args["out"] = buffers
        accepted = self.accepted[op]
        result = fn(**{name: value for name, value in args.items() if name in accepted})
        if not names:
            return _answer(op, result)
        return {name: _normalise(name, value) for name, value in _outputs(op, names, buffers, result).items()}


def _outputs(op, names, buffers, result):
    """{name: value} from what the kernel returned: its output, a tuple or dict of them, or None (`out` written)."""
    if result is None:
        return buffers
    if isinstance(result, dict):
        missing = [n for n in names if n not in result]
        if missing:
            raise TypeError(f"{op}: the kernel's outputs lack {', '.join(missing)} (it returned {', '.join(result)})")
        return {n: result[n] for n in names}
    if len(names) == 1:
        return {names[0]: result}
    if isinstance(result, (tuple, list)) and len(result) == len(names):
        return dict(zip(names, result))
    raise TypeError(f"{op}: the kernel returned {type(result).__name__}, expected ({', '.join(names)}), "
                    f"a dict of them, or None after writing into out")


def _answer(op, result):
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    if is_torch(result) and result.dtype == loaded_torch().bool and result.numel() == 1:
        return bool(result.item())
    raise TypeError(f"{op}: the kernel answered {result!r}, expected a bool")


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
    if output in _INDEX_OUTPUTS and value.dtype.kind in "iu" and value.dtype != np.int32:
        lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
        if value.size and (value.min() < lo or value.max() > hi):
            raise TypeError(f"{output}: values outside int32 ({value.min()} .. {value.max()})")
        value = value.astype(np.int32)
    return value


_INDEX_OUTPUTS = ("topk_indices", "candidate_blocks", "sparse_block_ids", "sparse_end")


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


def replay_line(kernel, op, failure, framework, device, relocate=False):
    extra = "" if framework == "numpy" else f", framework={framework!r}, device={device!r}"
    if relocate:
        extra += ", relocate_pages=True"
    op_arg = "" if isinstance(kernel, dict) else f", op={op!r}"
    if failure["replay_attempts"] != 1:  # run-dependent: the line gets as many tries as the campaign gave it
        extra += f", attempts={_core.fuzz_reproduce_attempts}"
    return (f"dsa_oracle.replay({_name(kernel, op)}{op_arg}, property={failure['property']!r}, "
            f"case={failure['case']!r}{extra})")


def fuzz(kernel, op="topk", *, seconds=None, cases=None, seed=1, properties=None, framework=None, device=None,
         progress=False, shrink_seconds=30.0, shrink_steps=5000, relocate_pages=False):
    """Fuzz `kernel` (or {op: kernel}) in-process; raises FuzzFailure on the first shrunk failure or when nothing was checked.

    relocate_pages: hand every K cache to the kernel with its pages past 2 GiB of a larger cache (a kernel that
    reads only the pages its block table names pays nothing for the rest; one that reads the whole cache reads 2 GiB).
    """
    kernels = _kernels(kernel, op)
    framework, device = _framework(framework, device)
    if seconds is None and cases is None:
        seconds = 60.0
    dispatch = _Dispatcher(kernels, framework, device, bool(relocate_pages))
    raw = _core.fuzz_run(dispatch, list(properties or []), int(seed), float(seconds or 0), int(cases or 0), 10,
                         float(shrink_seconds), int(shrink_steps), bool(progress))
    result = FuzzResult(raw)
    for p in raw["properties"]:
        f = p["failure"]
        if f is None:
            continue
        f["replay"] = replay_line(kernel, op, f, framework, device, bool(relocate_pages))
        again = f"\n  ({f['replay_note']})" if f["replay_note"] else ""
        message = (f"{f['property']} failed after {f['cases']} cases ({f['seconds']:.1f} s); shrunk in "
                   f"{f['shrink_steps']} steps ({f['shrink_seconds']:.1f} s) to: {f['summary']}{again}\n"
                   f"  case:\n{_indent(f['describe'], 4)}\n  oracle:\n{_indent(f['message'], 4)}\n"
                   f"  replay: {f['replay']}")
        raise FuzzFailure(message, f, result)
    if result.passed == 0:
        raise FuzzFailure(f"the campaign checked nothing (no case passed: every property either does not apply to "
                          f"op(s) {', '.join(kernels)} or every case was unsupported)\n{result}", None, result)
    return result


def replay(kernel, op="topk", *, property, case, framework=None, device=None, relocate_pages=False, attempts=1):
    """Runs one printed case of one property, up to `attempts` times until it fails (a run-dependent failure
    passes some); raises FuzzFailure when it fails."""
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts must be a whole number of at least 1, got {attempts!r}")
    kernels = _kernels(kernel, op)
    framework, device = _framework(framework, device)
    dispatch = _Dispatcher(kernels, framework, device, bool(relocate_pages))
    verdict, message, described, failed_on = _core.fuzz_replay(dispatch, property, case, attempts)
    if verdict == "fail":
        where = f" (attempt {failed_on} of {attempts})" if attempts > 1 else ""
        raise FuzzFailure(f"{property} fails on the replayed case{where}:\n{_indent(described, 4)}\n"
                          f"  oracle:\n{_indent(message, 4)}")
    if verdict == "unsupported":
        raise FuzzFailure(f"{property}: the kernel answered Unsupported on the replayed case (nothing checked)")
    return verdict


def ops():
    """The ops a Python kernel can take (every op of IndexerOps): {op: (its inputs and parameters, its outputs)}."""
    return dict(OPS)


def properties():
    """The fuzzer's properties: name, description, opt_in (run only when named)."""
    return _core.fuzz_properties()


def _indent(text, n):
    pad = " " * n
    return "\n".join(pad + line for line in str(text).rstrip("\n").splitlines())
