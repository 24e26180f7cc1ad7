"""attngen.torch.scaled_dot_product_attention with PyTorch's semantics, against PyTorch 1.13's
attention math in float64, and the same through torch.ops.attngen."""

import contextlib
import warnings

import pytest
import torch

import attngen.torch as at
from conftest import assert_close


def tensors(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g) for s in shapes]


def torch_math(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """PyTorch's definition in float64: top-left causal mask, bool masks (True: take part) and
    additive float masks. PyTorch 1.13 has no scaled_dot_product_attention of its own."""
    q, k, v = q.double(), k.double(), v.double()
    L, S = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = q @ k.transpose(-2, -1) * scale
    if is_causal:
        s = s.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool \
            else s + attn_mask.double()
    return torch.softmax(s, -1) @ v


@contextlib.contextmanager
def no_fallback():
    """A context in which a fallback to PyTorch's computation fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", at.FallbackWarning)
        yield


@pytest.mark.parametrize("shape", [(2, 4, 17, 64), (3, 7, 96), (2, 2, 3, 16, 64), (33, 64)])
def test_leading_dims_of_any_count(shape):
    q, k, v = tensors(shape, shape, shape)
    with no_fallback():
        out = at.scaled_dot_product_attention(q, k, v)
    assert out.shape == shape
    assert_close(out, torch_math(q, k, v))


def test_cross_attention_other_value_width_and_scale():
    q, k, v = tensors((2, 3, 7, 64), (2, 3, 33, 64), (2, 3, 33, 32))
    with no_fallback():
        assert_close(at.scaled_dot_product_attention(q, k, v, scale=0.2),
                     torch_math(q, k, v, scale=0.2))


def test_is_causal_with_as_many_queries_as_keys():
    q, k, v = tensors(*[(1, 4, 33, 64)] * 3)
    with no_fallback():
        assert_close(at.scaled_dot_product_attention(q, k, v, is_causal=True),
                     torch_math(q, k, v, is_causal=True))


def test_is_causal_with_fewer_queries_follows_pytorch_top_left():
    q, k, v = tensors((1, 2, 7, 64), (1, 2, 17, 64), (1, 2, 17, 64))
    with pytest.warns(at.FallbackWarning):
        out = at.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert_close(out, torch_math(q, k, v, is_causal=True))


@pytest.mark.parametrize("additive", [False, True])
def test_key_padding_masks_become_key_lengths(additive):
    q, k, v = tensors((3, 2, 16, 64), (3, 2, 17, 64), (3, 2, 17, 64))
    allowed = torch.arange(17) < torch.tensor([17, 9, 1]).view(3, 1, 1, 1)  # [3, 1, 1, 17]
    mask = torch.zeros(allowed.shape).masked_fill(~allowed, float("-inf")) if additive else allowed
    with no_fallback():
        out = at.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert_close(out, torch_math(q, k, v, attn_mask=allowed))


def test_causal_mask_tensor_runs_the_causal_kernel():
    q, k, v = tensors(*[(2, 2, 17, 64)] * 3)
    mask = torch.ones(17, 17, dtype=torch.bool).tril()
    with no_fallback():
        assert_close(at.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                     torch_math(q, k, v, attn_mask=mask))


def test_other_masks_fall_back_to_pytorch_with_a_warning():
    q, k, v = tensors(*[(2, 2, 16, 64)] * 3)
    bias, = tensors((2, 1, 16, 16), seed=5)
    with pytest.warns(at.FallbackWarning):
        assert_close(at.scaled_dot_product_attention(q, k, v, attn_mask=bias),
                     torch_math(q, k, v, attn_mask=bias))
    window = (torch.arange(16).view(16, 1) - torch.arange(16).view(1, 16)).abs() <= 3
    with pytest.warns(at.FallbackWarning):
        assert_close(at.scaled_dot_product_attention(q, k, v, attn_mask=window),
                     torch_math(q, k, v, attn_mask=window))


def test_grouped_query_heads():
    q, k, v = tensors((2, 8, 17, 64), (2, 2, 33, 64), (2, 2, 33, 64))
    ref = torch_math(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1))
    with no_fallback():
        assert_close(at.scaled_dot_product_attention(q, k, v), ref)


def test_transposed_views_are_read_in_place():
    q, k, v = (t.transpose(1, 2) for t in tensors(*[(2, 17, 4, 64)] * 3))
    with no_fallback():
        assert_close(at.scaled_dot_product_attention(q, k, v, is_causal=True),
                     torch_math(q, k, v, is_causal=True))


def test_refusals():
    q, k, v = tensors(*[(1, 2, 8, 64)] * 3)
    with pytest.raises(ValueError, match=r"dropout_p"):
        at.scaled_dot_product_attention(q, k, v, dropout_p=0.1)
    with pytest.raises(ValueError, match=r"requires grad"):
        at.scaled_dot_product_attention(q.requires_grad_(), k, v)
    with pytest.raises(ValueError, match=r"q.*dtype"):
        at.scaled_dot_product_attention(q.detach().double(), k, v)
    with pytest.raises(ValueError, match=r"is_causal"):
        at.scaled_dot_product_attention(q.detach(), k, v, is_causal=True,
                                        attn_mask=torch.ones(8, 8, dtype=torch.bool))


def test_registered_as_a_pytorch_operator():
    assert at.operator_registered
    q, k, v = tensors((2, 4, 17, 64), (2, 4, 9, 64), (2, 4, 9, 64))
    mask = torch.arange(9) < torch.tensor([9, 5]).view(2, 1, 1, 1)
    out = torch.ops.attngen.scaled_dot_product_attention(q, k, v, mask, 0.0, False, scale=0.5)
    assert_close(out, torch_math(q, k, v, attn_mask=mask, scale=0.5))
    out = torch.ops.attngen.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert_close(out, torch_math(q, q, q, is_causal=True))


def test_tensors_that_require_grad_are_read_under_no_grad():
    q, k, v = (t.requires_grad_() for t in tensors(*[(1, 2, 8, 64)] * 3))
    with torch.no_grad(), no_fallback():
        out = at.scaled_dot_product_attention(q, k, v)
    assert not out.requires_grad
    assert_close(out, torch_math(q.detach(), k.detach(), v.detach()))


def test_matches_pytorch_1_13_own_attention():
    # F._scaled_dot_product_attention: PyTorch 1.13's private attention, which
    # nn.MultiheadAttention's forward calls (bool masks: True takes part), in float64.
    F = torch.nn.functional
    if not hasattr(F, "_scaled_dot_product_attention"):
        pytest.skip("this PyTorch has no F._scaled_dot_product_attention (1.13 has)")
    q, k, v = tensors(*[(2, 4, 33, 64)] * 3)
    padding = torch.arange(33) < torch.tensor([33, 20]).view(2, 1, 1, 1)
    for mask, causal in ((None, False), (None, True), (padding, False)):
        want, _ = F._scaled_dot_product_attention(q.double(), k.double(), v.double(), mask, 0.0,
                                                  False, causal)
        with no_fallback():
            assert_close(at.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                         is_causal=causal), want)
