"""attngen.MultiheadAttention against torch.nn.MultiheadAttention (self, cross with kdim !=
embed_dim, causal, key padding, both batch layouts, unbatched input) and against the fp64
reference for a grouped-query layer built from NumPy arrays; what it refuses."""

import numpy as np
import pytest
import torch

import attngen
from conftest import assert_close, randn, reference


def torch_layer(E=64, heads=4, kdim=None, bias=True, batch_first=True, seed=0):
    torch.manual_seed(seed)
    layer = torch.nn.MultiheadAttention(E, heads, bias=bias, kdim=kdim, vdim=kdim,
                                        batch_first=batch_first)
    if bias:  # PyTorch initializes biases to zero; nonzero ones test that they are carried.
        with torch.no_grad():
            layer.in_proj_bias.normal_()
            layer.out_proj.bias.normal_()
    return layer.eval()


def expect(layer, *args, **kwargs):
    with torch.no_grad():
        return layer(*args, need_weights=False, **kwargs)[0]


@pytest.mark.parametrize("batch_first", [True, False])
def test_self_attention_both_layouts(batch_first):
    layer = torch_layer(batch_first=batch_first)
    x = torch.randn((2, 17, 64) if batch_first else (17, 2, 64))
    ours = attngen.MultiheadAttention.from_torch(layer)
    y, weights = ours(x, x, x, need_weights=False)
    assert weights is None and y.shape == x.shape and y.is_contiguous()
    assert_close(y, expect(layer, x, x, x), atol=5e-5)


def test_cross_attention_with_kdim_other_than_embed_dim():
    layer = torch_layer(E=64, heads=2, kdim=48, bias=False)
    x, m = torch.randn(2, 7, 64), torch.randn(2, 33, 48)
    y, _ = attngen.MultiheadAttention.from_torch(layer)(x, m, m)
    assert_close(y, expect(layer, x, m, m), atol=5e-5)


def test_causal_mask_and_is_causal():
    layer = torch_layer()
    x = torch.randn(2, 16, 64)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(16)
    ours = attngen.MultiheadAttention.from_torch(layer)
    want = expect(layer, x, x, x, attn_mask=causal)
    assert_close(ours(x, x, x, attn_mask=causal)[0], want, atol=5e-5)
    assert_close(ours(x, x, x, attn_mask=causal.isinf())[0], want, atol=5e-5)
    assert_close(ours(x, x, x, is_causal=True)[0], want, atol=5e-5)


def test_key_padding_mask():
    layer = torch_layer()
    x = torch.randn(3, 17, 64)
    padding = torch.arange(17) >= torch.tensor([17, 10, 3]).view(3, 1)
    ours = attngen.MultiheadAttention.from_torch(layer)
    assert_close(ours(x, x, x, key_padding_mask=padding)[0],
                 expect(layer, x, x, x, key_padding_mask=padding), atol=5e-5)


def test_unbatched_input():
    layer = torch_layer(batch_first=False)
    x = torch.randn(9, 64)
    assert_close(attngen.MultiheadAttention.from_torch(layer)(x, x, x)[0], expect(layer, x, x, x),
                 atol=5e-5)


def test_grouped_query_layer_from_numpy_arrays():
    d_model, H, Hkv, d = 32, 4, 2, 16
    w_q, w_k, w_v, w_o = (randn(*s, seed=i) * 0.2 for i, s in enumerate(
        [(d_model, H * d), (d_model, Hkv * d), (d_model, Hkv * d), (H * d, d_model)]))
    b_o = randn(d_model, seed=9)
    layer = attngen.MultiheadAttention(w_q, w_k, w_v, w_o, b_o=b_o, num_heads=H, kv_heads=Hkv)
    assert layer.kv_heads == Hkv
    x = randn(2, 7, d_model, seed=5)
    y = layer.attend(x, causal=True)
    assert isinstance(y, np.ndarray) and y.shape == (2, 7, d_model)
    heads = lambda t, n: torch.from_numpy(t).view(2, 7, n, d).transpose(1, 2)  # noqa: E731
    o = reference(heads(x @ w_q, H), heads(x @ w_k, Hkv), heads(x @ w_v, Hkv), causal=True)[0]
    want = o.transpose(1, 2).reshape(2, 7, H * d) @ torch.from_numpy(w_o).double() + b_o
    assert_close(y, want, atol=5e-5)


def test_modifiers_of_the_layers_attention():
    d_model, H, d, n = 32, 2, 16, 12
    w_q, w_k, w_v, w_o = (randn(*s, seed=i) * 0.2 for i, s in enumerate(
        [(d_model, H * d), (d_model, H * d), (d_model, H * d), (H * d, d_model)]))
    layer = attngen.MultiheadAttention(w_q, w_k, w_v, w_o, num_heads=H)
    x = randn(2, n, d_model, seed=5)
    slopes = np.array([0.5, 0.25], dtype=np.float32)
    y = layer.attend(x, causal=True, window_left=3, softcap=2.0, alibi_slopes=slopes)
    heads = lambda t: torch.from_numpy(t).view(2, n, H, d).transpose(1, 2)  # noqa: E731
    q, k, v = heads(x @ w_q).double(), heads(x @ w_k).double(), heads(x @ w_v).double()
    p, j = torch.arange(n).view(n, 1), torch.arange(n).view(1, n)
    s = q @ k.transpose(-1, -2) / d ** 0.5
    s = 2.0 * torch.tanh(s / 2.0) - torch.from_numpy(slopes).double().view(H, 1, 1) * (p - j).abs()
    s = s.masked_fill(~((j <= p) & (j >= p - 3)), float("-inf"))
    o = torch.softmax(s, dim=-1) @ v
    want = o.transpose(1, 2).reshape(2, n, H * d) @ torch.from_numpy(w_o).double()
    assert_close(y, want, atol=5e-5)
    with pytest.raises(ValueError, match=r"alibi_slopes shape\[0\] \(H\) is 3"):
        layer.attend(x, alibi_slopes=np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'windw_left'"):
        layer.attend(x, windw_left=3)


def test_refusals():
    layer = torch_layer()
    ours = attngen.MultiheadAttention.from_torch(layer)
    x, m = torch.randn(2, 8, 64), torch.randn(2, 8, 64)
    with pytest.raises(ValueError, match=r"need_weights"):
        ours(x, x, x, need_weights=True)
    with pytest.raises(ValueError, match=r"same tensor"):
        ours(x, m, m.clone())
    with pytest.raises(ValueError, match=r"suffix"):
        ours(x, x, x, key_padding_mask=torch.tensor([[True] + [False] * 7] * 2))
    with pytest.raises(ValueError, match=r"attn_mask"):
        ours(x, x, x, attn_mask=torch.zeros(8, 8).normal_())
    with pytest.raises(ValueError, match=r"eval"):
        attngen.MultiheadAttention.from_torch(torch.nn.MultiheadAttention(64, 4, dropout=0.1))
    with pytest.raises(ValueError, match=r"add_bias_kv"):
        attngen.MultiheadAttention.from_torch(
            torch.nn.MultiheadAttention(64, 4, add_bias_kv=True).eval())
    with pytest.raises(ValueError, match=r"w_k|d_model|heads"):
        attngen.MultiheadAttention(randn(8, 8), randn(8, 6), randn(8, 6), randn(8, 8), num_heads=2)
    with pytest.raises(ValueError, match=r"x: expected 3 dimensions"):
        ours.attend(torch.randn(2, 3, 8, 64))
