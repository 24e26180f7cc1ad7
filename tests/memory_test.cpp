// The fused schedule's promise: no Nq x Nk buffer, only O(block_q x Nk) scratch per thread.
// Peak resident memory is read from /proc/self/status (VmHWM) after resetting the high-water
// mark, so the measurement covers exactly one call.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "attngen/attngen.h"
#include "test_util.h"

namespace attngen::test {
namespace {

constexpr int64_t kMiB = 1 << 20;

// A field of /proc/self/status in bytes (the file reports kB).
int64_t StatusBytes(const std::string &field) {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind(field + ":", 0) == 0)
            return std::stoll(line.substr(field.size() + 1)) * 1024;
    }
    return -1;
}

// Resets VmHWM to the current resident size (Linux 4.0 and later).
bool ResetPeak() {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";
    return static_cast<bool>(clear);
}

// Memory a call adds above what is resident before it (inputs and outputs already touched).
int64_t ExtraPeakBytes(const std::string &schedule, int64_t heads, int64_t n, int64_t d) {
    auto q = random_values(heads * n * d, 1), k = random_values(heads * n * d, 2),
         v = random_values(heads * n * d, 3);
    std::vector<float> out(heads * n * d, 0.0f), lse(heads * n, 0.0f);
    AttentionArgs args;
    args.q = TensorView::f32(q.data(), {1, heads, n, d});
    args.k = TensorView::f32(k.data(), {1, heads, n, d});
    args.v = TensorView::f32(v.data(), {1, heads, n, d});
    args.out = TensorView::f32(out.data(), {1, heads, n, d});
    args.lse = TensorView::f32(lse.data(), {1, heads, n});
    args.schedule = schedule;
    const int64_t before = StatusBytes("VmRSS");
    if (!ResetPeak()) return -1;
    Status s = attention(args);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return StatusBytes("VmHWM") - before;
}

class MemoryTest : public ::testing::Test {
  protected:
    // The bound is per two threads: each thread has its own block scratch.
    void SetUp() override { previous_ = set_num_threads(2); }
    void TearDown() override { set_num_threads(previous_); }
    int previous_ = 0;
};

TEST_F(MemoryTest, FusedAttentionAtN16384StaysWithin64MiBOfItsInputsAndOutputs) {
    // B1 H2 N16384 D64: a materialized score matrix would be 2 GiB.
    const int64_t extra = ExtraPeakBytes("cpu_fused", 2, 16384, 64);
    ASSERT_GE(extra, 0) << "cannot read or reset the peak resident size";
    RecordProperty("extra_peak_MiB", std::to_string(extra / kMiB));
    EXPECT_LT(extra, 64 * kMiB) << "extra peak " << extra / kMiB << " MiB";
}

TEST_F(MemoryTest, MeasurementSeesAMaterializedScoreMatrix) {
    // cpu_tiled keeps one head's scores and weights (2 x 4096 x 4096 floats = 128 MiB): the
    // measurement above must be able to see such buffers, or it proves nothing.
    const int64_t extra = ExtraPeakBytes("cpu_tiled", 1, 4096, 64);
    ASSERT_GE(extra, 0) << "cannot read or reset the peak resident size";
    RecordProperty("extra_peak_MiB", std::to_string(extra / kMiB));
    EXPECT_GT(extra, 100 * kMiB) << "extra peak " << extra / kMiB << " MiB";
}

}  // namespace
}  // namespace attngen::test
