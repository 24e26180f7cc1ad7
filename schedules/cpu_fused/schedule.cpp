// cpu_fused: scores, softmax and weighted sum computed per block of query rows, so that no
// Nq x Nk buffer ever exists. Three paths, chosen by parameters (params.h): the block path (the
// default), the decode path for a few queries against many keys, and the key-block path, an
// online softmax over blocks of keys, for long key sequences. This file picks the path; each
// path, the shared register tiles, the parameters, their defaults (as data) and the search space
// have files of their own.
#include <map>
#include <string>

#include "algorithm/dims.h"
#include "cpu_gemm.h"
#include "paths.h"

namespace attngen::schedules {

using cpu_fused::FusedParams;
using cpu_fused::kGuard;
using Halide::Func;

namespace {

class CpuFused final : public Schedule {
  public:
    CpuFused() : Schedule("cpu_fused") {}
    void attention(algorithm::AttentionFuncs &f, bool with_probs,
                   const Context &ctx) const override;
    void mha(algorithm::MhaFuncs &f, const Context &ctx) const override;
    bool uses_online_softmax(const Context &ctx) const override;
    OnlineLayout online_layout(const Context &ctx) const override;
    bool pairs_bfloat16_products(const Context &ctx) const override;
    bool reads_queries_past_nq(const Context &ctx) const override;
    void online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                          const Context &ctx) const override;
    SearchSpace attention_search_space(const Context &ctx) const override {
        return cpu_fused::search_space(ctx);
    }
    std::map<std::string, int> attention_params(const Context &ctx) const override {
        return FusedParams(ctx).values();
    }
};

void CpuFused::attention(algorithm::AttentionFuncs &f, bool with_probs, const Context &ctx) const {
    const FusedParams p(ctx);
    // Key ranges with a lower bound (windows) are computed once per call: inlined, the bounds of
    // the dense part and the two bands nest their clamps into every loop bound, and Halide took
    // 170 s instead of 10 to compile one kernel.
    if (f.mask.begin.defined()) f.mask.compute_root();
    if (p.split_keys != 0) {
        cpu_fused::schedule_decode(f, with_probs, ctx, p);
    } else {
        cpu_fused::schedule_blocks(f, with_probs, ctx, p);
    }
}

bool CpuFused::uses_online_softmax(const Context &ctx) const {
    return FusedParams(ctx).key_block > 0;
}

// The block path on targets with AVX512-BF16, where the paired products are vdpbf16ps: twice the
// multiply-adds of a float32 FMA per instruction. The decode path streams keys from memory, and
// the key-block path's scores are not yet paired.
bool CpuFused::pairs_bfloat16_products(const Context &ctx) const {
    const FusedParams p(ctx);
    return ctx.target.has_feature(Halide::Target::AVX512_SapphireRapids) && p.split_keys == 0 &&
           p.key_block == 0;
}

bool CpuFused::reads_queries_past_nq(const Context &ctx) const {
    const Variant &v = ctx.variant;
    const bool paired = v.storage == DType::kBFloat16 && v.kv_storage == DType::kBFloat16 &&
                        pairs_bfloat16_products(ctx);
    return cpu_fused::computes_whole_query_blocks(ctx, FusedParams(ctx), paired);
}

Schedule::OnlineLayout CpuFused::online_layout(const Context &ctx) const {
    const FusedParams p(ctx);
    OnlineLayout layout;
    layout.key_block = p.key_block;
    layout.query_group = p.query_vectors * ctx.vector_width();
    layout.key_splits = p.key_splits;
    layout.skip_empty_blocks = true;
    layout.value_tile = p.value_vectors * ctx.vector_width();
    layout.value_vector = ctx.vector_width();
    return layout;
}

void CpuFused::online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                                const Context &ctx) const {
    cpu_fused::schedule_online(f, with_probs, ctx, FusedParams(ctx));
}

void CpuFused::mha(algorithm::MhaFuncs &f, const Context &ctx) const {
    // The projections are GEMMs on whole sequences (cpu_tiled's); the attention between them is
    // fused per block of queries. The head outputs are concatenated into the rows that the
    // output projection reads.
    const auto &v = algorithm::dims();
    const GemmParams gemm = GemmParams::for_target(ctx.target);
    // With 16-bit storage, x, memory and the weights are converted to float32 as they are read;
    // the output projection's rows, the concatenated heads, are float32 already.
    const bool sixteen_bit = ctx.variant.storage != DType::kFloat32;
    for (auto *proj : {&f.q_proj, &f.k_proj, &f.v_proj, &f.out_proj}) {
        Func(proj->y).compute_root();
        const WidenedOperands widened{/*rows=*/sixteen_bit && proj != &f.out_proj,
                                      /*weights=*/sixteen_bit};
        schedule_projection_gemm(*proj, ctx, gemm, widened);
    }
    if (f.online) {
        // The key-block path (a variant with key_block), as the attention kernels run it; its
        // lse is not an output of the layer and is never computed.
        Func(f.online_attention.out).compute_root();
        online_attention(f.online_attention, /*with_probs=*/false, ctx);
    } else {
        Func(f.attention.out).compute_root();
        // As the attention kernels are scheduled, so that the mask's bounds of a window are
        // computed once per call here too (see attention() for why).
        attention(f.attention, /*with_probs=*/false, ctx);
    }
    Func(f.concat).compute_root().parallel(v.b).vectorize(v.o, ctx.vector_width(), kGuard);
    if (ctx.variant.storage != DType::kFloat32) {
        // The output projection rounded to the storage type, row by row as it was computed.
        Func(f.y).parallel(v.b).vectorize(v.o, ctx.vector_width(), kGuard);
    }
}

}  // namespace

const Schedule &registered_cpu_fused() {
    static const CpuFused schedule;
    return schedule;
}

}  // namespace attngen::schedules
