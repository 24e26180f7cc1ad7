"""Bad calls raise ValueError or TypeError with the runtime's message, and write nothing."""

import numpy as np
import pytest
import torch

import attngen
from conftest import randn


def qkv(Nq=7, Nk=9, d=64):
    return randn(1, 2, Nq, d), randn(1, 2, Nk, d, seed=1), randn(1, 2, Nk, d, seed=2)


def test_mismatched_head_dims_name_the_tensors():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"d_k|k"):
        attngen.attention(q, randn(1, 2, 9, 32), v)


def test_keys_and_values_of_different_lengths():
    q, k, _ = qkv()
    with pytest.raises(ValueError):
        attngen.attention(q, k, randn(1, 2, 8, 64))


def test_wrong_rank_is_refused_before_any_kernel():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"q: expected 4 dimensions"):
        attngen.attention(q[0], k, v)


@pytest.mark.parametrize("dtype", [np.float64, np.int16, np.int32])
def test_other_dtypes_are_refused_not_converted(dtype):
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"q.*dtype"):
        attngen.attention(q.astype(dtype), k, v)
    with pytest.raises(ValueError, match=r"q.*dtype"):
        attngen.attention(torch.from_numpy(q.astype(dtype)), k, v)


def test_innermost_stride_must_be_one():
    q, k, v = qkv()
    wide = randn(1, 2, 7, 128)[..., ::2]
    with pytest.raises(ValueError, match=r"stride"):
        attngen.attention(wide, k, v)


def test_key_lengths_out_of_range():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"key_lengths"):
        attngen.attention(q, k, v, key_lengths=np.array([10], np.int32))
    with pytest.raises(ValueError, match=r"key_lengths"):
        attngen.attention(q, k, v, key_lengths=np.array([1.0], np.float32))


def test_unknown_schedule_and_keyword():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"no_such_schedule"):
        attngen.attention(q, k, v, schedule="no_such_schedule")
    with pytest.raises(TypeError, match=r"softcapp"):
        attngen.attention(q, k, v, softcapp=30.0)
    with pytest.raises(TypeError, match=r"causal: expected a bool"):
        attngen.attention(q, k, v, causal=1)
    with pytest.raises(TypeError, match=r"expected a NumPy array"):
        attngen.attention(q.tolist(), k, v)


def test_nothing_is_written_to_out_when_validation_fails():
    q, k, v = qkv()
    out = np.full((1, 2, 7, 64), 7.0, np.float32)
    with pytest.raises(ValueError):
        attngen.attention(q, k, v, out=out, key_lengths=np.array([10], np.int32))
    with pytest.raises(ValueError):
        attngen.attention(q, k, randn(1, 2, 9, 32), out=out)
    t = torch.full((1, 2, 7, 64), 7.0)
    with pytest.raises(ValueError):
        attngen.attention(torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), out=t,
                          key_lengths=torch.tensor([-1]))
    assert (out == 7.0).all() and bool((t == 7.0).all())


def test_out_of_the_wrong_shape_or_read_only():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"out"):
        attngen.attention(q, k, v, out=np.zeros((1, 2, 7, 32), np.float32))
    frozen = np.zeros((1, 2, 7, 64), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"out: the array is read-only"):
        attngen.attention(q, k, v, out=frozen)


def test_tensors_that_require_grad_are_refused_with_torch_message():
    q, k, v = (torch.from_numpy(a) for a in qkv())
    with pytest.raises(ValueError, match=r"q: .*requires grad"):
        attngen.attention(q.requires_grad_(), k, v)
