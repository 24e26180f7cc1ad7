#!/usr/bin/env python3
"""The modifier flags of `attngen attention` and `attngen mha` against a numpy float64 reference written here from
the semantics of runtime/include/attngen/modifiers.h, and their bad input: one line on stderr,
exit code 2, no output file.

Usage: cli_modifiers_test.py PATH_TO_ATTNGEN [unittest options]
"""
import sys
import unittest

import numpy as np

import cli_test
from cli_test import relative_error


def modified_reference(q, k, v, causal=False, softcap=None, slopes=None, bias=None, left=None,
                       right=None, prefix=None, q_seg=None, kv_seg=None):
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    b, h, nq, dk = q.shape
    nk = k.shape[2]
    k = np.repeat(k, h // k.shape[1], axis=1)
    v = np.repeat(v, h // v.shape[1], axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) / np.sqrt(dk)
    p = np.arange(nq)[:, None] + (nk - nq)
    j = np.arange(nk)[None, :]
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    if slopes is not None:
        s = s - slopes.astype(np.float64)[None, :, None, None] * np.abs(p - j)[None, None]
    if bias is not None:
        s = s + bias.astype(np.float64)
    allowed = np.ones((b, 1, nq, nk), dtype=bool)
    if causal:
        seen = j <= p
        if prefix is not None:
            seen = seen[None] | (j[None] < np.asarray(prefix)[:, None, None])
        allowed &= seen[:, None] if seen.ndim == 3 else seen[None, None]
    if left is not None:
        allowed &= (j >= p - left)[None, None]
    if right is not None:
        allowed &= (j <= p + right)[None, None]
    if q_seg is not None:
        allowed &= (np.asarray(q_seg)[:, :, None] == np.asarray(kv_seg)[:, None, :])[:, None]
    allowed = np.broadcast_to(allowed, s.shape) & (s > -np.inf)
    empty = ~allowed.any(axis=-1, keepdims=True)
    s = np.where(allowed, s, -np.inf)
    m = np.where(empty, 0, s.max(axis=-1, keepdims=True))
    w = np.where(allowed, np.exp(s - m), 0.0)
    l = w.sum(axis=-1, keepdims=True)
    pr = np.where(empty, 0.0, w / np.where(empty, 1, l))
    return np.einsum("bhij,bhjd->bhid", pr, v)


class CliModifierTest(unittest.TestCase):
    # The helpers of cli_test's CliTest, without its tests.
    setUp, tearDown = cli_test.CliTest.setUp, cli_test.CliTest.tearDown
    path, save, rand = cli_test.CliTest.path, cli_test.CliTest.save, cli_test.CliTest.rand
    run_cli, assert_bad_input = cli_test.CliTest.run_cli, cli_test.CliTest.assert_bad_input
    assert_rejected = cli_test.CliTest.assert_rejected
    attention_inputs = cli_test.CliTest.attention_inputs
    attention_args = cli_test.CliTest.attention_args

    def run_attention(self, q, k, v, *flags):
        result = self.run_cli(*self.attention_args(q, k, v), *flags)
        self.assertEqual(result.returncode, 0, result.stderr)
        return np.load(self.path("o.npy")), result.stdout

    def test_causal_window_segments_and_key_lengths(self):
        q, k, v = self.attention_inputs(nq=20, nk=37)
        kv_seg = np.repeat(np.arange(5), 8)[:37][None].repeat(2, axis=0).astype(np.int32)
        q_seg = kv_seg[:, 37 - 20:].copy()
        out, stdout = self.run_attention(
            q, k, v, "--causal", "--window-left", "6", "--q-segments", self.save("qs.npy", q_seg),
            "--kv-segments", self.save("ks.npy", kv_seg))
        expected = modified_reference(q, k, v, causal=True, left=6, q_seg=q_seg, kv_seg=kv_seg)
        self.assertLess(relative_error(out, expected), 1e-5)
        self.assertIn("window", stdout)

    def test_softcap_alibi_and_broadcast_bias(self):
        q, k, v = self.attention_inputs(nq=9, nk=21)
        q *= 4
        slopes = np.array([0.5, 0.25, 0.125, 0.0625], dtype=np.float32)
        bias = self.rand(1, 4, 1, 21)
        out, _ = self.run_attention(
            q, k, v, "--softcap", "1.5", "--alibi", self.save("m.npy", slopes), "--bias",
            self.save("b.npy", bias))
        expected = modified_reference(q, k, v, softcap=1.5, slopes=slopes, bias=bias)
        self.assertLess(relative_error(out, expected), 1e-5)

    def test_prefix_lengths_widen_causal(self):
        q, k, v = self.attention_inputs(nq=12, nk=12)
        prefix = np.array([5, 12], dtype=np.int64)
        out, _ = self.run_attention(q, k, v, "--causal", "--prefix-lengths",
                                    self.save("p.npy", prefix))
        expected = modified_reference(q, k, v, causal=True, prefix=prefix)
        self.assertLess(relative_error(out, expected), 1e-5)

    def mha_args(self, x, heads, *flags):
        """`attngen mha` self-attention on x with fixed weights, and the weights."""
        d_model = x.shape[2]
        w = [self.rand(d_model, d_model) * 0.3 for _ in range(4)]
        args = ["mha", "--x", self.save("x.npy", x)]
        for name, weight in zip(["--wq", "--wk", "--wv", "--wo"], w):
            args += [name, self.save(name[2:] + ".npy", weight)]
        return args + ["--heads", str(heads), "--out", self.path("y.npy"), *flags], w

    def test_mha_modifiers_apply_to_its_attention(self):
        b, n, d_model, heads = 2, 14, 16, 2
        x = self.rand(b, n, d_model)
        slopes = np.array([0.5, 0.25], dtype=np.float32)
        seg = (np.arange(n) // 5)[None].repeat(b, axis=0).astype(np.int32)
        args, (wq, wk, wv, wo) = self.mha_args(
            x, heads, "--causal", "--window-left", "4", "--softcap", "2", "--alibi",
            self.save("m.npy", slopes), "--q-segments", self.save("qs.npy", seg), "--kv-segments",
            self.save("ks.npy", seg))
        result = self.run_cli(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        # The layer by its definition: heads of the projections, the modified attention, W_O.
        def heads_of(y):
            return y.reshape(b, n, heads, d_model // heads).transpose(0, 2, 1, 3)
        xd = x.astype(np.float64)
        o = modified_reference(heads_of(xd @ wq), heads_of(xd @ wk), heads_of(xd @ wv),
                               causal=True, left=4, softcap=2.0, slopes=slopes, q_seg=seg,
                               kv_seg=seg)
        expected = o.transpose(0, 2, 1, 3).reshape(b, n, d_model) @ wo
        self.assertLess(relative_error(np.load(self.path("y.npy")), expected), 1e-5)

    def test_mha_slopes_of_the_wrong_length(self):
        args, _ = self.mha_args(self.rand(1, 6, 16), 2, "--alibi", self.save("m.npy", self.rand(3)))
        self.assert_rejected(args, "alibi_slopes shape[0] (H) is 3 but the head count H of the "
                             "layer is 2")

    def test_bias_that_does_not_broadcast(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v) + ["--bias", self.save("b.npy", self.rand(2, 3, 1, 29))]
        self.assert_rejected(args, "bias shape[1] is 3, which does not broadcast to H = 4")

    def test_slopes_of_the_wrong_length(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v) + ["--alibi", self.save("m.npy", self.rand(3))]
        self.assert_rejected(args, "alibi_slopes shape[0] (H) is 3")

    def test_segments_of_the_wrong_shape(self):
        q, k, v = self.attention_inputs()
        seg = np.zeros((2, 13), dtype=np.int32)
        args = self.attention_args(q, k, v) + ["--q-segments", self.save("qs.npy", seg),
                                               "--kv-segments", self.save("ks.npy", seg)]
        self.assert_rejected(args, "kv_segments shape[1] (Nk) is 13 but Nk of k is 29")

    def test_negative_window(self):
        q, k, v = self.attention_inputs()
        self.assert_rejected(self.attention_args(q, k, v) + ["--window-left", "-2"],
                             "window_left is -2")

    def test_prefix_lengths_without_causal(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v) + [
            "--prefix-lengths", self.save("p.npy", np.array([1, 2], dtype=np.int32))]
        self.assert_rejected(args, "need causal attention")

    def test_prefix_lengths_outside_the_keys(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v) + [
            "--causal", "--prefix-lengths", self.save("p.npy", np.array([1, 30], dtype=np.int32))]
        self.assert_rejected(args, "prefix_lengths[1] is 30, outside [0, Nk = 29]")

    def test_float_segments(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v) + [
            "--q-segments", self.save("qs.npy", self.rand(2, 13)),
            "--kv-segments", self.save("ks.npy", self.rand(2, 29))]
        self.assert_rejected(args, "query segments have dtype float32")


if __name__ == "__main__":
    cli_test.ATTNGEN = sys.argv.pop(1)
    unittest.main()
