// The score and mask modifiers of one attention_fuzz call (attngen/modifiers.h), drawn from the
// input with their reference values, and with at most one deliberate defect of their own.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "attngen/attngen.h"
#include "reference.h"
#include "test_util.h"

namespace attngen::fuzz {

using attngen::TensorView;
using attngen::test::random_values;

// Drawn after everything else, so that older corpus entries keep their meaning.
struct DrawnModifiers {
    attngen::MaskSpec kinds;
    attngen::reference::ModifierValues values;
    std::vector<float> slopes, bias;
    std::vector<int64_t> prefix, q_segments, kv_segments;
    // An extra input (Modifiers::inputs) by this name, of extra_dims (each 2), float32 or int32
    // (extra holds room for either), when extra_name is set.
    const char *extra_name = nullptr;
    std::vector<int64_t> extra_dims;
    std::vector<float> extra;
    bool extra_int = false;
    bool defect = false;

    void draw(FuzzedDataProvider &in, const attngen::reference::AttentionShape &s, bool causal,
              bool allow_defect) {
        if (!in.ConsumeBool()) return;  // Most calls have none.
        if (in.ConsumeBool()) {
            kinds.window = true;
            values.window_left = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(0, 40) : -1;
            values.window_right = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(0, 40) : -1;
        }
        if (causal && in.ConsumeBool()) {
            kinds.prefix = true;
            for (int64_t b = 0; b < s.batch; b++) {
                prefix.push_back(in.ConsumeIntegralInRange<int64_t>(0, s.nk));
            }
        }
        if (in.ConsumeBool()) {
            kinds.segments = true;
            const int64_t length = in.ConsumeIntegralInRange<int64_t>(1, 20);
            const bool packed = in.ConsumeBool();  // Non-decreasing ids, or ids drawn freely.
            for (int64_t b = 0; b < s.batch; b++) {
                for (int64_t j = 0; j < s.nk; j++) {
                    kv_segments.push_back(packed ? j / length : in.ConsumeIntegralInRange(0, 2));
                }
                for (int64_t i = 0; i < s.nq; i++) {
                    q_segments.push_back(packed ? std::max<int64_t>(i + s.nk - s.nq, 0) / length
                                                : in.ConsumeIntegralInRange(0, 2));
                }
            }
        }
        if (in.ConsumeBool()) {
            values.score.softcap = true;
            values.softcap = in.ConsumeFloatingPointInRange<float>(0.5f, 50.0f);
        }
        if (in.ConsumeBool()) {
            values.score.alibi = true;
            for (int64_t h = 0; h < s.heads; h++) {
                slopes.push_back(in.ConsumeFloatingPointInRange<float>(0.0f, 1.0f));
            }
        }
        if (in.ConsumeBool()) {
            values.score.bias = true;
            const int64_t full[4] = {s.batch, s.heads, s.nq, s.nk};
            int64_t count = 1;
            for (int d = 0; d < 4; d++) {
                values.bias_shape[d] = in.ConsumeBool() ? full[d] : 1;
                count *= values.bias_shape[d];
            }
            bias = random_values(count, in.ConsumeIntegral<uint32_t>(), -3.0f, 3.0f);
            if (in.ConsumeBool())
                bias[in.ConsumeIntegralInRange<int64_t>(0, count - 1)] = -INFINITY;
        }
        if (!allow_defect || !in.ConsumeBool()) return;
        // One defect: a bias that does not broadcast, slopes of the wrong length, segments of
        // the wrong shape, a negative window, prefixes without causal or past Nk, or an extra
        // input of a user-written modifier (the build's own kernels have none, so every such
        // call is refused: with a name of their own arguments, any type and rank).
        defect = true;
        switch (in.ConsumeIntegralInRange<int>(0, 6)) {
            case 0:
                values.score.bias = true;
                values.bias_shape[0] = values.bias_shape[1] = values.bias_shape[3] = 1;
                values.bias_shape[2] = s.nq + 1;
                bias.assign(s.nq + 1, 0.0f);
                break;
            case 1:
                values.score.alibi = true;
                slopes.assign(s.heads + 1, 0.5f);
                break;
            case 2:
                kinds.segments = true;
                q_segments.assign(s.batch * s.nq, 0);
                kv_segments.assign(s.batch * (s.nk + 1), 0);
                break;
            case 3:
                kinds.window = true;
                // -1 stands for an unbounded side; below it, a negative size.
                values.window_left = -1 - in.ConsumeIntegralInRange<int64_t>(1, 5);
                break;
            case 4:
                if (causal) {
                    defect = false;  // Prefixes are valid with causal attention.
                    break;
                }
                kinds.prefix = true;
                prefix.assign(s.batch, 0);
                break;
            case 5:
                kinds.prefix = true;
                prefix.assign(s.batch, s.nk + 1);
                break;
            default: {
                static const char *const kNames[] = {"table", "q", "out", "bias", "scale", ""};
                extra_name = kNames[in.ConsumeIntegralInRange<int>(0, 5)];
                // Ranks 0 to 4 (TensorView holds at most 4 dims); 0 is refused.
                const int rank = in.ConsumeIntegralInRange<int>(0, attngen::kMaxRank);
                extra_dims.assign(rank, 2);
                extra.assign(1 << rank, 0.0f);
                extra_int = in.ConsumeBool();
                break;
            }
        }
    }

