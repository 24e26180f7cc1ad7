// The multi-head attention layer against the fp64 reference, for every compiled schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "attngen/attngen.h"
#include "runtime_test_util.h"
#include "stored_values.h"

namespace attngen::test {
namespace {

struct MhaCase {
    reference::MhaShape shape;
    bool causal = false;
    bool biases = true;
    bool cross = false;  // Self-attention (memory = x) unless set.
    // The modifiers of the attention inside the layer: the mask kinds besides causal whose values
    // `modifiers` holds, and the score modifiers (modifiers.score).
    MaskSpec kinds;
    reference::ModifierValues modifiers;
    std::vector<int64_t> key_lengths;
    std::vector<float> x, memory, w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o;

    void prepare(uint32_t seed) {
        const auto &s = shape;
        // Weights scaled by 1/sqrt(fan-in), as in common initializations, so that activations
        // stay of order 1.
        auto weights = [&](int64_t rows, int64_t cols, uint32_t salt) {
            float bound = 1.0f / std::sqrt(static_cast<float>(rows));
            return random_values(rows * cols, seed + salt, -bound, bound);
        };
        x = random_values(s.batch * s.nq * s.d_model, seed);
        memory = cross ? random_values(s.batch * s.nk * s.d_mem, seed + 1) : x;
        w_q = weights(s.d_model, s.heads * s.d_k, 2);
        w_k = weights(s.d_mem, s.kv_heads * s.d_k, 3);
        w_v = weights(s.d_mem, s.kv_heads * s.d_v, 4);
        w_o = weights(s.heads * s.d_v, s.d_out, 5);
        if (biases) {
            b_q = random_values(s.heads * s.d_k, seed + 6);
            b_k = random_values(s.kv_heads * s.d_k, seed + 7);
            b_v = random_values(s.kv_heads * s.d_v, seed + 8);
            b_o = random_values(s.d_out, seed + 9);
        }
    }

    // The biases as float32 views in the weights.
    void set_float32_biases(MhaWeights *w) {
        const auto &s = shape;
        w->b_q = TensorView::f32(b_q.data(), {s.heads * s.d_k});
        w->b_k = TensorView::f32(b_k.data(), {s.kv_heads * s.d_k});
        w->b_v = TensorView::f32(b_v.data(), {s.kv_heads * s.d_v});
        w->b_o = TensorView::f32(b_o.data(), {s.d_out});
    }

    float scale() const { return 1.0f / std::sqrt(static_cast<float>(shape.d_k)); }
    MaskSpec mask() const {
        MaskSpec m = kinds;
        m.causal = causal;
        return m;
    }
    reference::AttentionShape attention_shape() const {
        const auto &s = shape;
        return {s.batch, s.heads, s.kv_heads, s.nq, s.nk, s.d_k, s.d_v};
    }

