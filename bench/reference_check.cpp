#include "reference_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "reference.h"

namespace attngen::bench {

namespace {

// One checked block of the output: `rows` consecutive rows of `width` floats starting at
// `offset` in the output, with the reference values.
struct Slice {
    int64_t batch = 0, head = 0;  // head is unused for a layer.
    int64_t offset = 0, rows = 0, width = 0;
    std::vector<double> expected;
};

std::vector<double> to_double(const float *begin, std::size_t n) {
    return std::vector<double>(begin, begin + n);
}

// The pairs to check: the first and the last, once if they coincide.
std::vector<std::pair<int64_t, int64_t>> checked_pairs(int64_t batch, int64_t heads) {
    std::vector<std::pair<int64_t, int64_t>> pairs = {{0, 0}};
    if (batch > 1 || heads > 1) pairs.emplace_back(batch - 1, heads - 1);
    return pairs;
}

// The first row of each checked block of rows. The last rows always: a causal mask aligned
// bottom-right lets them see the most keys. With packed documents (always causal here) also
// the first rows of the second document, which must see none of the first one's keys.
std::vector<int64_t> checked_first_rows(const BenchShape &s, int64_t rows) {
    std::vector<int64_t> first_rows = {s.nq - rows};
    if (s.causal && s.modifiers.documents > 1) first_rows.push_back(s.nq / s.modifiers.documents);
    return first_rows;
}

// The modifiers of rows [first_row, first_row + rows) of head h of batch element b against keys
// [0, nk), for the reference's one-head problem of those rows (shapes.h has the modifiers).
reference::ModifierValues slice_modifiers(const BenchShape &s, const ProblemData &p, int64_t b,
                                          int64_t h, int64_t first_row, int64_t rows, int64_t nk) {
    const ShapeModifiers &m = s.modifiers;
    reference::ModifierValues values;
    values.score.softcap = m.softcap > 0;
    values.score.alibi = m.alibi;
    values.score.bias = !m.bias_dims.empty();
    values.softcap = m.softcap;
    if (m.alibi) values.alibi_slopes = {p.alibi_slopes[h]};
    if (!m.bias_dims.empty()) {
        // Broadcast dims read index 0.
        const std::vector<int64_t> &dims = m.bias_dims;
        const int64_t bb = dims[0] == 1 ? 0 : b, bh = dims[1] == 1 ? 0 : h;
        values.bias.resize(rows * nk);
        for (int64_t i = 0; i < rows; i++) {
            const int64_t bi = dims[2] == 1 ? 0 : first_row + i;
            for (int64_t j = 0; j < nk; j++) {
                const int64_t bj = dims[3] == 1 ? 0 : j;
                values.bias[i * nk + j] =
                    p.bias[((bb * dims[1] + bh) * dims[2] + bi) * dims[3] + bj];
            }
        }
        values.bias_shape[2] = rows;
        values.bias_shape[3] = nk;
    }
    values.window_left = m.window_left;
    if (m.documents > 0) {
        values.q_segments.assign(p.q_segments.begin() + b * s.nq + first_row,
                                 p.q_segments.begin() + b * s.nq + first_row + rows);
        values.kv_segments.assign(p.kv_segments.begin() + b * s.nk,
                                  p.kv_segments.begin() + b * s.nk + nk);
    }
    return values;
}

std::vector<Slice> attention_slices(const BenchShape &s, const ProblemData &p) {
    const int64_t rows = std::min(s.nq, kCheckedRows);
    const int64_t group = s.heads / s.kv_heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    MaskSpec mask;
    mask.causal = s.causal;
    mask.window = s.modifiers.window_left >= 0;
    mask.segments = s.modifiers.documents > 0;
    std::vector<Slice> slices;
    for (auto [b, h] : checked_pairs(s.batch, s.heads)) {
        const int64_t kv = b * s.kv_heads + h / group;
        for (int64_t first_row : checked_first_rows(s, rows)) {
            // A block of rows that is not the last is checked, causal only, against the keys
            // up to the last row's position: the keys after it are masked anyway, and with them
            // the reference puts the rows at the positions (p(i) = i + Nk - Nq) they have in
            // the whole problem.
            const int64_t nk = first_row + rows + s.nk - s.nq;
            Slice slice;
            slice.batch = b;
            slice.head = h;
            slice.offset = ((b * s.heads + h) * s.nq + first_row) * s.d;
            slice.rows = rows;
            slice.width = s.d;
            auto q = to_double(p.q.data() + slice.offset, rows * s.d);
            auto k = to_double(p.k.data() + kv * s.nk * s.d, nk * s.d);
            auto v = to_double(p.v.data() + kv * s.nk * s.d, nk * s.d);
            const reference::ModifierValues values =
                slice_modifiers(s, p, b, h, first_row, rows, nk);
            slice.expected.resize(rows * s.d);
            reference::AttentionShape one_head{1, 1, 1, rows, nk, s.d, s.d};
            reference::attention<double>(one_head, q.data(), k.data(), v.data(), {}, mask, scale,
                                         slice.expected.data(), nullptr, nullptr, &values);
            slices.push_back(std::move(slice));
        }
    }
    return slices;
}

std::vector<Slice> layer_slices(const BenchShape &s, const ProblemData &p) {
    const int64_t rows = std::min(s.nq, kCheckedRows);
    const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
    auto w_q = to_double(p.w_q.data(), p.w_q.size()), w_k = to_double(p.w_k.data(), p.w_k.size()),
         w_v = to_double(p.w_v.data(), p.w_v.size()), w_o = to_double(p.w_o.data(), p.w_o.size());
    std::vector<Slice> slices;
    for (int64_t b : {int64_t{0}, s.batch - 1}) {
        if (!slices.empty() && slices.back().batch == b) continue;
        Slice slice;
        slice.batch = b;
        slice.offset = (b * s.nq + s.nq - rows) * s.d_model;
        slice.rows = rows;
        slice.width = s.d_model;
        // The last rows as queries against the whole sequence as memory: cross-attention in the
        // reference's terms, with the same result as those rows of self-attention.
        auto x_rows = to_double(p.x.data() + slice.offset, rows * s.d_model);
        auto memory = to_double(p.x.data() + b * s.nq * s.d_model, s.nq * s.d_model);
        reference::MhaShape shape{1,         rows,    s.nq,       s.d_model, s.d_model,
                                  s.d_model, s.heads, s.kv_heads, s.d,       s.d};
        slice.expected.resize(rows * s.d_model);
        reference::mha<double>(shape, x_rows.data(), memory.data(), w_q.data(), w_k.data(),
                               w_v.data(), w_o.data(), nullptr, nullptr, nullptr, nullptr, {},
                               MaskSpec{s.causal}, scale, slice.expected.data());
        slices.push_back(std::move(slice));
    }
    return slices;
}

const std::vector<Slice> &reference_slices(const BenchShape &shape, const ProblemData &data) {
    // Computed once per shape and shared by every implementation and thread count.
    static std::map<std::string, std::vector<Slice>> cache;
    auto it = cache.find(shape.id);
    if (it == cache.end()) {
        auto slices = shape.is_mha() ? layer_slices(shape, data) : attention_slices(shape, data);
        it = cache.emplace(shape.id, std::move(slices)).first;
    }
    return it->second;
}

}  // namespace

double max_relative_error(const BenchShape &shape) {
    switch (shape.storage) {
        case DType::kBFloat16:
            return 3e-2;
        case DType::kFloat16:
            return 4e-3;
        default:
            return kMaxRelativeError;
    }
}

std::string check_against_reference(const BenchShape &shape, const ProblemData &data,
                                    const float *output) {
    const double tolerance = max_relative_error(shape);
    for (const Slice &slice : reference_slices(shape, data)) {
        const int64_t n = slice.rows * slice.width;
        double max_error = 0, max_reference = 0;
        int64_t worst = 0;
        for (int64_t i = 0; i < n; i++) {
            const double actual = output[slice.offset + i], expected = slice.expected[i];
            const double error = std::fabs(actual - expected);
            if (std::isnan(error)) {
                max_error = error;
                worst = i;
                break;
            }
            if (error > max_error) {
                max_error = error;
                worst = i;
            }
            max_reference = std::max(max_reference, std::fabs(expected));
        }
        const double relative = max_reference > 0 ? max_error / max_reference : max_error;
        // Written so that a NaN error fails too.
        if (!(relative <= tolerance)) {
            std::ostringstream message;
            message << "output differs from the fp64 reference: relative error " << relative
                    << " > " << tolerance << " at batch " << slice.batch;
            if (!shape.is_mha()) message << ", head " << slice.head;
            message << ", row " << (slice.offset / slice.width + worst / slice.width) % shape.nq
                    << ", column " << worst % slice.width << " (got "
                    << output[slice.offset + worst] << ", expected " << slice.expected[worst]
                    << ")";
            return message.str();
        }
    }
    return "";
}

}  // namespace attngen::bench
