"""A small PyTorch transformer encoder layer with its self-attention swapped for attngen's.

Runs torch.nn.TransformerEncoderLayer as PyTorch ships it and again with its self_attn replaced
by attngen's multi-head layer (same weights), on a padded batch, and prints the largest
difference. Exits with 1 when the outputs differ by more than float32 rounding allows.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/encoder_layer.py
"""

import sys

import torch

import attngen


class AttngenSelfAttention(torch.nn.Module):
    """torch.nn.MultiheadAttention's call on attngen's layer, for a module's self_attn slot.

    In eval mode TransformerEncoderLayer may skip self_attn for PyTorch's fused encoder kernel;
    it first checks self_attn._qkv_same_embed_dim, which is False here, so that the layer calls
    this module's forward.
    """

    _qkv_same_embed_dim = False

    def __init__(self, module):
        super().__init__()
        self.batch_first = module.batch_first
        self.layer = attngen.MultiheadAttention.from_torch(module)
        self.calls = 0

    def forward(self, query, key, value, key_padding_mask=None, need_weights=False,
                attn_mask=None, **kwargs):
        self.calls += 1
        return self.layer(query, key, value, key_padding_mask=key_padding_mask,
                          need_weights=need_weights, attn_mask=attn_mask, **kwargs)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(2)
    encoder = torch.nn.TransformerEncoderLayer(d_model=128, nhead=8, dim_feedforward=256,
                                               batch_first=True).eval()
    x = torch.randn(3, 50, 128)
    # The second and third sequences are padded to 50 positions.
    padding = torch.arange(50) >= torch.tensor([50, 31, 7]).view(3, 1)
    with torch.no_grad():
        want = encoder(x, src_key_padding_mask=padding)
        encoder.self_attn = AttngenSelfAttention(encoder.self_attn)
        got = encoder(x, src_key_padding_mask=padding)
    assert encoder.self_attn.calls == 1, "the layer did not call attngen's attention"
    # Padded positions are outputs too (their queries attend to the real keys), so every
    # position is compared. PyTorch's own encoder path fills them with zeros when it takes its
    # nested-tensor fast path, which TransformerEncoder (not the layer) does.
    diff = (got - want).abs().max().item()
    print(f"max |attngen - pytorch| = {diff:.3g} over {tuple(got.shape)}")
    if not diff <= 1e-4:
        print("mismatch: attngen's layer differs from PyTorch's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
