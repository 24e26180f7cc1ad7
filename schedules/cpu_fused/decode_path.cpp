#include "algorithm/dims.h"
#include "paths.h"

namespace attngen::schedules::cpu_fused {

using Halide::Func;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

// The decode path, for one to a few queries against many keys. Vectorizing across queries would
// leave most lanes empty, so the work is organized around the keys, in three passes over all
// heads, each one parallel loop: the scores of every head in chunks of keys (vectorized along
// the head dimension, the lanes of each key added across at the end); the row statistics; and
// the weighted sum in chunks of keys whose partial sums are added at the end. All chunks of a
// row share its maximum, so the partial sums add without rescaling. One parallel loop per pass,
// rather than one per head, keeps both threads streaming keys and values without a barrier per
// head, and splitting keys into chunks lets several threads share one head.
void schedule_decode(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx,
                     const FusedParams &p) {
    const auto &v = algorithm::dims();
    const int vec = ctx.vector_width();
    Var u("u"), c("c"), jo("jo"), ji("ji"), jt("jt"), jl("jl");

    Func out = f.out;
    out.reorder(v.e, v.i, v.h, v.b).parallel(v.b).parallel(v.h).vectorize(v.e, vec, kGuard);
    Func lse = f.lse;
    lse.parallel(v.b).parallel(v.h);
    lse.compute_with(out, v.h);
    if (with_probs) {
        Func probs = f.probs;
        probs.reorder(v.j, v.i, v.h, v.b).parallel(v.b).parallel(v.h).vectorize(v.j, vec, kGuard);
        probs.compute_with(out, v.h);
    }

    // 16-bit storage: the queries widened to float32 once (a few rows per head), so that the dot
    // products, which read the query row again for every key, widen only the keys.
    if (ctx.variant.storage != DType::kFloat32) {
        f.q.compute_root().vectorize(f.q.args()[0], vec, kGuard);
    }

    // Scores of every head, in parallel chunks of keys. rfactor keeps one vector of partial
    // sums per key (lanes), whose lanes are added at the end, decode_key_unroll keys at a time.
    Func dot = f.scores.dot;
    dot.compute_root().parallel(v.h).vectorize(v.j, vec, kGuard);
    Halide::RVar d_outer("d_outer"), d_lane("d_lane");
    Func lanes = dot.update().split(f.scores.d, d_outer, d_lane, vec, kGuard).rfactor(d_lane, u);
    dot.update()
        .split(v.j, jo, ji, p.decode_key_chunk, kGuard)
        .split(ji, jt, jl, p.decode_key_unroll, kGuard)
        .reorder(d_lane, jl, jt, v.i, jo, v.h, v.b)
        .parallel(jo)
        .parallel(v.h)
        .parallel(v.b)
        .unroll(d_lane)
        .unroll(jl);
    lanes.compute_at(dot, jt)
        .reorder_storage(u, v.j)
        .bound_storage(v.j, p.decode_key_unroll)
        .vectorize(u)
        .unroll(v.j, p.decode_key_unroll, kGuard);
    // Each key's row is read whole, in a loop over the keys, before the next key's, so the loads
    // walk memory in order. With the keys unrolled, LLVM interleaved their rows (one vector of
    // each key in turn, rows 512 bytes apart at d128); a C++ model of that loop streamed at
    // half the rate of the same loop in order (AVX-512, one thread: 9.5 against 17.3 GB/s; a
    // plain read 18.5), and unrolled in order, the guarded copy of the loop that serves a
    // partial last chunk of keys reversed each pair's rows. In this kernel the order gains less:
    // B1 H32 d128 decode on two threads took 4.04 instead of 4.12 ms at Nk 4096, 2.77 instead
    // of 2.85 at Nk 3000 and 0.57 instead of 0.59 at Nk 1000 (medians of 160 to 650 calls
    // alternating with the previous order, three runs, 2-4% each). With K and V still in the L3
    // from the previous call (Nk 512) it took 12% longer (0.19 against 0.17 ms): the lanes now
    // round-trip through the stack. In a model's decode step each layer's K and V come from
    // memory, as at Nk 4096 here.
    lanes.update().reorder(u, d_outer, v.j).vectorize(u);

    // Row statistics and weights: Nk values per row, a small fraction of the keys' bytes.
    auto &sm = f.softmax;
    sm.row_max.compute_root().parallel(v.h);
    sm.row_max.update(0).parallel(v.h);
    sm.weights.compute_root().parallel(v.h).vectorize(v.j, vec, kGuard);
    sm.row_sum.compute_root().parallel(v.h);
    sm.row_sum.update(0).parallel(v.h);
    // The bands (at most kCausalGroup keys per row each) in the same layout.
    for (int stage = 1; stage < sm.row_max.num_update_definitions(); stage++) {
        sm.row_max.update(stage).parallel(v.h);
        sm.row_sum.update(stage).parallel(v.h);
    }

    // The weighted sum of every head in parallel chunks of keys, then each row's chunks added.
    // Eight vectors of value features (a whole row at d_v = 128 with AVX-512) stay in
    // registers through a chunk, so each value row streams from memory once.
    Func acc = f.weighted_sum.acc;
    acc.compute_at(out, v.h).vectorize(v.e, vec, kGuard);
    Halide::RVar key_chunk("key_chunk"), key_in_chunk("key_in_chunk");
    Func chunks =
        acc.update(0)
            .split(f.weighted_sum.keys, key_chunk, key_in_chunk, p.decode_key_chunk, kGuard)
            .rfactor(key_chunk, c);
    Var et("et"), el("el"), eu("eu");
    chunks.compute_root().reorder(v.e, v.i, c, v.h, v.b).vectorize(v.e, vec, kGuard);
    chunks.update()
        .split(v.e, et, el, 8 * vec, kGuard)
        .split(el, eu, el, vec, kGuard)
        .reorder(el, eu, key_in_chunk, et, v.i, c, v.h, v.b)
        .parallel(c)
        .parallel(v.h)
        .parallel(v.b)
        .vectorize(el)
        .unroll(eu);
    acc.update(0).vectorize(v.e, vec, kGuard);
    for (int stage = 1; stage < acc.num_update_definitions(); stage++) {
        acc.update(stage).vectorize(v.e, vec, kGuard);
    }
}

}  // namespace attngen::schedules::cpu_fused
