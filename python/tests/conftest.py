"""Shared pieces of the Python tests: the fp64 reference and random inputs.

The reference is PyTorch 1.13's own attention math, softmax(q k^T * scale + mask) v, in float64
(PyTorch 1.13 has no public scaled_dot_product_attention to compare with).
"""

import math

import numpy as np
import pytest
import torch

import attngen

# Two threads for both libraries, as the benchmark and CI's machine have.
torch.set_num_threads(2)
attngen.set_num_threads(2)


def reference(q, k, v, causal=False, scale=None, key_lengths=None, mask=None, score_mod=None):
    """attngen's semantics in float64: GQA (kv head h // (H / H_kv)), causal aligned
    bottom-right, key lengths per batch element, a bool mask (True: allowed) broadcast to
    [B, H, Nq, Nk], score_mod(s) applied to the scaled scores [B, H, Nq, Nk]; a row with no
    allowed key gives zeros. Returns (out, lse, probs)."""
    q, k, v = (torch.as_tensor(np.asarray(t) if not torch.is_tensor(t) else t).double()
               for t in (q, k, v))
    B, H, Nq, D = q.shape
    Nk = k.shape[2]
    group = H // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    s = q @ k.transpose(-2, -1) * scale
    if score_mod is not None:
        s = score_mod(s)
    allowed = torch.ones(B, H, Nq, Nk, dtype=torch.bool)
    if causal:
        i = torch.arange(Nq).unsqueeze(1)
        j = torch.arange(Nk).unsqueeze(0)
        allowed &= j <= i + Nk - Nq
    if key_lengths is not None:
        lengths = torch.as_tensor(np.asarray(key_lengths)).long()
        allowed &= (torch.arange(Nk) < lengths.view(B, 1, 1, 1))
    if mask is not None:
        allowed &= mask
    s = s.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    probs = torch.exp(s - lse.unsqueeze(-1)).nan_to_num(0.0)
    out = probs @ v
    return out, lse, probs


def assert_close(actual, expected, atol=2e-5, rtol=1e-4):
    """A float32 kernel against the float64 reference: errors of a few float32 roundings."""
    actual = torch.as_tensor(np.asarray(actual) if not torch.is_tensor(actual) else actual)
    torch.testing.assert_close(actual.double(), expected.double(), atol=atol, rtol=rtol)


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
