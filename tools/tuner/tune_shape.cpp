#include "tune_shape.h"

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

MaskSpec TuneShape::mask() const {
    MaskSpec mask;
    mask.causal = causal;
    return mask;
}

Variant default_kernel(const TuneShape &shape, const std::string &target) {
    detail::KernelRequest request;
    request.op = Op::kAttention;
    request.mask = shape.mask();
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
    if (b.mask != MaskSpec{}) k += "_" + b.mask.to_string();
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