    template <typename T>
    std::vector<T> reference_output() const {
        auto cast = [](const std::vector<float> &v) { return std::vector<T>(v.begin(), v.end()); };
        auto xs = cast(x), ms = cast(memory), wq = cast(w_q), wk = cast(w_k), wv = cast(w_v),
             wo = cast(w_o), bq = cast(b_q), bk = cast(b_k), bv = cast(b_v), bo = cast(b_o);
        auto ptr = [](const std::vector<T> &v) { return v.empty() ? nullptr : v.data(); };
        std::vector<T> y(shape.batch * shape.nq * shape.d_out);
        reference::mha<T>(shape, xs.data(), ms.data(), wq.data(), wk.data(), wv.data(), wo.data(),
                          ptr(bq), ptr(bk), ptr(bv), ptr(bo), key_lengths, mask(), scale(),
                          y.data(), &modifiers);
        return y;
    }
};

class MhaTest : public ::testing::TestWithParam<std::string> {
  protected:
    void Check(MhaCase &c, uint32_t seed = 11) {
        c.prepare(seed);
        const auto &s = c.shape;
        MhaWeights w;
        w.w_q = TensorView::f32(c.w_q.data(), {s.d_model, s.heads * s.d_k});
        w.w_k = TensorView::f32(c.w_k.data(), {s.d_mem, s.kv_heads * s.d_k});
        w.w_v = TensorView::f32(c.w_v.data(), {s.d_mem, s.kv_heads * s.d_v});
        w.w_o = TensorView::f32(c.w_o.data(), {s.heads * s.d_v, s.d_out});
        if (c.biases) c.set_float32_biases(&w);
        MhaConfig config;
        config.heads = s.heads;
        config.kv_heads = s.kv_heads;
        config.causal = c.causal;
        config.schedule = GetParam();
        MultiHeadAttention layer;
        Status status = MultiHeadAttention::create(w, config, &layer);
        ASSERT_TRUE(status.ok()) << status.to_string();
        EXPECT_EQ(layer.d_k(), s.d_k);
        EXPECT_EQ(layer.d_v(), s.d_v);

        std::vector<float> y(s.batch * s.nq * s.d_out, NAN);
        auto x = TensorView::f32(c.x.data(), {s.batch, s.nq, s.d_model});
        auto out = TensorView::f32(y.data(), {s.batch, s.nq, s.d_out});
        std::optional<TensorView> lengths;
        if (!c.key_lengths.empty()) lengths = TensorView::i64(c.key_lengths.data(), {s.batch});
        ModifierTensors tensors;
        const bool modified =
            c.modifiers.score.any() || c.kinds.window || c.kinds.prefix || c.kinds.segments;
        if (modified) {
            MhaForwardOptions options;
            if (c.cross)
                options.memory = TensorView::f32(c.memory.data(), {s.batch, s.nk, s.d_mem});
            options.key_lengths = lengths;
            options.modifiers = tensors.views(c.attention_shape(), c.kinds, c.modifiers);
            status = layer.forward(x, out, options);
        } else if (c.cross) {
            auto m = TensorView::f32(c.memory.data(), {s.batch, s.nk, s.d_mem});
            status = layer.forward(x, m, out, lengths);
        } else {
            status = layer.forward(x, out, lengths);
        }
        ASSERT_TRUE(status.ok()) << status.to_string();
        EXPECT_TRUE(Matches(y, c.reference_output<double>(), c.reference_output<float>()));
    }
};

MhaCase Make(int64_t batch, int64_t nq, int64_t d_model, int64_t heads, int64_t d_k) {
    MhaCase c;
    c.shape.batch = batch;
    c.shape.nq = c.shape.nk = nq;
    c.shape.d_model = c.shape.d_mem = c.shape.d_out = d_model;
    c.shape.heads = c.shape.kv_heads = heads;
    c.shape.d_k = c.shape.d_v = d_k;
    return c;
}

TEST_P(MhaTest, SelfAttentionMatchesReference) {
    auto c = Make(1, 17, 32, 4, 8);
    Check(c);
}

TEST_P(MhaTest, WithoutBiases) {
    auto c = Make(2, 9, 16, 2, 8);
    c.biases = false;
    Check(c);
}

TEST_P(MhaTest, CrossAttentionWithOtherLengthAndWidth) {
    auto c = Make(2, 7, 24, 3, 8);
    c.cross = true;
    c.shape.nk = 19;
    c.shape.d_mem = 40;
    Check(c);
}

TEST_P(MhaTest, CausalSelfAttention) {
    auto c = Make(2, 21, 32, 4, 8);
    c.causal = true;
    Check(c);
}

TEST_P(MhaTest, CausalDecodeStepAgainstLongerMemory) {
    auto c = Make(1, 3, 32, 4, 8);
    c.cross = true;
    c.causal = true;
    c.shape.nk = 30;
    Check(c);
}

TEST_P(MhaTest, GroupedQueryAttention) {
    auto c = Make(2, 11, 32, 8, 4);
    c.shape.kv_heads = 2;
    Check(c);
    c.causal = true;
    Check(c);
}

TEST_P(MhaTest, ValueDimAndOutputWidthDiffer) {
    auto c = Make(1, 10, 24, 2, 8);
    c.shape.d_v = 12;
    c.shape.d_out = 20;
    Check(c);
}

TEST_P(MhaTest, KeyLengthsPadMemory) {
    auto c = Make(3, 6, 16, 2, 8);
    c.cross = true;
    c.shape.nk = 13;
    c.key_lengths = {13, 4, 0};
    Check(c);
}

TEST_P(MhaTest, ModelWidthsBelowAtAndAboveVectorWidth) {
    for (int64_t d_model : {3, 8, 16, 17, 33}) {
        SCOPED_TRACE("d_model=" + std::to_string(d_model));
        auto c = Make(1, 5, d_model, 1, d_model);
        Check(c);
    }
}

// Whether this schedule compiles an mha kernel with these modifiers; the test skips otherwise.
bool HasMhaKernelFor(const std::string &schedule, const MaskSpec &mask, const ScoreSpec &score) {
    for (const Kernel &k : list_kernels()) {
        const Variant &v = k.variant;
        if (v.op == Op::kMha && v.storage == DType::kFloat32 && v.schedule == schedule &&
            v.mask.covers(mask) && v.score.covers(score)) {
            return true;
        }
    }
    return false;
}

// The modifiers apply to the attention inside the layer: the rows of x are its queries, those of
// memory its keys, the layer's query heads its heads (slopes [H], bias [B, H, Nq, Nk]). Keys
// below and above a block of cpu_fused's key-block path (256): with 300, the window and the
// documents of 100 keys leave one of the two blocks out of some groups' walks.
TEST_P(MhaTest, ModifiersOfTheInnerAttention) {
    for (const auto &[nq, nk] : {std::pair<int64_t, int64_t>{9, 23}, {40, 300}})
        for (const bool causal : {false, true}) {
            auto c = Make(2, nq, 24, 3, 8);
            c.cross = true;
            c.causal = causal;
            c.shape.nk = nk;
            c.key_lengths = {nk, nk - 6};
            const auto &s = c.shape;
            const int64_t document = nk > 256 ? 100 : 10;
            reference::ModifierValues &m = c.modifiers;
            c.kinds.window = c.kinds.segments = true;
            c.kinds.prefix = causal;
            m.window_left = 6;
            m.window_right = causal ? -1 : 3;
            if (causal) m.prefix_lengths = {4, 2};
            for (int64_t b = 0; b < s.batch; b++) {
                for (int64_t j = 0; j < s.nk; j++) m.kv_segments.push_back(j / document);
                for (int64_t i = 0; i < s.nq; i++) {
                    m.q_segments.push_back((i + s.nk - s.nq) / document);
                }
            }
            m.score.softcap = m.score.alibi = m.score.bias = true;
            m.softcap = 1.5;
            m.alibi_slopes = {0.5, 0.25, 0.125};
            m.bias_shape[1] = s.heads;
            m.bias_shape[2] = s.nq;
            m.bias_shape[3] = s.nk;
            for (float x : random_values(s.heads * s.nq * s.nk, 5, -1.0f, 1.0f))
                m.bias.push_back(x);
            if (!HasMhaKernelFor(GetParam(), c.mask(), m.score)) {
                GTEST_SKIP() << GetParam() << " compiles no mha kernel with "
                             << c.mask().to_string() << " and " << m.score.to_string();
            }
            SCOPED_TRACE(std::string(causal ? "causal" : "not causal") + ", Nk " +
                         std::to_string(nk));
            Check(c);
        }
}

std::string ScheduleName(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, MhaTest, ::testing::ValuesIn(TestedSchedules("mha")),
                         ScheduleName);

// The layer with 16-bit weights and activations (each compiled storage type), against the fp64
// reference on the same rounded inputs, allowed twice the error of a plain float32 layer whose
// output is rounded to the type (the kernels compute in float32 and round y once).
class MhaStorageTest : public ::testing::TestWithParam<DType> {
  protected:
    DType storage() const { return GetParam(); }

