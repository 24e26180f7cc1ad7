// The .npy reader and writer on well-formed and malformed bytes.
#include "npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

namespace attngen::test {
namespace {

// A version 1.0 or 2.0 file with this header text (padded as numpy does) and payload.
std::string NpyBytes(const std::string &header, const std::string &payload, int version = 1) {
    std::string h = header;
    const std::size_t prefix = version == 1 ? 10 : 12;
    h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
    std::string bytes("\x93NUMPY", 6);
    bytes += static_cast<char>(version);
    bytes += '\0';
    if (version == 1) {
        bytes += static_cast<char>(h.size() & 0xff);
        bytes += static_cast<char>(h.size() >> 8);
    } else {
        for (int b = 0; b < 4; b++) bytes += static_cast<char>((h.size() >> (8 * b)) & 0xff);
    }
    return bytes + h + payload;
}

std::string Floats(std::initializer_list<float> values) {
    std::string s(values.size() * 4, '\0');
    std::memcpy(s.data(), values.begin(), s.size());
    return s;
}

bool Parse(const std::string &bytes, npy::Array *a, std::string *error) {
    return npy::parse("test.npy", bytes, a, error);
}

TEST(Npy, ReadsFloat32COrder) {
    npy::Array a;
    std::string error;
    ASSERT_TRUE(Parse(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                               Floats({1, 2, 3, 4})),
                      &a, &error))
        << error;
    EXPECT_EQ(a.dtype, DType::kFloat32);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(a.f32, (std::vector<float>{1, 2, 3, 4}));
}

TEST(Npy, ReadsVersion2HeaderAndKeysInAnyOrder) {
    npy::Array a;
    std::string error;
    ASSERT_TRUE(Parse(NpyBytes("{'shape': (3,), 'fortran_order': False, 'descr': '<i8'}",
                               std::string(24, '\0'), 2),
                      &a, &error))
        << error;
    EXPECT_EQ(a.dtype, DType::kInt64);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{3}));
}

TEST(Npy, ReadsScalarShape) {
    npy::Array a;
    std::string error;
    ASSERT_TRUE(
        Parse(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", Floats({5})), &a,
              &error));
    EXPECT_TRUE(a.shape.empty());
    EXPECT_EQ(a.num_elements(), 1);
}

void ExpectRejected(const std::string &bytes, const std::string &fragment) {
    npy::Array a;
    std::string error;
    EXPECT_FALSE(Parse(bytes, &a, &error));
    EXPECT_NE(error.find(fragment), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << "message spans lines: " << error;
    EXPECT_EQ(error.rfind("test.npy", 0), 0u) << "message does not name the file: " << error;
}

TEST(Npy, ReadsEmptyArray) {
    // A zero extent: no data, and no memcpy from the null data of an empty vector (found by
    // npy_fuzz; undefined behaviour that UBSan reports).
    npy::Array a;
    std::string error;
    ASSERT_TRUE(Parse(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4), }", ""),
                      &a, &error))
        << error;
    EXPECT_EQ(a.shape, (std::vector<int64_t>{0, 4}));
    EXPECT_TRUE(a.f32.empty());
}

TEST(Npy, HeaderTextInMessagesStaysOnOneLine) {
    // Text quoted from a malformed header keeps the message to one line (found by npy_fuzz).
    npy::Array a;
    std::string error;
    EXPECT_FALSE(
        Parse(NpyBytes("{'descr': '<f\n4', 'fortran_order': False, 'shape': (1,), }", Floats({1})),
              &a, &error));
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(error.find("<f\\x0a4"), std::string::npos) << error;
    EXPECT_FALSE(Parse(NpyBytes("{'sh\rape': (1,), }", Floats({1})), &a, &error));
    EXPECT_EQ(error.find('\r'), std::string::npos) << error;
}

TEST(Npy, RejectsMissingMagic) {
    ExpectRejected("PK\x03\x04 zip file", "not an .npy file");
}

TEST(Npy, RejectsEmptyFile) {
    ExpectRejected("", "not an .npy file");
}

TEST(Npy, RejectsTruncatedHeader) {
    std::string bytes = NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "");
    ExpectRejected(bytes.substr(0, 30), "truncated header");
}

TEST(Npy, RejectsTruncatedData) {
    ExpectRejected(
        NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", Floats({1, 2})),
        "truncated");
}

TEST(Npy, RejectsTrailingBytes) {
    ExpectRejected(
        NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", Floats({1, 2})),
        "unexpected bytes");
}

TEST(Npy, RejectsFortranOrder) {
    ExpectRejected(NpyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                            Floats({1, 2, 3, 4})),
                   "Fortran");
}

