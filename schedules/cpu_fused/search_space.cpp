#include "paths.h"

namespace attngen::schedules::cpu_fused {

using Halide::Func;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

SearchSpace search_space(const Context &ctx) {
    Context untuned = ctx;
    untuned.params.clear();
    const FusedParams d(untuned);
    const std::vector<TunableParam> decode = {
        {"decode_key_chunk", {256, 512, 1024, 2048, 4096}, d.decode_key_chunk},
        {"decode_key_unroll", {2, 4, 8, 16}, d.decode_key_unroll}};
    const std::vector<TunableParam> tiles = {
        {"query_vectors", {1, 2, 3, 4}, d.query_vectors},
        {"key_tile", {2, 3, 4, 5, 6, 7, 8, 10, 12}, d.key_tile},
        {"value_tile", {4, 6, 8, 10, 12, 16}, d.value_tile}};
    // Key blocks from 256 keys: below that the online merge (two exponentials per output value
    // and block) costs more than a tenth of the block's multiply-adds at head dim 64.
    const TunableParam key_block{"key_block", {0, 256, 512, 1024, 2048}, d.key_block};
    const TunableParam key_splits{"key_splits", {1, 2, 4, 8}, d.key_splits};
    const std::vector<TunableParam> value_tiles = {
        {"value_rows", {2, 4, 8}, d.value_rows},
        {"value_vectors", {1, 2, 3, 4, 5, 6}, d.value_vectors}};
    const TunableParam features_tile{"features_tile", {0, 1}, d.features_tile};
    const TunableParam value_key_chunk{
        "value_key_chunk", {0, 128, 256, 512, 1024}, d.value_key_chunk};
    const TunableParam split_keys{"split_keys", {0, 1}, 0};
    SearchSpace space;
    if (d.split_keys != 0) {
        // A decode kernel: the block path would leave most lanes empty.
        space.params = decode;
        return space;
    }
    space.params = tiles;
    if (!ctx.variant.mask.varies_by_query()) {
        space.params.push_back(features_tile);
        space.params.push_back(key_block);
        space.params.push_back(key_splits);
        space.params.insert(space.params.end(), value_tiles.begin(), value_tiles.end());
        space.params.push_back(value_key_chunk);
        // The block path with the P V tile that the default does not use.
        space.starting_points.push_back({{"features_tile", 1 - d.features_tile}});
        // The key-block path with its default tiles, at a block that fits the L2 with its scores
        // and weights (2048 keys: 2 x 256 KiB at block_q = 32) and at a quarter of it.
        space.starting_points.push_back({{"key_block", 2048}});
        space.starting_points.push_back({{"key_block", 512}});
    }
    if (ctx.variant.max_queries > 0) {
        space.params.push_back(split_keys);
        space.params.insert(space.params.end(), decode.begin(), decode.end());
        space.starting_points.push_back({{"split_keys", 1}});
    }
    // Each path reads only its own parameters; the others are reset to their defaults.
    space.irrelevant_to_defaults = [=](std::map<std::string, int> &p) {
        auto reset = [&](const TunableParam &param) {
            if (p.count(param.name) != 0) p[param.name] = param.fallback;
        };
        const bool decode_path = p.count("split_keys") != 0 && p.at("split_keys") != 0;
        if (decode_path) {
            for (const auto &param : tiles) reset(param);
            reset(key_block);
        } else {
            for (const auto &param : decode) reset(param);
        }
        const bool key_block_path =
            !decode_path && p.count("key_block") != 0 && p.at("key_block") != 0;
        if (decode_path || key_block_path) reset(features_tile);
        if (!key_block_path) reset(key_splits);
        // Only the block path's feature tiles split P V's keys into chunks.
        if (decode_path || key_block_path || !uses_feature_tiles(p)) reset(value_key_chunk);
        if (!decode_path && uses_feature_tiles(p)) {
            reset(tiles[2]);  // value_tile: these paths tile P V by value_rows.
        } else {
            for (const auto &param : value_tiles) reset(param);
        }
    };
    space.constraint = [](const std::map<std::string, int> &p, const Context &c) -> std::string {
        if (p.count("split_keys") != 0 && p.at("split_keys") != 0) return "";
        const int regs = vector_registers(c.target);
        const int qv = p.at("query_vectors");
        // A register tile needs its accumulators, the query (or weight) vectors of one step and
        // a broadcast register.
        if (qv * p.at("key_tile") + qv + 1 > regs) return "Q K^T tile exceeds the registers";
        if (qv * p.at("value_tile") + qv + 1 > regs) return "P V tile exceeds the registers";
        if (uses_feature_tiles(p)) {
            const int rows = p.at("value_rows"), vv = p.at("value_vectors");
            if (rows * vv + vv + 1 > regs)
                return "value_rows x value_vectors P V tile exceeds the registers";
            if ((qv * c.vector_width()) % rows != 0) {
                return "value_rows must divide the group of queries";
            }
        }
        if (c.variant.mask.varies_by_query() &&
            algorithm::kCausalGroup % (qv * c.vector_width()) != 0) {
            return "a block must divide the causal group of " +
                   std::to_string(algorithm::kCausalGroup) + " queries";
        }
        return "";
    };
    return space;
}

}  // namespace attngen::schedules::cpu_fused
