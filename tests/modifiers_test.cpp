// Score and mask modifiers (attngen/modifiers.h) against the fp64 reference, on every schedule
// that compiles kernels with them, at sizes below, at and above the vector widths and the causal
// group of 32 queries; then their validation, and which kernel the dispatch picks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "attngen/attngen.h"
#include "runtime_test_util.h"

namespace attngen::test {
namespace {

AttentionCase Make(int64_t batch, int64_t heads, int64_t nq, int64_t nk, int64_t d) {
    AttentionCase c;
    c.shape = {batch, heads, heads, nq, nk, d, d};
    return c;
}

void SetWindow(AttentionCase *c, int64_t left, int64_t right) {
    c->kinds.window = true;
    c->modifiers.window_left = left;
    c->modifiers.window_right = right;
}

// Packed documents: each batch element's keys split into documents of `length` keys, and each
// query in the document of its position p(i).
void SetDocuments(AttentionCase *c, int64_t length) {
    const auto &s = c->shape;
    c->kinds.segments = true;
    for (int64_t b = 0; b < s.batch; b++) {
        for (int64_t j = 0; j < s.nk; j++) c->modifiers.kv_segments.push_back(j / length);
        for (int64_t i = 0; i < s.nq; i++) {
            c->modifiers.q_segments.push_back(std::max<int64_t>(i + s.nk - s.nq, 0) / length);
        }
    }
}

void SetScoreModifiers(AttentionCase *c, bool softcap, bool alibi,
                       std::vector<int64_t> bias_shape) {
    reference::ModifierValues &m = c->modifiers;
    m.score.softcap = softcap;
    m.softcap = 2.5;
    m.score.alibi = alibi;
    for (int64_t h = 0; h < c->shape.heads; h++) m.alibi_slopes.push_back(0.5 / (h + 1));
    m.score.bias = !bias_shape.empty();
    if (m.score.bias) {
        int64_t count = 1;
        for (int d = 0; d < 4; d++) {
            m.bias_shape[d] = bias_shape[d];
            count *= bias_shape[d];
        }
        for (float x : random_values(count, 77, -2.0f, 2.0f)) m.bias.push_back(x);
    }
}

// The schedules with a kernel whose mask and score modifiers cover `mask` and `score`.
std::vector<std::string> SchedulesCovering(const MaskSpec &mask, const ScoreSpec &score) {
    std::vector<std::string> schedules;
    for (const std::string &s : TestedSchedules("attention")) {
        for (const Kernel &k : list_kernels()) {
            if (k.variant.schedule == s && k.variant.op == Op::kAttention &&
                k.variant.mask.covers(mask) && k.variant.score.covers(score)) {
                schedules.push_back(s);
                break;
            }
        }
    }
    return schedules;
}

class ModifierTest : public ::testing::TestWithParam<std::string> {
  protected:
    // Whether this test's schedule compiles a kernel for the case.
    bool Covered(const AttentionCase &c) const {
        const auto schedules = SchedulesCovering(c.mask(), c.modifiers.score);
        return std::find(schedules.begin(), schedules.end(), GetParam()) != schedules.end();
    }

    // Runs the prepared case on this test's schedule.
    Status Run(const AttentionCase &c, std::vector<float> *out, std::vector<float> *lse,
               CallInfo *info) const {
        ModifierTensors tensors;
        AttentionArgs args = ArgsWithModifiersFor(c, &tensors, out, lse, nullptr);
        args.schedule = GetParam();
        return attention(args, info);
    }

