// The processor identity that benchmark results and tuning databases record: it must tell apart
// machines whose model names are the same (a Zen 4 and a Zen 5 virtual machine both say "AMD
// EPYC"), so it carries family, model and the widest vector extension.
#include "cpu_identity.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace attngen {
namespace {

std::string identity_of(const std::string &cpuinfo) {
    std::istringstream in(cpuinfo);
    return cpu_identity(in);
}

// Two processors as an x86 kernel lists them: every field repeated per processor.
const char *const kZen4 =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 17\n"
    "model name\t: AMD EPYC\n"
    "flags\t\t: fpu sse sse2 sse4_1 sse4_2 avx avx2 fma avx512f avx512bw avx512vl\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 17\n"
    "model name\t: AMD EPYC\n"
    "flags\t\t: fpu sse sse2 sse4_1 sse4_2 avx avx2 fma avx512f avx512bw avx512vl\n";

TEST(CpuIdentity, NamesModelFamilyAndWidestVectorExtension) {
    EXPECT_EQ(identity_of(kZen4), "AMD EPYC, family 25 model 17, AVX-512");
}

TEST(CpuIdentity, TellsApartProcessorsWithTheSameModelName) {
    std::string zen5 = kZen4;
    for (std::string::size_type at; (at = zen5.find("25\n")) != std::string::npos;)
        zen5.replace(at, 3, "26\n");
    EXPECT_EQ(identity_of(zen5), "AMD EPYC, family 26 model 17, AVX-512");
    EXPECT_NE(identity_of(zen5), identity_of(kZen4));
}

TEST(CpuIdentity, NamesTheWidestExtensionNotTheFirstListed) {
    EXPECT_EQ(identity_of("model name\t: Some Core\n"
                          "flags\t\t: avx2 sse4_1 avx512_vnni\n"),
              "Some Core, AVX2");
    EXPECT_EQ(identity_of("flags\t\t: sse2 sse4_1\n"), "SSE4.1");
    EXPECT_EQ(identity_of("flags\t\t: sse2 ssse3\n"), "unknown");
}

TEST(CpuIdentity, ReadsAnArmKernelsFields) {
    EXPECT_EQ(identity_of("processor\t: 0\n"
                          "BogoMIPS\t: 50.00\n"
                          "Features\t: fp asimd evtstrm aes crc32\n"
                          "CPU implementer\t: 0x41\n"
                          "CPU architecture: 8\n"
                          "CPU part\t: 0xd0c\n"),
              "implementer 0x41 part 0xd0c, NEON");
}

TEST(CpuIdentity, SaysUnknownForAnEmptyOrUnreadableFile) {
    EXPECT_EQ(identity_of(""), "unknown");
    EXPECT_EQ(identity_of("no colon here\n:\n  : value without a key\n"), "unknown");
}

TEST(CpuIdentity, ReadsThisMachine) {
    // Every Linux machine this project builds on (and qemu-user, which shows the host's file)
    // has a /proc/cpuinfo with at least a vector extension or a model in it.
    EXPECT_NE(cpu_identity(), "unknown");
}

}  // namespace
}  // namespace attngen
