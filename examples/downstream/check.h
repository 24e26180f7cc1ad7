// What the example's checks share: random inputs and the comparison with the reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "attngen/attngen.h"
#include "reference.h"

inline std::vector<float> random_values(int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(n);
    for (float &x : values) x = normal(rng);
    return values;
}

// float32 results may differ from the double reference by rounding only: a few ulp of the
// largest terms, far below these bounds for sums over at most a few hundred products.
inline bool close(const char *what, const std::vector<float> &got,
                  const std::vector<double> &want) {
    for (size_t i = 0; i < want.size(); i++) {
        const bool both_minus_inf = std::isinf(want[i]) && got[i] == float(want[i]);
        if (!both_minus_inf && !(std::fabs(got[i] - want[i]) <= 1e-4 + 1e-4 * std::fabs(want[i]))) {
            std::fprintf(stderr, "%s[%zu] = %.7g, reference %.7g\n", what, i, got[i], want[i]);
            return false;
        }
    }
    return true;
}

// Random inputs of a shape (seeds seed, seed + 1 and seed + 2), room for the outputs, and the
// views of an attention call over them.
struct Problem {
    Problem(const Shape &s, unsigned seed)
        : shape(s),
          q(random_values(s.batch * s.heads * s.nq * s.d_k, seed)),
          k(random_values(s.batch * s.kv_heads * s.nk * s.d_k, seed + 1)),
          v(random_values(s.batch * s.kv_heads * s.nk * s.d_v, seed + 2)),
          out(s.batch * s.heads * s.nq * s.d_v),
          lse(s.batch * s.heads * s.nq) {}

    attngen::AttentionArgs args() {
        const Shape &s = shape;
        attngen::AttentionArgs a;
        a.q = attngen::TensorView::f32(q.data(), {s.batch, s.heads, s.nq, s.d_k});
        a.k = attngen::TensorView::f32(k.data(), {s.batch, s.kv_heads, s.nk, s.d_k});
        a.v = attngen::TensorView::f32(v.data(), {s.batch, s.kv_heads, s.nk, s.d_v});
        a.out = attngen::TensorView::f32(out.data(), {s.batch, s.heads, s.nq, s.d_v});
        a.lse = attngen::TensorView::f32(lse.data(), {s.batch, s.heads, s.nq});
        return a;
    }

    // Whether the outputs match the reference's under these rules.
    bool matches(const Rules &rules) const {
        std::vector<double> want_out, want_lse;
        reference_attention(shape, q, k, v, rules, &want_out, &want_lse);
        return close("out", out, want_out) && close("lse", lse, want_lse);
    }

    Shape shape;
    std::vector<float> q, k, v, out, lse;
};

// Runs the call (args over the problem's views) on the kernel and checks its outputs against the
// reference under these rules, printing one line.
inline bool run_and_check(const char *label, const attngen::Kernel &kernel,
                          const attngen::AttentionArgs &args, const Problem &problem,
                          const Rules &rules) {
    attngen::CallInfo info;
    const attngen::Status status = attngen::attention(args, kernel, &info);
    if (!status.ok()) {
        std::fprintf(stderr, "%s: %s\n", label, status.to_string().c_str());
        return false;
    }
    const bool ok = problem.matches(rules);
    std::printf("%-44s %-16s %s\n", label, info.kernel.c_str(), ok ? "ok" : "MISMATCH");
    return ok;
}

// The checks of the kernels with user-written modifiers (user_modifiers_check.cpp).
bool check_user_modifiers();
