// Reading and writing NumPy .npy files (format versions 1.0 to 3.0), C order, little-endian
// float32, float16, int32 and int64, and uint16: what the command line exchanges with numpy users.
// NumPy has no bfloat16, so bfloat16 tensors travel as uint16 arrays of their bit patterns (the
// command line's --dtype bf16 says a file holds those).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/tensor.h"

namespace attngen::npy {

struct Array {
    // A uint16 file ('<u2') reads as kBFloat16 with `bits` set: whether it holds bfloat16 is for
    // the caller to say.
    DType dtype = DType::kFloat32;
    bool bits = false;
    std::vector<int64_t> shape;
    // Exactly one holds the elements, according to dtype (u16: float16 and bfloat16).
    std::vector<float> f32;
    std::vector<int32_t> i32;
    std::vector<int64_t> i64;
    std::vector<uint16_t> u16;

    // An array of zeros of a float type (float32, float16, or bfloat16 held as its bits), e.g.
    // an output for a kernel to write into.
    static Array zeros(DType dtype, std::vector<int64_t> shape);

    int64_t num_elements() const;
    // A view of the elements; rank above attngen::kMaxRank is reported by the runtime.
    TensorView view();
};

// Reads path into *out. On failure returns false and sets *error to one line that names the
// file and the problem (missing, not an .npy file, truncated, Fortran order, unsupported dtype).
bool read(const std::string &path, Array *out, std::string *error);

// Parses the bytes of an .npy file; read() is this plus the file system. name labels messages.
bool parse(const std::string &name, const std::string &bytes, Array *out, std::string *error);

// The bytes of a version 1.0 .npy file holding float32 data of this shape.
std::string serialize_f32(const std::vector<int64_t> &shape, const float *data);
// The same for 16-bit data: float16 ('<f2'), or bfloat16 as uint16 bit patterns ('<u2').
std::string serialize_16(const std::vector<int64_t> &shape, DType dtype, const uint16_t *data);
// The bytes of a float array (float32, float16, or bfloat16 as its bit patterns) by its dtype.
std::string serialize_float_array(const Array &array);

// A file written to a temporary name in the destination's directory and renamed into place by
// commit(), so that the destination holds either its old content or the whole new file. An
// uncommitted file is removed by the destructor.
class PendingFile {
  public:
    PendingFile() = default;
    PendingFile(const PendingFile &) = delete;
    PendingFile &operator=(const PendingFile &) = delete;
    PendingFile(PendingFile &&other) noexcept;
    ~PendingFile();

    // Writes contents to a temporary file next to path.
    bool write(const std::string &path, const std::string &contents, std::string *error);
    // Renames the temporary file to its destination.
    bool commit(std::string *error);
    // The destination given to write().
    const std::string &path() const { return path_; }

  private:
    std::string path_, temp_path_;
};

}  // namespace attngen::npy
