// CUDA through the runtime: placement, device pointers and what happens without a device.
//
// The whole correctness list (AttentionTest, KernelTest, MhaTest, StageTest) already runs every
// cuda_tiled and cuda_fused kernel: on a machine with a CUDA device their CUDA entries run (host
// tensors copied in and out), elsewhere their CPU entries. The tests here cover what only CUDA
// has; those that need a device skip, with the probe's reason, where there is none.
#include <gtest/gtest.h>

#include <cmath>

#include "HalideBuffer.h"
#include "attngen/attngen.h"
#include "runtime_test_util.h"

#ifdef ATTNGEN_HAVE_CUDA
#include "HalideRuntimeCuda.h"
#endif

namespace attngen::test {
namespace {

bool BuildHasCudaKernels() {
    for (const auto &k : list_kernels()) {
        if (k.cuda()) return true;
    }
    return false;
}

// A small causal grouped-query problem with padding, computed by the fp64 reference.
AttentionCase SmallCase() {
    AttentionCase c;
    c.shape = {2, 4, 2, 37, 70, 24, 40};
    c.causal = true;
    c.key_lengths = {70, 45};
    c.prepare(11);
    return c;
}

TEST(Cuda, StatusSaysWhyCudaCannotRun) {
    Status s = cuda_status();
    if (s.ok()) GTEST_SKIP() << "a CUDA device is usable here";
    EXPECT_EQ(s.code(), StatusCode::kUnavailable);
    EXPECT_NE(s.message().find("CUDA"), std::string::npos) << s.message();
}

TEST(Cuda, PlacementCudaWithoutDeviceIsUnavailableAndWritesNothing) {
    if (cuda_status().ok()) GTEST_SKIP() << "a CUDA device is usable here";
    AttentionCase c = SmallCase();
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    args.placement = Placement::kCuda;
    Status s = attention(args);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
    EXPECT_NE(s.message().find("needs a CUDA device"), std::string::npos) << s.message();
    for (float x : out) ASSERT_TRUE(std::isnan(x)) << "out was written";
}

TEST(Cuda, DeviceTensorsWithoutDeviceAreUnavailable) {
    if (cuda_status().ok()) GTEST_SKIP() << "a CUDA device is usable here";
    AttentionCase c = SmallCase();
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    // A pointer that must never be dereferenced: the call has to refuse before any kernel runs.
    args.q.data = reinterpret_cast<void *>(0x1000);
    args.q = args.q.on_cuda();
    args.placement = Placement::kCuda;
    EXPECT_EQ(attention(args).code(), StatusCode::kUnavailable);
    args.placement = Placement::kCpu;
    Status s = attention(args);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find("placement"), std::string::npos) << s.message();
}

TEST(Cuda, KeyLengthsMustBeInHostMemory) {
    AttentionCase c = SmallCase();
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    args.key_lengths = args.key_lengths->on_cuda();
    args.placement = Placement::kCudaOrCpu;
    Status s = attention(args);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find("key_lengths"), std::string::npos) << s.message();
}

TEST(Cuda, CudaOrCpuRunsWhereverItCanAndMatchesReference) {
    AttentionCase c = SmallCase();
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    args.placement = Placement::kCudaOrCpu;
    CallInfo info;
    ASSERT_TRUE(attention(args, &info).ok());
    const bool device = cuda_status().ok();
    // With a device a CUDA kernel ran; without one the CPU dispatch chose as for kCpu.
    EXPECT_EQ(info.kernel.find("_cuda_") != std::string::npos, device) << info.kernel;
    EXPECT_TRUE(Matches(out, c.out, c.out32));
    EXPECT_TRUE(Matches(lse, c.lse, c.lse32));
}

