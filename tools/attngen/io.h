// Loading inputs and writing outputs for the commands: the npy module plus the checks and the
// all-or-nothing commit of several output files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attngen/tensor.h"
#include "npy.h"

namespace attngen::cli {

// Loads a float32 array of the given rank; throws a bad-input Error naming the file otherwise.
npy::Array load_f32(const std::string &path, int rank, const char *role);

// The storage type named by an option's value ("f32", "bf16", "f16", as in variant specs); a
// bad-input Error that names the option and the known names for another value.
DType storage_by_name(const std::string &name, const char *option);

// Loads q, k or v of the given rank in storage type `storage`: float32 ('<f4'), float16 ('<f2'),
// or bfloat16 as uint16 bit patterns ('<u2'). Without a storage type (--dtype left out) the file
// gives it, float32 or float16; a uint16 file then needs --dtype bf16. Any other type is a
// bad-input Error that names the file, what was expected and `why` ("--dtype bf16").
npy::Array load_stored(const std::string &path, int rank, const char *role,
                       std::optional<DType> storage, const std::string &why);

// Loads an int32 or int64 array of the given rank; role names it in errors ("key lengths") and
// layout gives its expected shape ("[B]").
npy::Array load_integers(const std::string &path, int rank, const char *role, const char *layout);

// Loads int32 or int64 key lengths of rank 1.
npy::Array load_lengths(const std::string &path);

// Output files that are written to temporary names and renamed into place together, only after
// every one of them has been written.
class Outputs {
  public:
    void add(const std::string &path, const std::vector<int64_t> &shape,
             const std::vector<float> &data);
    // A float array of any storage type (npy::serialize_float_array).
    void add(const std::string &path, const npy::Array &array);
    void commit();

  private:
    std::vector<npy::PendingFile> files_;
};

}  // namespace attngen::cli
