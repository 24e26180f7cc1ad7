#include "params.h"

namespace attngen::schedules::cpu_fused {

const std::vector<std::pair<std::string, int FusedParams::*>> &FusedParams::fields() {
    static const std::vector<std::pair<std::string, int FusedParams::*>> list = {
        {"query_vectors", &FusedParams::query_vectors},
        {"key_tile", &FusedParams::key_tile},
        {"features_tile", &FusedParams::features_tile},
        {"value_tile", &FusedParams::value_tile},
        {"split_keys", &FusedParams::split_keys},
        {"decode_key_chunk", &FusedParams::decode_key_chunk},
        {"decode_key_unroll", &FusedParams::decode_key_unroll},
        {"key_block", &FusedParams::key_block},
        {"key_splits", &FusedParams::key_splits},
        {"value_rows", &FusedParams::value_rows},
        {"value_vectors", &FusedParams::value_vectors},
        {"value_key_chunk", &FusedParams::value_key_chunk}};
    return list;
}

std::map<std::string, int> FusedParams::values() const {
    std::map<std::string, int> v;
    for (const auto &[name, field] : fields()) v[name] = this->*field;
    return v;
}

FusedParams::FusedParams(const Context &ctx) {
    std::vector<std::string> names;
    for (const auto &field : fields()) names.push_back(field.first);
    ctx.check_params(names);
    FusedParams defaults;
    const std::map<std::string, int> values = default_values(ctx);
    for (const auto &[name, field] : fields()) {
        const auto it = values.find(name);
        defaults.*field = it != values.end() ? it->second : 0;
        this->*field = ctx.param(name, defaults.*field);
    }
    // Feature tiles where whole tiles divide a specialized d_v and the mask does not vary by query
    // (defaults.cpp, features_tile).
    const bool tiles_divide_dv =
        ctx.variant.d_v > 0 && ctx.variant.d_v % (value_vectors * ctx.vector_width()) == 0;
    defaults.features_tile = !ctx.variant.mask.varies_by_query() && tiles_divide_dv ? 1 : 0;
    features_tile = ctx.param("features_tile", defaults.features_tile);
    fit_tiles_to_target(ctx, defaults);
    check(ctx);
}

void FusedParams::check(const Context &ctx) const {
    if (feature_tiles() && (value_rows < 1 || value_vectors < 1 ||
                            (query_vectors * ctx.vector_width()) % value_rows != 0)) {
        schedule_error(
            "cpu_fused: value_rows must divide the query_vectors x vector width queries of "
            "a group, and value_vectors must be positive");
    }
    if (value_key_chunk < 0) {
        schedule_error("cpu_fused: value_key_chunk must be 0 (no chunks) or positive");
    }
    if (features_tile != 0 && ctx.variant.mask.varies_by_query()) {
        schedule_error(
            "cpu_fused: features_tile=1 serves masks that do not vary by query only; causal "
            "kernels tile P V across queries (features_tile=0)");
    }
    if (key_block > 0 && split_keys != 0) {
        schedule_error("cpu_fused: key_block and split_keys=1 select different paths");
    }
    // Causal kernels keep the block path, which splits each block's keys into a dense part
    // and a band; the key-block path would mask every lane of a block by its own bound. Kernels
    // with windows, prefixes or segments may take it: its walk over the blocks a group of
    // queries can see skips the others, and it compiles in a fraction of the block path's
    // time with bands on both sides (kernels/variants.txt).
    const MaskSpec &mask = ctx.variant.mask;
    if (key_block > 0 && mask.causal && !mask.window && !mask.prefix && !mask.segments) {
        schedule_error(
            "cpu_fused: the key-block path (key_block > 0) serves masks that do not vary by "
            "query only (not causal)");
    }
    // One key at a time failed the correctness check at run time (a Halide error that we
    // have not traced); two or more pass.
    if (decode_key_unroll < 2) {
        schedule_error("cpu_fused: decode_key_unroll must be at least 2");
    }
    if (split_keys != 0 && ctx.variant.max_queries <= 0) {
        schedule_error(
            "cpu_fused: split_keys=1 needs a kernel for a bounded number of "
            "queries (max_queries > 0)");
    }
}

// Tuned parameters were searched on one target, where the search admits only register tiles that
// fit (the constraint of the search space). The build compiles them for that target alone
// (tuned_for), but a tuning given by hand can reach others: on a target with fewer vector
// registers (AVX2 and SSE4.1 have 16 of AVX-512's 32) or narrower vectors, a tile that no longer
// fits, or P V rows that no longer divide the query group, take this target's defaults, which
// were measured on such targets. On the tuned target, and for untuned kernels, nothing changes.
void FusedParams::fit_tiles_to_target(const Context &ctx, const FusedParams &d) {
    if (split_keys != 0) return;  // The decode path has no register tiles.
    const int regs = vector_registers(ctx.target);
    // A tile of `vectors` vector operands by `broadcasts` broadcast ones: its accumulators,
    // the operands of one step and the broadcast register.
    auto fits = [&](int vectors, int broadcasts) {
        return vectors >= 1 && broadcasts >= 1 && vectors * broadcasts + vectors + 1 <= regs;
    };
    auto query_tiles_fit = [&] {
        return fits(query_vectors, key_tile) &&
               (feature_tiles() || fits(query_vectors, value_tile));
    };
    if (query_vectors < 1 || key_tile < 1 || value_tile < 1 || query_tiles_fit()) {
        // Fits, or not a tile at all (the checks below name the error).
    } else {
        if (!fits(query_vectors, key_tile)) key_tile = d.key_tile;
        if (!feature_tiles() && !fits(query_vectors, value_tile)) value_tile = d.value_tile;
        if (!query_tiles_fit()) {
            query_vectors = d.query_vectors;
            key_tile = d.key_tile;
            value_tile = d.value_tile;
        }
    }
    if (!feature_tiles() || value_rows < 1 || value_vectors < 1) return;
    if (!fits(value_vectors, value_rows)) value_vectors = d.value_vectors;
    if (!fits(value_vectors, value_rows) ||
        (query_vectors * ctx.vector_width()) % value_rows != 0) {
        value_rows = d.value_rows;
        value_vectors = d.value_vectors;
    }
}

bool uses_feature_tiles(const std::map<std::string, int> &p) {
    auto value = [&](const char *name) { return p.count(name) != 0 ? p.at(name) : 0; };
    return FusedParams::feature_tiles(value("key_block"), value("features_tile"));
}

}  // namespace attngen::schedules::cpu_fused
