#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace attngen::npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
// Arrays larger than this are refused before any allocation; the kernels cannot address more.
constexpr int64_t kMaxBytes = int64_t(1) << 34;

// Text taken from a file, fit for a one-line message: control and non-ASCII bytes as \xNN, and at
// most 40 characters (a malformed header may hold anything, newlines included).
std::string printable(const std::string &text) {
    std::string out;
    for (std::size_t n = 0; n < text.size() && n < 40; n++) {
        const auto c = static_cast<unsigned char>(text[n]);
        if (c < 0x20 || c >= 0x7f) {
            static const char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    if (text.size() > 40) out += "...";
    return out;
}

std::string shape_string(const std::vector<int64_t> &shape) {
    std::string s = "(";
    for (std::size_t d = 0; d < shape.size(); d++) {
        s += std::to_string(shape[d]);
        if (shape.size() == 1 || d + 1 < shape.size()) s += ",";
        if (d + 1 < shape.size()) s += " ";
    }
    return s + ")";
}

// A cursor over the header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
  public:
    explicit HeaderParser(std::string text) : text_(std::move(text)) {}

    bool parse(std::string *descr, bool *fortran, std::vector<int64_t> *shape, std::string *why) {
        bool have_descr = false, have_fortran = false, have_shape = false;
        skip_space();
        if (!eat('{')) return fail("header does not start with '{'", why);
        while (true) {
            skip_space();
            if (eat('}')) break;
            std::string key;
            if (!read_string(&key)) return fail("expected a quoted key in the header", why);
            skip_space();
            if (!eat(':')) return fail("expected ':' after '" + printable(key) + "'", why);
            skip_space();
            if (key == "descr") {
                if (!read_string(descr)) return fail("'descr' is not a string", why);
                have_descr = true;
            } else if (key == "fortran_order") {
                if (text_.compare(pos_, 4, "True") == 0) {
                    *fortran = true;
                    pos_ += 4;
                } else if (text_.compare(pos_, 5, "False") == 0) {
                    *fortran = false;
                    pos_ += 5;
                } else {
                    return fail("'fortran_order' is not True or False", why);
                }
                have_fortran = true;
            } else if (key == "shape") {
                if (!read_shape(shape, why)) return false;
                have_shape = true;
            } else {
                return fail("unexpected header key '" + printable(key) + "'", why);
            }
            skip_space();
            if (eat(',')) continue;
            skip_space();
            if (eat('}')) break;
            return fail("expected ',' or '}' in the header", why);
        }
        if (!have_descr || !have_fortran || !have_shape) {
            return fail("header lacks 'descr', 'fortran_order' or 'shape'", why);
        }
        return true;
    }

  private:
    static bool fail(const std::string &message, std::string *why) {
        *why = message;
        return false;
    }
    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) pos_++;
    }
    bool eat(char c) {
        if (pos_ < text_.size() && text_[pos_] == c) {
            pos_++;
            return true;
        }
        return false;
    }
    bool read_string(std::string *out) {
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return false;
        char quote = text_[pos_++];
        std::size_t end = text_.find(quote, pos_);
        if (end == std::string::npos) return false;
        *out = text_.substr(pos_, end - pos_);
        pos_ = end + 1;
        return true;
    }
    bool read_shape(std::vector<int64_t> *shape, std::string *why) {
        if (!eat('(')) return fail("'shape' is not a tuple", why);
        shape->clear();
        while (true) {
            skip_space();
            if (eat(')')) return true;
            std::size_t start = pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') pos_++;
            if (pos_ == start || pos_ - start > 15) {
                return fail("'shape' holds something other than non-negative integers", why);
            }
            shape->push_back(std::stoll(text_.substr(start, pos_ - start)));
            skip_space();
            if (eat(',')) continue;
            skip_space();
            if (eat(')')) return true;
            return fail("expected ',' or ')' in 'shape'", why);
        }
    }

    const std::string text_;
    std::size_t pos_ = 0;
};

