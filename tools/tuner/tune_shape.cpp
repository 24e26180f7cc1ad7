#include "tune_shape.h"

#include <cstdlib>
#include <sstream>

namespace attngen::tuner {

std::string Bucket::key() const {
    std::string k = "attention";
    if (causal) k += "_causal";
    k += "_dk" + std::to_string(d_k) + "_dv" + std::to_string(d_v);
    if (max_queries > 0) k += "_q" + std::to_string(max_queries);
    return k;
}

bool TuneShape::parse(const std::string &spec, TuneShape *shape, std::string *error) {
    TuneShape s;
    s.nq = 0;
    std::stringstream items(spec);
    std::string item;
    while (std::getline(items, item, ',')) {
        if (item == "causal") {
            s.causal = true;
            continue;
        }
        const auto eq = item.find('=');
        char *end = nullptr;
        const long long value =
            eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &end, 10);
        if (eq == std::string::npos || end == item.c_str() + eq + 1 || *end != '\0' || value <= 0) {
            *error = "'" + item + "' in shape '" + spec + "' is not name=positive integer";
            return false;
        }
        const std::string name = item.substr(0, eq);
        if (name == "b")
            s.batch = value;
        else if (name == "h")
            s.heads = value;
        else if (name == "kv")
            s.kv_heads = value;
        else if (name == "nq")
            s.nq = value;
        else if (name == "nk")
            s.nk = value;
        else if (name == "d")
            s.d_k = value;
        else if (name == "dv")
            s.d_v = value;
        else {
            *error = "unknown field '" + name + "' in shape '" + spec +
                     "' (known: b, h, kv, nq, nk, d, dv, causal)";
            return false;
        }
    }
    if (s.nq == 0) {
        *error = "shape '" + spec + "' lacks nq";
        return false;
    }
    if (s.kv_heads == 0) s.kv_heads = s.heads;
    if (s.nk == 0) s.nk = s.nq;
    if (s.d_v == 0) s.d_v = s.d_k;
    if (s.heads % s.kv_heads != 0) {
        *error = "shape '" + spec + "': h must be a multiple of kv";
        return false;
    }
    *shape = s;
    return true;
}

std::string TuneShape::spec() const {
    std::string s = "b=" + std::to_string(batch) + ",h=" + std::to_string(heads) +
                    ",kv=" + std::to_string(kv_heads) + ",nq=" + std::to_string(nq) +
                    ",nk=" + std::to_string(nk) + ",d=" + std::to_string(d_k) +
                    ",dv=" + std::to_string(d_v);
    return causal ? s + ",causal" : s;
}

double TuneShape::flops() const {
    const double f = 2.0 * batch * heads * double(nq) * nk * (d_k + d_v);
    return causal ? f / 2 : f;
}

Bucket TuneShape::bucket() const {
    Bucket b;
    b.causal = causal;
    b.d_k = static_cast<int>(d_k);
    b.d_v = static_cast<int>(d_v);
    b.max_queries = nq <= kDecodeQueries ? kDecodeQueries : nq <= kShortQueries ? kShortQueries : 0;
    return b;
}

Bucket default_build_bucket(const TuneShape &shape) {
    Bucket b;
    b.causal = shape.causal;
    const bool specialized = shape.d_k == shape.d_v && (shape.d_k == 64 || shape.d_k == 128);
    b.d_k = specialized ? static_cast<int>(shape.d_k) : 0;
    b.d_v = specialized ? static_cast<int>(shape.d_v) : 0;
    b.max_queries = shape.nq <= kDecodeQueries ? kDecodeQueries : 0;
    // Head dim 64 has decode kernels for up to two queries without the causal mask and up to
    // eight with it (kernels/CMakeLists.txt); the other counts below eight run in the d64
    // kernel, which outranks the generic decode kernel.
    if (b.max_queries > 0 && shape.d_k == 64 && shape.d_v == 64) {
        b.max_queries = shape.causal ? kDecodeQueries : shape.nq <= 2 ? 2 : 0;
    }
    return b;
}

int long_sequence_keys(int64_t head_dim) {
    return head_dim == 64 ? 32768 : head_dim == 128 ? 8192 : 0;
}

std::map<std::string, int> default_build_params(const TuneShape &shape) {
    const Bucket b = default_build_bucket(shape);
    const int long_keys = long_sequence_keys(b.d_k);
    if (!b.causal && b.max_queries == 0 && long_keys > 0 && shape.nk >= long_keys) {
        return {{"key_block", 1024}};
    }
    return {};
}

std::vector<std::string> default_shape_specs() {
    return {
        "h=8,nq=1024,d=80",         // Head dim 80.
        "h=8,nq=1024,d=96",         // Head dim 96.
        "h=4,nq=1024,d=256",        // Head dim 256.
        "h=8,nq=17,nk=30000,d=64",  // A short run of queries against a long KV cache.
        "h=32,kv=4,nq=512,d=64",    // Grouped-query attention, 8 query heads per KV head.
        "b=16,h=8,nq=128,d=64",     // Many short sequences.
    };
}

}  // namespace attngen::tuner
