// attngen demo: the built-in default job. Runs self-, cross- and causal multi-head attention on
// fixed pseudo-random inputs with every compiled schedule, checks each output against the fp64
// reference and prints the median time per schedule.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attngen/attngen.h"
#include "cli_error.h"
#include "commands.h"
#include "compare.h"
#include "reference.h"

namespace attngen::cli {

namespace {

// Whether this schedule's mha kernel is a CUDA kernel that runs its CPU entry here.
bool cpu_entry_of_cuda(const std::string &schedule) {
    for (const auto &k : list_kernels()) {
        if (k.variant.op == Op::kMha && k.variant.schedule == schedule && k.cuda()) {
            return !cuda_status().ok();
        }
    }
    return false;
}

struct DemoCase {
    const char *name;
    reference::MhaShape shape;
    bool causal;
    bool cross;
};

// Shapes of a small transformer layer (d_model 256, 8 heads of 32), large enough that the
// schedules differ in time and small enough that the reference schedule takes well under a
// second.
const DemoCase kCases[] = {
    {"self   B1 N256 d256 H8", {1, 256, 256, 256, 256, 256, 8, 8, 32, 32}, false, false},
    {"cross  B2 Nq96 Nk320 d256/192 H8:4", {2, 96, 320, 256, 192, 256, 8, 4, 32, 32}, false, true},
    {"causal B1 N256 d256 H8", {1, 256, 256, 256, 256, 256, 8, 8, 32, 32}, true, false},
};

std::vector<float> uniform(std::size_t n, uint32_t seed, float bound) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-bound, bound);
    std::vector<float> v(n);
    for (auto &x : v) x = dist(rng);
    return v;
}

struct Inputs {
    std::vector<float> x, memory, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;
};

Inputs make_inputs(const DemoCase &c) {
    const auto &s = c.shape;
    auto weights = [](int64_t rows, int64_t cols, uint32_t seed) {
        return uniform(rows * cols, seed, 1.0f / std::sqrt(static_cast<float>(rows)));
    };
    Inputs in;
    in.x = uniform(s.batch * s.nq * s.d_model, 1, 1.0f);
    in.memory = c.cross ? uniform(s.batch * s.nk * s.d_mem, 2, 1.0f) : in.x;
    in.w_q = weights(s.d_model, s.heads * s.d_k, 3);
    in.w_k = weights(s.d_mem, s.kv_heads * s.d_k, 4);
    in.w_v = weights(s.d_mem, s.kv_heads * s.d_v, 5);
    in.w_o = weights(s.heads * s.d_v, s.d_out, 6);
    in.b_q = uniform(s.heads * s.d_k, 7, 0.1f);
    in.b_k = uniform(s.kv_heads * s.d_k, 8, 0.1f);
    in.b_v = uniform(s.kv_heads * s.d_v, 9, 0.1f);
    in.b_o = uniform(s.d_out, 10, 0.1f);
    return in;
}

template <typename T>
std::vector<T> reference_output(const DemoCase &c, const Inputs &in) {
    auto cast = [](const std::vector<float> &v) { return std::vector<T>(v.begin(), v.end()); };
    const auto &s = c.shape;
    auto x = cast(in.x), m = cast(in.memory), wq = cast(in.w_q), wk = cast(in.w_k),
         wv = cast(in.w_v), wo = cast(in.w_o), bq = cast(in.b_q), bk = cast(in.b_k),
         bv = cast(in.b_v), bo = cast(in.b_o);
    std::vector<T> y(s.batch * s.nq * s.d_out);
    reference::mha<T>(s, x.data(), m.data(), wq.data(), wk.data(), wv.data(), wo.data(), bq.data(),
                      bk.data(), bv.data(), bo.data(), {}, MaskSpec{c.causal},
                      static_cast<T>(1.0f / std::sqrt(static_cast<float>(s.d_k))), y.data());
    return y;
}

