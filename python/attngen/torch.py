"""attngen.torch.scaled_dot_product_attention: PyTorch's attention signature and semantics on
attngen's kernels, for CPU float32 tensors, and the same as the operator
torch.ops.attngen.scaled_dot_product_attention.

Masks that attngen's kernels express (none, causal with L == S, key padding) run attngen's
kernels; any other mask runs PyTorch's own computation in this module, with a FallbackWarning.
"""

import math
import warnings

import torch

from . import masks
from ._attngen import attention


class FallbackWarning(UserWarning):
    """A call ran PyTorch's computation because attngen's kernels cannot express its mask.
    warnings.simplefilter("error", FallbackWarning) turns it into an error."""


def _fold(x, batch, heads):
    """x [..., N, E] as [batch, heads, N, E]: a view when x's strides allow one."""
    return x.reshape(batch, heads, x.shape[-2], x.shape[-1])


def _batch_and_heads(shape):
    """The leading dims as (batch, heads): [B, H] and [..., H] as (product of all but the last,
    the last); [N] as (N, 1), so that a key padding mask of PyTorch's [N, L, E] calls (N often
    batch times heads) becomes key lengths; none as (1, 1)."""
    if len(shape) < 2:
        return (shape[0] if shape else 1), 1
    return math.prod(shape[:-1]), shape[-1]


def _reference(query, key, value, attn_mask, is_causal, scale):
    """PyTorch's attention, computed with PyTorch's operations. A row with no allowed key gives
    zeros, as attngen's kernels do, where PyTorch's own math gives NaN."""
    L, S = query.shape[-2], key.shape[-2]
    if query.dim() > 2 and key.shape[-3] != query.shape[-3]:  # Grouped-query heads.
        group = query.shape[-3] // key.shape[-3]
        key, value = key.repeat_interleave(group, -3), value.repeat_interleave(group, -3)
    scores = query @ key.transpose(-2, -1) * scale
    if is_causal:
        scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask
    probs = torch.softmax(scores, dim=-1)
    probs = probs.masked_fill(scores.amax(-1, keepdim=True) == float("-inf"), 0.0)
    return probs @ value


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """softmax(query key^T * scale + mask) value, as torch.nn.functional's (PyTorch 2).

    query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev]: float32 CPU tensors
    whose leading dims match, or whose last leading dim (heads) of key and value divides that of
    query (grouped-query attention). attn_mask: bool (True: the key takes part) or additive
    float, broadcast to [..., L, S]. is_causal: query i sees keys j <= i (top-left aligned, as
    in PyTorch). dropout_p must be 0: attngen computes inference. See docs/python.md.
    """
    if dropout_p != 0.0:
        raise ValueError(f"dropout_p={dropout_p}: attngen has no dropout; pass dropout_p=0.0 "
                         "(e.g. call the model in eval mode)")
    _check_tensors(query, key, value)
    # Under no_grad, tensors that require grad (a model's parameters' outputs) are read as they
    # are; attngen.attention itself refuses them so that no gradient path is lost unnoticed.
    if query.requires_grad or key.requires_grad or value.requires_grad:
        query, key, value = query.detach(), key.detach(), value.detach()
    lead, kv_lead = query.shape[:-2], key.shape[:-2]
    if kv_lead != value.shape[:-2] or len(lead) != len(kv_lead):
        raise ValueError(f"query {tuple(query.shape)}, key {tuple(key.shape)}, value "
                         f"{tuple(value.shape)}: leading dims must match")
    if len(lead) == 2:
        (batch, heads), (kv_batch, kv_heads) = lead, kv_lead
    else:
        (batch, heads), (kv_batch, kv_heads) = _batch_and_heads(lead), _batch_and_heads(kv_lead)
    L, S = query.shape[-2], key.shape[-2]
    plan = masks.plan(attn_mask, is_causal, lead, batch, L, S)
    if plan is None or kv_batch != batch or lead[:-1] != kv_lead[:-1]:
        warnings.warn("attngen.torch.scaled_dot_product_attention: the mask or the broadcast of "
                      "the leading dims is not one attngen's kernels compute; PyTorch computes "
                      "this call", FallbackWarning, stacklevel=2)
        if scale is None:
            scale = 1.0 / math.sqrt(query.shape[-1])
        return _reference(query, key, value, attn_mask, is_causal, scale)
    if len(lead) == 2:  # [B, H, N, E] already: no views to make (each costs about 1.5 us).
        return attention(query, key, value, causal=plan.causal, scale=scale,
                         key_lengths=plan.key_lengths)
    out = attention(_fold(query, batch, heads), _fold(key, batch, kv_heads),
                    _fold(value, batch, kv_heads), causal=plan.causal, scale=scale,
                    key_lengths=plan.key_lengths)
    return out.view(*lead, L, value.shape[-1])


def _check_tensors(*tensors):
    for name, t in zip(("query", "key", "value"), tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() < 2:
            raise ValueError(f"{name}: expected at least 2 dimensions [..., N, E], got "
                             f"{tuple(t.shape)}")
        if t.requires_grad and torch.is_grad_enabled():
            raise ValueError(f"{name}: requires grad, and attngen has no backward; call under "
                             "torch.no_grad() or torch.inference_mode()")


def _register_operator():
    """torch.ops.attngen.scaled_dot_product_attention, for the CPU, where torch.library exists
    (PyTorch 1.13 and later). Returns whether it is registered."""
    library = getattr(torch, "library", None)
    if library is None or not hasattr(library, "Library"):
        return False
    try:
        lib = library.Library("attngen", "DEF")
    except RuntimeError:
        return True  # Registered by an earlier import of this module (importlib.reload).
    lib.define("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
               "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, "
               "float? scale=None) -> Tensor")
    lib.impl("scaled_dot_product_attention", scaled_dot_product_attention, "CPU")
    # The registration lasts as long as the Library object.
    globals()["_library"] = lib
    return True


operator_registered = _register_operator()
