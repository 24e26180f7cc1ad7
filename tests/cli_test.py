#!/usr/bin/env python3
"""End-to-end tests of the attngen command line on .npy files made with numpy.

The reference here is written with numpy in float64, independently of the C++ reference.
Usage: cli_test.py PATH_TO_ATTNGEN [unittest options]
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ATTNGEN = None


def attention_reference(q, k, v, causal=False, scale=None, key_lengths=None):
    """O, LSE and P in float64, following docs/design.md section 1."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    b, h, nq, dk = q.shape
    hkv, nk = k.shape[1], k.shape[2]
    scale = 1.0 / np.sqrt(dk) if scale is None else scale
    k = np.repeat(k, h // hkv, axis=1)
    v = np.repeat(v, h // hkv, axis=1)
    s = np.einsum("bhid,bhjd->bhij", q, k) * scale
    allowed = np.ones((b, 1, nq, nk), dtype=bool)
    if key_lengths is not None:
        allowed &= (np.arange(nk)[None, :] < np.asarray(key_lengths)[:, None])[:, None, None, :]
    if causal:
        allowed &= (np.arange(nk)[None, :] <= np.arange(nq)[:, None] + (nk - nq))[None, None]
    allowed = np.broadcast_to(allowed, s.shape)
    s = np.where(allowed, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    empty = ~allowed.any(axis=-1, keepdims=True)
    w = np.where(allowed, np.exp(s - np.where(empty, 0, m)), 0.0)
    l = w.sum(axis=-1, keepdims=True)
    p = np.where(empty, 0.0, w / np.where(empty, 1, l))
    o = np.einsum("bhij,bhjd->bhid", p, v)
    lse = np.where(empty, -np.inf, m + np.log(np.where(empty, 1, l)))[..., 0]
    return o, lse, p


def mha_reference(x, memory, wq, wk, wv, wo, biases, heads, kv_heads, causal, key_lengths=None):
    x, memory = x.astype(np.float64), memory.astype(np.float64)
    bq, bk, bv, bo = (0.0 if b is None else b.astype(np.float64) for b in biases)
    q = x @ wq + bq
    k = memory @ wk + bk
    v = memory @ wv + bv
    bsz, nq, _ = x.shape
    nk = memory.shape[1]
    dk = wq.shape[1] // heads
    dv = wv.shape[1] // kv_heads
    q = q.reshape(bsz, nq, heads, dk).transpose(0, 2, 1, 3)
    k = k.reshape(bsz, nk, kv_heads, dk).transpose(0, 2, 1, 3)
    v = v.reshape(bsz, nk, kv_heads, dv).transpose(0, 2, 1, 3)
    o, _, _ = attention_reference(q, k, v, causal=causal, key_lengths=key_lengths)
    o = o.transpose(0, 2, 1, 3).reshape(bsz, nq, heads * dv)
    return o @ wo + bo


def relative_error(actual, expected):
    finite = np.isfinite(expected)
    scale = np.abs(expected[finite]).max()
    return np.abs(actual[finite] - expected[finite]).max() / scale


class CliTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.rng = np.random.default_rng(1234)

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def save(self, name, array):
        np.save(self.path(name), array)
        return self.path(name)

    def rand(self, *shape):
        return self.rng.uniform(-1, 1, size=shape).astype(np.float32)

    def run_cli(self, *args):
        return subprocess.run([ATTNGEN, *args], capture_output=True, text=True, timeout=120)

    def assert_bad_input(self, result, fragment):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("error", lines[0])
        self.assertIn(fragment, lines[0])

    # --- attention ---

    def attention_inputs(self, b=2, h=4, hkv=2, nq=13, nk=29, dk=16, dv=24):
        return self.rand(b, h, nq, dk), self.rand(b, hkv, nk, dk), self.rand(b, hkv, nk, dv)

    def attention_args(self, q, k, v, out="o.npy"):
        return ["attention", "--q", self.save("q.npy", q), "--k", self.save("k.npy", k),
                "--v", self.save("v.npy", v), "--out", self.path(out)]

    def test_attention_matches_numpy_float64(self):
        q, k, v = self.attention_inputs()
        result = self.run_cli(*self.attention_args(q, k, v))
        self.assertEqual(result.returncode, 0, result.stderr)
        out = np.load(self.path("o.npy"))
        self.assertEqual(out.dtype, np.float32)
        self.assertEqual(out.shape, (2, 4, 13, 24))
        expected, _, _ = attention_reference(q, k, v)
        self.assertLess(relative_error(out, expected), 1e-5)

    def test_attention_causal_key_lengths_lse_probs_and_scale(self):
        q, k, v = self.attention_inputs()
        lengths = np.array([29, 11], dtype=np.int64)
        args = self.attention_args(q, k, v) + [
            "--causal", "--scale", "0.2", "--key-lengths", self.save("l.npy", lengths),
            "--lse", self.path("lse.npy"), "--probs", self.path("p.npy")]
        for schedule in self.schedules():
            with self.subTest(schedule=schedule):
                result = self.run_cli(*args, "--schedule", schedule)
                self.assertEqual(result.returncode, 0, result.stderr)
                o, lse, p = attention_reference(q, k, v, True, 0.2, lengths)
                self.assertLess(relative_error(np.load(self.path("o.npy")), o), 1e-5)
                self.assertLess(relative_error(np.load(self.path("lse.npy")), lse), 1e-5)
                self.assertLess(relative_error(np.load(self.path("p.npy")), p), 1e-5)

    def test_attention_int32_key_lengths_with_fully_masked_batch(self):
        q, k, v = self.attention_inputs(b=2, h=2, hkv=2, nq=5, nk=7, dk=8, dv=8)
        lengths = np.array([0, 7], dtype=np.int32)
        args = self.attention_args(q, k, v) + [
            "--key-lengths", self.save("l.npy", lengths), "--lse", self.path("lse.npy")]
        result = self.run_cli(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        out, lse = np.load(self.path("o.npy")), np.load(self.path("lse.npy"))
        self.assertTrue(np.all(out[0] == 0))
        self.assertTrue(np.all(np.isneginf(lse[0])))
        self.assertFalse(np.isnan(out).any())

    # --- mha ---

    # --- 16-bit storage ---

    @staticmethod
    def to_bf16_bits(x):
        """float32 -> bfloat16 bit patterns (uint16), rounded to nearest even."""
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)

    @staticmethod
    def from_bf16_bits(bits):
        return (bits.astype(np.uint32) << 16).view(np.float32)

    def test_attention_float16_files_give_float16_output(self):
        q, k, v = (a.astype(np.float16) for a in self.attention_inputs())
        lengths = np.array([29, 11], dtype=np.int32)
        args = self.attention_args(q, k, v) + [
            "--causal", "--key-lengths", self.save("l.npy", lengths), "--lse", self.path("lse.npy")]
        for schedule in self.schedules_with_kernels("f16"):
            with self.subTest(schedule=schedule):
                result = self.run_cli(*args, "--schedule", schedule)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn("attention_f16", result.stdout)
                out = np.load(self.path("o.npy"))
                self.assertEqual(out.dtype, np.float16)
                o, lse, _ = attention_reference(q, k, v, True, None, lengths)
                # The output's own rounding: half an ulp of float16 (2^-11) relative to the largest.
                self.assertLess(relative_error(out.astype(np.float64), o), 2.0 ** -10)
                self.assertEqual(np.load(self.path("lse.npy")).dtype, np.float32)
                self.assertLess(relative_error(np.load(self.path("lse.npy")), lse), 1e-5)

    def test_attention_bfloat16_bit_patterns_with_dtype_bf16(self):
        q, k, v = (self.to_bf16_bits(a) for a in self.attention_inputs())
        args = self.attention_args(q, k, v) + ["--dtype", "bf16"]
        for schedule in self.schedules_with_kernels("bf16"):
            with self.subTest(schedule=schedule):
                result = self.run_cli(*args, "--schedule", schedule)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn("attention_bf16", result.stdout)
                out = np.load(self.path("o.npy"))
                self.assertEqual(out.dtype, np.uint16)
                o, _, _ = attention_reference(*(self.from_bf16_bits(a) for a in (q, k, v)))
                self.assertLess(relative_error(self.from_bf16_bits(out), o), 2.0 ** -7)

    def test_attention_float32_queries_with_a_bfloat16_cache(self):
        # A decode step: one query per head, K and V as bfloat16 bit patterns (--kv-dtype bf16),
        # the output float32 as Q.
        listed = [line.split() for line in self.run_cli("list").stdout.splitlines()]
        if not any(len(r) > 6 and r[2] == "float32" and r[3] == "bfloat16" for r in listed):
            self.skipTest("this build compiles no kernel with a bfloat16 KV cache")
        rng = np.random.default_rng(11)
        q = rng.uniform(-1, 1, (2, 4, 1, 24)).astype(np.float32)
        k, v = (self.to_bf16_bits(rng.uniform(-1, 1, (2, 2, 37, 24)).astype(np.float32))
                for _ in range(2))
        args = self.attention_args(q, k, v) + ["--kv-dtype", "bf16", "--causal"]
        result = self.run_cli(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("attention_f32_kvbf16", result.stdout)
        out = np.load(self.path("o.npy"))
        self.assertEqual(out.dtype, np.float32)
        o, _, _ = attention_reference(q, self.from_bf16_bits(k), self.from_bf16_bits(v), True)
        self.assertLess(relative_error(out, o), 1e-5)
        # K and V of Q's type with --kv-dtype bf16: one line naming the option, nothing written.
        os.remove(self.path("o.npy"))
        args = self.attention_args(q, self.from_bf16_bits(k).astype(np.float32), v)
        self.assert_rejected(args + ["--kv-dtype", "bf16"], "(--kv-dtype bf16)")
        result = self.run_cli(*self.attention_args(q, k, v), "--kv-dtype", "f8")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--kv-dtype", result.stderr)

    def test_uint16_file_without_dtype_bf16(self):
        q, k, v = (self.to_bf16_bits(a) for a in self.attention_inputs())
        self.assert_rejected(self.attention_args(q, k, v), "pass --dtype bf16")

    def test_inputs_of_different_dtypes(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q.astype(np.float16), k, v)
        self.assert_rejected(args, "has dtype float32, expected float16 (the dtype of Q)")
        args = self.attention_args(q, k, v) + ["--dtype", "bf16"]
        self.assert_rejected(args, "expected uint16 (bfloat16 bit patterns) (--dtype bf16)")

    def test_unknown_dtype(self):
        q, k, v = self.attention_inputs()
        result = self.run_cli(*self.attention_args(q, k, v), "--dtype", "f64")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--dtype", result.stderr)
        self.assertFalse(os.path.exists(self.path("o.npy")))

    def schedules_with_kernels(self, storage):
        """The schedules of the compiled attention kernels of a storage type (attngen list)."""
        result = self.run_cli("list")
        self.assertEqual(result.returncode, 0, result.stderr)
        # The kernel table's columns: kernel, op, storage, kv, mask, score, schedule, ...
        dtype = {"bf16": "bfloat16", "f16": "float16"}[storage]
        rows = [line.split() for line in result.stdout.splitlines()]
        schedules = sorted({r[6] for r in rows
                            if len(r) > 6 and r[1] == "attention" and r[2] == dtype})
        self.assertTrue(schedules, "no attention kernel stores " + storage)
        return schedules

    def test_mha_cross_attention_with_biases_gqa_and_causal(self):
        b, nq, nk, d_model, d_mem, heads, kv_heads, dk, dv, d_out = 2, 9, 17, 32, 24, 4, 2, 8, 6, 20
        x, m = self.rand(b, nq, d_model), self.rand(b, nk, d_mem)
        wq, wk = self.rand(d_model, heads * dk) * 0.3, self.rand(d_mem, kv_heads * dk) * 0.3
        wv, wo = self.rand(d_mem, kv_heads * dv) * 0.3, self.rand(heads * dv, d_out) * 0.3
        biases = [self.rand(heads * dk), self.rand(kv_heads * dk), self.rand(kv_heads * dv),
                  self.rand(d_out)]
        args = ["mha", "--x", self.save("x.npy", x), "--memory", self.save("m.npy", m),
                "--wq", self.save("wq.npy", wq), "--wk", self.save("wk.npy", wk),
                "--wv", self.save("wv.npy", wv), "--wo", self.save("wo.npy", wo),
                "--bq", self.save("bq.npy", biases[0]), "--bk", self.save("bk.npy", biases[1]),
                "--bv", self.save("bv.npy", biases[2]), "--bo", self.save("bo.npy", biases[3]),
                "--heads", str(heads), "--kv-heads", str(kv_heads), "--causal",
                "--out", self.path("y.npy")]
        result = self.run_cli(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        y = np.load(self.path("y.npy"))
        self.assertEqual(y.shape, (b, nq, d_out))
        expected = mha_reference(x, m, wq, wk, wv, wo, biases, heads, kv_heads, True)
        self.assertLess(relative_error(y, expected), 1e-5)

    def test_mha_self_attention_without_biases(self):
        b, n, d_model, heads = 1, 12, 16, 2
        x = self.rand(b, n, d_model)
        w = [self.rand(d_model, d_model) * 0.3 for _ in range(4)]
        args = ["mha", "--x", self.save("x.npy", x)]
        for name, weight in zip(["--wq", "--wk", "--wv", "--wo"], w):
            args += [name, self.save(name[2:] + ".npy", weight)]
        args += ["--heads", str(heads), "--out", self.path("y.npy")]
        result = self.run_cli(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        expected = mha_reference(x, x, *w, [None] * 4, heads, heads, False)
        self.assertLess(relative_error(np.load(self.path("y.npy")), expected), 1e-5)

    def test_mha_in_16_bit_storage(self):
        # X, the weights and Y as bfloat16 bit patterns (--dtype bf16) with float32 biases, then
        # as float16 files with float16 biases; a weight of another type is one error line.
        if "mha_bf16" not in self.run_cli("list").stdout:
            self.skipTest("no 16-bit mha kernel in this build")
        b, n, d_model, heads = 2, 13, 24, 3
        x = self.rand(b, n, d_model)
        w = [self.rand(d_model, d_model) * 0.3 for _ in range(4)]
        biases = [self.rand(d_model) for _ in range(4)]
        names = ["--wq", "--wk", "--wv", "--wo", "--bq", "--bk", "--bv", "--bo"]

        def run(x_file, weights, bias_files, dtype_args):
            args = ["mha", "--x", x_file]
            for name, path in zip(names, weights + bias_files):
                args += [name, path]
            return self.run_cli(*args, "--heads", str(heads), "--out", self.path("y.npy"),
                                *dtype_args)

        bits = [self.to_bf16_bits(a) for a in [x] + w]
        rounded = [self.from_bf16_bits(a) for a in bits]
        result = run(self.save("x.npy", bits[0]),
                     [self.save("w%d.npy" % i, a) for i, a in enumerate(bits[1:])],
                     [self.save("b%d.npy" % i, a) for i, a in enumerate(biases)], ["--dtype", "bf16"])
        self.assertEqual(result.returncode, 0, result.stderr)
        y = np.load(self.path("y.npy"))
        self.assertEqual(y.dtype, np.uint16)
        expected = mha_reference(rounded[0], rounded[0], *rounded[1:], biases, heads, heads, False)
        self.assertLess(relative_error(self.from_bf16_bits(y), expected), 2.0 ** -7)

        halves = [a.astype(np.float16) for a in [x] + w + biases]
        result = run(self.save("x.npy", halves[0]),
                     [self.save("w%d.npy" % i, a) for i, a in enumerate(halves[1:5])],
                     [self.save("b%d.npy" % i, a) for i, a in enumerate(halves[5:])], [])
        self.assertEqual(result.returncode, 0, result.stderr)
        y = np.load(self.path("y.npy"))
        self.assertEqual(y.dtype, np.float16)
        f = [a.astype(np.float32) for a in halves]
        expected = mha_reference(f[0], f[0], *f[1:5], f[5:], heads, heads, False)
        self.assertLess(relative_error(y.astype(np.float64), expected), 2.0 ** -10)

        os.remove(self.path("y.npy"))
        weights = [self.save("w%d.npy" % i, a) for i, a in enumerate(halves[1:5])]
        weights[2] = self.save("w2.npy", w[2])
        result = run(self.save("x.npy", halves[0]), weights, [], [])
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("has dtype float32, expected float16 (the dtype of X)", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertFalse(os.path.exists(self.path("y.npy")))

    # --- list ---

    def schedules(self):
        result = self.run_cli("list")
        self.assertEqual(result.returncode, 0, result.stderr)
        last = result.stdout.strip().splitlines()[-1]
        return [s.strip() for s in last.split(":")[-1].split(",")]

    def test_list_names_kernels_and_schedules(self):
        result = self.run_cli("list")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("attention_f32_reference", result.stdout)
        self.assertIn("mha_f32_causal_cpu_basic", result.stdout)
        self.assertEqual(set(self.schedules()), {"reference", "cpu_basic"} | set(self.schedules()))

    # --- bad input: one line on stderr, exit code 2, no output file ---

    def assert_rejected(self, args, fragment, out="o.npy"):
        result = self.run_cli(*args)
        self.assert_bad_input(result, fragment)
        self.assertFalse(os.path.exists(self.path(out)), "output written by a failed run")
        leftovers = [f for f in os.listdir(self.dir.name) if ".tmp-" in f]
        self.assertEqual(leftovers, [])

    def test_not_an_npy_file(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v)
        with open(self.path("q.npy"), "wb") as f:
            f.write(b"this is not numpy data at all")
        self.assert_rejected(args, "not an .npy file")

    def test_truncated_file(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v)
        data = open(self.path("k.npy"), "rb").read()
        with open(self.path("k.npy"), "wb") as f:
            f.write(data[:-10])
        self.assert_rejected(args, "truncated")

    def test_float64_input(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q.astype(np.float64), k, v)
        self.assert_rejected(args, "'<f8'")

    def test_fortran_order_input(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v)
        np.save(self.path("v.npy"), np.asfortranarray(v))
        self.assert_rejected(args, "Fortran")

    def test_wrong_rank(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q.reshape(2 * 4, 13, 16), k, v)
        self.assert_rejected(args, "rank 4")

    def test_mismatched_head_dim(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k[..., :8].copy(), v)
        self.assert_rejected(args, "d_k")

    def test_key_length_above_nk(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v) + [
            "--key-lengths", self.save("l.npy", np.array([3, 30], dtype=np.int32))]
        self.assert_rejected(args, "key_lengths[1]")

    def test_missing_input_file(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k, v)
        os.remove(self.path("v.npy"))
        self.assert_rejected(args, "cannot open")

    def test_unknown_schedule(self):
        q, k, v = self.attention_inputs()
        self.assert_rejected(self.attention_args(q, k, v) + ["--schedule", "warp9"], "warp9")

    def test_missing_required_option(self):
        result = self.run_cli("attention", "--q", "q.npy")
        self.assert_bad_input(result, "--k")

    # --- tune: refused before anything is compiled ---

    def run_tuner(self, *args):
        result = self.run_cli("tune", *args)
        if "cannot run attngen-tune" in result.stderr:
            self.skipTest("this build has no tuner")
        return result

    def test_tune_refuses_a_target_this_machine_cannot_run(self):
        # An x86 target with an ARM extension: no machine runs it, and the tuner times its
        # candidates on this one.
        result = self.run_tuner("--target", "x86-64-linux-sse41-arm_dot_prod", "--budget", "1",
                                "--out", self.path("t.json"))
        self.assert_bad_input(result, "which this machine lacks")
        self.assertFalse(os.path.exists(self.path("t.json")))

    def test_tune_refuses_a_malformed_target(self):
        result = self.run_tuner("--target", "x86-64-linux-warp9", "--budget", "1",
                                "--out", self.path("t.json"))
        self.assert_bad_input(result, "not a Halide target")

    def test_tune_compare_rejects_a_malformed_candidate(self):
        result = self.run_tuner("--compare", "cpu_fused:key_tile", "--shapes", "nq=64")
        self.assert_bad_input(result, "key_tile")

    def test_tune_compare_takes_one_shape(self):
        result = self.run_tuner("--compare", "cpu_fused", "--shapes", "nq=64", "nq=128")
        self.assert_bad_input(result, "exactly one shape")

    def test_tune_compare_prints_each_candidate_against_the_first(self):
        result = self.run_tuner("--compare", "default", "cpu_fused:key_tile=4",
                                "--shapes", "h=2,nq=40,nk=70,d=64", "--rounds", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = [line.split() for line in result.stdout.splitlines()[2:]]
        self.assertEqual([row[0] for row in rows], ["default", "cpu_fused{key_tile=4}"])
        # The first candidate's time over its own: exactly 1 in every round.
        self.assertEqual(rows[0][4], "1.000")

    def test_failed_run_keeps_existing_output(self):
        q, k, v = self.attention_inputs()
        args = self.attention_args(q, k[..., :8].copy(), v)
        with open(self.path("o.npy"), "wb") as f:
            f.write(b"previous contents")
        result = self.run_cli(*args)
        self.assertEqual(result.returncode, 2)
        self.assertEqual(open(self.path("o.npy"), "rb").read(), b"previous contents")

    def test_output_failing_part_way_leaves_no_partial_output(self):
        # The run succeeds up to writing its outputs; the second one cannot be placed (its path
        # is a directory). The first output keeps its previous contents, no new file appears
        # and no temporary file is left behind.
        q, k, v = self.attention_inputs()
        with open(self.path("o.npy"), "wb") as f:
            f.write(b"previous contents")
        os.mkdir(self.path("l.npy"))
        result = self.run_cli(*self.attention_args(q, k, v), "--lse", self.path("l.npy"),
                              "--probs", self.path("p.npy"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("l.npy", result.stderr)
        with open(self.path("o.npy"), "rb") as f:
            self.assertEqual(f.read(), b"previous contents")
        self.assertFalse(os.path.exists(self.path("p.npy")), "probs written by a failed run")
        leftovers = [f for f in os.listdir(self.dir.name) if ".tmp-" in f]
        self.assertEqual(leftovers, [])

    def test_mha_heads_not_dividing_width(self):
        x = self.rand(1, 4, 12)
        w = self.save("w.npy", self.rand(12, 12))
        args = ["mha", "--x", self.save("x.npy", x), "--wq", w, "--wk", w, "--wv", w, "--wo", w,
                "--heads", "5", "--out", self.path("y.npy")]
        self.assert_rejected(args, "heads = 5", out="y.npy")

    def test_a_schedule_that_does_not_serve_mha_says_why(self):
        x = self.rand(1, 4, 12)
        w = self.save("w.npy", self.rand(12, 12))
        args = ["mha", "--x", self.save("x.npy", x), "--wq", w, "--wk", w, "--wv", w, "--wo", w,
                "--heads", "2", "--out", self.path("y.npy"), "--schedule", "cuda_fused"]
        self.assert_rejected(args, "schedule 'cuda_fused' does not serve mha: it fuses the "
                             "attention alone", out="y.npy")


if __name__ == "__main__":
    ATTNGEN = sys.argv.pop(1)
    unittest.main()