    // The runtime's view of them; reference values copied from the same draws.
    attngen::Modifiers views(const attngen::reference::AttentionShape &s) {
        attngen::Modifiers m;
        if (kinds.window) {
            if (values.window_left != -1) m.window_left = values.window_left;
            if (values.window_right != -1) m.window_right = values.window_right;
        }
        if (kinds.prefix) {
            m.prefix_lengths = TensorView::i64(prefix.data(), {s.batch});
            values.prefix_lengths = prefix;
        }
        if (kinds.segments) {
            const int64_t nk = static_cast<int64_t>(kv_segments.size()) / s.batch;
            m.q_segments = TensorView::i64(q_segments.data(), {s.batch, s.nq});
            m.kv_segments = TensorView::i64(kv_segments.data(), {s.batch, nk});
            values.q_segments = q_segments;
            values.kv_segments = kv_segments;
        }
        if (values.score.softcap) m.softcap = static_cast<float>(values.softcap);
        if (values.score.alibi) {
            m.alibi_slopes = TensorView::f32(slopes.data(), {static_cast<int64_t>(slopes.size())});
            values.alibi_slopes.assign(slopes.begin(), slopes.end());
        }
        if (values.score.bias) {
            const int64_t *e = values.bias_shape;
            m.bias = TensorView::f32(bias.data(), {e[0], e[1], e[2], e[3]});
            values.bias.assign(bias.begin(), bias.end());
        }
        if (extra_name != nullptr) {
            // Built field by field: the factories take their shape as a list.
            TensorView view;
            view.data = extra.data();
            view.dtype = extra_int ? attngen::DType::kInt32 : attngen::DType::kFloat32;
            view.rank = static_cast<int>(extra_dims.size());
            int64_t stride = 1;
            for (int d = view.rank - 1; d >= 0; d--) {
                view.shape[d] = extra_dims[d];
                view.strides[d] = stride;
                stride *= extra_dims[d];
            }
            m.inputs.emplace(extra_name, view);
        }
        return m;
    }

    // A bound of how much the modifiers add to a score's magnitude, for the tolerance.
    double added_magnitude(const attngen::reference::AttentionShape &s) const {
        double alibi = 0, biased = 0;
        for (float m : slopes) alibi = std::max(alibi, double(m) * double(s.nq + s.nk));
        for (float b : bias) {
            if (std::isfinite(b)) biased = std::max(biased, std::fabs(double(b)));
        }
        return alibi + biased;
    }
};

}  // namespace attngen::fuzz