    // The values rounded to the storage type, and their bits.
    std::vector<uint16_t> Stored(std::vector<float> *values) const {
        std::vector<uint16_t> bits;
        for (float &x : *values) {
            x = reference::round_to(storage(), x);
            bits.push_back(reference::to_bits(storage(), x));
        }
        return bits;
    }

    TensorView View(std::vector<uint16_t> &bits, std::initializer_list<int64_t> shape) const {
        return TensorView::contiguous(bits.data(), storage(), shape);
    }

    // stored_biases: the biases in the storage type too, else float32 (of the rounded values).
    void Check(MhaCase &c, bool stored_biases, uint32_t seed = 11) {
        c.prepare(seed);
        const auto &s = c.shape;
        auto x = Stored(&c.x);
        auto memory = c.cross ? Stored(&c.memory) : x;
        if (!c.cross) c.memory = c.x;
        auto w_q = Stored(&c.w_q), w_k = Stored(&c.w_k), w_v = Stored(&c.w_v), w_o = Stored(&c.w_o);
        auto b_q = Stored(&c.b_q), b_k = Stored(&c.b_k), b_v = Stored(&c.b_v), b_o = Stored(&c.b_o);
        MhaWeights w;
        w.w_q = View(w_q, {s.d_model, s.heads * s.d_k});
        w.w_k = View(w_k, {s.d_mem, s.kv_heads * s.d_k});
        w.w_v = View(w_v, {s.d_mem, s.kv_heads * s.d_v});
        w.w_o = View(w_o, {s.heads * s.d_v, s.d_out});
        if (stored_biases) {
            w.b_q = View(b_q, {s.heads * s.d_k});
            w.b_k = View(b_k, {s.kv_heads * s.d_k});
            w.b_v = View(b_v, {s.kv_heads * s.d_v});
            w.b_o = View(b_o, {s.d_out});
        } else {
            c.set_float32_biases(&w);
        }
        MhaConfig config;
        config.heads = s.heads;
        config.kv_heads = s.kv_heads;
        config.causal = c.causal;
        MultiHeadAttention layer;
        Status status = MultiHeadAttention::create(w, config, &layer);
        ASSERT_TRUE(status.ok()) << status.to_string();
        EXPECT_EQ(layer.storage(), storage());

        std::vector<uint16_t> y(s.batch * s.nq * s.d_out, 0xffff);
        std::optional<TensorView> lengths;
        if (!c.key_lengths.empty()) lengths = TensorView::i64(c.key_lengths.data(), {s.batch});
        const TensorView xv = View(x, {s.batch, s.nq, s.d_model});
        const TensorView yv = View(y, {s.batch, s.nq, s.d_out});
        status = c.cross ? layer.forward(xv, View(memory, {s.batch, s.nk, s.d_mem}), yv, lengths)
                         : layer.forward(xv, yv, lengths);
        ASSERT_TRUE(status.ok()) << status.to_string();
        std::vector<float> actual, naive = c.reference_output<float>();
        for (uint16_t bits : y) actual.push_back(reference::from_bits(storage(), bits));
        for (float &v : naive) v = reference::round_to(storage(), v);
        EXPECT_TRUE(
            Matches(actual, c.reference_output<double>(), naive, NaiveErrorFactor(storage())));
    }
};

TEST_P(MhaStorageTest, SelfAttentionMatchesReference) {
    for (const bool causal : {false, true}) {
        SCOPED_TRACE(causal ? "causal" : "not causal");
        auto c = Make(2, 37, 48, 4, 12);
        c.causal = causal;
        Check(c, /*stored_biases=*/true);
    }
}

TEST_P(MhaStorageTest, CrossAttentionWithKeyLengthsAndGroupedHeads) {
    auto c = Make(2, 17, 32, 4, 8);
    c.cross = true;
    c.shape.nk = 45;
    c.shape.d_mem = 24;
    c.shape.kv_heads = 2;
    c.shape.d_out = 40;
    c.key_lengths = {45, 30};
    Check(c, /*stored_biases=*/false);
}

// The weights share one type, which x, memory and y must have: anything else is refused, naming
// the tensor.
TEST_P(MhaStorageTest, TensorsOfAnotherTypeAreRefused) {
    std::vector<uint16_t> w16(8 * 8, 0x3c00);
    std::vector<float> w32(8 * 8, 1.0f);
    MhaWeights w;
    w.w_q = w.w_k = w.w_v = w.w_o = View(w16, {8, 8});
    w.w_v = TensorView::f32(w32.data(), {8, 8});
    MhaConfig config;
    config.heads = 2;
    MultiHeadAttention layer;
    Status status = MultiHeadAttention::create(w, config, &layer);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("w_v has dtype float32 but w_q has"), std::string::npos)
        << status.message();