    // Checks the case on this test's schedule; skipped where it compiles no kernel for it.
    void Check(AttentionCase &c, uint32_t seed = 3) {
        if (!Covered(c)) {
            GTEST_SKIP() << GetParam() << " compiles no kernel with mask " << c.mask().to_string()
                         << " and score " << c.modifiers.score.to_string();
        }
        c.prepare(seed);
        std::vector<float> out, lse;
        CallInfo info;
        const Status status = Run(c, &out, &lse, &info);
        ASSERT_TRUE(status.ok()) << status.to_string();
        EXPECT_TRUE(Matches(out, c.out, c.out32)) << "out, kernel " << info.kernel;
        EXPECT_TRUE(Matches(lse, c.lse, c.lse32)) << "lse, kernel " << info.kernel;
    }
};

// Query and key counts below, at and above the AVX-512 vector of 16 floats and the causal group
// of 32 queries, with decode steps (one and a few queries) and more keys than queries.
const std::pair<int64_t, int64_t> kSizes[] = {{1, 1},   {1, 70},  {7, 40},  {16, 16},
                                              {33, 33}, {64, 64}, {40, 100}};

// Probabilities with modifiers (the default build compiles them on the reference schedule:
// cpu_fused's kernel with every modifier and probabilities took 48 s per target to generate): a
// window, documents, key padding, a softcap, ALiBi and a bias, each row's probabilities against
// the reference (0 for refused keys and empty rows).
TEST_P(ModifierTest, ProbabilitiesWithModifiersMatchReference) {
    AttentionCase c = Make(2, 2, 33, 40, 16);
    c.causal = true;
    SetWindow(&c, 5, -1);
    SetDocuments(&c, 12);
    c.key_lengths = {40, 31};
    SetScoreModifiers(&c, /*softcap=*/true, /*alibi=*/true, {1, 2, 33, 40});
    const std::vector<Kernel> kernels = list_kernels();
    const bool compiled = std::any_of(kernels.begin(), kernels.end(), [&](const Kernel &k) {
        return k.variant.schedule == GetParam() && k.variant.op == Op::kAttention &&
               k.variant.probs && k.variant.mask.covers(c.mask()) &&
               k.variant.score.covers(c.modifiers.score);
    });
    if (!compiled) GTEST_SKIP() << GetParam() << " compiles no kernel with these and probabilities";
    c.prepare(5);
    std::vector<float> out, lse, probs;
    ModifierTensors tensors;
    AttentionArgs args = ArgsWithModifiersFor(c, &tensors, &out, &lse, &probs);
    args.schedule = GetParam();
    CallInfo info;
    const Status status = attention(args, &info);
    ASSERT_TRUE(status.ok()) << status.to_string();
    EXPECT_TRUE(Matches(probs, c.probs, c.probs32)) << "probs, kernel " << info.kernel;
    EXPECT_TRUE(Matches(out, c.out, c.out32)) << "out, kernel " << info.kernel;
    // The default schedule takes such a call too.
    args.schedule.clear();
    EXPECT_TRUE(attention(args, &info).ok());
}

TEST_P(ModifierTest, CausalSlidingWindowMatchesReference) {
    for (const auto &[nq, nk] : kSizes) {
        for (int64_t left : {0, 5, 40}) {
            AttentionCase c = Make(1, 2, nq, nk, 16);
            c.causal = true;
            SetWindow(&c, left, -1);
            SCOPED_TRACE("nq " + std::to_string(nq) + " nk " + std::to_string(nk) + " L " +
                         std::to_string(left));
            Check(c);
        }
    }
}

TEST_P(ModifierTest, TwoSidedWindowWithoutCausalMatchesReference) {
    for (const auto &[nq, nk] : kSizes) {
        AttentionCase c = Make(2, 2, nq, nk, 24);
        SetWindow(&c, 3, 9);
        Check(c);
        AttentionCase right_only = Make(1, 1, nq, nk, 17);
        SetWindow(&right_only, -1, 2);
        Check(right_only);
    }
}

TEST_P(ModifierTest, WindowCausalKeyLengthsAndSegmentsTogether) {
    for (const auto &[nq, nk] : kSizes) {
        AttentionCase c = Make(2, 2, nq, nk, 16);
        c.causal = true;
        SetWindow(&c, 12, -1);
        SetDocuments(&c, 9);
        c.key_lengths = {nk, std::max<int64_t>(nk - 5, 0)};
        Check(c);
    }
}

// Head dimensions below, at and above the vector widths and the fused kernels' tiles of value
// features (up to 4 AVX-512 vectors, 64 features): a tile past d_v computes clamped features that
// are never output, and a d_v between two whole tiles runs both kinds of tile.
TEST_P(ModifierTest, HeadDimsBelowAtAndAboveTheValueTile) {
    for (int64_t d : {1, 15, 17, 64, 65, 80, 130}) {
        SCOPED_TRACE("d " + std::to_string(d));
        AttentionCase window = Make(1, 2, 40, 300, d);
        window.causal = true;
        SetWindow(&window, 100, -1);
        Check(window);
        AttentionCase documents = Make(1, 2, 40, 300, d);
        documents.causal = true;
        SetDocuments(&documents, 70);
        Check(documents);
    }
}

TEST_P(ModifierTest, PackedDocumentsWithoutCausal) {
    AttentionCase c = Make(2, 3, 50, 50, 32);
    SetDocuments(&c, 16);
    Check(c);
}

// Enough keys for several blocks of every fused kernel (64 to 256 keys), so that the blocks of
// other documents are skipped; and segments that do not come in runs along the sequence, where
// the walk must still find every live block.
TEST_P(ModifierTest, PackedDocumentsSkipTheBlocksOfOtherDocuments) {
    for (const auto &[nq, nk, length] :
         {std::tuple{1100, 1100, 200}, std::tuple{90, 1100, 300}, std::tuple{1, 1000, 130}}) {
        AttentionCase c = Make(1, 2, nq, nk, 16);
        c.causal = true;
        SetDocuments(&c, length);
        SCOPED_TRACE("nq " + std::to_string(nq) + " nk " + std::to_string(nk));
        Check(c);
    }
    AttentionCase interleaved = Make(1, 1, 300, 900, 16);
    interleaved.causal = true;
    interleaved.kinds.segments = true;
    for (int64_t j = 0; j < 900; j++) interleaved.modifiers.kv_segments.push_back((j / 70) % 3);
    for (int64_t i = 0; i < 300; i++) interleaved.modifiers.q_segments.push_back(i % 2);
    Check(interleaved);
}

TEST_P(ModifierTest, RowsEmptiedByAWindowOrASegmentGiveZeros) {
    // Keys of segment 7 only: the queries of other segments have no allowed key.
    AttentionCase c = Make(1, 1, 20, 20, 16);
    c.kinds.segments = true;
    for (int64_t i = 0; i < 20; i++) c.modifiers.q_segments.push_back(i < 10 ? 7 : 8);
    c.modifiers.kv_segments.assign(20, 7);
    Check(c);
    if (IsSkipped()) return;
    for (int64_t i = 10; i < 20; i++) {
        EXPECT_EQ(c.out[i * 16], 0.0);
        EXPECT_EQ(c.lse[i], -std::numeric_limits<double>::infinity());
    }
    // A window entirely past the end of the keys (Nq > Nk, causal): early rows see nothing.
    AttentionCase w = Make(1, 2, 40, 8, 16);
    w.causal = true;
    SetWindow(&w, 2, -1);
    Check(w);
}

TEST_P(ModifierTest, PrefixWithCausalAndKeyLengths) {
    for (const auto &[nq, nk] : kSizes) {
        AttentionCase c = Make(2, 2, nq, nk, 16);
        c.causal = true;
        c.kinds.prefix = true;
        c.modifiers.prefix_lengths = {nk / 2, nk};
        c.key_lengths = {nk, std::max<int64_t>(nk - 3, 0)};
        Check(c);
    }
}

TEST_P(ModifierTest, SoftcapAlibiAndBiasTogether) {
    for (const auto &[nq, nk] : kSizes) {
        AttentionCase c = Make(2, 2, nq, nk, 16);
        SetScoreModifiers(&c, true, true, {2, 2, nq, nk});
        Check(c);
        AttentionCase causal = Make(1, 2, nq, nk, 16);
        causal.causal = true;
        SetScoreModifiers(&causal, true, true, {1, 2, 1, nk});
        Check(causal);
    }
}

TEST_P(ModifierTest, EachScoreModifierAlone) {
    AttentionCase softcap = Make(1, 2, 33, 47, 16);
    SetScoreModifiers(&softcap, true, false, {});
    Check(softcap);
    AttentionCase alibi = Make(1, 4, 33, 47, 16);
    SetScoreModifiers(&alibi, false, true, {});
    Check(alibi);
    AttentionCase bias = Make(2, 2, 33, 47, 16);
    SetScoreModifiers(&bias, false, false, {2, 1, 33, 47});
    Check(bias);
}

TEST_P(ModifierTest, BiasBroadcastAlongKeysIsExpanded) {
    AttentionCase c = Make(2, 2, 9, 30, 16);
    SetScoreModifiers(&c, false, false, {2, 1, 9, 1});
    Check(c);
}

// At head dim 64, where cpu_fused has kernels of their own for score modifiers without a mask
// (the block path, which stages the bias rows of a block of queries transposed, in tiles of a
// vector of queries by a vector of keys): a bias broadcast along each dim and along several,
// with query and key counts below, at and above those tiles.
TEST_P(ModifierTest, BiasBroadcastsAtHeadDim64) {
    const std::vector<std::vector<int64_t>> shapes = {
        {1, 2, 1, 0}, {2, 1, 0, 0}, {1, 1, 0, 1}, {2, 2, 0, 0}};
    for (const auto &[nq, nk] : {std::pair<int64_t, int64_t>{15, 17}, {33, 47}, {70, 100}}) {
        for (std::vector<int64_t> shape : shapes) {
            // 0 stands for the call's own count (Nq or Nk).
            if (shape[2] == 0) shape[2] = nq;
            if (shape[3] == 0) shape[3] = nk;
            AttentionCase c = Make(2, 2, nq, nk, 64);
            SetScoreModifiers(&c, false, false, shape);
            SCOPED_TRACE("Nq " + std::to_string(nq) + " Nk " + std::to_string(nk) + " bias [" +
                         std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
                         std::to_string(shape[2]) + ", " + std::to_string(shape[3]) + "]");
            Check(c);
        }
    }
}

TEST_P(ModifierTest, RowWhoseAllowedScoresAreAllMinusInfGivesZeros) {
    AttentionCase c = Make(1, 1, 4, 24, 16);
    SetScoreModifiers(&c, false, false, {1, 1, 4, 24});
    // Row 1 gets -inf everywhere; row 2 on every key but one.
    for (int64_t j = 0; j < 24; j++) {
        c.modifiers.bias[24 + j] = -INFINITY;
        if (j != 5) c.modifiers.bias[48 + j] = -INFINITY;
    }
    Check(c);
    if (IsSkipped()) return;
    EXPECT_EQ(c.lse[1], -std::numeric_limits<double>::infinity());
}

// A NaN score makes its row NaN, as without modifiers, also through the softcap's tanh (whose
// clamps and selects may drop a NaN under LLVM's no-NaNs flag: it did, and the row looked valid).
TEST_P(ModifierTest, NanScoreMakesItsRowNanThroughTheSoftcap) {
    AttentionCase c = Make(1, 1, 4, 24, 16);
    SetScoreModifiers(&c, true, false, {});
    if (!Covered(c)) GTEST_SKIP() << GetParam() << " compiles no kernel with a softcap";
    c.prepare(3);
    c.q[1 * 16 + 3] = NAN;  // Every score of row 1 is NaN.
    std::vector<float> out, lse;
    CallInfo info;
    const Status status = Run(c, &out, &lse, &info);
    ASSERT_TRUE(status.ok()) << status.to_string();
    for (int64_t i = 0; i < 4; i++) {
        for (int64_t e = 0; e < 16; e++) {
            const float x = out[i * 16 + e];
            EXPECT_EQ(std::isnan(x), i == 1) << "row " << i << ", kernel " << info.kernel;
        }
    }
}

// A call with bad modifiers: an InvalidArgument status whose message names the problem, and
// nothing written.
class ModifierValidation : public ::testing::Test {
  protected:
    ModifierValidation() : c(Make(2, 2, 5, 7, 16)) {
        c.draw(1);
        out.assign(2 * 2 * 5 * 16, NAN);
        args.q = TensorView::f32(c.q.data(), {2, 2, 5, 16});
        args.k = TensorView::f32(c.k.data(), {2, 2, 7, 16});
        args.v = TensorView::f32(c.v.data(), {2, 2, 7, 16});
        args.out = TensorView::f32(out.data(), {2, 2, 5, 16});
    }