int run_demo(int repeats) {
    std::printf(
        "attngen demo: multi-head attention on built-in inputs, every compiled schedule,\n"
        "checked against an fp64 reference; time is the median of %d runs.\n\n",
        repeats);
    std::printf("%-36s %-11s %-9s %-10s %-10s %s\n", "case", "schedule", "check", "max error",
                "tolerance", "median ms");
    bool all_ok = true;
    for (const DemoCase &c : kCases) {
        const auto &s = c.shape;
        Inputs in = make_inputs(c);
        const std::vector<double> expected = reference_output<double>(c, in);
        const std::vector<float> naive = reference_output<float>(c, in);
        MhaWeights w;
        w.w_q = TensorView::f32(in.w_q.data(), {s.d_model, s.heads * s.d_k});
        w.w_k = TensorView::f32(in.w_k.data(), {s.d_mem, s.kv_heads * s.d_k});
        w.w_v = TensorView::f32(in.w_v.data(), {s.d_mem, s.kv_heads * s.d_v});
        w.w_o = TensorView::f32(in.w_o.data(), {s.heads * s.d_v, s.d_out});
        w.b_q = TensorView::f32(in.b_q.data(), {s.heads * s.d_k});
        w.b_k = TensorView::f32(in.b_k.data(), {s.kv_heads * s.d_k});
        w.b_v = TensorView::f32(in.b_v.data(), {s.kv_heads * s.d_v});
        w.b_o = TensorView::f32(in.b_o.data(), {s.d_out});
        for (const std::string &schedule : available_schedules("mha")) {
            if (is_autoscheduler_baseline(schedule)) continue;
            MhaConfig config;
            config.heads = s.heads;
            config.kv_heads = s.kv_heads;
            config.causal = c.causal;
            config.schedule = schedule;
            MultiHeadAttention layer;
            check(MultiHeadAttention::create(w, config, &layer));
            std::vector<float> y(s.batch * s.nq * s.d_out);
            auto x = TensorView::f32(in.x.data(), {s.batch, s.nq, s.d_model});
            auto m = TensorView::f32(in.memory.data(), {s.batch, s.nk, s.d_mem});
            auto out = TensorView::f32(y.data(), {s.batch, s.nq, s.d_out});
            std::vector<double> times;
            for (int r = 0; r <= repeats; r++) {
                auto start = std::chrono::steady_clock::now();
                check(c.cross ? layer.forward(x, m, out) : layer.forward(x, out));
                auto stop = std::chrono::steady_clock::now();
                // The first run warms caches and the thread pool and is not counted.
                if (r > 0)
                    times.push_back(
                        std::chrono::duration<double, std::milli>(stop - start).count());
            }
            std::sort(times.begin(), times.end());
            auto cmp = reference::compare(y.data(), expected.data(), naive.data(),
                                          static_cast<int64_t>(y.size()));
            all_ok = all_ok && cmp.ok;
            const std::string label = schedule + (cpu_entry_of_cuda(schedule) ? "*" : "");
            std::printf("%-36s %-11s %-9s %-10.2e %-10.2e %.3f\n", c.name, label.c_str(),
                        cmp.ok ? "ok" : "MISMATCH", cmp.max_error, cmp.tolerance,
                        times[times.size() / 2]);
        }
    }
    bool any_cpu_entry = false;
    std::string baselines;
    for (const auto &schedule : available_schedules("mha")) {
        any_cpu_entry |= cpu_entry_of_cuda(schedule);
        if (is_autoscheduler_baseline(schedule))
            baselines += (baselines.empty() ? "" : ", ") + schedule;
    }
    if (!baselines.empty()) {
        std::printf("\nnot run: %s (autoscheduler baselines, planned for the benchmark's shapes)\n",
                    baselines.c_str());
    }
    if (any_cpu_entry) {
        std::printf("\n* a CUDA kernel run through its CPU entry: %s\n",
                    cuda_status().message().c_str());
    }
    std::printf("\n%s\n", all_ok ? "all outputs match the fp64 reference"
                                 : "some outputs do NOT match the fp64 reference");
    return all_ok ? kExitOk : kExitFailure;
}

}  // namespace

void add_demo_command(CLI::App &app) {
    auto repeats = std::make_shared<int>(5);
    auto *cmd = app.add_subcommand(
        "demo", "Run self-, cross- and causal attention with every schedule, check and time them");
    cmd->add_option("--repeats", *repeats, "Timed runs per schedule (median reported)")
        ->check(CLI::Range(1, 1000));
    cmd->callback([repeats] {
        int code = run_demo(*repeats);
        if (code != kExitOk) throw Error(code, "demo outputs do not match the reference");
    });
}

}  // namespace attngen::cli