    w.w_v = w.w_q;
    ASSERT_TRUE(MultiHeadAttention::create(w, config, &layer).ok());
    std::vector<float> x(3 * 8, 0.5f), y(3 * 8, 7.0f);
    status = layer.forward(TensorView::f32(x.data(), {1, 3, 8}), View(w16, {1, 3, 8}));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("x has dtype float32"), std::string::npos) << status.message();
    status = layer.forward(View(w16, {1, 3, 8}), TensorView::f32(y.data(), {1, 3, 8}));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("y has dtype float32"), std::string::npos) << status.message();
    EXPECT_EQ(y, std::vector<float>(3 * 8, 7.0f));
}

// The runtime's own reading of 16-bit values (a 16-bit layer's biases) agrees with the
// reference's conversion on every bit pattern, subnormals, infinities and NaN included.
TEST(StoredValues, EveryBitPatternReadsAsTheReferenceDoes) {
    for (DType t : {DType::kBFloat16, DType::kFloat16}) {
        for (uint32_t bits = 0; bits < 0x10000; bits++) {
            const float got = detail::stored_to_float(t, uint16_t(bits));
            const float want = reference::from_bits(t, uint16_t(bits));
            if (std::isnan(want)) {
                ASSERT_TRUE(std::isnan(got)) << dtype_name(t) << " bits " << bits;
            } else {
                ASSERT_EQ(got, want) << dtype_name(t) << " bits " << bits;
            }
        }
    }
}

// The 16-bit storage types of the build's mha kernels.
std::vector<DType> MhaStorages() {
    std::vector<DType> types;
    for (const Kernel &k : list_kernels()) {
        const DType t = k.variant.storage;
        if (k.variant.op == Op::kMha && t != DType::kFloat32 &&
            std::find(types.begin(), types.end(), t) == types.end()) {
            types.push_back(t);
        }
    }
    return types;
}

INSTANTIATE_TEST_SUITE_P(Compiled, MhaStorageTest, ::testing::ValuesIn(MhaStorages()),
                         [](const ::testing::TestParamInfo<DType> &info) {
                             return std::string(dtype_name(info.param));
                         });
// A build whose variant table has no 16-bit mha kernel instantiates none.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(MhaStorageTest);

}  // namespace
}  // namespace attngen::test
