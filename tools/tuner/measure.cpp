#include "measure.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "compare.h"
#include "low_precision.h"
#include "reference.h"
#include "thread_pool.h"

namespace attngen::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// A buffer of random values in [-1, 1) rounded to `storage`, in its element type (bfloat16 as
// its bits), and the same values as float32, dense in the buffer's order, for the reference.
struct RandomInput {
    Halide::Buffer<> buffer;
    std::vector<float> values;
};

RandomInput random_input(const std::vector<int> &sizes, uint32_t seed, DType storage) {
    RandomInput in{Halide::Buffer<>(JitAttention::buffer_type(storage), sizes), {}};
    in.values.resize(in.buffer.number_of_elements());
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float &x : in.values) x = reference::round_to(storage, dist(rng));
    for (std::size_t i = 0; i < in.values.size(); i++) {
        if (storage == DType::kFloat32) {
            static_cast<float *>(in.buffer.data())[i] = in.values[i];
        } else {
            static_cast<uint16_t *>(in.buffer.data())[i] =
                reference::to_bits(storage, in.values[i]);
        }
    }
    return in;
}

// A dense output buffer of `storage`'s type as float32 values.
std::vector<float> values_of(const Halide::Buffer<> &b, DType storage) {
    std::vector<float> values(b.number_of_elements());
    for (std::size_t i = 0; i < values.size(); i++) {
        values[i] = storage == DType::kFloat32
                        ? static_cast<const float *>(b.data())[i]
                        : reference::from_bits(storage, static_cast<const uint16_t *>(b.data())[i]);
    }
    return values;
}

}  // namespace

TuneShape check_shape(const Variant &kernel, const TuneShape &shape) {
    TuneShape s = shape;
    s.batch = 2;
    s.heads = shape.heads / shape.kv_heads >= 2 ? 4 : 2;
    s.kv_heads = shape.heads / shape.kv_heads >= 2 ? 2 : 2;
    const int max_q = kernel.max_queries;
    s.nq = max_q > 0 ? std::min<int64_t>(shape.nq, max_q) : 37;
    s.nk = 45;
    // The modifiers shrunk with the problem, so that a window, documents and a prefix still
    // leave some keys out of some rows.
    if (s.window_left >= 0) s.window_left = std::min<int64_t>(s.window_left, 9);
    if (s.window_right >= 0) s.window_right = std::min<int64_t>(s.window_right, 5);
    if (s.doc_length > 0) s.doc_length = std::min<int64_t>(s.doc_length, 16);
    if (s.prefix > 0) s.prefix = std::min<int64_t>(s.prefix, 20);
    return s;
}

TimedProblem::TimedProblem(const TuneShape &s)
    : shape(s),
      q(random_input({int(s.d_k), int(s.nq), int(s.heads), int(s.batch)}, 4, s.storage).buffer),
      k(random_input({int(s.d_k), int(s.nk), int(s.kv_heads), int(s.batch)}, 5, s.kv_storage)
            .buffer),
      v(random_input({int(s.d_v), int(s.nk), int(s.kv_heads), int(s.batch)}, 6, s.kv_storage)
            .buffer),
      out(JitAttention::buffer_type(s.storage),
          {int(s.d_v), int(s.nq), int(s.heads), int(s.batch)}),
      lse(int(s.nq), int(s.heads), int(s.batch)),
      key_lengths(int(s.batch)),
      scale(1.0f / std::sqrt(float(s.d_k))) {
    key_lengths.fill(int32_t(s.nk));
}

int TimedProblem::run(JitAttention &kernel) {
    return kernel.run(q, k, v, key_lengths, scale, out, lse, shape);
}

void prepare_timing_process(int threads) {
    // Freed memory stays in the heap, as the runtime's allocator keeps a kernel's scratch blocks
    // between calls (runtime/src/allocator.cpp), so that no candidate is timed on fresh pages.
    // glibc maps large blocks and may unmap or trim them when they are freed, and what it does
    // depends on the sizes allocated before: a driver that alternated cpu_fused's block path with
    // its key-block path on one plain Halide runtime measured the block path 1.7 times as slow
    // at B1 H8 N2048 d64 as the build runs it, and 2.5 times at 16384 keys. The search measures
    // in child processes of its own (subprocess.h), so the setting ends with each of them.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // The candidates' parallel loops run on the runtime's thread pool (jit_attention.cpp); the
    // JIT runtime, which reads its thread count from the environment when it starts, keeps the
    // same count for anything it still runs on its own pool.
    if (threads > 0) {
        setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
        detail::set_pool_threads(threads);
    }
}

