"""numpy arrays and torch tensors in and out of the C++ part.

In: a numpy array goes as it is; a torch tensor becomes a numpy view of its
memory (CPU tensors in place, CUDA tensors copied to the host first), fp8 and
bf16 tensors as views of their bits (uint8 codes, uint16 bits) tagged with the
schema dtype. The C++ side reads contiguous memory in place and copies only
what is not contiguous.

Out: numpy arrays, or torch tensors on the device of the first torch input.
"""

import sys

import numpy as np


def loaded_torch():
    """torch if this process imported it (a caller with torch tensors did), else None: numpy users never pay its import."""
    return sys.modules.get("torch")


def require_torch():
    try:
        import torch
    except ImportError:
        raise ImportError("framework='torch' needs torch (Debian: apt-get install python3-torch)") from None
    return torch


def _torch_fp8(torch):
    """torch's fp8 dtypes: {dtype: (schema dtype, fp8 format)}. torch 1.13 (Debian) has none."""
    out = {}
    for name, schema, fmt in (("float8_e4m3fn", "F8_E4M3", "e4m3fn"), ("float8_e4m3fnuz", "U8", "e4m3fnuz")):
        dtype = getattr(torch, name, None)
        if dtype is not None:
            out[dtype] = (schema, fmt)
    return out


def is_torch(value):
    torch = loaded_torch()
    return torch is not None and isinstance(value, torch.Tensor)


def to_host(name, value):
    """(numpy array, schema dtype or None, fp8 format or None) for an array argument."""
    if is_torch(value):
        torch = loaded_torch()
        fp8_dtypes = _torch_fp8(torch)
        t = value.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype in fp8_dtypes:
            schema, fp8 = fp8_dtypes[t.dtype]
            return t.view(torch.uint8).numpy(), schema, fp8
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16), "BF16", None
        try:
            return t.numpy(), None, None
        except TypeError as e:
            raise _invalid(name, f"torch tensor of dtype {t.dtype}: {e}") from None
    if isinstance(value, np.ndarray):
        return value, None, None
    raise _invalid(name, f"expected a numpy array or a torch tensor, got {type(value).__name__}")


def _invalid(name, problem):
    from . import _core

    error = _core.InvalidInput(f"{name}: {problem}")
    error.argument = name
    return error


def host_dict(tensors):
    """{name: (array, dtype)} for the C++ part, the first torch input (or None), and the fp8 format a tensor's dtype says."""
    host, like, fp8 = {}, None, None
    for name, value in tensors.items():
        if value is None:
            continue
        array, dtype, fmt = to_host(name, value)
        if like is None and is_torch(value):
            like = value
        if fmt is not None:
            fp8 = fmt
        host[name] = (array, dtype)
    return host, like, fp8


def from_host(array, dtype, like=None):
    """The C++ part's array as numpy, or as a torch tensor on `like`'s device."""
    if like is None:
        return array
    torch = require_torch()
    if dtype == "BF16":
        t = torch.from_numpy(np.ascontiguousarray(array).view(np.int16)).view(torch.bfloat16)
    elif dtype == "F8_E4M3" and getattr(torch, "float8_e4m3fn", None) is not None:
        t = torch.from_numpy(array).view(torch.float8_e4m3fn)
    else:
        t = torch.from_numpy(array)
    return t.to(like.device)


def torch_fp8(array, fp8):
    """A uint8 code tensor as torch's fp8 dtype for the format where torch has it, else the uint8 tensor."""
    torch = require_torch()
    t = torch.from_numpy(array)
    name = {"e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz"}.get(fp8)
    dtype = getattr(torch, name, None) if name else None
    return t.view(dtype) if dtype is not None else t


def int_array(name, value, dtype=np.int64):
    """A 1-D integer argument (row lengths, ks, ke) as a numpy array."""
    if isinstance(value, (list, tuple)):
        value = np.asarray(value, dtype=dtype)
    array, _, _ = to_host(name, value)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise _invalid(name, f"{array.dtype} array of shape {array.shape}, expected a 1-D integer array (one entry per row)")
    return array.astype(dtype, copy=False)
