// A score modifier: T5's learned relative position bias, s += table[h, bucket(j - p(i))], from
// the kernel's extra input t5_table, float32 [H, kT5Buckets].
#include "attngen/user_modifiers.h"
#include "t5_buckets.h"

Halide::Expr t5_bias(const attngen::ScoreArgs &a) {
    using Halide::Expr;
    using Halide::select;
    const Expr relative = a.j - a.p;
    const Expr distance = select(relative < 0, -relative, relative);
    // This function runs once, when the kernel is generated, so plain C++ may shape the
    // expression: the logarithmic buckets become comparisons against the distances where each
    // starts, found with the very function the reference calls, which keeps the two exact.
    Expr wide = Expr(kT5ExactBuckets);
    for (int64_t d = kT5ExactBuckets + 1, bucket = kT5ExactBuckets; d <= kT5MaxDistance; d++) {
        if (t5_bucket(-d) > bucket) {
            bucket = t5_bucket(-d);
            wide += select(distance >= static_cast<int>(d), 1, 0);
        }
    }
    const Expr bucket = select(relative > 0, kT5Buckets / 2, 0) +
                        select(distance < kT5ExactBuckets, distance, wide);
    // Halide bounds what a kernel reads from the expressions alone, which cannot see that the
    // bucket stays below kT5Buckets; the clamp says so (and changes no value).
    return a.score + a.input("t5_table")(a.h, Halide::clamp(bucket, 0, kT5Buckets - 1));
}
