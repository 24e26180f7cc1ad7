// Bad calls return a status whose message names the problem; nothing crashes and no output is
// written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "attngen/attngen.h"
#include "test_util.h"

namespace attngen::test {
namespace {

using ::testing::HasSubstr;

// A valid call (B=2, H=4, H_kv=2, Nq=3, Nk=5, d_k=8, d_v=6) that each test breaks in one place.
class AttentionValidation : public ::testing::Test {
  protected:
    AttentionValidation()
        : q(random_values(2 * 4 * 3 * 8, 1)),
          k(random_values(2 * 2 * 5 * 8, 2)),
          v(random_values(2 * 2 * 5 * 6, 3)),
          out(2 * 4 * 3 * 6, 123.0f) {
        args.q = TensorView::f32(q.data(), {2, 4, 3, 8});
        args.k = TensorView::f32(k.data(), {2, 2, 5, 8});
        args.v = TensorView::f32(v.data(), {2, 2, 5, 6});
        args.out = TensorView::f32(out.data(), {2, 4, 3, 6});
    }

    // The call fails with kInvalidArgument, its message contains every fragment, and the output
    // was not touched.
    void ExpectInvalid(std::initializer_list<const char *> fragments) {
        Status status = attention(args);
        ASSERT_FALSE(status.ok());
        EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
        for (const char *f : fragments) EXPECT_THAT(status.message(), HasSubstr(f));
        for (float x : out) ASSERT_EQ(x, 123.0f) << "output written by a failed call";
    }

