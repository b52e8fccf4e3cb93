"""Read and write dsa-oracle golden files (safetensors) with numpy only.

The container is described in docs/golden-format.md. numpy has no fp8 or
bf16 type, so those tensors come back as their raw bits:

    F8_E4M3 -> uint8 codes (decode with e4m3fn_to_float32)
    BF16    -> uint16 bit patterns (decode with bf16_to_float32)

Example (in a PyTorch test, where the `safetensors` package is available,
`safetensors.torch.load_file(path)` reads the same files as torch tensors):

    from dsa_oracle_io import read_safetensors, e4m3fn_to_float32
    tensors, meta = read_safetensors("golden/v32_decode_0000.safetensors")
    q = e4m3fn_to_float32(tensors["q"])        # float32 [B, next_n, H, D]
    logits = tensors["logits"]                 # float32 [B * next_n, W]

The reader rejects every malformed file with SafetensorsError, as the C++
reader does: truncated files, oversized headers, offsets reversed, overlapping,
with gaps or beyond the data, unknown dtypes, shapes that disagree with the
byte count, non-string metadata, duplicate names.
"""

import json
import os
import struct
import tempfile

import numpy as np

MAX_HEADER_BYTES = 100_000_000

# safetensors dtype name -> little-endian numpy dtype
DTYPES = {
    "F8_E4M3": np.dtype("u1"),
    "U8": np.dtype("u1"),
    "BF16": np.dtype("<u2"),
    "F32": np.dtype("<f4"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
    "F64": np.dtype("<f8"),
}

# numpy dtype -> safetensors name, for tensors written without an explicit dtype
_DEFAULT_NAMES = {
    np.dtype("u1"): "U8",
    np.dtype("<f4"): "F32",
    np.dtype("<i4"): "I32",
    np.dtype("<i8"): "I64",
    np.dtype("<f8"): "F64",
}


class SafetensorsError(ValueError):
    """A file that is not a well-formed golden safetensors file."""


def _reject_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise SafetensorsError(f"duplicate key '{key}' in the header")
        obj[key] = value
    return obj


def _non_negative_int(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SafetensorsError(f"{what} is not a non-negative integer: {value!r}")
    return value


def parse_safetensors(blob, origin="<bytes>"):
    """Parses a file image (bytes). Returns (tensors: dict name -> ndarray, metadata: dict)."""
    try:
        return _parse(memoryview(blob))
    except SafetensorsError as e:
        raise SafetensorsError(f"{origin}: {e}") from None


def _parse(blob):
    if len(blob) < 8:
        raise SafetensorsError(f"truncated: {len(blob)} bytes, the header length alone takes 8")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > MAX_HEADER_BYTES:
        raise SafetensorsError(f"header length {header_len} exceeds the limit of {MAX_HEADER_BYTES} bytes")
    if header_len > len(blob) - 8:
        raise SafetensorsError(f"truncated: header length {header_len} but only {len(blob) - 8} bytes follow it")
    try:
        header = json.loads(bytes(blob[8 : 8 + header_len]).decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorsError(f"header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError("header is not a JSON object")
    data = blob[8 + header_len :]

    metadata = {}
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            if not isinstance(info, dict):
                raise SafetensorsError("__metadata__ is not an object")
            for key, value in info.items():
                if not isinstance(value, str):
                    raise SafetensorsError(f"metadata '{key}' is not a string: {value!r}")
                metadata[key] = value
            continue
        where = f"tensor '{name}'"
        if not isinstance(info, dict):
            raise SafetensorsError(f"{where} is not an object")
        for key in ("dtype", "shape", "data_offsets"):
            if key not in info:
                raise SafetensorsError(f'{where} has no "{key}"')
        dtype = info["dtype"]
        if dtype not in DTYPES:
            raise SafetensorsError(f"{where}: unsupported dtype '{dtype}' (supported: {', '.join(DTYPES)})")
        if not isinstance(info["shape"], list):
            raise SafetensorsError(f"{where} shape is not an array")
        shape = tuple(_non_negative_int(x, f"{where} shape extent") for x in info["shape"])
        offsets = info["data_offsets"]
        if not isinstance(offsets, list) or len(offsets) != 2:
            raise SafetensorsError(f"{where} data_offsets is not a pair [begin, end]: {offsets!r}")
        begin = _non_negative_int(offsets[0], f"{where} data_offsets begin")
        end = _non_negative_int(offsets[1], f"{where} data_offsets end")
        if end < begin:
            raise SafetensorsError(f"{where} data_offsets [{begin}, {end}) are reversed")
        count = 1
        for x in shape:
            count *= x
        if count * DTYPES[dtype].itemsize != end - begin:
            raise SafetensorsError(f"{where} shape {list(shape)} of {dtype} disagrees with its {end - begin} data bytes")
        entries.append((begin, end, name, dtype, shape))

    entries.sort(key=lambda e: (e[0], e[1]))
    covered = 0
    for begin, end, name, _, _ in entries:
        if end > len(data):
            raise SafetensorsError(
                f"tensor '{name}' data_offsets [{begin}, {end}) run past the {len(data)} data bytes (file truncated?)")
        if begin < covered:
            raise SafetensorsError(f"tensor '{name}' data_offsets [{begin}, {end}) overlap another tensor")
        if begin > covered:
            raise SafetensorsError(f"gap of {begin - covered} bytes before tensor '{name}' at data offset {covered}")
        covered = end
    if covered != len(data):
        raise SafetensorsError(f"{len(data) - covered} data bytes after the last tensor (at offset {covered})")

    tensors = {}
    for begin, end, name, dtype, shape in entries:
        array = np.frombuffer(data[begin:end], dtype=DTYPES[dtype]).reshape(shape).copy()
        tensors[name] = array
    return tensors, metadata


def read_safetensors(path):
    """Reads a file. Returns (tensors, metadata); raises SafetensorsError naming the file."""
    with open(path, "rb") as f:
        blob = f.read()
    return parse_safetensors(blob, origin=str(path))


def serialize_safetensors(tensors, metadata=None, dtypes=None):
    """The file image of `tensors` (name -> array). `dtypes` maps names to
    safetensors dtype names where numpy cannot tell (F8_E4M3 for uint8 codes,
    BF16 for uint16 bits). Layout as the C++ writer: metadata first, tensors in
    name order, header padded with spaces to a multiple of 8."""
    dtypes = dtypes or {}
    header = {}
    if metadata:
        for key, value in metadata.items():
            if not isinstance(value, str):
                raise SafetensorsError(f"metadata '{key}' is not a string: {value!r}")
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata)}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        if name == "__metadata__":
            raise SafetensorsError("'__metadata__' is reserved for the metadata map")
        array = np.asarray(tensors[name])  # tobytes() is C order; ascontiguousarray would make scalars 1-d
        dtype = dtypes.get(name) or _DEFAULT_NAMES.get(array.dtype.newbyteorder("<"))
        if dtype is None or dtype not in DTYPES:
            raise SafetensorsError(f"tensor '{name}': no safetensors dtype for numpy {array.dtype} (give dtypes=)")
        if array.dtype.newbyteorder("<") != DTYPES[dtype]:
            raise SafetensorsError(f"tensor '{name}': {dtype} is stored from numpy {DTYPES[dtype]}, got {array.dtype}")
        raw = array.astype(DTYPES[dtype], copy=False).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def write_safetensors(path, tensors, metadata=None, dtypes=None):
    """Writes to a temporary file in the same folder, then renames it into place."""
    blob = serialize_safetensors(tensors, metadata, dtypes)
    folder = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _minifloat_table(bias, nan_codes):
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent = (codes >> 3) & 0xF
    mantissa = (codes & 7).astype(np.float64)
    value = np.where(exponent == 0, np.ldexp(mantissa / 8, 1 - bias), np.ldexp(1 + mantissa / 8, exponent - bias))
    table = (sign * value).astype(np.float32)
    table[list(nan_codes)] = np.nan
    return table


_E4M3FN = _minifloat_table(7, (0x7F, 0xFF))
_E4M3FNUZ = _minifloat_table(8, (0x80,))


def e4m3fn_to_float32(codes):
    """uint8 e4m3fn codes -> float32 (0x7f / 0xff are NaN)."""
    return _E4M3FN[np.asarray(codes, dtype=np.uint8)]


def e4m3fnuz_to_float32(codes):
    """uint8 e4m3fnuz codes -> float32 (0x80 is NaN, no -0)."""
    return _E4M3FNUZ[np.asarray(codes, dtype=np.uint8)]


def bf16_to_float32(bits):
    """uint16 bf16 bit patterns -> float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