TEST(Npy, RejectsBigEndianAndOtherDtypes) {
    for (const char *descr : {">f4", "<f8", ">f2", "<i2", ">u2", "|u1", "<c8"}) {
        ExpectRejected(NpyBytes(std::string("{'descr': '") + descr +
                                    "', 'fortran_order': False, 'shape': (1,), }",
                                std::string(16, '\0')),
                       descr);
    }
}

TEST(Npy, RejectsMalformedHeaders) {
    ExpectRejected(NpyBytes("not a dict", ""), "malformed header");
    ExpectRejected(NpyBytes("{'descr': '<f4', 'shape': (1,), }", Floats({1})), "lacks");
    ExpectRejected(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""),
                   "non-negative integers");
    ExpectRejected(NpyBytes("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", ""),
                   "fortran_order");
    ExpectRejected(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", ""),
                   "unexpected header key");
}

TEST(Npy, RejectsShapesTooLargeToAllocate) {
    ExpectRejected(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, "
                            "100000000), }",
                            ""),
                   "too large");
}

TEST(Npy, WriterOutputReadsBack) {
    const float data[6] = {1, 2, 3, 4, 5, 6};
    std::string bytes = npy::serialize_f32({2, 3}, data);
    EXPECT_EQ((bytes.size() - 6 * 4) % 64, 0u) << "data must start 64-byte aligned";
    npy::Array a;
    std::string error;
    ASSERT_TRUE(Parse(bytes, &a, &error)) << error;
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a.f32, std::vector<float>(data, data + 6));
}

// float16 files read as kFloat16 and uint16 files as kBFloat16 bit patterns (bits set: the command
// line decides whether they hold bfloat16); both write back byte for byte.
TEST(Npy, Reads16BitFilesAndWritesThemBack) {
    const uint16_t data[3] = {0x3c00, 0xc000, 0x7e00};
    for (const DType dtype : {DType::kFloat16, DType::kBFloat16}) {
        const std::string bytes = npy::serialize_16({3}, dtype, data);
        EXPECT_NE(bytes.find(dtype == DType::kFloat16 ? "'<f2'" : "'<u2'"), std::string::npos);
        npy::Array a;
        std::string error;
        ASSERT_TRUE(Parse(bytes, &a, &error)) << error;
        EXPECT_EQ(a.dtype, dtype);
        EXPECT_EQ(a.bits, dtype == DType::kBFloat16);
        EXPECT_EQ(a.u16, std::vector<uint16_t>(data, data + 3));
        EXPECT_EQ(a.view().dtype, dtype);
        EXPECT_EQ(a.view().data, a.u16.data());
    }
}

// An output array of zeros in each float storage type writes in that type's convention and reads
// back as it was written.
TEST(Npy, ZerosOfEachFloatTypeWriteAndReadBack) {
    for (const DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
        npy::Array out = npy::Array::zeros(dtype, {2, 1, 3});
        EXPECT_EQ(out.view().dtype, dtype);
        EXPECT_EQ(out.view().strides[0], 3);
        const std::string bytes = npy::serialize_float_array(out);
        npy::Array a;
        std::string error;
        ASSERT_TRUE(Parse(bytes, &a, &error)) << error;
        EXPECT_EQ(a.dtype, dtype);
        EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1, 3}));
        EXPECT_EQ(a.f32, std::vector<float>(dtype == DType::kFloat32 ? 6 : 0, 0.0f));
        EXPECT_EQ(a.u16, std::vector<uint16_t>(dtype == DType::kFloat32 ? 0 : 6, 0));
    }
}

TEST(Npy, PendingFileIsInvisibleUntilCommitted) {
    const std::string path = ::testing::TempDir() + "/attngen_pending.npy";
    std::remove(path.c_str());
    std::string error;
    {
        npy::PendingFile file;
        ASSERT_TRUE(file.write(path, "contents", &error)) << error;
        EXPECT_FALSE(std::ifstream(path).good());
    }
    EXPECT_FALSE(std::ifstream(path).good()) << "an uncommitted file must be removed";
    npy::PendingFile file;
    ASSERT_TRUE(file.write(path, "contents", &error)) << error;
    ASSERT_TRUE(file.commit(&error)) << error;
    std::ifstream in(path);
    std::string read;
    in >> read;
    EXPECT_EQ(read, "contents");
    std::remove(path.c_str());
}

TEST(Npy, ReadingAMissingFileNamesIt) {
    npy::Array a;
    std::string error;
    EXPECT_FALSE(npy::read("/nonexistent/dir/x.npy", &a, &error));
    EXPECT_NE(error.find("/nonexistent/dir/x.npy"), std::string::npos);
}

}  // namespace
}  // namespace attngen::test
