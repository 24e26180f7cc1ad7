#include "problem_data.h"

#include <cmath>
#include <map>
#include <random>
#include <string>

namespace attngen::bench {

namespace {

Floats uniform(std::size_t n, uint32_t seed, float bound) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-bound, bound);
    Floats values(n);
    for (float &x : values) x = dist(rng);
    return values;
}

ProblemData make_problem_data(const BenchShape &s) {
    ProblemData p;
    if (s.is_mha()) {
        // Weights scaled by 1 / sqrt(fan-in) keep the projections of O(1) inputs O(1), so the
        // scores have the spread of a trained layer's rather than saturating the softmax.
        const int64_t width = s.heads * s.d;
        const float w_bound = 1.0f / std::sqrt(static_cast<float>(s.d_model));
        p.x = uniform(s.batch * s.nq * s.d_model, 11, 1.0f);
        p.w_q = uniform(s.d_model * width, 12, w_bound);
        p.w_k = uniform(s.d_model * width, 13, w_bound);
        p.w_v = uniform(s.d_model * width, 14, w_bound);
        p.w_o = uniform(width * s.d_model, 15, 1.0f / std::sqrt(static_cast<float>(width)));
    } else {
        p.q = uniform(s.batch * s.heads * s.nq * s.d, 1, 1.0f);
        p.k = uniform(s.batch * s.kv_heads * s.nk * s.d, 2, 1.0f);
        p.v = uniform(s.batch * s.kv_heads * s.nk * s.d, 3, 1.0f);
    }
    return p;
}

}  // namespace

const ProblemData &problem_data(const BenchShape &shape) {
    // Benchmarks run one at a time on the main thread, so the cache needs no lock.
    static std::map<std::string, ProblemData> cache;
    auto it = cache.find(shape.id);
    if (it == cache.end()) it = cache.emplace(shape.id, make_problem_data(shape)).first;
    return it->second;
}

std::size_t output_size(const BenchShape &s) {
    if (s.is_mha()) return static_cast<std::size_t>(s.batch * s.nq * s.d_model);
    return static_cast<std::size_t>(s.batch * s.heads * s.nq * s.d);
}

}  // namespace attngen::bench
