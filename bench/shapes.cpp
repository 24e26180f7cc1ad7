#include "shapes.h"

#include <sstream>

namespace attngen::bench {

double BenchShape::flops() const {
    double products = 4.0 * batch * heads * nq * nk * d;
    if (causal) products /= 2;
    double projections = is_mha() ? 4 * 2.0 * batch * nq * d_model * (heads * d) : 0.0;
    return products + projections;
}

double BenchShape::kv_bytes() const {
    return 2.0 * batch * kv_heads * nk * d * sizeof(float);
}

std::string BenchShape::dims() const {
    std::ostringstream s;
    s << "B" << batch << " H" << heads;
    if (kv_heads != heads) s << " H_kv" << kv_heads;
    s << " Nq" << nq << " Nk" << nk << " d" << d;
    if (is_mha()) s << " d_model" << d_model;
    if (causal) s << " causal";
    return s.str();
}

namespace {

BenchShape attention_shape(std::string id, std::string description, int64_t heads, int64_t nq,
                           int64_t nk, int64_t d, bool causal, int64_t sweep_n = 0) {
    BenchShape s;
    s.id = std::move(id);
    s.description = std::move(description);
    s.heads = s.kv_heads = heads;
    s.nq = nq;
    s.nk = nk;
    s.d = d;
    s.causal = causal;
    s.sweep_n = sweep_n;
    return s;
}

std::vector<BenchShape> make_shapes() {
    std::vector<BenchShape> shapes = {
        // (a) and (b) are also the sweep's points at N = 512 and 2048, so they are not timed
        // twice.
        attention_shape("a", "self-attention, short", 8, 512, 512, 64, false, 512),
        attention_shape("b", "self-attention, medium", 8, 2048, 2048, 64, false, 2048),
        attention_shape("c", "self-attention, long, 16 heads", 16, 4096, 4096, 64, false),
        attention_shape("d", "causal self-attention (b with a causal mask)", 8, 2048, 2048, 64,
                        true),
        attention_shape("e", "decode: one query against a KV cache", 32, 1, 4096, 128, false),
        attention_shape("f", "cross-attention", 8, 256, 1024, 64, false),
    };
    BenchShape layer = attention_shape(
        "g", "multi-head layer, self-attention, projections included", 8, 2048, 2048, 64, false);
    layer.d_model = 512;
    shapes.push_back(layer);
    for (int64_t n : {256, 1024, 4096}) {
        shapes.push_back(attention_shape("n" + std::to_string(n),
                                         "sweep point (self-attention, B1 H8 d64)", 8, n, n, 64,
                                         false, n));
    }
    return shapes;
}

}  // namespace

const std::vector<BenchShape> &bench_shapes() {
    static const std::vector<BenchShape> shapes = make_shapes();
    return shapes;
}

}  // namespace attngen::bench
