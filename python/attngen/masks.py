"""Which PyTorch attention masks attngen's kernels can express, and as what.

A kernel takes a causal flag (bottom-right aligned) and key lengths per batch element. A dense
mask maps onto them when it is one of two patterns; every other mask is left to the caller's
fallback. The checks are a few vectorized torch operations on the mask, much cheaper than the
attention they enable.
"""

import torch


class Plan:
    """What to pass to attngen.attention instead of a dense mask."""

    def __init__(self, causal=False, key_lengths=None):
        self.causal = causal
        self.key_lengths = key_lengths  # int32 [B], or None


# The plan of a call without a mask, made once: calls on small shapes count microseconds.
NO_MASK = Plan()


def allowed_keys(attn_mask):
    """A boolean mask (True: the key takes part) from PyTorch's boolean or additive mask, or
    None for an additive mask with values other than 0 and -inf (a bias, which no kernel adds)."""
    if attn_mask.dtype == torch.bool:
        return attn_mask
    if not attn_mask.is_floating_point():
        raise ValueError(f"attn_mask: dtype {attn_mask.dtype}; PyTorch's attention takes a bool "
                         "or a floating-point mask")
    allowed = attn_mask == 0
    if not bool(torch.all(allowed | (attn_mask == float("-inf")))):
        return None
    return allowed


def plan(attn_mask, is_causal, lead, batch, L, S):
    """A Plan for a call on [*lead, L, E] queries (folded into `batch` batch elements) and S
    keys, or None when attngen's kernels cannot express the mask (PyTorch's own computation
    must run instead).

    is_causal follows PyTorch: query i sees keys j <= i, aligned top-left. attngen's causal mask
    is aligned bottom-right (j <= i + S - L); the two agree when L == S only.
    """
    if is_causal:
        if attn_mask is not None:
            raise ValueError("attn_mask and is_causal: pass one of them, as in PyTorch")
        return Plan(causal=True) if L == S else None
    if attn_mask is None:
        return NO_MASK
    allowed = allowed_keys(attn_mask)
    if allowed is None:
        return None
    try:
        allowed = allowed.expand(*lead, L, S)  # A view: nothing the size of the scores is made.
    except RuntimeError as e:
        raise ValueError(f"attn_mask: shape {tuple(attn_mask.shape)} does not broadcast to "
                         f"{(*lead, L, S)} ({e})") from None
    if L == S and bool(torch.all(allowed == torch.ones(L, S, dtype=torch.bool).tril())):
        return Plan(causal=True)
    # Key padding: each row allows a prefix of the keys, of one length per batch element.
    counts = allowed.sum(-1, dtype=torch.int32)  # [*lead, L]
    if not bool(torch.all(allowed == (torch.arange(S) < counts.unsqueeze(-1)))):
        return None
    per_batch = counts.reshape(batch, -1)
    lengths = per_batch[:, 0]
    if not bool(torch.all(per_batch == lengths.unsqueeze(1))):
        return None
    if bool(torch.all(lengths == S)):
        return NO_MASK
    return Plan(key_lengths=lengths.contiguous())
