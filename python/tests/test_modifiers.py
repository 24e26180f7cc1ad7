"""The score and mask modifiers of attngen.attention (docs/modifiers.md) against the float64
reference, on NumPy arrays and torch tensors, and their bad values as ValueError."""

import numpy as np
import pytest
import torch

import attngen
from conftest import assert_close, randn, reference


def inputs(B, H, Nq, Nk, d, seed=0):
    return randn(B, H, Nq, d, seed=seed), randn(B, H, Nk, d, seed=seed + 1), randn(
        B, H, Nk, d, seed=seed + 2)


def positions(Nq, Nk):
    """p(i) as a column and j as a row."""
    return torch.arange(Nq).unsqueeze(1) + Nk - Nq, torch.arange(Nk).unsqueeze(0)


@pytest.mark.parametrize("nq,nk", [(1, 40), (17, 17), (33, 50)])
def test_causal_window_prefix_and_segments(nq, nk):
    q, k, v = inputs(2, 2, nq, nk, 32)
    p, j = positions(nq, nk)
    kv_seg = np.repeat(np.arange(nk), 1)[None].repeat(2, 0) // 9
    q_seg = np.maximum(np.arange(nq) + nk - nq, 0)[None].repeat(2, 0) // 9
    prefix = np.array([nk // 3, 0], dtype=np.int64)
    out = attngen.attention(q, k, v, causal=True, window_left=6, prefix_lengths=prefix,
                            q_segments=q_seg, kv_segments=kv_seg)
    seen = (j <= p).unsqueeze(0) | (j.unsqueeze(0) < torch.as_tensor(prefix).view(2, 1, 1))
    mask = seen & (j >= p - 6).unsqueeze(0)
    mask = mask & torch.as_tensor(q_seg[:, :, None] == kv_seg[:, None, :])
    assert_close(out, reference(q, k, v, mask=mask.unsqueeze(1))[0])


def test_softcap_alibi_and_bias_on_torch_tensors():
    q, k, v = (torch.from_numpy(t) for t in inputs(1, 4, 9, 21, 16))
    q = q * 4
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    bias = torch.from_numpy(randn(1, 4, 1, 21, seed=9))
    out = attngen.attention(q, k, v, softcap=2.0, alibi_slopes=slopes, bias=bias,
                            window_right=3)
    assert torch.is_tensor(out)
    p, j = positions(9, 21)

    def modify(s):
        s = 2.0 * torch.tanh(s / 2.0)
        return s - slopes.double().view(1, 4, 1, 1) * (p - j).abs() + bias.double()

    assert_close(out, reference(q, k, v, mask=(j <= p + 3), score_mod=modify)[0])


@pytest.mark.parametrize("keywords,words", [
    ({"window_left": -1}, "window_left is -1"),
    ({"prefix_lengths": np.array([1], dtype=np.int32)}, "need causal attention"),
    ({"alibi_slopes": np.ones(3, np.float32)}, "alibi_slopes shape[0] (H) is 3"),
    ({"bias": np.ones((1, 2, 2, 5), np.float32)}, "does not broadcast to Nq = 3"),
    ({"q_segments": np.zeros((1, 3), np.int32)}, "segments need both"),
])
def test_bad_modifiers_raise_value_error_and_write_nothing(keywords, words):
    q, k, v = inputs(1, 2, 3, 5, 16)
    out = np.full((1, 2, 3, 16), 7.0, np.float32)
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        attngen.attention(q, k, v, out=out, **keywords)
    assert (out == 7.0).all()


def test_window_side_must_be_an_int():
    q, k, v = inputs(1, 1, 2, 2, 16)
    with pytest.raises(TypeError, match="window_left: expected an int"):
        attngen.attention(q, k, v, window_left=2.5)
