#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on CUDA, on the shapes of cuda_bench.

Writes one JSON object per line to stdout: {"impl", "shape", "ms", "gflops", "kv_gbs"} per
backend and shape (the median of 20 timed calls after 3 warm-up calls, timed with CUDA events),
or {"skipped": reason} when PyTorch or a CUDA device is missing. The backends are the math
reference and the memory-efficient kernel, the two that run float32, and on the shapes stored in
bfloat16 or float16 also FlashAttention. cuda_bench's decode shapes with a 16-bit cache under
float32 queries have no counterpart here: SDPA takes one type for q, k and v. The causal shape is
square, where PyTorch's top-left causal alignment is attngen's bottom-right one.
"""
import json
import statistics
import sys

# label, B, H, Nq, Nk, D, causal, dtype name: the same as kShapes in bench/gpu/cuda_bench.cpp.
SHAPES = [
    ("b_B1_H8_N2048_D64", 1, 8, 2048, 2048, 64, False, "float32"),
    ("c_B1_H16_N4096_D64", 1, 16, 4096, 4096, 64, False, "float32"),
    ("d_B1_H8_N2048_D64_causal", 1, 8, 2048, 2048, 64, True, "float32"),
    ("e_decode_B1_H32_Nq1_Nk4096_D128", 1, 32, 1, 4096, 128, False, "float32"),
    ("b_B1_H8_N2048_D64_bf16", 1, 8, 2048, 2048, 64, False, "bfloat16"),
    ("b_B1_H8_N2048_D64_f16", 1, 8, 2048, 2048, 64, False, "float16"),
]


def emit(obj):
    print(json.dumps(obj), flush=True)


def backends(torch, sixteen_bit):
    """(name, context manager factory) for each backend this PyTorch can force: math and
    memory-efficient, and FlashAttention for 16-bit inputs (it takes no others)."""
    try:  # PyTorch 2.3 and later.
        from torch.nn.attention import SDPBackend, sdpa_kernel
        found = [("torch_sdpa_math", lambda: sdpa_kernel(SDPBackend.MATH)),
                 ("torch_sdpa_efficient", lambda: sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION))]
        if sixteen_bit:
            found.append(("torch_sdpa_flash", lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)))
        return found
    except ImportError:
        ctx = torch.backends.cuda.sdp_kernel
        found = [("torch_sdpa_math",
                  lambda: ctx(enable_flash=False, enable_math=True, enable_mem_efficient=False)),
                 ("torch_sdpa_efficient",
                  lambda: ctx(enable_flash=False, enable_math=False, enable_mem_efficient=True))]
        if sixteen_bit:
            found.append(("torch_sdpa_flash", lambda: ctx(enable_flash=True, enable_math=False,
                                                          enable_mem_efficient=False)))
        return found


def main():
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        emit({"skipped": f"PyTorch is not installed ({e})"})
        return 0
    if not torch.cuda.is_available():
        emit({"skipped": f"PyTorch {torch.__version__} sees no CUDA device"})
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 as attngen computes it.
    emit({"device": torch.cuda.get_device_name(0), "torch": torch.__version__})
    gen = torch.Generator(device="cuda").manual_seed(0)
    for label, b, h, nq, nk, d, causal, dtype_name in SHAPES:
        dtype = getattr(torch, dtype_name)
        q = (torch.rand(b, h, nq, d, device="cuda", generator=gen) * 2 - 1).to(dtype)
        k = (torch.rand(b, h, nk, d, device="cuda", generator=gen) * 2 - 1).to(dtype)
        v = (torch.rand(b, h, nk, d, device="cuda", generator=gen) * 2 - 1).to(dtype)
        for name, make_ctx in backends(torch, dtype_name != "float32"):
            try:
                with make_ctx():
                    for _ in range(3):
                        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    times = []
                    for _ in range(20):
                        start = torch.cuda.Event(enable_timing=True)
                        end = torch.cuda.Event(enable_timing=True)
                        start.record()
                        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        end.record()
                        torch.cuda.synchronize()
                        times.append(start.elapsed_time(end))
            except RuntimeError as e:
                emit({"impl": name, "shape": label, "error": str(e).splitlines()[0]})
                continue
            ms = statistics.median(times)
            flops = 4.0 * b * h * nq * nk * d * (0.5 if causal else 1.0)
            kv_bytes = 2.0 * b * h * nk * d * k.element_size()
            emit({"impl": name, "shape": label, "ms": ms, "gflops": flops / ms * 1e-6,
                  "kv_gbs": kv_bytes / ms * 1e-6})
    return 0


if __name__ == "__main__":
    sys.exit(main())
