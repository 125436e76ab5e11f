"""trnsim.language: the tile language's nl-level functions, NKI's ``nki.language``.

Import it as NKI users do: ``import trnsim.language as nl``. Functions allocate their result
tiles and return them; binary functions take a tile and a tile or number. Errors name the line
of your kernel that called the function.
"""
from ._trnsim import dtype as _dtype
from ._trnsim.language import *  # noqa: F401,F403 (the bound functions are the module's API)

# Data types, as NKI spells them.
float32 = _dtype.float32
tfloat32 = _dtype.tfloat32
bfloat16 = _dtype.bfloat16
float16 = _dtype.float16
float8_e4m3 = _dtype.float8_e4m3
float8_e5m2 = _dtype.float8_e5m2
float8_e3m4 = _dtype.float8_e3m4
float8_e4m3fn = _dtype.float8_e4m3fn
int8 = _dtype.int8
int16 = _dtype.int16
int32 = _dtype.int32
uint8 = _dtype.uint8
uint16 = _dtype.uint16
uint32 = _dtype.uint32

# Buffers for nl.ndarray.
sbuf = "sbuf"
psum = "psum"
hbm = "hbm"
private_hbm = "private_hbm"
shared_hbm = "shared_hbm"


class tile_size:  # noqa: N801 (NKI's name)
    """The hardware's tile limits, as nl.tile_size gives them."""

    pmax = 128  #: partitions of a tile
    psum_fmax = 2048 // 4  #: fp32 elements of one partition of a PSUM bank
    gemm_stationary_fmax = 128  #: free size of a matmul's stationary operand
    gemm_moving_fmax = 512  #: free size of a matmul's moving operand


def ds(start, size):
    """The slice [start, start + size), NKI's ``nl.ds``."""
    return slice(start, start + size)


def affine_range(*args):
    """A loop whose iterations are independent (unrolled when traced, as every loop here)."""
    return range(*args)


def sequential_range(*args):
    """A loop whose iterations depend on each other (unrolled when traced)."""
    return range(*args)


def static_range(*args):
    """A loop unrolled when traced."""
    return range(*args)
