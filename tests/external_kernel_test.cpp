// Kernels named by the caller (attngen/kernel.h) instead of chosen by the dispatch: how another
// project runs the kernels it compiles with attngen_add_kernel. Here the Kernel values are made
// from kernels of this build as attngen_add_kernel's generated <name>_kernel() makes them, from
// the generated functions, the variant spec and the targets.
#include <gtest/gtest.h>

#include <cmath>

#include "attention_f32_causal_probs_cpu_fused.h"
#include "attention_f32_d64_cpu_fused.h"
#include "attngen/attngen.h"
#include "mha_f32_cpu_fused.h"
#include "test_util.h"

namespace attngen::test {
namespace {

Kernel D64Kernel() {
    return Kernel::compiled("attention_f32_d64_cpu_fused",
                            "op:attention,storage:f32,mask:none,d_k:64,d_v:64,schedule:cpu_fused",
                            "host", &attention_f32_d64_cpu_fused_argv,
                            &attention_f32_d64_cpu_fused_metadata);
}

struct Call {
    AttentionCase c;
    std::vector<float> out, lse, probs;
    AttentionArgs args;

    Call(int64_t d, bool causal, bool with_probs) {
        c.shape = {1, 2, 2, 19, 23, d, d};
        c.causal = causal;
        c.prepare(31);
        const auto &s = c.shape;
        out.assign(s.batch * s.heads * s.nq * s.d_v, NAN);
        lse.assign(s.batch * s.heads * s.nq, NAN);
        args.q = TensorView::f32(c.q.data(), {s.batch, s.heads, s.nq, s.d_k});
        args.k = TensorView::f32(c.k.data(), {s.batch, s.kv_heads, s.nk, s.d_k});
        args.v = TensorView::f32(c.v.data(), {s.batch, s.kv_heads, s.nk, s.d_v});
        args.out = TensorView::f32(out.data(), {s.batch, s.heads, s.nq, s.d_v});
        args.lse = TensorView::f32(lse.data(), {s.batch, s.heads, s.nq});
        args.causal = causal;
        if (with_probs) {
            probs.assign(s.batch * s.heads * s.nq * s.nk, NAN);
            args.probs = TensorView::f32(probs.data(), {s.batch, s.heads, s.nq, s.nk});
        }
    }
};

TEST(ExternalKernel, RunsTheGivenKernelAndMatchesReference) {
    Call call(64, false, false);
    CallInfo info;
    Status s = attention(call.args, D64Kernel(), &info);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(info.kernel, "attention_f32_d64_cpu_fused");
    EXPECT_TRUE(Matches(call.out, call.c.out, call.c.out32));
    EXPECT_TRUE(Matches(call.lse, call.c.lse, call.c.lse32));
}

TEST(ExternalKernel, ProbsKernel) {
    Call call(16, true, true);
    const Kernel k = Kernel::compiled(
        "attention_f32_causal_probs_cpu_fused",
        "op:attention,storage:f32,mask:causal,probs:yes,schedule:cpu_fused", "host",
        &attention_f32_causal_probs_cpu_fused_argv, &attention_f32_causal_probs_cpu_fused_metadata);
    Status s = attention(call.args, k);
    ASSERT_TRUE(s.ok()) << s.to_string();
    EXPECT_TRUE(Matches(call.probs, call.c.probs, call.c.probs32));
}

TEST(ExternalKernel, AKernelThatDoesNotFitIsRefusedWithTheReason) {
    Call wrong_dim(32, false, false);
    Status s = attention(wrong_dim.args, D64Kernel());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("d_k = 64"), std::string::npos) << s.message();
    for (float x : wrong_dim.out) EXPECT_TRUE(std::isnan(x)) << "output written by a refused call";

    Call causal(64, true, false);
    s = attention(causal.args, D64Kernel());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("causal"), std::string::npos) << s.message();

    Call with_probs(64, false, true);
    s = attention(with_probs.args, D64Kernel());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("probs"), std::string::npos) << s.message();
}

TEST(ExternalKernel, MhaLayerWithAGivenKernel) {
    const int64_t d_model = 16, heads = 2, n = 7;
    auto w = random_values(d_model * d_model, 41);
    MhaWeights weights;
    weights.w_q = weights.w_k = weights.w_v = weights.w_o =
        TensorView::f32(w.data(), {d_model, d_model});
    const Kernel k = Kernel::compiled("mha_f32_cpu_fused",
                                      "op:mha,storage:f32,mask:none,schedule:cpu_fused", "host",
                                      &mha_f32_cpu_fused_argv, &mha_f32_cpu_fused_metadata);
    MhaConfig config;
    config.heads = heads;
    config.kernel = &k;
    MultiHeadAttention layer;
    ASSERT_TRUE(MultiHeadAttention::create(weights, config, &layer).ok());
    auto x = random_values(n * d_model, 42);
    std::vector<float> y(n * d_model), y_dispatch(n * d_model);
    ASSERT_TRUE(layer
                    .forward(TensorView::f32(x.data(), {1, n, d_model}),
                             TensorView::f32(y.data(), {1, n, d_model}))
                    .ok());
    // The dispatch picks the same kernel for schedule cpu_fused: identical bits.
    config.kernel = nullptr;
    config.schedule = "cpu_fused";
    MultiHeadAttention dispatched;
    ASSERT_TRUE(MultiHeadAttention::create(weights, config, &dispatched).ok());
    ASSERT_TRUE(dispatched
                    .forward(TensorView::f32(x.data(), {1, n, d_model}),
                             TensorView::f32(y_dispatch.data(), {1, n, d_model}))
                    .ok());
    EXPECT_EQ(y, y_dispatch);

    // An attention kernel is not an mha kernel.
    config.kernel = nullptr;
    const Kernel attention_kernel = D64Kernel();
    config.kernel = &attention_kernel;
    Status s = MultiHeadAttention::create(weights, config, &layer);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("attention kernel"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace attngen::test
