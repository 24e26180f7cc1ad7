#include "io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "attngen/tensor.h"
#include "attngen/variant.h"
#include "cli_error.h"

namespace attngen::cli {

namespace {

std::string shape_string(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (std::size_t d = 0; d < shape.size(); d++) s += (d ? ", " : "") + std::to_string(shape[d]);
    return s + "]";
}

// The type of a file's elements as numpy names it.
std::string file_type(const npy::Array &a) {
    return a.bits ? "uint16" : dtype_name(a.dtype);
}

void check_rank(const std::string &path, const npy::Array &a, int rank, const char *role) {
    if (static_cast<int>(a.shape.size()) != rank) {
        throw Error(kExitBadInput, path + ": " + role + " has shape " + shape_string(a.shape) +
                                       ", expected rank " + std::to_string(rank));
    }
}

}  // namespace

npy::Array load_f32(const std::string &path, int rank, const char *role) {
    npy::Array a;
    std::string error;
    if (!npy::read(path, &a, &error)) throw Error(kExitBadInput, error);
    if (a.dtype != DType::kFloat32) {
        throw Error(kExitBadInput,
                    path + ": " + role + " has dtype " + file_type(a) + ", expected float32");
    }
    check_rank(path, a, rank, role);
    return a;
}

namespace {

// What a file of storage type `storage` holds, as numpy names it.
std::string file_type_of(DType storage) {
    return storage == DType::kBFloat16 ? "uint16 (bfloat16 bit patterns)" : dtype_name(storage);
}

}  // namespace

DType storage_by_name(const std::string &name, const char *option) {
    DType storage;
    if (!parse_storage_name(name, &storage)) {
        throw Error(kExitBadInput, std::string("unknown ") + option + " '" + name +
                                       "' (known: " + storage_names() + ")");
    }
    return storage;
}

npy::Array load_stored(const std::string &path, int rank, const char *role,
                       std::optional<DType> storage, const std::string &why) {
    npy::Array a;
    std::string error;
    if (!npy::read(path, &a, &error)) throw Error(kExitBadInput, error);
    if (!storage) {
        if (a.bits) {
            throw Error(kExitBadInput, path + ": " + role +
                                           " has dtype uint16; pass --dtype bf16 if it holds "
                                           "bfloat16 bit patterns");
        }
        if (a.dtype != DType::kFloat32 && a.dtype != DType::kFloat16) {
            throw Error(kExitBadInput, path + ": " + role + " has dtype " + file_type(a) +
                                           ", expected float32 or float16");
        }
    } else if (a.dtype != *storage) {
        throw Error(kExitBadInput, path + ": " + role + " has dtype " + file_type(a) +
                                       ", expected " + file_type_of(*storage) + " (" + why + ")");
    }
    check_rank(path, a, rank, role);
    return a;
}

npy::Array load_integers(const std::string &path, int rank, const char *role, const char *layout) {
    npy::Array a;
    std::string error;
    if (!npy::read(path, &a, &error)) throw Error(kExitBadInput, error);
    if (a.dtype != DType::kInt32 && a.dtype != DType::kInt64) {
        throw Error(kExitBadInput, path + ": " + role + " have dtype " + file_type(a) +
                                       ", expected int32 or int64");
    }
    if (static_cast<int>(a.shape.size()) != rank) {
        throw Error(kExitBadInput, path + ": " + role + " have shape " + shape_string(a.shape) +
                                       ", expected " + layout);
    }
    return a;
}

npy::Array load_lengths(const std::string &path) {
    return load_integers(path, 1, "key lengths", "[B]");
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

void Outputs::add(const std::string &path, const npy::Array &array) {
    npy::PendingFile file;
    std::string error;
    if (!file.write(path, npy::serialize_float_array(array), &error)) {
        throw Error(kExitFailure, error);
    }
    files_.push_back(std::move(file));
}

void Outputs::commit() {
    // A destination that is a directory (or anything but a regular file) would make its rename
    // fail after the outputs before it were already in place: refuse before renaming any.
    for (const auto &f : files_) {
        struct stat st;
        if (stat(f.path().c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
            throw Error(kExitFailure, f.path() + ": exists and is not a regular file");
        }
    }
    // Each destination that exists is kept under a second name (a hard link) until every rename
    // has succeeded, so that a rename failing part-way can put back the files already replaced
    // and remove those already created: the destinations end all new or all as they were.
    struct Replaced {
        std::string path, backup;  // backup is empty when the destination did not exist.
    };
    std::vector<Replaced> done;
    auto undo = [&] {
        for (auto it = done.rbegin(); it != done.rend(); ++it) {
            if (it->backup.empty()) {
                std::remove(it->path.c_str());
            } else {
                std::rename(it->backup.c_str(), it->path.c_str());
            }
        }
    };
    for (auto &f : files_) {
        Replaced r{f.path(), ""};
        if (access(r.path.c_str(), F_OK) == 0) {
            std::string pattern = r.path + ".tmp-XXXXXX";
            std::vector<char> name(pattern.begin(), pattern.end());
            name.push_back('\0');
            const int fd = mkstemp(name.data());
            // mkstemp reserved a unique name; the link takes its place.
            if (fd >= 0) close(fd);
            if (fd < 0 || std::remove(name.data()) != 0 || link(r.path.c_str(), name.data()) != 0) {
                const std::string why = std::strerror(errno);
                undo();
                throw Error(kExitFailure, r.path + ": cannot keep the previous file (" + why + ")");
            }
            r.backup = name.data();
        }
        std::string error;
        if (!f.commit(&error)) {
            if (!r.backup.empty()) std::remove(r.backup.c_str());
            undo();
            throw Error(kExitFailure, error);
        }
        done.push_back(r);
    }
    for (const auto &r : done) {
        if (!r.backup.empty()) std::remove(r.backup.c_str());
    }
    files_.clear();
}

}  // namespace attngen::cli
