// The parameters of cpu_fused: which path a kernel takes and the tiles of that path. Their
// defaults are data, each value with its reason (defaults.cpp); a tuning overrides them by name.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "schedule.h"

namespace attngen::schedules::cpu_fused {

struct FusedParams {
    // The block path: query rows per block, in vectors (block_q = query_vectors x vector width),
    // and keys per register tile of Q K^T (block_q x key_tile accumulators).
    int query_vectors = 0;
    int key_tile = 0;
    // How the block path tiles P V. 1: value_rows queries by value_vectors vectors of value
    // features, vectorized across the features. 0: block_q queries by value_tile features,
    // vectorized across the queries, the only tile for masks that vary by query.
    int features_tile = 0;
    int value_tile = 0;
    // Whether the kernel takes the decode path (the work organized around the keys, which are
    // split into chunks of decode_key_chunk keys that threads share; the dot products of
    // decode_key_unroll keys summed together).
    int split_keys = 0;
    int decode_key_chunk = 0;
    int decode_key_unroll = 0;
    // Keys per block of the key-block path (an online softmax over blocks of keys), or 0 for the
    // block path; runs of key blocks merged separately, then together (flash-decoding).
    int key_block = 0;
    int key_splits = 0;
    // The P V register tile of the key-block path, and of the block path with features_tile = 1:
    // value_rows queries by value_vectors vectors of value features.
    int value_rows = 0;
    int value_vectors = 0;
    // Keys per chunk of the block path's P V with feature tiles, for calls whose values of one
    // head exceed kChunkedValueFloats; 0 never splits.
    int value_key_chunk = 0;

    // Values of one head (Nk x d_v floats) above which P V splits its keys into chunks: half of a
    // 1 MiB L2 (2048 keys at d64). At that size splitting gained nothing (B1 H8 N2048 d64 23.6
    // against 23.7 ms) and cost 2.5% at B1 H8 N1024 d128 (12.4 against 12.7 ms).
    static constexpr int kChunkedValueFloats = 2048 * 64;

    // The parameters of this context: its tuning (ctx.params) over the defaults of its target and
    // variant (defaults.cpp), with tuned tiles that do not fit the target replaced; a Halide user
    // error for parameters the paths cannot use.
    explicit FusedParams(const Context &ctx);

    // Whether P V uses the value_rows x value_vectors tile: the key-block path always does, the
    // block path with features_tile. The one rule for parsed parameters and for the search's
    // (possibly partial) points alike.
    static bool feature_tiles(int key_block, int features_tile) {
        return key_block > 0 || features_tile != 0;
    }
    bool feature_tiles() const { return feature_tiles(key_block, features_tile); }

    // Every parameter by the name a tuning sets it with, and their values.
    static const std::vector<std::pair<std::string, int FusedParams::*>> &fields();
    std::map<std::string, int> values() const;

  private:
    FusedParams() = default;
    void fit_tiles_to_target(const Context &ctx, const FusedParams &defaults);
    void check(const Context &ctx) const;
};

// The defaults of every parameter for this context's target and variant: the rows of
// defaults.cpp that apply, in order, later rows over earlier ones. features_tile's default also
// depends on the head dim and the P V tile (params.cpp).
std::map<std::string, int> default_values(const Context &ctx);

// Whether parameters (as in a tuning database, possibly partial: a missing name is 0) select the
// value_rows x value_vectors P V tile.
bool uses_feature_tiles(const std::map<std::string, int> &p);

}  // namespace attngen::schedules::cpu_fused
