#include "io.h"

#include "attngen/tensor.h"
#include "cli_error.h"

namespace attngen::cli {

namespace {

std::string shape_string(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (std::size_t d = 0; d < shape.size(); d++) s += (d ? ", " : "") + std::to_string(shape[d]);
    return s + "]";
}

}  // namespace

npy::Array load_f32(const std::string &path, int rank, const char *role) {
    npy::Array a;
    std::string error;
    if (!npy::read(path, &a, &error)) throw Error(kExitBadInput, error);
    if (a.dtype != DType::kFloat32) {
        throw Error(kExitBadInput, path + ": " + role + " has dtype " + dtype_name(a.dtype) +
                                       ", expected float32");
    }
    if (static_cast<int>(a.shape.size()) != rank) {
        throw Error(kExitBadInput, path + ": " + role + " has shape " + shape_string(a.shape) +
                                       ", expected rank " + std::to_string(rank));
    }
    return a;
}

npy::Array load_lengths(const std::string &path) {
    npy::Array a;
    std::string error;
    if (!npy::read(path, &a, &error)) throw Error(kExitBadInput, error);
    if (a.dtype == DType::kFloat32) {
        throw Error(kExitBadInput,
                    path + ": key lengths have dtype float32, expected int32 or int64");
    }
    if (a.shape.size() != 1) {
        throw Error(kExitBadInput,
                    path + ": key lengths have shape " + shape_string(a.shape) + ", expected [B]");
    }
    return a;
}

void Outputs::add(const std::string &path, const std::vector<int64_t> &shape,
                  const std::vector<float> &data) {
    npy::PendingFile file;
    std::string error;
    if (!file.write(path, npy::serialize_f32(shape, data.data()), &error)) {
        throw Error(kExitFailure, error);
    }
    files_.push_back(std::move(file));
}

void Outputs::commit() {
    std::string error;
    for (auto &f : files_) {
        if (!f.commit(&error)) throw Error(kExitFailure, error);
    }
    files_.clear();
}

}  // namespace attngen::cli