    std::vector<float> q, k, v, out;
    AttentionArgs args;
};

TEST_F(AttentionValidation, ValidCallSucceeds) {
    Status status = attention(args);
    EXPECT_TRUE(status.ok()) << status.to_string();
}

TEST_F(AttentionValidation, MismatchedHeadDim) {
    args.k = TensorView::f32(k.data(), {2, 2, 10, 4});
    ExpectInvalid({"k", "d_k"});
}

TEST_F(AttentionValidation, KeysAndValuesOfDifferentLengths) {
    args.v = TensorView::f32(v.data(), {2, 2, 3, 6});
    ExpectInvalid({"v", "Nk"});
}

TEST_F(AttentionValidation, WrongRank) {
    args.q = TensorView::f32(q.data(), {8, 3, 8});
    ExpectInvalid({"q", "rank 3", "expected 4"});
}

TEST_F(AttentionValidation, NullData) {
    args.v.data = nullptr;
    ExpectInvalid({"v", "null"});
}

TEST_F(AttentionValidation, ZeroExtent) {
    args.q = TensorView::f32(q.data(), {2, 4, 0, 8});
    ExpectInvalid({"q", "Nq", "positive"});
}

TEST_F(AttentionValidation, NegativeExtent) {
    args.k = TensorView::f32(k.data(), {2, 2, -5, 8});
    ExpectInvalid({"k", "Nk", "-5"});
}

TEST_F(AttentionValidation, KeyLengthAboveNk) {
    std::vector<int32_t> lengths{5, 6};
    args.key_lengths = TensorView::i32(lengths.data(), {2});
    ExpectInvalid({"key_lengths[1]", "6", "Nk = 5"});
}

TEST_F(AttentionValidation, NegativeKeyLength) {
    std::vector<int64_t> lengths{-1, 5};
    args.key_lengths = TensorView::i64(lengths.data(), {2});
    ExpectInvalid({"key_lengths[0]", "-1"});
}

TEST_F(AttentionValidation, KeyLengthsOfWrongBatchSize) {
    std::vector<int32_t> lengths{5, 5, 5};
    args.key_lengths = TensorView::i32(lengths.data(), {3});
    ExpectInvalid({"key_lengths", "B"});
}

TEST_F(AttentionValidation, KeyLengthsOfFloatType) {
    args.key_lengths = TensorView::f32(q.data(), {2});
    ExpectInvalid({"key_lengths", "float32", "int32 or int64"});
}

TEST_F(AttentionValidation, WrongDtype) {
    std::vector<int32_t> ints(q.size());
    args.q = TensorView::contiguous(ints.data(), DType::kInt32, {2, 4, 3, 8});
    ExpectInvalid({"q", "int32", "float32"});
}

TEST_F(AttentionValidation, HeadsNotAMultipleOfKvHeads) {
    args.q = TensorView::f32(q.data(), {2, 3, 4, 8});
    args.out = TensorView::f32(out.data(), {2, 3, 4, 6});
    ExpectInvalid({"H = 3", "H_kv = 2"});
}

TEST_F(AttentionValidation, OutputOfWrongShape) {
    args.out = TensorView::f32(out.data(), {2, 4, 6, 3});
    ExpectInvalid({"out", "Nq"});
}

TEST_F(AttentionValidation, NonContiguousInnermostDimension) {
    args.q = args.q.with_strides({96, 24, 8, 2});
    ExpectInvalid({"q", "stride 2", "contiguous"});
}

TEST_F(AttentionValidation, OverlappingOutputStrides) {
    args.out = args.out.with_strides({0, 18, 6, 1});
    ExpectInvalid({"out", "overlap"});
}

TEST_F(AttentionValidation, OutputAliasingAnInput) {
    args.out = TensorView::f32(v.data(), {2, 4, 3, 5});
    args.v = TensorView::f32(v.data(), {2, 2, 5, 5});
    args.k = TensorView::f32(k.data(), {2, 2, 5, 8});
    ExpectInvalid({"out", "overlaps v"});
}

TEST_F(AttentionValidation, ProbsOfWrongShape) {
    std::vector<float> probs(2 * 4 * 3 * 4);
    args.probs = TensorView::f32(probs.data(), {2, 4, 3, 4});
    ExpectInvalid({"probs", "Nk"});
}

TEST_F(AttentionValidation, LseOfWrongRank) {
    std::vector<float> lse(2 * 4 * 3);
    args.lse = TensorView::f32(lse.data(), {2, 12});
    ExpectInvalid({"lse", "rank 2"});
}

TEST_F(AttentionValidation, NonFiniteScale) {
    args.scale = NAN;
    ExpectInvalid({"scale", "finite"});
}

TEST_F(AttentionValidation, ExtentBeyond32Bits) {
    args.k = TensorView::f32(k.data(), {2, 2, int64_t(1) << 33, 8});
    args.v = TensorView::f32(v.data(), {2, 2, int64_t(1) << 33, 6});
    ExpectInvalid({"k", "2^31"});
}

TEST_F(AttentionValidation, UnknownScheduleIsNotFound) {
    args.schedule = "no_such_schedule";
    Status status = attention(args);
    EXPECT_EQ(status.code(), StatusCode::kNotFound);
    EXPECT_THAT(status.message(), HasSubstr("no_such_schedule"));
    EXPECT_THAT(status.message(), HasSubstr("reference"));
}

// A schedule that does not serve an op by design says why, whether or not this build compiled it:
// cuda_fused fuses the attention alone (schedules/cuda_fused/info.cpp).
TEST_F(AttentionValidation, AScheduleThatDoesNotServeTheOpSaysWhy) {
    MhaWeights weights;
    std::vector<float> w(16 * 16, 0.5f);
    weights.w_q = weights.w_k = weights.w_v = weights.w_o = TensorView::f32(w.data(), {16, 16});
    MhaConfig config;
    config.heads = 2;
    config.schedule = "cuda_fused";
    MultiHeadAttention layer;
    const Status status = MultiHeadAttention::create(weights, config, &layer);
    EXPECT_EQ(status.code(), StatusCode::kNotFound);
    EXPECT_THAT(status.message(), HasSubstr("schedule 'cuda_fused' does not serve mha: it fuses "
                                            "the attention alone"));
}

class MhaValidation : public ::testing::Test {
  protected:
    MhaValidation()
        : w_q(random_values(16 * 8, 1)),
          w_k(random_values(16 * 8, 2)),
          w_v(random_values(16 * 8, 3)),
          w_o(random_values(8 * 16, 4)) {
        weights.w_q = TensorView::f32(w_q.data(), {16, 8});
        weights.w_k = TensorView::f32(w_k.data(), {16, 8});
        weights.w_v = TensorView::f32(w_v.data(), {16, 8});
        weights.w_o = TensorView::f32(w_o.data(), {8, 16});
        config.heads = 2;
    }

    Status Create() { return MultiHeadAttention::create(weights, config, &layer); }