std::string check_against_reference(JitAttention &kernel, const TuneShape &s) {
    const int B = s.batch, H = s.heads, G = s.kv_heads, Nq = s.nq, Nk = s.nk, Dk = s.d_k,
              Dv = s.d_v;
    const RandomInput q = random_input({Dk, Nq, H, B}, 1, s.storage),
                      k = random_input({Dk, Nk, G, B}, 2, s.kv_storage),
                      v = random_input({Dv, Nk, G, B}, 3, s.kv_storage);
    Halide::Buffer<int32_t> lengths(B);
    lengths(0) = Nk;
    lengths(1) = Nk - 7;
    Halide::Buffer<> out(JitAttention::buffer_type(s.storage), {Dv, Nq, H, B});
    Halide::Buffer<float> lse(Nq, H, B);
    const float scale = 1.0f / std::sqrt(float(Dk));
    if (kernel.run(q.buffer, k.buffer, v.buffer, lengths, scale, out, lse, s) != 0) {
        return "the kernel failed on the check: " + kernel.last_error();
    }

    reference::AttentionShape rs{B, H, G, Nq, Nk, Dk, Dv};
    const std::vector<float> &qf = q.values, &kf = k.values, &vf = v.values;
    const std::vector<double> qd(qf.begin(), qf.end()), kd(kf.begin(), kf.end()),
        vd(vf.begin(), vf.end());
    std::vector<double> out64(out.number_of_elements()), lse64(lse.number_of_elements());
    std::vector<float> out32(out64.size()), lse32(lse64.size());
    const std::vector<int64_t> key_lengths{lengths(0), lengths(1)};
    const reference::ModifierValues values = s.modifier_values();
    reference::attention<double>(rs, qd.data(), kd.data(), vd.data(), key_lengths, s.mask(), scale,
                                 out64.data(), lse64.data(), nullptr, &values);
    // The yardstick: a plain implementation in the kernel's precision (for 16-bit storage one
    // that rounds as PyTorch's math attention does, allowed twice its error, as the tests do).
    double factor = 8.0;
    if (s.storage == DType::kFloat32) {
        reference::attention<float>(rs, qf.data(), kf.data(), vf.data(), key_lengths, s.mask(),
                                    scale, out32.data(), lse32.data(), nullptr, &values);
    } else {
        reference::attention_in_storage(s.storage, rs, qf.data(), kf.data(), vf.data(), key_lengths,
                                        s.mask(), scale, out32.data(), lse32.data(), &values);
        factor = 2.0;
    }
    const std::vector<float> out_values = values_of(out, s.storage);
    auto c =
        reference::compare(out_values.data(), out64.data(), out32.data(), out64.size(), factor);
    if (!c.ok) return "out: " + reference::describe(c);
    c = reference::compare(lse.data(), lse64.data(), lse32.data(), lse64.size(), factor);
    if (!c.ok) return "lse: " + reference::describe(c);
    return "";
}

const char *Measurement::outcome_name(Outcome o) {
    switch (o) {
        case Outcome::kOk:
            return "ok";
        case Outcome::kCompileFailed:
            return "compile failed";
        case Outcome::kWrong:
            return "wrong result";
        case Outcome::kRunFailed:
            return "run failed";
        case Outcome::kTimeout:
            return "timeout";
        case Outcome::kCrashed:
            return "crashed";
    }
    return "?";
}

Measurement measure(const Variant &kernel_variant, const TuneShape &shape,
                    const std::string &target, const MeasureOptions &options) {
    Measurement m;
    prepare_timing_process(options.threads);
    std::unique_ptr<JitAttention> kernel;
    const auto compile_start = Clock::now();
    try {
        kernel = std::make_unique<JitAttention>(kernel_variant, Halide::Target(target), shape);
    } catch (const std::exception &e) {
        m.outcome = Measurement::Outcome::kCompileFailed;
        m.detail = e.what();
        return m;
    }
    m.compile_s = seconds_since(compile_start);

    const std::string wrong = check_against_reference(*kernel, check_shape(kernel_variant, shape));
    if (!wrong.empty()) {
        m.outcome = Measurement::Outcome::kWrong;
        m.detail = wrong;
        return m;
    }

    TimedProblem problem(shape);
    if (problem.run(*kernel) != 0) {  // Warm-up.
        m.outcome = Measurement::Outcome::kRunFailed;
        m.detail = "the kernel failed on the shape: " + kernel->last_error();
        return m;
    }
    std::vector<double> times;
    const auto timing_start = Clock::now();
    for (int r = 0; r < options.runs; r++) {
        const auto start = Clock::now();
        problem.run(*kernel);
        times.push_back(seconds_since(start) * 1e3);
        if (seconds_since(timing_start) > options.max_run_seconds) break;
    }
    std::sort(times.begin(), times.end());
    m.runs = static_cast<int>(times.size());
    m.median_ms = times[times.size() / 2];
    return m;
}

}  // namespace attngen::tuner
