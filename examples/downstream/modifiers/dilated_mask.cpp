// Mask modifiers: a dilated causal window, which states the keys each query can see at most (so
// the fused schedule visits only those blocks), and a strided pattern of the Sparse Transformer
// (Child et al. 2019), which does not (so the kernel finds the blocks with allowed keys itself).
#include "attngen/user_modifiers.h"

constexpr int kDilation = 3;  // Every third key...
constexpr int kSpan = 40;     // ...of the last 40 * 3 positions up to the query's own.

attngen::KeyRule dilated_mask(const attngen::ModifierArgs &a) {
    const Halide::Expr distance = a.p - a.j;
    const Halide::Expr allowed =
        distance >= 0 && distance < kDilation * kSpan && distance % kDilation == 0;
    return {allowed, a.p - kDilation * (kSpan - 1), a.p + 1};
}

constexpr int kStride = 16;  // The local band, and the period of the summary keys.

attngen::KeyRule strided_mask(const attngen::ModifierArgs &a) {
    const Halide::Expr distance = a.p - a.j;
    return distance >= 0 && (distance < kStride || a.j % kStride == kStride - 1);
}
