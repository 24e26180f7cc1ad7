#include "tune_shape.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "Halide.h"
#include "kernel_choice.h"

namespace attngen::detail {
// Generated from the build's variant table (tools/tuner/CMakeLists.txt): its kernels, without
// entry points, and its schedules' facts.
std::vector<Kernel> build_kernel_variants();
std::vector<ScheduleInfo> schedule_infos();
}  // namespace attngen::detail

namespace attngen::tuner {

bool TuneShape::parse(const std::string &spec, TuneShape *shape, std::string *error) {
    TuneShape s;
    s.nq = 0;
    bool kv_dtype_given = false;
    std::stringstream items(spec);
    std::string item;
    while (std::getline(items, item, ',')) {
        if (item == "causal" || item == "alibi" || item == "bias") {
            (item == "causal" ? s.causal : item == "alibi" ? s.alibi : s.bias) = true;
            continue;
        }
        const auto eq = item.find('=');
        const std::string name = eq == std::string::npos ? item : item.substr(0, eq);
        if (name == "dtype" || name == "kv_dtype") {
            DType type = DType::kFloat32;
            if (eq == std::string::npos || !parse_storage_name(item.substr(eq + 1), &type)) {
                *error = "'" + item + "' in shape '" + spec + "' is not " + name + "=<one of " +
                         storage_names() + ">";
                return false;
            }
            (name == "dtype" ? s.storage : s.kv_storage) = type;
            if (name == "kv_dtype") kv_dtype_given = true;
            continue;
        }
        // A window's sides may be 0 (a query sees only its own position on that side).
        const bool zero_allowed = name == "window_left" || name == "window_right";
        char *end = nullptr;
        const long long value =
            eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &end, 10);
        if (eq == std::string::npos || end == item.c_str() + eq + 1 || *end != '\0' ||
            value < (zero_allowed ? 0 : 1)) {
            *error = "'" + item + "' in shape '" + spec +
                     "' is not name=" + (zero_allowed ? "integer >= 0" : "positive integer");
            return false;
        }
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
        else if (name == "window_left")
            s.window_left = value;
        else if (name == "window_right")
            s.window_right = value;
        else if (name == "docs")
            s.doc_length = value;
        else if (name == "prefix")
            s.prefix = value;
        else if (name == "softcap")
            s.softcap = value;
        else {
            *error = "unknown field '" + name + "' in shape '" + spec +
                     "' (known: b, h, kv, nq, nk, d, dv, causal, window_left, window_right, docs, "
                     "prefix, softcap, alibi, bias, dtype, kv_dtype)";
            return false;
        }
    }
    if (s.nq == 0) {
        *error = "shape '" + spec + "' lacks nq";
        return false;
    }
    if (!kv_dtype_given) s.kv_storage = s.storage;
    if (s.kv_heads == 0) s.kv_heads = s.heads;
    if (s.nk == 0) s.nk = s.nq;
    if (s.d_v == 0) s.d_v = s.d_k;
    if (s.heads % s.kv_heads != 0) {
        *error = "shape '" + spec + "': h must be a multiple of kv";
        return false;
    }
    if (s.prefix > 0 && (!s.causal || s.prefix > s.nk)) {
        *error = "shape '" + spec + "': prefix needs causal and at most nk keys";
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
    if (causal) s += ",causal";
    if (window_left >= 0) s += ",window_left=" + std::to_string(window_left);
    if (window_right >= 0) s += ",window_right=" + std::to_string(window_right);
    if (doc_length > 0) s += ",docs=" + std::to_string(doc_length);
    if (prefix > 0) s += ",prefix=" + std::to_string(prefix);
    if (softcap > 0) s += ",softcap=" + std::to_string(softcap);
    if (alibi) s += ",alibi";
    if (bias) s += ",bias";
    if (storage != DType::kFloat32) s += std::string(",dtype=") + storage_name(storage);
    if (kv_storage != storage) s += std::string(",kv_dtype=") + storage_name(kv_storage);
    return s;
}

MaskSpec TuneShape::mask() const {
    MaskSpec mask;
    mask.causal = causal;
    mask.window = window_left >= 0 || window_right >= 0;
    mask.prefix = prefix > 0;
    mask.segments = doc_length > 0;
    return mask;
}

ScoreSpec TuneShape::score() const {
    ScoreSpec score;
    score.softcap = softcap > 0;
    score.alibi = alibi;
    score.bias = bias;
    return score;
}

reference::ModifierValues TuneShape::modifier_values() const {
    reference::ModifierValues m;
    m.score = score();
    m.softcap = double(softcap);
    if (alibi) {
        for (int64_t h = 0; h < heads; h++) {
            m.alibi_slopes.push_back(alibi_slope(h, heads));
        }
    }
    if (bias) {
        m.bias.assign(size_t(heads * nq * nk), 0.0);
        m.bias_shape[1] = heads;
        m.bias_shape[2] = nq;
        m.bias_shape[3] = nk;
    }
    m.window_left = window_left;
    m.window_right = window_right;
    if (prefix > 0) m.prefix_lengths.assign(size_t(batch), prefix);
    if (doc_length > 0) {
        for (int64_t b = 0; b < batch; b++) {
            for (int64_t i = 0; i < nq; i++) m.q_segments.push_back(query_document(i));
            for (int64_t j = 0; j < nk; j++) m.kv_segments.push_back(key_document(j));
        }
    }
    return m;
}

double TuneShape::alibi_slope(int64_t h, int64_t heads) {
    return std::exp2(-8.0 * double(h + 1) / double(heads));
}

int64_t TuneShape::query_document(int64_t i) const {
    return doc_length > 0 ? std::max<int64_t>(i + nk - nq, 0) / doc_length : 0;
}

int64_t TuneShape::key_document(int64_t j) const {
    return doc_length > 0 ? j / doc_length : 0;
}

Variant default_kernel(const TuneShape &shape, const std::string &target) {
    detail::KernelRequest request;
    request.op = Op::kAttention;
    request.storage = shape.storage;
    request.kv_storage = shape.kv_storage;
    request.mask = shape.mask();
    request.score = shape.score();
    request.heads = shape.heads;
    request.kv_heads = shape.kv_heads;
    request.d_k = shape.d_k;
    request.d_v = shape.d_v;
    request.queries = shape.nq;
    request.keys = shape.nk;
    request.cuda = Halide::Target(target).has_gpu_feature();
    static const std::vector<Kernel> table = detail::build_kernel_variants();
    static const std::vector<ScheduleInfo> schedules = detail::schedule_infos();
    std::string schedule;
    const Kernel *kernel = nullptr;
    if (!detail::default_schedule(request, schedules, table, &schedule).ok() ||
        !detail::choose_kernel(
             request, schedule, table, [](const Kernel &) { return true; }, &kernel)
             .ok()) {
        return Variant{};
    }
    return kernel->variant;
}

Variant bucket_of(const TuneShape &shape, const std::string &target) {
    Variant bucket = default_kernel(shape, target);
    bucket.d_k = static_cast<int>(shape.d_k);
    bucket.d_v = static_cast<int>(shape.d_v);
    if (bucket.max_queries == 0 && shape.nq <= kShortQueries) bucket.max_queries = kShortQueries;
    bucket.schedule.clear();
    bucket.tuning.clear();
    bucket.tuned_for.clear();
    return bucket;
}

std::string bucket_key(const Variant &b) {
    std::string k = op_name(b.op);
    // As in kernel names: a 16-bit type, and a KV cache's own type (float32 buckets keep the keys
    // they had before storage types).
    if (b.storage != DType::kFloat32) k += std::string("_") + storage_name(b.storage);
    if (b.kv_storage != b.storage) k += std::string("_kv") + storage_name(b.kv_storage);
    if (b.mask != MaskSpec{}) k += "_" + b.mask.to_string();
    if (b.score.any()) k += "_" + b.score.to_string();
    k += "_dk" + std::to_string(b.d_k) + "_dv" + std::to_string(b.d_v);
    if (b.max_queries > 0) k += "_q" + std::to_string(b.max_queries);
    if (b.min_keys > 0) k += "_k" + std::to_string(b.min_keys);
    return k;
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
