#include "shapes.h"

#include <algorithm>
#include <sstream>

#include "attngen/variant.h"

namespace attngen::bench {

std::string ShapeModifiers::to_string() const {
    std::ostringstream s;
    if (window_left >= 0) s << " window_left" << window_left;
    if (documents > 0) s << " documents" << documents;
    if (softcap > 0) s << " softcap" << softcap;
    if (alibi) s << " alibi";
    if (!bias_dims.empty()) {
        s << " bias[";
        for (std::size_t i = 0; i < bias_dims.size(); i++) s << (i ? "," : "") << bias_dims[i];
        s << "]";
    }
    const std::string text = s.str();
    return text.empty() ? text : text.substr(1);
}

double BenchShape::flops() const {
    double products = 4.0 * batch * heads * nq * nk * d;
    if (causal) products /= 2;
    // The shapes without a window or documents keep the count above, which their earlier
    // results were computed with.
    if (modifiers.masks_keys()) products = 4.0 * batch * heads * allowed_pairs() * d;
    double projections = is_mha() ? 4 * 2.0 * batch * nq * d_model * (heads * d) : 0.0;
    return products + projections;
}

int64_t BenchShape::allowed_pairs() const {
    // Each rule allows an interval of keys [first, end) for a query, so a row's count is their
    // intersection; documents are runs of equal length, so a query's own is an interval too.
    int64_t pairs = 0;
    for (int64_t i = 0; i < nq; i++) {
        const int64_t position = i + nk - nq;
        int64_t first = 0, end = nk;
        if (causal) end = std::min(end, position + 1);
        if (modifiers.window_left >= 0) first = std::max(first, position - modifiers.window_left);
        if (modifiers.documents > 0) {
            const int64_t document = i / (nq / modifiers.documents),
                          keys = nk / modifiers.documents;
            first = std::max(first, document * keys);
            end = std::min(end, (document + 1) * keys);
        }
        pairs += std::max<int64_t>(0, end - first);
    }
    return pairs;
}

double BenchShape::kv_bytes() const {
    return 2.0 * batch * kv_heads * nk * d * dtype_size(kv_storage);
}

std::string BenchShape::storage_text() const {
    if (!sixteen_bit()) return "";
    if (storage == DType::kFloat32) return std::string("K/V ") + storage_name(kv_storage);
    return storage_name(storage);
}

std::string BenchShape::dims() const {
    std::ostringstream s;
    s << "B" << batch << " H" << heads;
    if (kv_heads != heads) s << " H_kv" << kv_heads;
    s << " Nq" << nq << " Nk" << nk << " d" << d;
    if (is_mha()) s << " d_model" << d_model;
    if (causal) s << " causal";
    if (sixteen_bit()) s << " " << storage_text();
    if (modifiers.any()) s << " " << modifiers.to_string();
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
    // Issue 41's shapes stored in 16 bits, after the sweep: its targets compare them with the
    // float32 shapes they copy. The ids say the shape and the storage.
    auto stored = [&shapes](const std::string &of, const std::string &id, DType storage,
                            DType kv_storage, const std::string &description) {
        BenchShape copy = *std::find_if(shapes.begin(), shapes.end(),
                                        [&of](const BenchShape &s) { return s.id == of; });
        copy.id = id;
        copy.description = description;
        copy.storage = storage;
        copy.kv_storage = kv_storage;
        copy.sweep_n = 0;
        shapes.push_back(std::move(copy));
    };
    const DType f32 = DType::kFloat32, bf16 = DType::kBFloat16, f16 = DType::kFloat16;
    stored("b", "b_bf16", bf16, bf16, "(b) in bfloat16");
    stored("c", "c_bf16", bf16, bf16, "(c) in bfloat16");
    stored("f", "f_bf16", bf16, bf16, "(f) in bfloat16");
    stored("b", "b_f16", f16, f16, "(b) in float16");
    stored("e", "e_kvbf16", f32, bf16, "(e) with a bfloat16 KV cache, float32 query and output");
    stored("e", "e_kvf16", f32, f16, "(e) with a float16 KV cache, float32 query and output");
    // The modifier shapes of issue 40, after the sweep: its targets hold (w) and (p) to a
    // fraction of the sgemm peak on the allowed pairs, and (bs) and (bb) to the time of (b).
    BenchShape window = attention_shape("w", "causal sliding window of 1024 keys (Mistral)", 8,
                                        16384, 16384, 64, true);
    window.modifiers.window_left = 1024;
    shapes.push_back(window);
    BenchShape documents = attention_shape("p", "8 packed documents of 2048, causal (segment ids)",
                                           8, 16384, 16384, 64, true);
    documents.modifiers.documents = 8;
    shapes.push_back(documents);
    BenchShape capped = attention_shape("bs", "(b) with softcap 50 (Gemma 2) and ALiBi (MPT)", 8,
                                        2048, 2048, 64, false);
    capped.modifiers.softcap = 50;
    capped.modifiers.alibi = true;
    shapes.push_back(capped);
    BenchShape biased = attention_shape("bb", "(b) with a [1, H, N, N] float32 bias (T5-like)", 8,
                                        2048, 2048, 64, false);
    biased.modifiers.bias_dims = {1, 8, 2048, 2048};
    shapes.push_back(biased);
    return shapes;
}

}  // namespace

const std::vector<BenchShape> &bench_shapes() {
    static const std::vector<BenchShape> shapes = make_shapes();
    return shapes;
}

}  // namespace attngen::bench
