// Numerical building blocks of the algorithms, JIT-compiled and checked in isolation.
#include <gtest/gtest.h>

#include <cmath>

#include "Halide.h"
#include "algorithm/numerics.h"

namespace attngen::test {
namespace {

TEST(Numerics, ExpWithinTwoUlpsOverTheSoftmaxRange) {
    // Softmax evaluates e^(s - max) with s - max <= 0; the kernels' accuracy rests on this.
    const int n = 1 << 20;
    Halide::Buffer<float> x(n);
    for (int i = 0; i < n; i++) x(i) = -87.0f * static_cast<float>(i) / (n - 1);
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp_f32(x(i));
    e.vectorize(i, 16);
    Halide::Buffer<float> out = e.realize({n});
    double worst_ulps = 0;
    for (int k = 0; k < n; k++) {
        const double exact = std::exp(static_cast<double>(x(k)));
        const double ulp =
            std::nextafter(static_cast<float>(exact), INFINITY) - static_cast<float>(exact);
        worst_ulps = std::max(worst_ulps, std::fabs(out(k) - exact) / ulp);
    }
    EXPECT_LE(worst_ulps, 2.0);
}

TEST(Numerics, ExpOfZeroIsExactlyOne) {
    // The row maximum's own weight: exactly 1 keeps a one-key row's probability exactly 1.
    Halide::Func e("e");
    e() = algorithm::exp_f32(Halide::Expr(0.0f));
    Halide::Buffer<float> out = e.realize();
    EXPECT_EQ(out(), 1.0f);
}

TEST(Numerics, ExpUnderflowsToTinyNonNegativeValues) {
    Halide::Var i("i");
    Halide::Buffer<float> x(4);
    x(0) = -100.0f;
    x(1) = -1e30f;
    x(2) = -INFINITY;
    x(3) = -87.5f;
    Halide::Func e("e");
    e(i) = algorithm::exp_f32(x(i));
    Halide::Buffer<float> out = e.realize({4});
    for (int k = 0; k < 4; k++) {
        EXPECT_GE(out(k), 0.0f) << x(k);
        EXPECT_LT(out(k), 1e-37f) << x(k);
    }
}

TEST(Numerics, ExpOfNanIsNan) {
    // The clamp to [-87, 88] must not turn NaN into a finite weight: a NaN score would otherwise
    // get the weight e^88 and its row a finite, wrong output (RELIABILITY.md, numerics). Checked
    // both vectorized, as the kernels run it, and in the scalar tail.
    const int n = 19;
    Halide::Buffer<float> x(n);
    for (int k = 0; k < n; k++) x(k) = (k % 3 == 0) ? NAN : -static_cast<float>(k);
    Halide::Var i("i");
    Halide::Func e("e");
    e(i) = algorithm::exp_f32(x(i));
    e.vectorize(i, 8, Halide::TailStrategy::GuardWithIf);
    Halide::Buffer<float> out = e.realize({n});
    for (int k = 0; k < n; k++) {
        if (k % 3 == 0) {
            EXPECT_TRUE(std::isnan(out(k))) << "exp_f32(NaN) = " << out(k) << " at " << k;
        } else {
            EXPECT_NEAR(out(k), std::exp(-static_cast<double>(k)), 1e-6 * std::exp(-k)) << k;
        }
    }
}

}  // namespace
}  // namespace attngen::test