    std::vector<float> w_q, w_k, w_v, w_o;
    MhaWeights weights;
    MhaConfig config;
    MultiHeadAttention layer;
};

TEST_F(MhaValidation, ValidLayerRunsSelfAttention) {
    ASSERT_TRUE(Create().ok());
    auto x = random_values(3 * 16, 5);
    std::vector<float> y(3 * 16);
    Status s =
        layer.forward(TensorView::f32(x.data(), {1, 3, 16}), TensorView::f32(y.data(), {1, 3, 16}));
    EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST_F(MhaValidation, HeadsThatDoNotDivideTheProjectionWidth) {
    config.heads = 3;
    Status s = Create();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("heads = 3"));
}

TEST_F(MhaValidation, KvHeadsThatDoNotDivideHeads) {
    config.heads = 4;
    config.kv_heads = 3;
    Status s = Create();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("kv_heads"));
}

TEST_F(MhaValidation, OutputWeightsOfWrongHeight) {
    weights.w_o = TensorView::f32(w_o.data(), {16, 8});
    Status s = Create();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("w_o"));
}

TEST_F(MhaValidation, BiasOfWrongLength) {
    std::vector<float> b(7);
    weights.b_v = TensorView::f32(b.data(), {7});
    Status s = Create();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("b_v"));
}

TEST_F(MhaValidation, InputOfWrongWidth) {
    ASSERT_TRUE(Create().ok());
    auto x = random_values(3 * 12, 5);
    std::vector<float> y(3 * 16, 7.0f);
    Status s =
        layer.forward(TensorView::f32(x.data(), {1, 3, 12}), TensorView::f32(y.data(), {1, 3, 16}));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("d_model"));
    for (float v : y) EXPECT_EQ(v, 7.0f);
}

TEST_F(MhaValidation, SelfAttentionNeedsMemoryWhenWidthsDiffer) {
    // A memory of width 32 for queries of width 16.
    auto wide_k = random_values(32 * 8, 6), wide_v = random_values(32 * 8, 7);
    weights.w_k = TensorView::f32(wide_k.data(), {32, 8});
    weights.w_v = TensorView::f32(wide_v.data(), {32, 8});
    Status created = Create();
    ASSERT_TRUE(created.ok()) << created.to_string();
    auto x = random_values(3 * 16, 5);
    std::vector<float> y(3 * 16);
    Status s =
        layer.forward(TensorView::f32(x.data(), {1, 3, 16}), TensorView::f32(y.data(), {1, 3, 16}));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("memory"));
}

// The modifiers refer to the attention inside the layer, and the messages say so.
TEST_F(MhaValidation, ModifiersOfTheWrongShapeNameTheLayersExtents) {
    ASSERT_TRUE(Create().ok());
    auto x = random_values(3 * 16, 5);
    std::vector<float> y(3 * 16, 7.0f), slopes(3, 0.5f);
    std::vector<int64_t> segments(4, 0);
    const std::pair<const char *, MhaForwardOptions> cases[] = {
        {"alibi_slopes shape[0] (H) is 3 but the head count H of the layer is 2", {}},
        {"q_segments shape[1] (Nq) is 4 but Nq of x is 3", {}},
        {"prefix_lengths widen the causal mask", {}}};
    for (auto [words, options] : cases) {
        const std::string expected = words;
        if (expected.find("alibi") != std::string::npos) {
            options.modifiers.alibi_slopes = TensorView::f32(slopes.data(), {3});
        } else if (expected.find("segments") != std::string::npos) {
            options.modifiers.q_segments = TensorView::i64(segments.data(), {1, 4});
            options.modifiers.kv_segments = TensorView::i64(segments.data(), {1, 3});
        } else {
            options.modifiers.prefix_lengths = TensorView::i64(segments.data(), {1});
        }
        Status s = layer.forward(TensorView::f32(x.data(), {1, 3, 16}),
                                 TensorView::f32(y.data(), {1, 3, 16}), options);
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
        EXPECT_THAT(s.message(), HasSubstr(words));
        for (float v : y) ASSERT_EQ(v, 7.0f);
    }
}

TEST_F(MhaValidation, ForwardOnALayerThatWasNotCreated) {
    auto x = random_values(3 * 16, 5);
    std::vector<float> y(3 * 16);
    Status s =
        layer.forward(TensorView::f32(x.data(), {1, 3, 16}), TensorView::f32(y.data(), {1, 3, 16}));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace attngen::test
