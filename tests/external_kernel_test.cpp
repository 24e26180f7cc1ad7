// Kernels named by the caller (attngen/kernel.h) instead of chosen by the dispatch: how another
// project runs the kernels it compiles with attngen_add_kernel. Here the descriptors point at
// kernels of this build, called through their generated C functions.
#include <gtest/gtest.h>

#include <cmath>

#include "attention_f32_causal_probs_cpu_fused.h"
#include "attention_f32_d64_cpu_fused.h"
#include "attngen/attngen.h"
#include "mha_f32_cpu_fused.h"
#include "test_util.h"

namespace attngen::test {
namespace {

KernelDescriptor D64Kernel() {
    KernelDescriptor k;
    k.name = "attention_f32_d64_cpu_fused";
    k.d_k = k.d_v = 64;
    k.attention = &attention_f32_d64_cpu_fused;
    return k;
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
    KernelDescriptor k;
    k.name = "attention_f32_causal_probs_cpu_fused";
    k.causal = k.probs = true;
    k.attention_probs = &attention_f32_causal_probs_cpu_fused;
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
    KernelDescriptor k;
    k.name = "mha_f32_cpu_fused";
    k.mha = &mha_f32_cpu_fused;
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
    KernelDescriptor attention_kernel = D64Kernel();
    config.kernel = &attention_kernel;
    Status s = MultiHeadAttention::create(weights, config, &layer);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("attention kernel"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace attngen::test
