"""attngen.MultiheadAttention: the runtime's multi-head layer with the call of PyTorch's
torch.nn.MultiheadAttention (docs/python.md says what it takes and what it refuses)."""

from . import _attngen


def _is_torch(x):
    return type(x).__module__.startswith("torch")


def _swap01(x):
    """The view of x with its first two dims swapped (torch or NumPy)."""
    return x.transpose(0, 1) if _is_torch(x) else x.swapaxes(0, 1)


def _empty(like, shape):
    """A new float32 array of like's library."""
    if _is_torch(like):
        import torch

        return torch.empty(shape, dtype=torch.float32)
    import numpy

    return numpy.empty(shape, numpy.float32)


def _ignored_keys(key_padding_mask):
    """PyTorch's key_padding_mask (bool: True ignores the key; float: added, -inf ignores it) as
    a bool tensor of the ignored keys. Float values other than 0 and -inf are refused."""
    import torch

    if key_padding_mask.dtype == torch.bool:
        return key_padding_mask
    ignored = key_padding_mask == float("-inf")
    if not bool(torch.all(ignored | (key_padding_mask == 0))):
        raise ValueError("key_padding_mask: an additive mask with values other than 0 and -inf; "
                         "attngen's layer takes key lengths, not scores to add")
    return ignored


def key_lengths_from_padding(key_padding_mask, batch, keys):
    """Key lengths (int32 [batch]) from PyTorch's key_padding_mask [batch, keys], which must
    ignore a suffix of the keys in each row: attngen's kernels mask padding by length."""
    import torch

    if tuple(key_padding_mask.shape) != (batch, keys):
        raise ValueError(f"key_padding_mask: shape {tuple(key_padding_mask.shape)}, expected "
                         f"{(batch, keys)}")
    allowed = ~_ignored_keys(key_padding_mask)
    lengths = allowed.sum(1, dtype=torch.int32)
    if not bool(torch.all(allowed == (torch.arange(keys) < lengths.unsqueeze(1)))):
        raise ValueError("key_padding_mask: ignores keys that are not a suffix of their row; "
                         "attngen masks padding by key lengths (keys at and after the length)")
    return lengths


def _causal_attn_mask(attn_mask, L, S):
    """Whether PyTorch's attn_mask (bool: True forbids; float: added) is the causal mask
    (torch.nn.Transformer.generate_square_subsequent_mask); anything else is refused."""
    import torch

    if attn_mask.dim() == 2 and L == S and tuple(attn_mask.shape) == (L, S):
        future = torch.ones(L, S, dtype=torch.bool).triu(1)
        if attn_mask.dtype == torch.bool:
            forbidden = attn_mask
        else:
            forbidden = attn_mask == float("-inf")
            if not bool(torch.all(forbidden | (attn_mask == 0))):
                forbidden = None
        if forbidden is not None and bool(torch.all(forbidden == future)):
            return True
    raise ValueError("attn_mask: attngen's layer takes the causal mask only (an [L, L] mask "
                     "forbidding the keys after each query, or is_causal=True)")