uint32_t read_le(const std::string &bytes, std::size_t at, int size) {
    uint32_t v = 0;
    for (int b = size - 1; b >= 0; b--) v = (v << 8) | static_cast<unsigned char>(bytes[at + b]);
    return v;
}

}  // namespace

Array Array::zeros(DType dtype, std::vector<int64_t> shape) {
    Array a;
    a.dtype = dtype;
    a.shape = std::move(shape);
    const int64_t count = a.num_elements();
    if (dtype == DType::kFloat32) {
        a.f32.resize(count);
    } else {
        a.u16.resize(count);
    }
    return a;
}

int64_t Array::num_elements() const {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
}

TensorView Array::view() {
    TensorView v;
    v.dtype = dtype;
    v.rank = static_cast<int>(shape.size());
    switch (dtype) {
        case DType::kFloat32:
            v.data = f32.data();
            break;
        case DType::kInt32:
            v.data = i32.data();
            break;
        case DType::kInt64:
            v.data = i64.data();
            break;
        case DType::kBFloat16:
        case DType::kFloat16:
            v.data = u16.data();
            break;
    }
    int64_t stride = 1;
    for (int d = std::min(v.rank, kMaxRank) - 1; d >= 0; d--) {
        v.shape[d] = shape[d];
        v.strides[d] = stride;
        stride *= shape[d];
    }
    return v;
}

bool parse(const std::string &name, const std::string &bytes, Array *out, std::string *error) {
    auto fail = [&](const std::string &why) {
        *error = name + ": " + why;
        return false;
    };
    if (bytes.size() < kMagicSize + 4 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) {
        return fail("not an .npy file (no \\x93NUMPY magic)");
    }
    const int major = static_cast<unsigned char>(bytes[6]);
    const int length_size = major == 1 ? 2 : 4;
    if (major < 1 || major > 3) return fail("unsupported .npy version " + std::to_string(major));
    if (bytes.size() < 8 + static_cast<std::size_t>(length_size)) return fail("truncated header");
    const std::size_t header_length = read_le(bytes, 8, length_size);
    const std::size_t data_start = 8 + length_size + header_length;
    if (data_start > bytes.size()) return fail("truncated header");

    std::string descr, why;
    bool fortran = false;
    std::vector<int64_t> shape;
    HeaderParser parser(bytes.substr(8 + length_size, header_length));
    if (!parser.parse(&descr, &fortran, &shape, &why)) return fail("malformed header: " + why);
    if (fortran) {
        return fail("Fortran-order array; save a C-order one (numpy.ascontiguousarray)");
    }
    std::size_t item_size = 0;
    if (descr == "<f4") {
        out->dtype = DType::kFloat32;
        item_size = 4;
    } else if (descr == "<i4") {
        out->dtype = DType::kInt32;
        item_size = 4;
    } else if (descr == "<i8") {
        out->dtype = DType::kInt64;
        item_size = 8;
    } else if (descr == "<f2") {
        out->dtype = DType::kFloat16;
        item_size = 2;
    } else if (descr == "<u2") {
        out->dtype = DType::kBFloat16;
        item_size = 2;
    } else {
        return fail("dtype '" + printable(descr) +
                    "' is not supported; use little-endian float32 ('<f4'), float16 ('<f2') or "
                    "uint16 holding bfloat16 ('<u2'), or int32/int64 for integers");
    }
    out->bits = descr == "<u2";
    int64_t count = 1;
    for (int64_t e : shape) {
        if (e != 0 && count > kMaxBytes / static_cast<int64_t>(item_size) / e) {
            return fail("shape " + shape_string(shape) + " is too large");
        }
        count *= e;
    }
    const std::size_t data_bytes = static_cast<std::size_t>(count) * item_size;
    if (bytes.size() - data_start < data_bytes) {
        return fail("truncated: shape " + shape_string(shape) + " needs " +
                    std::to_string(data_bytes) + " bytes of data, the file has " +
                    std::to_string(bytes.size() - data_start));
    }
    if (bytes.size() - data_start > data_bytes) {
        return fail(std::to_string(bytes.size() - data_start - data_bytes) +
                    " unexpected bytes after the data of shape " + shape_string(shape));
    }
    out->shape = shape;
    const char *data = bytes.data() + data_start;
    out->f32.clear();
    out->i32.clear();
    out->i64.clear();
    out->u16.clear();
    // An empty array (a zero extent) has no data: memcpy must not be handed the null pointer of
    // an empty vector, even for zero bytes.
    if (count == 0) return true;
    switch (out->dtype) {
        case DType::kFloat32:
            out->f32.resize(count);
            std::memcpy(out->f32.data(), data, data_bytes);
            break;
        case DType::kInt32:
            out->i32.resize(count);
            std::memcpy(out->i32.data(), data, data_bytes);
            break;
        case DType::kInt64:
            out->i64.resize(count);
            std::memcpy(out->i64.data(), data, data_bytes);
            break;
        case DType::kBFloat16:
        case DType::kFloat16:
            out->u16.resize(count);
            std::memcpy(out->u16.data(), data, data_bytes);
            break;
    }
    return true;
}