    void ExpectRefused(const std::string &words) {
        const Status status = attention(args);
        EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
        EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
        for (float x : out) ASSERT_TRUE(std::isnan(x)) << "the output was written";
    }

    AttentionCase c;
    std::vector<float> out, floats = std::vector<float>(2 * 2 * 5 * 7, 0.0f);
    std::vector<int64_t> ints = std::vector<int64_t>(2 * 7, 0);
    AttentionArgs args;
};

TEST_F(ModifierValidation, BiasThatDoesNotBroadcast) {
    args.modifiers.bias = TensorView::f32(floats.data(), {1, 2, 3, 7});
    ExpectRefused("bias shape[2] is 3, which does not broadcast to Nq = 5");
}

TEST_F(ModifierValidation, BiasOfWrongRank) {
    args.modifiers.bias = TensorView::f32(floats.data(), {2, 5, 7});
    ExpectRefused("bias has rank 3, expected 4");
}

TEST_F(ModifierValidation, AlibiSlopesOfWrongLength) {
    args.modifiers.alibi_slopes = TensorView::f32(floats.data(), {3});
    ExpectRefused("alibi_slopes shape[0] (H) is 3 but the head count H of q is 2");
}

TEST_F(ModifierValidation, SegmentsOfWrongShape) {
    args.modifiers.q_segments = TensorView::i64(ints.data(), {2, 5});
    args.modifiers.kv_segments = TensorView::i64(ints.data(), {2, 6});
    ExpectRefused("kv_segments shape[1] (Nk) is 6 but Nk of k is 7");
}

TEST_F(ModifierValidation, OneSideOfSegments) {
    args.modifiers.q_segments = TensorView::i64(ints.data(), {2, 5});
    ExpectRefused("q_segments is given without kv_segments");
}

TEST_F(ModifierValidation, NegativeWindow) {
    args.modifiers.window_left = -1;
    ExpectRefused("window_left is -1; a window side must be >= 0");
}

TEST_F(ModifierValidation, ExtraInputWithoutAKernelOfUserModifiers) {
    args.modifiers.inputs.emplace("t5_table", TensorView::f32(floats.data(), {2, 32}));
    ExpectRefused("input 't5_table' is for a kernel with user-written modifiers");
}

TEST_F(ModifierValidation, ExtraInputOfAnUnsupportedType) {
    args.modifiers.inputs.emplace("strides", TensorView::i64(ints.data(), {2}));
    ExpectRefused("strides has dtype int64, expected float32 or int32");
}

TEST_F(ModifierValidation, PrefixLengthsWithoutCausal) {
    args.modifiers.prefix_lengths = TensorView::i64(ints.data(), {2});
    ExpectRefused("prefix_lengths widen the causal mask; they need causal attention");
}

TEST_F(ModifierValidation, PrefixLengthsOutsideTheKeys) {
    args.causal = true;
    ints[1] = 8;
    args.modifiers.prefix_lengths = TensorView::i64(ints.data(), {2});
    ExpectRefused("prefix_lengths[1] is 8, outside [0, Nk = 7]");
}

TEST_F(ModifierValidation, NonPositiveSoftcap) {
    args.modifiers.softcap = 0.0f;
    ExpectRefused("softcap is 0.000000; it must be a finite number > 0");
}

TEST_F(ModifierValidation, OutputOverlappingTheBias) {
    args.modifiers.bias = TensorView::f32(out.data(), {1, 1, 1, 7});
    const Status status = attention(args);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("out overlaps bias"), std::string::npos) << status.message();
}

// The dispatch: a call with a modifier runs a kernel that has it, and a call without modifiers
// never pays for them where a kernel without them exists.
TEST(ModifierDispatch, CallsRunTheKernelWithTheFewestUnusedModifiers) {
    AttentionCase c = Make(1, 2, 8, 40, 16);
    c.draw(2);
    std::vector<float> out(2 * 8 * 16);
    AttentionArgs args;
    args.q = TensorView::f32(c.q.data(), {1, 2, 8, 16});
    args.k = TensorView::f32(c.k.data(), {1, 2, 40, 16});
    args.v = TensorView::f32(c.v.data(), {1, 2, 40, 16});
    args.out = TensorView::f32(out.data(), {1, 2, 8, 16});
    CallInfo info;
    ASSERT_TRUE(attention(args, &info).ok());
    Variant plain;
    for (const Kernel &k : list_kernels()) {
        if (k.name == info.kernel) plain = k.variant;
    }
    EXPECT_EQ(plain.mask.to_string(), "none") << info.kernel;
    EXPECT_FALSE(plain.score.any()) << info.kernel;

    args.modifiers.window_left = 4;
    const Status status = attention(args, &info);
    if (SchedulesCovering(MaskSpec{false, true}, ScoreSpec{}).empty()) {
        EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.to_string();
        return;
    }
    ASSERT_TRUE(status.ok()) << status.to_string();
    EXPECT_NE(info.kernel.find("window"), std::string::npos) << info.kernel;
}

std::string Name(const ::testing::TestParamInfo<std::string> &info) {
    return info.param;
}

INSTANTIATE_TEST_SUITE_P(Schedules, ModifierTest, ::testing::ValuesIn(TestedSchedules("attention")),
                         Name);

}  // namespace
}  // namespace attngen::test