class MultiheadAttention:
    """The multi-head layer: Q = x W_Q + b_Q, K = m W_K + b_K, V = m W_V + b_V, attention per
    head (grouped-query when kv_heads < num_heads), concatenated, times W_O plus b_O.

    Weights are input-dim first (x W), NumPy arrays or torch tensors, and are copied:
    w_q [d_model, H*d_k], w_k [d_mem, H_kv*d_k], w_v [d_mem, H_kv*d_v], w_o [H*d_v, d_out].
    All four are float32, or all bfloat16 or float16: the type of the layer's inputs and output.
    """

    def __init__(self, w_q, w_k, w_v, w_o, *, num_heads, b_q=None, b_k=None, b_v=None,
                 b_o=None, kv_heads=None, scale=None, schedule=None, batch_first=True):
        self.num_heads = num_heads
        self.batch_first = batch_first
        self._config = dict(heads=num_heads, kv_heads=kv_heads or 0, scale=scale,
                            schedule=schedule or "")
        self._weights = (w_q, w_k, w_v, w_o)
        self._biases = dict(b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o)
        # The runtime fixes causality when a layer is made; the causal one is made on first use.
        self._layers = {False: self._make(False)}
        self.kv_heads = self._layers[False].kv_heads

    def _make(self, causal):
        return _attngen._MultiheadAttention(*self._weights, **self._biases, causal=causal,
                                            **self._config)

    def _layer(self, causal):
        if causal not in self._layers:
            self._layers[causal] = self._make(causal)
        return self._layers[causal]

    @classmethod
    def from_torch(cls, module, schedule=None):
        """The layer of a torch.nn.MultiheadAttention's weights (packed in_proj_weight, or
        q/k/v_proj_weight when kdim or vdim differ from embed_dim; biases; batch_first).
        Refuses add_bias_kv, add_zero_attn, kdim != vdim and dropout in training mode."""
        import torch

        if not isinstance(module, torch.nn.MultiheadAttention):
            raise TypeError(f"expected a torch.nn.MultiheadAttention, got {type(module).__name__}")
        if module.bias_k is not None or module.add_zero_attn:
            raise ValueError("add_bias_kv and add_zero_attn add keys that attngen's layer lacks")
        if module.kdim != module.vdim:
            raise ValueError(f"kdim {module.kdim} != vdim {module.vdim}: attngen's layer projects "
                             "keys and values from one memory")
        if module.training and module.dropout > 0:
            raise ValueError(f"dropout {module.dropout} in training mode: attngen computes "
                             "inference; call module.eval() first")
        E = module.embed_dim
        with torch.no_grad():
            if module._qkv_same_embed_dim:
                w = module.in_proj_weight
                w_q, w_k, w_v = w[:E], w[E:2 * E], w[2 * E:]
            else:
                w_q, w_k, w_v = module.q_proj_weight, module.k_proj_weight, module.v_proj_weight
            weights = [t.detach().t().contiguous() for t in (w_q, w_k, w_v, module.out_proj.weight)]
            biases = {}
            if module.in_proj_bias is not None:
                b = module.in_proj_bias.detach()
                biases = dict(b_q=b[:E], b_k=b[E:2 * E], b_v=b[2 * E:])
            if module.out_proj.bias is not None:
                biases["b_o"] = module.out_proj.bias.detach()
        return cls(*weights, **biases, num_heads=module.num_heads, schedule=schedule,
                   batch_first=module.batch_first)

    def attend(self, x, memory=None, *, key_lengths=None, causal=False, out=None, **modifiers):
        """x [B, Nq, d_model], memory [B, Nk, d_mem] or None (self-attention), key_lengths int
        [B] -> y [B, Nq, d_out], in x's library: the runtime's call, batch first. The keywords
        of attngen.attention's modifiers (softcap, alibi_slopes, bias, window_left, window_right,
        prefix_lengths, q_segments, kv_segments) modify the attention inside the layer, whose
        queries are x's rows, whose keys are memory's and whose heads are the layer's."""
        return self._layer(causal).forward(x, memory, key_lengths, out, **modifiers)

    def forward(self, query, key=None, value=None, key_padding_mask=None, need_weights=False,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """torch.nn.MultiheadAttention's call: returns (attn_output, None). key and value must
        be the same tensor (or None, or query itself for self-attention); key_padding_mask
        must ignore a suffix of each row; attn_mask may only be the causal mask.
        need_weights=True is refused: the layer does not compute averaged weights."""
        if need_weights:
            raise ValueError("need_weights=True: attngen's layer does not return attention "
                             "weights; pass need_weights=False")
        if key is None:
            key = query
        if value is None:
            value = key
        if value is not key and not (_is_torch(key) and _is_torch(value) and key.is_set_to(value)):
            raise ValueError("key and value must be the same tensor: attngen's layer projects "
                             "keys and values from one memory")
        self_attention = key is query
        unbatched = len(query.shape) == 2
        x, memory = query, key
        if unbatched:
            x, memory = x[None], memory[None]
        elif not self.batch_first:
            x, memory = _swap01(x), _swap01(memory)
        B, L, S = x.shape[0], x.shape[1], memory.shape[1]
        causal = bool(is_causal)
        if is_causal and L != S:
            raise ValueError(f"is_causal with {L} queries and {S} keys: PyTorch aligns the causal "
                             "mask top-left and attngen bottom-right; they agree when L == S")
        if attn_mask is not None:
            causal = _causal_attn_mask(attn_mask, L, S)
        lengths = None
        if key_padding_mask is not None:
            mask = key_padding_mask[None] if unbatched else key_padding_mask
            lengths = key_lengths_from_padding(mask, B, S)
        layer = self._layer(causal)
        memory = None if self_attention else memory
        if unbatched:
            return layer.forward(x, memory, lengths, None)[0], None
        if self.batch_first:
            return layer.forward(x, memory, lengths, None), None
        # Sequence-first output, as PyTorch returns it: written through a batch-first view.
        y = _empty(query, (L, B, layer.d_out))
        layer.forward(x, memory, lengths, _swap01(y))
        return y, None

    __call__ = forward
