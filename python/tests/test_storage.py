"""16-bit storage: bfloat16 and float16 tensors in, the same type out, computed in float32.

A 16-bit kernel's error against the fp64 reference on the same (rounded) inputs is the output's
own rounding: half an ulp of the type, relative to the largest output (docs/api.md, "Storage
types"); lse stays float32."""

import numpy as np
import pytest
import torch

import attngen
from conftest import assert_close, randn, reference


def compiled_storages():
    return {k["variant"].split("storage:")[1].split(",")[0] for k in attngen.list_kernels()
            if k["variant"].startswith("op:attention,")}


UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
SPEC = {torch.bfloat16: "bf16", torch.float16: "f16"}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("causal", [False, True])
def test_torch_16_bit_tensors_give_the_same_type(dtype, causal):
    if SPEC[dtype] not in compiled_storages():
        pytest.skip("this build compiles no " + SPEC[dtype] + " attention kernel")
    q, k, v = (torch.from_numpy(randn(2, 4, n, 64, seed=s)).to(dtype)
               for s, n in ((1, 17), (2, 33), (3, 33)))
    out, lse = attngen.attention(q, k, v, causal=causal, return_lse=True)
    assert out.dtype == dtype and lse.dtype == torch.float32
    ref_out, ref_lse, _ = reference(q, k, v, causal=causal)
    bound = UNIT_ROUNDOFF[dtype] * ref_out.abs().max().item()
    torch.testing.assert_close(out.double(), ref_out, atol=bound, rtol=0)
    assert_close(lse, ref_lse)


def test_numpy_float16_arrays_give_float16():
    if "f16" not in compiled_storages():
        pytest.skip("this build compiles no f16 attention kernel")
    q, k, v = (randn(1, 2, 9, 24, seed=s).astype(np.float16) for s in (4, 5, 6))
    out = attngen.attention(q, k, v)
    assert isinstance(out, np.ndarray) and out.dtype == np.float16
    ref_out = reference(q, k, v)[0]
    bound = 2.0 ** -11 * ref_out.abs().max().item()
    torch.testing.assert_close(torch.from_numpy(out).double(), ref_out, atol=bound, rtol=0)


def test_inputs_of_different_types_are_refused():
    q, k, v = (torch.from_numpy(randn(1, 2, 5, 8, seed=s)) for s in (7, 8, 9))
    with pytest.raises(ValueError, match=r"v has dtype float32 but k has bfloat16"):
        attngen.attention(q, k.to(torch.bfloat16), v)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_float32_queries_with_a_16_bit_cache(dtype):
    # A decode step against a bfloat16 or float16 KV cache: the output is float32, as q, and
    # computed in float32 from the cache's exact values.
    if not any(k["storage"] == "float32" and k["kv_storage"] == str(dtype).split(".")[1]
               for k in attngen.list_kernels()):
        pytest.skip("this build compiles no kernel with a " + SPEC[dtype] + " KV cache")
    q = torch.from_numpy(randn(2, 8, 1, 64, seed=10))
    k, v = (torch.from_numpy(randn(2, 2, 300, 64, seed=s)).to(dtype) for s in (11, 12))
    out, lse = attngen.attention(q, k, v, causal=True, return_lse=True)
    assert out.dtype == torch.float32
    ref_out, ref_lse, _ = reference(q, k, v, causal=True)
    assert_close(out, ref_out)
    assert_close(lse, ref_lse)


def compiled_mha_storages():
    return {k["variant"].split("storage:")[1].split(",")[0] for k in attngen.list_kernels()
            if k["variant"].startswith("op:mha,")}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_multihead_layer_in_16_bit(dtype):
    # A torch layer converted to the type gives attngen's layer 16-bit weights; x in that type
    # gives y in it, within the output's rounding of the layer computed in float64 from the same
    # rounded weights and input.
    if SPEC[dtype] not in compiled_mha_storages():
        pytest.skip("this build compiles no " + SPEC[dtype] + " mha kernel")
    torch.manual_seed(3)
    layer = torch.nn.MultiheadAttention(48, 4, batch_first=True).eval()
    with torch.no_grad():
        layer.in_proj_bias.normal_()
    layer = layer.to(dtype)
    x = torch.randn(2, 19, 48).to(dtype)
    ours = attngen.MultiheadAttention.from_torch(layer)
    y, _ = ours(x, x, x, need_weights=False)
    assert y.dtype == dtype and y.shape == x.shape
    exact = layer.to(torch.float64)
    with torch.no_grad():
        want = exact(x.double(), x.double(), x.double(), need_weights=False)[0]
    bound = 2 * UNIT_ROUNDOFF[dtype] * want.abs().max().item()
    torch.testing.assert_close(y.double(), want, atol=bound, rtol=0)
