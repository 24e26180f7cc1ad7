// Numerical building blocks of the algorithms, JIT-compiled and checked in isolation.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "Halide.h"
#include "algorithm/numerics.h"
#include "algorithm/score_modifiers.h"

namespace attngen::test {
namespace {

// The largest error of exp2_nonpositive against double exp2 over n points of [lo, hi], in units
// in the last place of the float result.
double worst_exp2_ulps(float lo, float hi, int n) {
    Halide::Buffer<float> x(n);
    for (int i = 0; i < n; i++) x(i) = lo + (hi - lo) * static_cast<float>(i) / (n - 1);
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp2_nonpositive(x(i));
    e.vectorize(i, 16);
    Halide::Buffer<float> out = e.realize({n});
    double worst_ulps = 0;
    for (int k = 0; k < n; k++) {
        const double exact = std::exp2(static_cast<double>(x(k)));
        const double ulp =
            std::nextafter(static_cast<float>(exact), INFINITY) - static_cast<float>(exact);
        worst_ulps = std::max(worst_ulps, std::fabs(out(k) - exact) / ulp);
    }
    return worst_ulps;
}

TEST(Numerics, Exp2WithinTheStatedUlpsOverTheSoftmaxRange) {
    // Softmax evaluates 2^(y - max) with y - max <= 0; the kernels' accuracy rests on this.
    // numerics.h states 2.0 ulp at worst, measured over 2^22 points; 2.5 leaves room for a
    // compiler that rounds an intermediate differently. From the floor up (below it, 0).
    EXPECT_LE(worst_exp2_ulps(algorithm::kExp2Floor, 0.0f, 1 << 20), 2.5);
    // The weights near the row maximum, which dominate every row, with a finer step.
    EXPECT_LE(worst_exp2_ulps(-1.0f, 0.0f, 1 << 18), 2.5);
}

TEST(Numerics, Exp2OfZeroIsExactlyOne) {
    // The row maximum's own weight: exactly 1 keeps a one-key row's probability exactly 1.
    Halide::Func e("e");
    e() = algorithm::exp2_nonpositive(Halide::Expr(0.0f));
    Halide::Buffer<float> out = e.realize();
    EXPECT_EQ(out(), 1.0f);
}

TEST(Numerics, Exp2OfIntegersIsExact) {
    // k is added to the exponent bits of 2^0, and the polynomial's constant term is exactly 1.
    // Down to the floor, 2^-64, which is kept.
    const int n = 1 - static_cast<int>(algorithm::kExp2Floor);
    Halide::Buffer<float> x(n);
    for (int k = 0; k < n; k++) x(k) = -static_cast<float>(k);
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp2_nonpositive(x(i));
    e.vectorize(i, 16, Halide::TailStrategy::GuardWithIf);
    Halide::Buffer<float> out = e.realize({n});
    for (int k = 0; k < n; k++) EXPECT_EQ(out(k), std::ldexp(1.0f, -k)) << k;
}

TEST(Numerics, Exp2BelowTheFloorIsZero) {
    // Below 2^-64 the result is exactly 0 (no subnormal weighted values, numerics.h); just above
    // the floor it is 2^x, a normal float. Vectorized as the kernels run it, and in the scalar
    // tail.
    const std::vector<float> zero{-64.01f, -65.0f, -126.5f,   -127.0f,
                                  -150.0f, -1e30f, -INFINITY, -3e38f};
    const std::vector<float> kept{-64.0f, -63.99f, -63.5f};
    const int n = static_cast<int>(zero.size() + kept.size());
    Halide::Buffer<float> x(n);
    for (int k = 0; k < n; k++) {
        x(k) = k < static_cast<int>(zero.size()) ? zero[k] : kept[k - zero.size()];
    }
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp2_nonpositive(x(i));
    e.vectorize(i, 4, Halide::TailStrategy::GuardWithIf);
    Halide::Buffer<float> out = e.realize({n});
    for (int k = 0; k < n; k++) {
        if (k < static_cast<int>(zero.size())) {
            EXPECT_EQ(out(k), 0.0f) << x(k);
        } else {
            const float want = std::exp2(x(k));
            EXPECT_NEAR(out(k), want, 3 * want * FLT_EPSILON) << x(k);
        }
    }
}

TEST(Numerics, Exp2OfNanIsNan) {
    // The floor must not turn NaN into a finite weight: a NaN score would otherwise get
    // a weight and its row a finite, wrong output (docs/reliability.md, numerics). Checked for both
    // signs of NaN (x86 makes negative ones), vectorized as the kernels run it and in the
    // scalar tail.
    const int n = 19;
    Halide::Buffer<float> x(n);
    for (int k = 0; k < n; k++) {
        x(k) = (k % 3 == 0) ? std::copysign(NAN, k % 2 ? -1.0f : 1.0f) : -static_cast<float>(k);
    }
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp2_nonpositive(x(i));
    e.vectorize(i, 8, Halide::TailStrategy::GuardWithIf);
    Halide::Buffer<float> out = e.realize({n});
    for (int k = 0; k < n; k++) {
        if (k % 3 == 0) {
            EXPECT_TRUE(std::isnan(out(k))) << "exp2_nonpositive(NaN) = " << out(k) << " at " << k;
        } else {
            EXPECT_EQ(out(k), std::ldexp(1.0f, -k)) << k;
        }
    }
}

// The online softmax's rescaling factors, 2^x for whole x <= 0 (numerics.h: exp2_of_integral):
// exact powers of two down to the floor, 0 below it (-inf and the lowest float minus a maximum
// included), and NaN for NaN (inf - inf, where a row saw +inf), vectorized as the kernels run it
// and in the scalar tail.
TEST(Numerics, Exp2OfIntegralIsExactZeroBelowTheFloorAndNanForNan) {
    const int floor = static_cast<int>(algorithm::kExp2Floor);
    std::vector<float> x;
    for (int k = 0; k >= floor - 3; k--) x.push_back(static_cast<float>(k));
    const std::vector<float> far{-127.0f, -128.0f, -1e9f, -3.4028235e38f, -INFINITY};
    x.insert(x.end(), far.begin(), far.end());
    x.push_back(NAN);
    x.push_back(-NAN);
    const int n = static_cast<int>(x.size());
    Halide::Buffer<float> in(x.data(), n);
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp2_of_integral(in(i));
    e.vectorize(i, 16, Halide::TailStrategy::GuardWithIf);
    Halide::Buffer<float> out = e.realize({n});
    for (int k = 0; k < n; k++) {
        if (std::isnan(x[k])) {
            EXPECT_TRUE(std::isnan(out(k))) << "exp2_of_integral(NaN) = " << out(k);
        } else if (x[k] >= algorithm::kExp2Floor) {
            EXPECT_EQ(out(k), std::ldexp(1.0f, static_cast<int>(x[k]))) << x[k];
        } else {
            EXPECT_EQ(out(k), 0.0f) << x[k];
        }
    }
}

// softcap's tanh, vectorized as the kernels run it: relative error against double tanh over
// small, medium and saturating arguments of both signs, for a cap of 1 (tanh itself) and the
// caps of models (Gemma 2: 50 on attention logits, 30 on the final ones) and below 1, and the
// ends (+-inf, 0 and NaN).
TEST(Numerics, CappedTanhWithinOneMicroOfDoubleTanh) {
    const int n = 1 << 18;
    for (const float cap : {1.0f, 50.0f, 30.0f, 0.3f}) {
        Halide::Buffer<float> x(n);
        for (int k = 0; k < n; k++) {
            // Magnitudes spread over 2^-20 .. 2^5 times the cap, alternating in sign.
            const float magnitude =
                cap * std::ldexp(1.0f, -20) * std::pow(2.0f, 25.0f * k / (n - 1));
            x(k) = k % 2 == 0 ? magnitude : -magnitude;
        }
        Halide::Var i("i");
        Halide::Func t("t");
        t(i) = algorithm::capped_tanh(x(i), 9.0f * cap, 1.0f / cap);
        t.vectorize(i, 16);
        Halide::Buffer<float> out = t.realize({n});
        double worst = 0;
        for (int k = 0; k < n; k++) {
            const double exact = cap * std::tanh(static_cast<double>(x(k)) / cap);
            worst = std::max(worst, std::fabs(out(k) - exact) / std::fabs(exact));
        }
        EXPECT_LT(worst, 1e-6) << "cap " << cap;
        Halide::Func ends("ends");
        ends(i) = algorithm::capped_tanh(
            Halide::select(i == 0, Halide::Expr(INFINITY), i == 1, Halide::Expr(-INFINITY), i == 2,
                           0.0f, Halide::Expr(NAN)),
            9.0f * cap, 1.0f / cap);
        ends.vectorize(i, 4);
        Halide::Buffer<float> e = ends.realize({4});
        EXPECT_NEAR(e(0), cap, 1e-6 * cap);
        EXPECT_NEAR(e(1), -cap, 1e-6 * cap);
        EXPECT_EQ(e(2), 0.0f);
        EXPECT_TRUE(std::isnan(e(3)));
    }
}

}  // namespace
}  // namespace attngen::test
