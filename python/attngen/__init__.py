"""attngen's attention kernels on NumPy arrays and CPU PyTorch tensors (docs/python.md).

    import attngen
    out = attngen.attention(q, k, v, causal=True)     # q [B, H, Nq, d_k], ... float32

Arrays are used in place, whatever their strides, as long as the innermost one is 1; results
come back as arrays of the library of q. attngen.torch holds scaled_dot_product_attention with
PyTorch's semantics; attngen.MultiheadAttention is the multi-head layer.
"""

from collections import namedtuple

from ._attngen import (
    attention,
    available_schedules,
    list_kernels,
    list_schedules,
    set_num_threads,
    set_spin_wait_microseconds,
)
from ._attngen import _cuda_status
from .mha import MultiheadAttention

__all__ = [
    "attention",
    "available_schedules",
    "cuda_status",
    "CudaStatus",
    "list_kernels",
    "list_schedules",
    "MultiheadAttention",
    "set_num_threads",
    "set_spin_wait_microseconds",
]

# Whether this process can run attngen's CUDA kernels, and the runtime's reason when it cannot
# (no driver, no device, a build without CUDA kernels, ATTNGEN_DISABLE_CUDA=1).
CudaStatus = namedtuple("CudaStatus", ["available", "reason"])


def cuda_status():
    """CudaStatus(available, reason): the runtime's attngen::cuda_status()."""
    return CudaStatus(*_cuda_status())
