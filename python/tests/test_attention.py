"""attngen.attention on NumPy arrays and torch tensors against the fp64 reference: shapes
below, at and above the kernels' vector widths, masks, GQA, strided views, every schedule, the
optional outputs and `out` written in place."""

import numpy as np
import pytest
import torch

import attngen
from conftest import assert_close, randn, reference


def inputs(B, H, Hkv, Nq, Nk, dk, dv, seed=0):
    return (randn(B, H, Nq, dk, seed=seed), randn(B, Hkv, Nk, dk, seed=seed + 1),
            randn(B, Hkv, Nk, dv, seed=seed + 2))


def schedules():
    """Every compiled attention schedule but Halide's autoschedulers, which are benchmark
    baselines planned for one shape (docs/api.md)."""
    names = {s["name"]: s for s in attngen.list_schedules()}
    return [s for s in attngen.available_schedules("attention") if not names[s]["autoscheduler"]]


@pytest.mark.parametrize("n", [1, 7, 16, 17, 33])
@pytest.mark.parametrize("d", [64, 96])
def test_self_attention_numpy(n, d):
    q, k, v = inputs(2, 2, 2, n, n, d, d)
    out = attngen.attention(q, k, v)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (2, 2, n, d)
    assert_close(out, reference(q, k, v)[0])


@pytest.mark.parametrize("nq,nk", [(1, 33), (7, 17), (17, 7), (33, 33)])
def test_causal_is_bottom_right_aligned(nq, nk):
    q, k, v = inputs(1, 2, 2, nq, nk, 64, 64)
    assert_close(attngen.attention(q, k, v, causal=True), reference(q, k, v, causal=True)[0])


def test_cross_attention_with_other_value_width_and_scale():
    q, k, v = inputs(2, 3, 3, 7, 33, 32, 48)
    out = attngen.attention(q, k, v, scale=0.3)
    assert out.shape == (2, 3, 7, 48)
    assert_close(out, reference(q, k, v, scale=0.3)[0])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_key_lengths_mask_padding_and_empty_rows_give_zeros(dtype):
    q, k, v = inputs(3, 2, 2, 5, 17, 64, 64)
    lengths = np.array([17, 4, 0], dtype)
    out = attngen.attention(q, k, v, key_lengths=lengths)
    assert_close(out, reference(q, k, v, key_lengths=lengths)[0])
    assert not out[2].any()


def test_grouped_query_attention_matches_repeated_heads():
    q, k, v = inputs(2, 8, 2, 17, 33, 64, 64)
    assert_close(attngen.attention(q, k, v, causal=True), reference(q, k, v, causal=True)[0])


def test_lse_and_probs():
    q, k, v = inputs(1, 2, 2, 7, 17, 64, 64)
    out, lse, probs = attngen.attention(q, k, v, causal=True, return_lse=True, return_probs=True)
    ref_out, ref_lse, ref_probs = reference(q, k, v, causal=True)
    assert lse.shape == (1, 2, 7) and probs.shape == (1, 2, 7, 17)
    assert_close(out, ref_out)
    assert_close(lse, ref_lse)
    assert_close(probs, ref_probs)
    only_lse = attngen.attention(q, k, v, return_lse=True)
    assert isinstance(only_lse, tuple) and len(only_lse) == 2


def test_torch_tensors_in_torch_tensors_out():
    q, k, v = (torch.from_numpy(a) for a in inputs(2, 4, 4, 16, 17, 64, 64))
    out, lse = attngen.attention(q, k, v, causal=True, return_lse=True,
                                 key_lengths=torch.tensor([17, 9]))
    assert isinstance(out, torch.Tensor) and isinstance(lse, torch.Tensor)
    ref_out, ref_lse, _ = reference(q, k, v, causal=True, key_lengths=[17, 9])
    assert_close(out, ref_out)
    assert_close(lse, ref_lse)


@pytest.mark.parametrize("library", ["numpy", "torch"])
def test_transposed_bnhd_storage_is_used_in_place(library):
    # [B, N, H, D] storage seen as [B, H, N, D]: strided views that the runtime accepts as they are.
    B, N, H, D = 2, 17, 4, 64
    store = [randn(B, N, H, D, seed=s) for s in range(3)]
    out_store = np.full((B, N, H, D), np.nan, np.float32)
    if library == "numpy":
        q, k, v, out = (a.transpose(0, 2, 1, 3) for a in store + [out_store])
    else:
        q, k, v, out = (torch.from_numpy(a).transpose(1, 2) for a in store + [out_store])
        assert not q.is_contiguous()
    result = attngen.attention(q, k, v, causal=True, out=out)
    assert result is out
    assert_close(out_store.transpose(0, 2, 1, 3), reference(q, k, v, causal=True)[0])


def test_out_is_written_in_place_numpy():
    q, k, v = inputs(1, 2, 2, 16, 16, 64, 64)
    out = np.zeros((1, 2, 16, 64), np.float32)
    result = attngen.attention(q, k, v, out=out)
    assert result is out and np.shares_memory(result, out)
    assert_close(out, reference(q, k, v)[0])


def test_out_is_written_in_place_torch():
    q, k, v = (torch.from_numpy(a) for a in inputs(1, 2, 2, 16, 16, 64, 64))
    out = torch.zeros(1, 2, 16, 64)
    pointer = out.data_ptr()
    result = attngen.attention(q, k, v, out=out)
    assert result is out and result.data_ptr() == pointer
    assert_close(out, reference(q, k, v)[0])


def test_row_strided_views_are_accepted():
    # Every other query row and every other key row of larger arrays: rows 2 * D apart.
    q = randn(1, 2, 34, 64)[:, :, ::2, :]
    k, v = randn(1, 2, 34, 64, seed=1)[:, :, 1::2, :], randn(1, 2, 17, 64, seed=2)
    out = np.zeros((1, 2, 34, 64), np.float32)[:, :, ::2, :]
    attngen.attention(q, k, v, out=out)
    assert_close(out, reference(q, k, v)[0])


@pytest.mark.parametrize("schedule", schedules())
def test_every_schedule(schedule):
    for causal in (False, True):
        q, k, v = inputs(2, 2, 2, 17, 33, 64, 64)
        lengths = np.array([33, 20], np.int32)
        out = attngen.attention(q, k, v, causal=causal, key_lengths=lengths, schedule=schedule)
        assert_close(out, reference(q, k, v, causal=causal, key_lengths=lengths)[0])


def test_every_compiled_kernel_is_listed_with_its_variant():
    kernels = attngen.list_kernels()
    assert kernels, "the build compiled no kernels"
    for kernel in kernels:
        assert kernel["op"] in ("attention", "mha")
        assert kernel["schedule"] in kernel["variant"]
    assert set(schedules()) <= {k["schedule"] for k in kernels}


class Exported:
    """An array of another library, seen only through the DLPack protocol."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None):
        return torch.utils.dlpack.to_dlpack(self.tensor)


def test_other_dlpack_producers_are_read_in_place_and_get_numpy_outputs():
    q, v = (torch.from_numpy(a) for a in inputs(1, 2, 2, 7, 9, 64, 64)[::2])
    k = torch.from_numpy(randn(1, 2, 18, 64, seed=5))[:, :, ::2]  # DLPack strides, rows apart
    out = attngen.attention(Exported(q), Exported(k), Exported(v))
    assert isinstance(out, np.ndarray)
    assert_close(out, reference(q, k, v)[0])