bool read(const std::string &path, Array *out, std::string *error) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        *error = path + ": cannot open (" + std::strerror(errno) + ")";
        return false;
    }
    std::ostringstream contents;
    contents << file.rdbuf();
    if (file.bad()) {
        *error = path + ": read error";
        return false;
    }
    return parse(path, contents.str(), out, error);
}

namespace {

// A version 1.0 .npy file: the header for descr and shape, padded so that the data starts at a
// multiple of 64 bytes, then the data.
std::string serialize(const std::vector<int64_t> &shape, const char *descr, const void *data,
                      std::size_t item_size) {
    std::string header = std::string("{'descr': '") + descr +
                         "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
    const std::size_t prefix = kMagicSize + 2 + 2;
    std::size_t total = prefix + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    int64_t count = 1;
    for (int64_t e : shape) count *= e;
    std::string bytes(kMagic, kMagicSize);
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    bytes.append(reinterpret_cast<const char *>(data), count * item_size);
    return bytes;
}

}  // namespace

std::string serialize_f32(const std::vector<int64_t> &shape, const float *data) {
    return serialize(shape, "<f4", data, sizeof(float));
}

std::string serialize_16(const std::vector<int64_t> &shape, DType dtype, const uint16_t *data) {
    return serialize(shape, dtype == DType::kFloat16 ? "<f2" : "<u2", data, sizeof(uint16_t));
}

std::string serialize_float_array(const Array &array) {
    return array.dtype == DType::kFloat32
               ? serialize_f32(array.shape, array.f32.data())
               : serialize_16(array.shape, array.dtype, array.u16.data());
}

PendingFile::PendingFile(PendingFile &&other) noexcept
    : path_(std::move(other.path_)), temp_path_(std::move(other.temp_path_)) {
    other.temp_path_.clear();
}

PendingFile::~PendingFile() {
    if (!temp_path_.empty()) std::remove(temp_path_.c_str());
}

bool PendingFile::write(const std::string &path, const std::string &contents, std::string *error) {
    path_ = path;
    std::string pattern = path + ".tmp-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = mkstemp(name.data());
    if (fd < 0) {
        *error = path + ": cannot create (" + std::strerror(errno) + ")";
        return false;
    }
    temp_path_ = name.data();
    std::size_t written = 0;
    while (written < contents.size()) {
        ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            *error = path + ": write failed (" + std::strerror(errno) + ")";
            ::close(fd);
            return false;
        }
        written += static_cast<std::size_t>(n);
    }
    // mkstemp creates the file readable by its owner only; give it the usual permissions.
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    const bool synced = fsync(fd) == 0;
    const bool closed = ::close(fd) == 0;
    if (!synced || !closed) {
        *error = path + ": write failed (" + std::strerror(errno) + ")";
        return false;
    }
    return true;
}

bool PendingFile::commit(std::string *error) {
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
        *error = path_ + ": cannot write (" + std::strerror(errno) + ")";
        return false;
    }
    temp_path_.clear();
    return true;
}

}  // namespace attngen::npy
