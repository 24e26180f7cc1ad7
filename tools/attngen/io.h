// Loading inputs and writing outputs for the commands: the npy module plus the checks and the
// all-or-nothing commit of several output files.
#pragma once

#include <string>
#include <vector>

#include "npy.h"

namespace attngen::cli {

// Loads a float32 array of the given rank; throws a bad-input Error naming the file otherwise.
npy::Array load_f32(const std::string &path, int rank, const char *role);

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
    void commit();

  private:
    std::vector<npy::PendingFile> files_;
};

}  // namespace attngen::cli
