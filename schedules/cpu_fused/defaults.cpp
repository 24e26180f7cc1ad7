// The defaults of cpu_fused's parameters as data. Each row names a parameter, the targets and
// kernels it applies to, its value and the measurement behind it; later rows that apply override
// earlier ones. The tuner starts from these values, and an untuned build runs them.
#include <string>
#include <vector>

#include "params.h"

namespace attngen::schedules::cpu_fused {

namespace {

// Where a default applies: the targets and the kernels (by their variant). A field at 0 (or
// false) stands for any value.
struct Scope {
    int vector_registers = 0;  // Targets with this many vector registers (16 or 32).
    int queries_up_to = 0;     // Kernels for at most this many queries (max_queries 1..this) ...
    int queries_above = 0;     // ... and for more than this many (max_queries above it).
    int head_dim = 0;          // Kernels specialized to d_k = d_v = this.
    bool mask_fixed_per_row = false;  // Kernels whose mask does not vary by query.
    bool kv_16_bits = false;          // Kernels whose keys and values are stored in 16 bits.
    // Kernels whose bfloat16 products are paired (q, k and v in bfloat16 on a target with
    // AVX512-BF16: CpuFused::pairs_bfloat16_products).
    bool paired_bfloat16 = false;
};

struct DefaultRow {
    const char *param;
    Scope scope;
    int value;
    const char *reason;
};

constexpr Scope kAll{};
constexpr Scope k16Registers{16, 0, 0, 0, false};
// Up to this many queries the decode path wins: the block path would fill at most a quarter of
// the lanes of one block.
constexpr Scope kDecodeKernels{0, 8, 0, 0, false};
// The d64 kernel for 3 to 8 queries without a mask that varies by query (kernels/variants.txt;
// the one for up to 2 keeps the decode path), on targets with 32 vector registers.
constexpr Scope kFewQueriesD64Avx512{32, 8, 2, 64, true};
// Decode kernels that stream bfloat16 or float16 keys and values.
constexpr Scope kDecode16BitKv{0, 8, 0, 0, false, true};
// The paired bfloat16 kernel for head dim 64 without a mask that varies by query (its P V in
// feature tiles), on targets with AVX512-BF16 and so 32 vector registers.
constexpr Scope kPairedBfloat16D64{32, 0, 0, 64, true, true, true};

const std::vector<DefaultRow> &rows() {
    static const std::vector<DefaultRow> table = {
        {"query_vectors", kAll, 2,
         "2 AVX-512 vectors = 32 rows: 32 x 4096 floats (512 KiB) of scores and as much of "
         "weights stay within the 1 MiB L2 for Nk up to 4096, and the block divides "
         "kCausalGroup so that causal blocks see uniform dense bounds (2-core Zen 4, B1 H8 "
         "N2048 d64)"},
        {"key_tile", kAll, 6,
         "2 x 6 = 12 zmm accumulators plus 2 query vectors and a broadcast fit the 32 registers "
         "with room for the loads in flight; 8 spilled at block_q = 64 and ran 15% slower at "
         "block_q = 32"},
        {"features_tile", kAll, 0,
         "vectorized across the queries, the only P V tile for masks that vary by query (its key "
         "loop sits inside the vectorized query loop, where the causal bounds trim it); params.cpp "
         "takes feature tiles where whole tiles divide a specialized d_v. AVX-512, 2 threads: B1 "
         "H8 N2048 d64 43.7 ms with feature tiles and 44.7 ms without, B1 H16 N4096 d64 348 and "
         "352 ms, B1 H8 N1024 d128 21.4 and 22.2 ms; but d80 13.9 and 13.7 ms, and with d_v read "
         "at run time (80) 17.6 and 13.7 ms: a partial tile of features costs more than it saves"},
        {"value_tile", kAll, 8, "block_q x 8 accumulators, 16 of 32 zmm registers"},
        {"value_tile", k16Registers, 4,
         "2 x 8 accumulators spilled with 16 vector registers (AVX2, B1 H8 N1024 d64: 22.8 ms "
         "with 8, 12.5 with 4; causal 17.9 and 14.0 ms)"},
        {"split_keys", kAll, 0,
         "the block path for kernels that serve any number of queries; kernels for a bounded "
         "number of queries above the decode kernels' may take the decode path (the tuner "
         "decides)"},
        {"split_keys", kDecodeKernels, 1,
         "up to 8 queries the block path would fill at most a quarter of the lanes of one block: "
         "the decode path organizes the work around the keys"},
        {"decode_key_chunk", kAll, 2048,
         "at B1 H32 Nk4096 d128 on two threads, 2048 keys (a task of the scores pass streams 1 MiB "
         "of keys, one of the P V pass 1 MiB of values) took 3.20 ms against 3.40 with 1024, 3.28 "
         "with 1536 and 3.26 with 4096 (medians of 10 interleaved rounds, each started when a "
         "plain read ran above 46 GB/s; a second run of 6 rounds: 3.17 against 3.35 ms); two "
         "tasks per head at Nk 4096 still leave work for every thread"},
        {"decode_key_unroll", kAll, 2,
         "four keys took 2-3% longer than two (B1 H32 d128 on two threads, Nk 4096 and 3000); one "
         "failed the correctness check at run time"},
        {"decode_key_unroll", kDecode16BitKv, 8,
         "with keys of half the bytes the scores pass is bound by each key's chain of dependent "
         "multiply-adds and its sum of 16 lanes rather than by memory, and more keys in flight "
         "hide them: B1 H32 Nq1 Nk4096 d128 with a bfloat16 cache took 0.54-0.58x the float32 "
         "decode kernel's time with 8 keys against 0.72-0.79x with 2 (0.57 with 16, 0.64 with 4), "
         "a float16 cache 0.61-0.67x against 0.77-0.84x, with K and V from memory; at Nk 1000, "
         "in the cache, 0.64 against 0.71 and 0.73 against 0.80. The float32 kernel itself took "
         "1.07x its time with 8 at Nk 4096 (Zen 5, two threads, kernels called in turns, three "
         "runs, 2026-12-07)"},
        {"key_block", kAll, 0,
         "the block path: the online merge costs exponentials per output value and block, and at "
         "Nk = 1024 the key-block path ran 3% slower (B1 H8 N1024 d80: 15.5 against 15.0 ms); "
         "kernels for long sequences (kernels/variants.txt) take key blocks"},
        {"key_splits", kAll, 1, "one walk over the key blocks per group of queries"},
        {"value_rows", kAll, 4,
         "4 x 4 AVX-512 vectors (16 accumulators, 4 value vectors and a broadcast) ran 15% faster "
         "than 4 x 2, 2 x 4 or 8 x 2 (B1 H8 Nq17 Nk30000 d64: 12.3 ms, where vectorizing P V "
         "across queries took 15.0)"},
        {"value_vectors", kAll, 4, "see value_rows"},
        {"value_vectors", k16Registers, 2,
         "4 x 2 vectors: 4 x 4 accumulators do not fit 16 vector registers"},
        // Few queries against a cache, measured with `attngen tune --compare` (JIT, 7 alternating
        // rounds, medians of the per-round ratios to the block path, 2-core AMD EPYC Zen 5,
        // 2026-12-05). AVX-512, d64, H8 unless said: the block path filled 3 to 8 of a block's
        // 32 rows; key blocks of 2048 in 4 runs took 0.57 of its time at Nq8 Nk1024, 0.55 at Nq4
        // Nk2048, 0.58 at Nq4 Nk8192, 0.54 at Nq8 Nk8192, 0.55 at H32 KV8 Nq6 Nk16384, 0.96 at
        // Nq4 Nk32768 and 0.97 at Nq17 Nk32768; at Nq8 Nk32768 blocks of 2048 in 2 runs took 0.87
        // and of 1024 in 8 runs 0.86. The decode path, which streams the keys once per query,
        // took 0.45-0.64 at Nq3-4 Nk <= 8192 but 0.98 at Nq8 Nk8192 and 1.50 at Nq8 Nk32768, so
        // key blocks are the default that never loses. With 16 vector registers the decode path won
        // everywhere (AVX2: 0.26 at Nq3 Nk4096, 0.54 at Nq8 Nk8192, 0.74 at Nq8 Nk32768, 0.45 at
        // Nq4 Nk32768, where key blocks took 0.59, 0.61, 0.89 and 0.90; SSE4.1: 0.24 and 0.98), and
        // such kernels keep it.
        {"split_keys", kFewQueriesD64Avx512, 0, "key blocks: see key_block"},
        {"key_block", kFewQueriesD64Avx512, 2048,
         "a few queries against a cache, AVX-512: see the measurements above"},
        {"key_splits", kFewQueriesD64Avx512, 4,
         "four runs of key blocks per group of queries keep both threads busy with 8 heads"},
        {"value_key_chunk", kAll, 256,
         "each tile of value_rows queries reads every value row of the head; once a head's values "
         "leave the L2 beside the block's scratch, chunks of 256 keys keep them in cache while the "
         "block's tiles take turns (Zen 5, 2 threads, JIT: B1 H16 N4096 d64 226 -> 195 ms; 128, "
         "512 and 1024 within 2%, 64 3% slower; B1 H8 N3072 d64 58.5 -> 53.4, N4096 d128 208 -> "
         "194, N2048 d128 50.6 -> 48.4)"},
        // Measured with kernels generated for the AVX512-BF16 target and called in turns in one
        // process (Zen 5, 2 threads, medians of per-round ratios to the float32 d64 kernel, two
        // runs each, 2026-12-07): with 4 query vectors (blocks of 64) and 5 keys per tile
        // (4 x 5 = 20 zmm accumulators, 4 query vectors and a broadcast), B1 H8 N2048 took
        // 0.577 and 0.585 of the float32 time against 0.622 and 0.605 with 2 x 6, B1 H8 Nq256
        // Nk1024 0.624 and 0.591 against 0.642 and 0.614, B1 H16 N4096 0.608 against 0.605,
        // H8 Nq1024 Nk8192 0.596 against 0.623, H4 Nq512 Nk16384 0.630 against 0.624; 4 x 6
        // was between (0.587, 0.631); a block of 64 leaves one thread idle where a call has a
        // single block (B1 H1 Nq64 Nk2048: 0.803 against 0.780).
        {"query_vectors", kPairedBfloat16D64, 4,
         "4 x 5 register tiles of the paired scores: see the measurements above"},
        {"key_tile", kPairedBfloat16D64, 5,
         "4 x 5 register tiles of the paired scores: see the measurements above"},
    };
    return table;
}

bool applies(const Scope &scope, const Context &ctx) {
    if (scope.vector_registers > 0 && vector_registers(ctx.target) != scope.vector_registers) {
        return false;
    }
    const Variant &v = ctx.variant;
    if (scope.queries_up_to > 0 && (v.max_queries <= 0 || v.max_queries > scope.queries_up_to)) {
        return false;
    }
    if (scope.queries_above > 0 && v.max_queries <= scope.queries_above) return false;
    if (scope.head_dim > 0 && (v.d_k != scope.head_dim || v.d_v != scope.head_dim)) return false;
    if (scope.kv_16_bits && v.kv_storage == DType::kFloat32) return false;
    if (scope.paired_bfloat16 &&
        (v.storage != DType::kBFloat16 || v.kv_storage != DType::kBFloat16 ||
         !ctx.target.has_feature(Halide::Target::AVX512_SapphireRapids))) {
        return false;
    }
    return !scope.mask_fixed_per_row || !v.mask.varies_by_query();
}

}  // namespace

std::map<std::string, int> default_values(const Context &ctx) {
    std::map<std::string, int> values;
    for (const DefaultRow &row : rows()) {
        if (applies(row.scope, ctx)) values[row.param] = row.value;
    }
    return values;
}

}  // namespace attngen::schedules::cpu_fused
