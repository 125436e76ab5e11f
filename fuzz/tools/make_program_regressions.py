#!/usr/bin/env python3
"""Writes the hand-made regression inputs of the program_binary and program_text fuzz targets.

Each input reproduces a format asymmetry of issue 13 that the readers now reject (or, for NaN
payloads and bare line numbers, now keep): run it from the repository root after changing the
binary format, and commit the files it writes under fuzz/corpus/<target>/regression/.
"""
import struct
from pathlib import Path

BINARY = Path("fuzz/corpus/program_binary/regression")
TEXT = Path("fuzz/corpus/program_text/regression")
HBM, SBUF = 0, 1
FP32 = 0
DVE = 2
MEMSET = 0x0202
NOP = 0x0600


def string(s: bytes) -> bytes:
    return struct.pack("<I", len(s)) + s


def tensor(name: bytes, shape, kind=0, dtype=FP32) -> bytes:
    out = string(name) + struct.pack("<BBI", kind, dtype, len(shape))
    return out + b"".join(struct.pack("<q", d) for d in shape)


def pattern(memory, start, count, dims, tensor_index=-1, row_stride=0, offset=0) -> bytes:
    out = struct.pack("<BBiqqqqB", memory, FP32, tensor_index, start, count, row_stride, offset,
                      len(dims))
    return out + b"".join(struct.pack("<qq", s, c) for s, c in dims)


def instruction(opcode, engine, fields=b"", file=b"", line=0) -> bytes:
    return struct.pack("<HBII", opcode, engine, 0, 0) + string(file) + struct.pack("<i", line) + fields


def program(tensors, dve=()) -> bytes:
    out = b"TRNPROG\0" + struct.pack("<II", 1, len(tensors)) + b"".join(tensors)
    for engine in range(5):
        stream = list(dve) if engine == DVE else []
        out += struct.pack("<Q", len(stream)) + b"".join(stream)
    return out


def memset(value_bits, dst=None, **location) -> bytes:
    dst = dst or pattern(SBUF, 0, 4, [(1, 8)])
    return instruction(MEMSET, DVE, dst + struct.pack("<I", value_bits), **location)


BINARY_CASES = {
    "name_with_newline.tprog": program([tensor(b"a\nb", [4])]),
    "name_too_long.tprog": program([tensor(b"n" * 5000, [4])]),
    "duplicate_names.tprog": program([tensor(b"a", [4]), tensor(b"a", [8])]),
    "wrapped_shape.tprog": program([tensor(b"a", [2**62 + 1, 4])]),
    "zero_extent.tprog": program([tensor(b"a", [4, 0])]),
    "location_with_newline.tprog": program([], [instruction(NOP, DVE, file=b"k.cpp\nsp: nop", line=3)]),
    "location_line_without_file.tprog": program([], [instruction(NOP, DVE, line=5)]),
    "nan_payload.tprog": program([], [memset(0x7F800001)]),
    "sbuf_with_tensor_index.tprog": program([tensor(b"a", [4])], [memset(0, pattern(SBUF, 0, 4, [(1, 8)], tensor_index=0))]),
    "sbuf_with_row_stride.tprog": program([], [memset(0, pattern(SBUF, 0, 4, [(1, 8)], row_stride=7))]),
    "hbm_undeclared_tensor.tprog": program([tensor(b"a", [4])], [memset(0, pattern(HBM, 0, 1, [(1, 4)], tensor_index=3))]),
    "partition_range_overflow.tprog": program([], [memset(0, pattern(SBUF, 2**63 - 1, 2, [(1, 8)]))]),
    "huge_instruction_count.tprog": b"TRNPROG\0" + struct.pack("<IIQ", 1, 0, 2**40),
}

TEXT_CASES = {
    "duplicate_names.tasm": ".tensor a input fp32 [4]\n.tensor b input fp32 [4]\n.tensor a output fp32 [8]\n",
    "name_too_long.tasm": ".tensor " + "n" * 5000 + " input fp32 [4]\n",
    "name_with_dash.tasm": ".tensor a-b input fp32 [4]\nsp: nop\n",
    "wrapped_shape.tasm": ".tensor a output fp32 [4611686018427387905, 4]\n",
    "rank_17.tasm": ".tensor a input uint8 [" + ", ".join(["1"] * 17) + "]\n",
    "shape_trailing_text.tasm": ".tensor a input fp32 [4] [8]\n",
    "location_line_without_file.tasm": "dve: nop loc=:5\n",
    "nan_payload.tasm": "dve: memset dst=sbuf[0:4]:fp32[[1,8]] value=nan(0x7f800001)\n",
    "too_many_waits.tasm": "dve: nop " + " ".join(f"wait(s{i}>=1)" for i in range(65)) + "\n",
}

BINARY.mkdir(parents=True, exist_ok=True)
TEXT.mkdir(parents=True, exist_ok=True)
for name, data in BINARY_CASES.items():
    (BINARY / name).write_bytes(data)
for name, text in TEXT_CASES.items():
    (TEXT / name).write_text(text)
