#include "test_util.h"

#include <cmath>
#include <random>

#include "compare.h"

namespace attngen::test {

std::vector<float> random_values(std::size_t n, uint32_t seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto &x : v) x = dist(rng);
    return v;
}

std::vector<double> to_double(const std::vector<float> &v) {
    return std::vector<double>(v.begin(), v.end());
}

::testing::AssertionResult Matches(const std::vector<float> &actual,
                                   const std::vector<double> &expected,
                                   const std::vector<float> &naive, double factor) {
    if (actual.size() != expected.size() || naive.size() != expected.size()) {
        return ::testing::AssertionFailure()
               << "sizes differ: " << actual.size() << " vs " << expected.size();
    }
    auto c = reference::compare(actual.data(), expected.data(), naive.data(),
                                static_cast<int64_t>(actual.size()), factor);
    if (c.ok) return ::testing::AssertionSuccess();
    auto failure = ::testing::AssertionFailure() << reference::describe(c);
    if (c.worst >= 0) {
        failure << "; actual " << actual[c.worst] << ", expected " << expected[c.worst];
    }
    return failure;
}

float AttentionCase::effective_scale() const {
    return scale ? *scale : 1.0f / std::sqrt(static_cast<float>(shape.d_k));
}

void AttentionCase::draw(uint32_t seed, float magnitude) {
    const auto &s = shape;
    q = random_values(s.batch * s.heads * s.nq * s.d_k, seed, -magnitude, magnitude);
    k = random_values(s.batch * s.kv_heads * s.nk * s.d_k, seed + 1, -magnitude, magnitude);
    v = random_values(s.batch * s.kv_heads * s.nk * s.d_v, seed + 2);
}

void AttentionCase::prepare(uint32_t seed, float magnitude) {
    draw(seed, magnitude);
    compute_references();
}

void AttentionCase::compute_references() {
    for (float &x : q) x = reference::round_to(storage, x);
    for (std::vector<float> *input : {&k, &v}) {
        for (float &x : *input) x = reference::round_to(kv_type(), x);
    }
    const auto &s = shape;
    const std::size_t rows = s.batch * s.heads * s.nq;
    out.resize(rows * s.d_v);
    lse.resize(rows);
    probs.resize(rows * s.nk);
    out32.resize(out.size());
    lse32.resize(lse.size());
    probs32.resize(probs.size());
    auto qd = to_double(q), kd = to_double(k), vd = to_double(v);
    const float sc = effective_scale();
    reference::attention<double>(s, qd.data(), kd.data(), vd.data(), key_lengths, mask(), sc,
                                 out.data(), lse.data(), probs.data(), &modifiers);
    reference::attention<float>(s, q.data(), k.data(), v.data(), key_lengths, mask(), sc,
                                out32.data(), lse32.data(), probs32.data(), &modifiers);
    if (storage != DType::kFloat32) {
        reference::attention_in_storage(storage, s, q.data(), k.data(), v.data(), key_lengths,
                                        mask(), sc, out32.data(), lse32.data(), &modifiers);
    }
}

}  // namespace attngen::test
