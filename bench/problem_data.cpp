#include "problem_data.h"

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "low_precision.h"

namespace attngen::bench {

namespace {

Floats uniform(std::size_t n, uint32_t seed, float bound) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-bound, bound);
    Floats values(n);
    for (float &x : values) x = dist(rng);
    return values;
}

Floats normal(std::size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    Floats values(n);
    for (float &x : values) x = dist(rng);
    return values;
}

// Documents in runs of equal length: 0 for the first n / documents, then 1, ..., for every
// batch element.
std::vector<int32_t> document_ids(int64_t batch, int64_t n, int64_t documents) {
    std::vector<int32_t> ids(batch * n);
    for (int64_t i = 0; i < batch * n; i++) ids[i] = static_cast<int32_t>(i % n / (n / documents));
    return ids;
}

void make_modifier_data(const BenchShape &s, ProblemData &p) {
    const ShapeModifiers &m = s.modifiers;
    if (m.alibi) {
        // The slopes of the ALiBi paper for a power-of-two head count: 2^(-8 (h + 1) / H).
        p.alibi_slopes.resize(s.heads);
        for (int64_t h = 0; h < s.heads; h++)
            p.alibi_slopes[h] = std::exp2(-8.0f * static_cast<float>(h + 1) / s.heads);
    }
    if (!m.bias_dims.empty()) {
        std::size_t n = 1;
        for (int64_t extent : m.bias_dims) n *= extent;
        p.bias = normal(n, 4);
    }
    if (m.documents > 0) {
        p.q_segments = document_ids(s.batch, s.nq, m.documents);
        p.kv_segments = document_ids(s.batch, s.nk, m.documents);
    }
}

// Rounds `values` to `storage` in place (to nearest, ties to even, as the reference rounds) and
// returns their bits.
std::vector<uint16_t> round_to(Floats &values, DType storage) {
    std::vector<uint16_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); i++) {
        bits[i] = reference::to_bits(storage, values[i]);
        values[i] = reference::from_bits(storage, bits[i]);
    }
    return bits;
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
        // With a softcap the queries are scaled so that the scores reach the cap: with q and k
        // uniform in [-a, a] and [-1, 1] a score has the standard deviation a / 3 at any d, so
        // a = 0.75 C makes it C / 4, and the cap takes about a fifth off the largest scores of a
        // row (3.5 deviations). The scores of the unit bound stay below 3, where a cap of 50
        // changes them by 1e-5 of themselves: the reference check could not tell a softcap
        // from none.
        const float q_bound = s.modifiers.softcap > 0 ? 0.75f * s.modifiers.softcap : 1.0f;
        p.q = uniform(s.batch * s.heads * s.nq * s.d, 1, q_bound);
        p.k = uniform(s.batch * s.kv_heads * s.nk * s.d, 2, 1.0f);
        p.v = uniform(s.batch * s.kv_heads * s.nk * s.d, 3, 1.0f);
        make_modifier_data(s, p);
        if (s.storage != DType::kFloat32) p.q16 = round_to(p.q, s.storage);
        if (s.kv_storage != DType::kFloat32) {
            p.k16 = round_to(p.k, s.kv_storage);
            p.v16 = round_to(p.v, s.kv_storage);
        }
    }
    return p;
}

}  // namespace

void widen_all(const std::vector<uint16_t> &bits, DType storage, Floats &values) {
    values.resize(bits.size());
    for (std::size_t i = 0; i < bits.size(); i++)
        values[i] = reference::from_bits(storage, bits[i]);
}

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
