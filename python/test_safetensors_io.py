#!/usr/bin/env python3
"""Tests of python/dsa_oracle_io.py with plain python3 + numpy; exits non-zero on failure.

    python3 test_safetensors_io.py                       # self tests
    python3 test_safetensors_io.py --check-cpp FILE      # also: FILE, written by the C++ writer, holds the fixture
    python3 test_safetensors_io.py --write-fixture FILE  # also: write the fixture for the C++ reader

The fixture (the same in tests/safetensors_test.cpp): tensors f32, i32, u8,
e4m3, bf16, i64, f64, empty with fixed values; metadata schema, writer, text.
"""

import argparse
import json
import os
import struct
import sys
import tempfile
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsa_oracle_io as io  # noqa: E402

FIXTURE_DTYPES = {"e4m3": "F8_E4M3", "bf16": "BF16"}


def fixture(writer):
    tensors = {
        "f32": (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3),
        "i32": np.array([-2, -1, 0, 2147483647], dtype=np.int32),
        "u8": np.array([0, 127, 255], dtype=np.uint8),
        "e4m3": np.array([[0x38, 0x7E], [0x01, 0xB8]], dtype=np.uint8),
        "bf16": np.array([0x3F80, 0xC000], dtype=np.uint16),
        "i64": np.array([-1, 1 << 40], dtype=np.int64),
        "f64": np.array(0.1, dtype=np.float64),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    metadata = {"schema": "dsa-oracle-test/1", "writer": writer, "text": 'h\u00e9llo, "quoted"'}
    return tensors, metadata


def check_fixture(tensors, metadata, writer):
    expected, expected_meta = fixture(writer)
    assert metadata == expected_meta, metadata
    assert sorted(tensors) == sorted(expected), sorted(tensors)
    for name, want in expected.items():
        got = tensors[name]
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert got.dtype == want.dtype.newbyteorder("<"), (name, got.dtype, want.dtype)
        assert np.array_equal(got, want), (name, got, want)
    # Decoders give the values the codes stand for.
    assert np.array_equal(io.e4m3fn_to_float32(tensors["e4m3"]), np.array([[1, 448], [2.0**-9, -1]], np.float32))
    assert np.array_equal(io.bf16_to_float32(tensors["bf16"]), np.array([1, -2], np.float32))


def file_of(header, data=b""):
    text = header if isinstance(header, (bytes, str)) else json.dumps(header)
    if isinstance(text, str):
        text = text.encode("utf-8")
    return struct.pack("<Q", len(text)) + text + data


def expect_rejected(blob, words):
    try:
        io.parse_safetensors(blob, origin="case")
    except io.SafetensorsError as e:
        message = str(e)
        assert message.startswith("case: "), message
        for w in words:
            assert w in message, (w, message)
        return
    raise AssertionError(f"accepted a bad file (expected an error with {words})")


def test_round_trip():
    tensors, metadata = fixture("python")
    blob = io.serialize_safetensors(tensors, metadata, FIXTURE_DTYPES)
    (header_len,) = struct.unpack("<Q", blob[:8])
    assert header_len % 8 == 0
    got, meta = io.parse_safetensors(blob)
    check_fixture(got, meta, "python")
    assert io.serialize_safetensors(got, meta, FIXTURE_DTYPES) == blob  # deterministic


def test_write_is_atomic():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "case.safetensors")
        tensors, metadata = fixture("python")
        io.write_safetensors(path, tensors, metadata, FIXTURE_DTYPES)
        io.write_safetensors(path, tensors, metadata, FIXTURE_DTYPES)  # over an existing file
        assert os.listdir(d) == ["case.safetensors"], os.listdir(d)
        check_fixture(*io.read_safetensors(path), "python")
        try:
            io.write_safetensors(path, {"x": np.zeros(2, np.complex64)})
            raise AssertionError("wrote a complex tensor")
        except io.SafetensorsError:
            pass
        assert os.listdir(d) == ["case.safetensors"], os.listdir(d)


def test_rejections():
    ok = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
    expect_rejected(b"\x01\x02\x03", ["truncated", "3 bytes"])
    expect_rejected(struct.pack("<Q", 50) + b"{}", ["truncated", "header length 50"])
    expect_rejected(struct.pack("<Q", 200_000_000) + b"{}", ["exceeds the limit"])
    expect_rejected(file_of({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}, bytes(8)), ["reversed"])
    expect_rejected(file_of({"a": ok, "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, bytes(12)),
                    ["overlap"])
    expect_rejected(file_of({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                             "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, bytes(12)), ["gap of 4"])
    expect_rejected(file_of({"a": ok}, bytes(12)), ["4 data bytes after the last tensor"])
    expect_rejected(file_of({"a": ok}, bytes(4)), ["'a'", "run past"])
    expect_rejected(file_of({"a": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}}, bytes(8)),
                    ["'a'", "unsupported dtype 'F16'"])
    expect_rejected(file_of({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)),
                    ["'a'", "disagrees"])
    expect_rejected(file_of({"__metadata__": {"seed": 7}, "a": ok}, bytes(8)), ["metadata 'seed' is not a string"])
    expect_rejected(file_of({"__metadata__": ["x"]}), ["__metadata__ is not an object"])
    dup = b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}'
    expect_rejected(file_of(dup, bytes(8)), ["duplicate key 'a'"])
    expect_rejected(file_of(b'{"a": '), ["not valid JSON"])
    expect_rejected(file_of(b"[1, 2]"), ["not a JSON object"])
    expect_rejected(file_of({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, bytes(4)),
                    ["shape extent"])
    expect_rejected(file_of({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4.0]}}, bytes(4)),
                    ["data_offsets end"])
    expect_rejected(file_of({"a": {"dtype": "F32", "shape": [1]}}, bytes(4)), ['no "data_offsets"'])


def test_decoders_match_field_definition():
    for c in range(256):
        s, e, m = c >> 7, (c >> 3) & 15, c & 7
        for decode, bias, is_nan in ((io.e4m3fn_to_float32, 7, (c & 0x7F) == 0x7F),
                                     (io.e4m3fnuz_to_float32, 8, c == 0x80)):
            got = decode(np.array([c], np.uint8))[0]
            if is_nan:
                assert np.isnan(got), (c, got)
                continue
            v = (m / 8) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 8) * 2.0 ** (e - bias)
            assert got == (-v if s else v), (c, got, v)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check-cpp", help="a fixture file written by the C++ writer")
    parser.add_argument("--write-fixture", help="where to write the fixture for the C++ reader")
    args = parser.parse_args()
    tests = [test_round_trip, test_write_is_atomic, test_rejections, test_decoders_match_field_definition]
    failures = 0
    for test in tests:
        try:
            test()
            print(f"ok   {test.__name__}")
        except Exception:
            failures += 1
            print(f"FAIL {test.__name__}")
            traceback.print_exc()
    if args.check_cpp:
        try:
            tensors, metadata = io.read_safetensors(args.check_cpp)
            check_fixture(tensors, metadata, "cpp")
            # Both writers lay files out the same way: re-serializing gives the C++ bytes.
            with open(args.check_cpp, "rb") as f:
                assert io.serialize_safetensors(tensors, metadata, FIXTURE_DTYPES) == f.read(), "layout differs"
            print("ok   check_cpp")
        except Exception:
            failures += 1
            print("FAIL check_cpp")
            traceback.print_exc()
    if args.write_fixture:
        io.write_safetensors(args.write_fixture, *fixture("python"), FIXTURE_DTYPES)
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