#ifdef ATTNGEN_HAVE_CUDA
// A float32 array in CUDA device memory, allocated through the Halide runtime that the kernels
// share (so the test needs no CUDA toolkit).
class DeviceArray {
  public:
    explicit DeviceArray(const std::vector<float> &host) : buffer_(host.size()) {
        std::copy(host.begin(), host.end(), buffer_.data());
        buffer_.set_host_dirty();
        ok_ = buffer_.copy_to_device(halide_cuda_device_interface()) == 0;
    }
    bool ok() const { return ok_; }
    void *device_pointer() {
        return reinterpret_cast<void *>(halide_cuda_get_device_ptr(nullptr, buffer_.raw_buffer()));
    }
    std::vector<float> to_host() {
        buffer_.set_device_dirty();
        buffer_.copy_to_host();
        return {buffer_.data(), buffer_.data() + buffer_.number_of_elements()};
    }

  private:
    Halide::Runtime::Buffer<float> buffer_;
    bool ok_ = false;
};

TEST(CudaDevice, DevicePointersGiveTheReferenceResultWithoutCopies) {
    if (Status s = cuda_status(); !s.ok()) GTEST_SKIP() << s.message();
    AttentionCase c = SmallCase();
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    DeviceArray q(c.q), k(c.k), v(c.v), dout(out), dlse(lse);
    ASSERT_TRUE(q.ok() && k.ok() && v.ok() && dout.ok() && dlse.ok());
    for (auto [view, array] :
         {std::pair{&args.q, &q}, {&args.k, &k}, {&args.v, &v}, {&args.out, &dout}}) {
        view->data = array->device_pointer();
        *view = view->on_cuda();
    }
    args.lse->data = dlse.device_pointer();
    args.lse = args.lse->on_cuda();
    args.placement = Placement::kCuda;
    for (const char *schedule : {"cuda_fused", "cuda_tiled"}) {
        SCOPED_TRACE(schedule);
        args.schedule = schedule;
        CallInfo info;
        Status s = attention(args, &info);
        ASSERT_TRUE(s.ok()) << s.to_string();
        EXPECT_NE(info.kernel.find(schedule), std::string::npos) << info.kernel;
        EXPECT_TRUE(Matches(dout.to_host(), c.out, c.out32));
        EXPECT_TRUE(Matches(dlse.to_host(), c.lse, c.lse32));
    }
}
#endif

TEST(CudaDevice, WideHeadsGoToCudaTiledAndCudaFusedRefusesThem) {
    if (Status s = cuda_status(); !s.ok()) GTEST_SKIP() << s.message();
    // d_k + d_v = 384: cuda_fused's K and V tiles would not fit 48 KiB of shared memory.
    static_assert(192 + 192 > kCudaFusedMaxHeadDims);
    AttentionCase c;
    c.shape = {1, 2, 2, 9, 40, 192, 192};
    c.prepare(5);
    std::vector<float> out, lse;
    AttentionArgs args = ArgsFor(c, &out, &lse, nullptr);
    args.placement = Placement::kCuda;
    CallInfo info;
    ASSERT_TRUE(attention(args, &info).ok());
    EXPECT_NE(info.kernel.find("cuda_tiled"), std::string::npos) << info.kernel;
    EXPECT_TRUE(Matches(out, c.out, c.out32));
    args.schedule = "cuda_fused";
    Status s = attention(args);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find("cuda_tiled"), std::string::npos) << s.message();
}

TEST(CudaDevice, EveryCudaKernelIsCompiledWithACpuFallbackEntry) {
    if (!BuildHasCudaKernels()) GTEST_SKIP() << "this build compiled no CUDA kernels";
    for (const auto &k : list_kernels()) {
        if (!k.cuda()) continue;
        // The CUDA entry first, then at least one entry without CUDA.
        EXPECT_NE(k.targets.find("-cuda"), std::string::npos) << k.name << ": " << k.targets;
        const std::string last = k.targets.substr(k.targets.rfind(',') + 1);
        EXPECT_EQ(last.find("cuda"), std::string::npos) << k.name << ": " << k.targets;
        // Without a device the runtime's target check must pick the CPU entry.
        if (!cuda_status().ok()) {
            EXPECT_EQ(k.selected_target.find("cuda"), std::string::npos) << k.name;
        }
    }
}

}  // namespace
}  // namespace attngen::test
