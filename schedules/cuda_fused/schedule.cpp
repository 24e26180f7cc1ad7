// cuda_fused: attention as one CUDA kernel per group of 32 queries and head, with the online
// softmax of algorithm/online_attention.h. A thread block walks the keys in blocks of 32: it
// stages the block's K and V rows in shared memory, computes the 32 x 32 scores, their
// per-query maxima, weights and sums in shared memory, and folds the block into a running
// maximum, sum and output that each thread keeps for its (query, value features). No Nq x Nk
// buffer exists, and causal attention never visits a block that its group cannot see.
//
// A kernel for a target without CUDA runs the same online algorithm over the same key blocks and
// query groups, in the register tiles of cpu_fused's key-block path, so a library that holds CUDA
// and CPU entries computes the same results on both, and the CPU entry checks the GPU kernel's
// algorithm and blocking on machines without a GPU.
#include "schedule.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "algorithm/dims.h"
#include "algorithm/mask.h"
#include "attngen/cuda_limits.h"

namespace attngen::schedules {

using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

namespace {

class CudaFused final : public Schedule {
  public:
    CudaFused() : Schedule("cuda_fused") {}
    bool uses_online_softmax(const Context &ctx) const override;
    OnlineLayout online_layout(const Context &ctx) const override;
    void online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                          const Context &ctx) const override;
    SearchSpace attention_search_space(const Context &ctx) const override;
};

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;

// Parameters of cuda_fused's GPU kernels; the autotuner overrides them by name. Every thread
// block must have at most 1024 threads and keep its shared memory within the 48 KiB a kernel gets
// without opting in to more (see the search space's constraint).
struct CudaFusedParams {
    // Keys per block of the online softmax. 32 keys make the score tile of a group 32 x 32, one
    // score per thread of a 1024-thread block at most, and keep the shared memory of a block (K
    // and V tiles of 32 rows, scores and weights) at 4 * (32 * (d_k + d_v) + 2 * 32 * 32) bytes:
    // 40 KiB for head dims of 128, inside the 48 KiB limit.
    int key_block = 32;
    // Queries per group: 32, the causal group of mask.h, so that a group's walk ends at the last
    // key block its last query sees. A decode kernel (at most max_queries queries) groups only
    // those.
    int query_group = algorithm::kCausalGroup;
    // Value features per thread group: 16 threads share a query's value features (thread e0
    // takes features e0, e0 + 16, ...), so 16 x 32 queries = 512 threads hold a group's running
    // output.
    int value_threads = 16;
    // Key splits of a decode kernel (flash-decoding). A decode step has one group per head,
    // B * H thread blocks, too few for a GPU with 100+ multiprocessors; 16 splits give B * H * 16
    // (512 for 32 heads) blocks that each walk 1/16 of the cache, and a short second kernel
    // merges them.
    int decode_key_splits = 16;

    static std::vector<std::string> names() {
        return {"key_block", "query_group", "value_threads", "decode_key_splits"};
    }
    explicit CudaFusedParams(const Context &ctx) {
        ctx.check_params(names());
        key_block = ctx.param("key_block", key_block);
        query_group = ctx.param("query_group", query_group);
        value_threads = ctx.param("value_threads", value_threads);
        decode_key_splits = ctx.param("decode_key_splits", decode_key_splits);
        const std::string why = limits_violated(key_block, query_group, value_threads);
        if (!why.empty()) schedule_error("cuda_fused: " + why);
        if (decode_key_splits < 1) schedule_error("cuda_fused: decode_key_splits must be positive");
    }

    static constexpr int kMaxThreads = 1024;
    static constexpr int kSharedFloats = 48 * 1024 / 4;
    // Threads of the largest stage of a thread block: staging K and V (32 threads per row), the
    // scores (one per key and query) or the running state (value_threads per query). Shared
    // memory: a block's K and V rows, scores and weights, for the widest heads the runtime sends
    // to cuda_fused (kCudaFusedMaxHeadDims, attngen/cuda_limits.h).
    static std::string limits_violated(int key_block, int query_group, int value_threads) {
        if (key_block < 1 || query_group < 1 || value_threads < 1) {
            return "key_block, query_group and value_threads must be positive";
        }
        const int threads =
            std::max({32 * key_block, key_block * query_group, value_threads * query_group});
        if (threads > kMaxThreads) {
            return "a thread block would have " + std::to_string(threads) + " threads (at most " +
                   std::to_string(kMaxThreads) + ")";
        }
        const int shared = key_block * kCudaFusedMaxHeadDims + 2 * key_block * query_group;
        if (shared > kSharedFloats) {
            return "a block's K and V rows, scores and weights would take " +
                   std::to_string(4 * shared) + " bytes of shared memory (at most 48 KiB)";
        }
        return "";
    }
};

// The Func whose update walks the key blocks: the running state itself, or with key splits the
// state of each split.
Func walker(const algorithm::OnlineAttentionFuncs &f) {
    return f.key_splits > 1 ? f.split_state : f.running_grouped;
}

// Schedules a state Func(e, ii, outer...) of the online merge on the GPU: a thread block per
// combination of the outer dimensions (at most three, the fused heads and batch elements last),
// its threads split the value features (value_threads) and the group's queries; the update
// keeps the same threads inside its serial reduction.
void gpu_state(Func state, const Halide::RVar &reduction, int value_threads) {
    const auto &v = algorithm::dims();
    const std::vector<Var> args = state.args();
    const Var ii = args[1];
    Var hb("hb"), eo("eo"), ei("ei");
    std::vector<Var> blocks(args.begin() + 2, args.end() - 2);
    blocks.push_back(hb);
    auto apply = [&](auto &&stage, bool with_reduction) {
        stage.fuse(v.h, v.b, hb).split(v.e, eo, ei, value_threads, kGuard);
        std::vector<Halide::VarOrRVar> order = {eo, ei, ii};
        if (with_reduction) order.push_back(reduction);
        for (const Var &b : blocks) order.push_back(b);
        stage.reorder(order);
        if (blocks.size() == 3) {
            stage.gpu_blocks(blocks[0], blocks[1], blocks[2]);
        } else {
            stage.gpu_blocks(blocks[0], blocks[1]);
        }
        stage.gpu_threads(ei, ii);
    };
    state.compute_root();
    apply(state, false);
    Halide::Stage update = state.update();
    apply(update, true);
}

// Which blocks each group walks, where the mask has a per-key test: a kernel of its own before
// the walk, for every block, group and batch element (not per head). key_live's threads test a
// lane's keys of a block for every query of the group, 16 lanes by 8 blocks per thread block;
// block_live's threads fold a block's lanes, 64 blocks per thread block.
void gpu_live_blocks(algorithm::OnlineAttentionFuncs &f) {
    if (!f.block_live.defined()) return;
    const std::vector<Var> live = f.block_live.args();  // t, g, b
    const Var t = live[0], g = live[1], b = live[2];
    const Var lane = f.key_live.args()[0];
    Var gb("gb"), to("to"), ti("ti");
    f.key_live.compute_root();
    for (Halide::Stage stage : {Halide::Stage(f.key_live), f.key_live.update()}) {
        stage.fuse(g, b, gb)
            .split(t, to, ti, 8, kGuard)
            .reorder(lane, ti, to, gb)
            .gpu_blocks(to, gb)
            .gpu_threads(lane, ti);
    }
    f.block_live.compute_root();
    for (Halide::Stage stage : {Halide::Stage(f.block_live), f.block_live.update()}) {
        stage.fuse(g, b, gb)
            .split(t, to, ti, 64, kGuard)
            .reorder(ti, to, gb)
            .gpu_blocks(to, gb)
            .gpu_threads(ti);
    }
}

void gpu_online(algorithm::OnlineAttentionFuncs &f, bool with_probs, const CudaFusedParams &p) {
    const auto &v = algorithm::dims();
    Func walk = walker(f);
    const Halide::RVar blocks(f.blocks);
    // The walk over key blocks is a serial loop of each thread block; each step's tiles are
    // computed by all of its threads.
    gpu_state(walk, blocks, p.value_threads);
    if (f.key_splits > 1) gpu_state(f.running_grouped, Halide::RVar(f.splits), p.value_threads);
    Var dt("dt"), dr("dr");
    // Every per-block buffer below states its extent in keys (at most key_block: the block's
    // range, block_range) and queries (the group): bounds inference finds an extent that
    // depends on the block, and Halide then sized the shared memory of each launch with a loop
    // on the host over every block of every group and head (B1 H8 N16384: 8 x 512 x 512
    // iterations per call) before launching the kernel.
    const int T = p.key_block, G = f.query_group;
    // The block's K and V rows, staged in shared memory: 32 threads per row read consecutive
    // features, one row per thread row.
    for (Func staged : {Func(f.k_for_head), Func(f.v_for_head)}) {
        staged.compute_at(walk, blocks)
            .bound_extent(v.j, T)
            .split(v.d, dr, dt, 32, kGuard)
            .reorder(dr, dt, v.j)
            .gpu_threads(dt, v.j);
    }
    // The block's scores, one per thread, each a dot product in registers.
    Func(f.scores.scores)
        .compute_at(walk, blocks)
        .bound_extent(v.j, T)
        .bound_extent(v.i, G)
        .gpu_threads(v.j, v.i);
    Func(f.scores.dot).compute_at(f.scores.scores, v.j);
    // Each query's maximum and sum over the block's keys, one thread per query.
    // Each holds the walked block only (bound_extent(t, 1)): the weights find their block's
    // maximum as key / key_block, which bounds inference cannot tell is one block.
    const Var t = f.block_max.args()[0], bi = f.block_max.args()[1];
    f.block_range.compute_at(walk, blocks).bound_extent(f.block_range.args()[0], 1);
    f.block_max.compute_at(walk, blocks).bound_extent(t, 1).bound_extent(bi, G).gpu_threads(bi);
    f.block_max.update(0).gpu_threads(bi);
    f.block_max.update(1).gpu_threads(bi);
    f.block_weights.compute_at(walk, blocks)
        .bound_extent(v.j, T)
        .bound_extent(bi, G)
        .gpu_threads(v.j, bi);
    f.block_sum.compute_at(walk, blocks).bound_extent(t, 1).bound_extent(bi, G).gpu_threads(bi);
    f.block_sum.update().gpu_threads(bi);
    // The block's weighted values for one (query, value feature), in a register of its thread.
    Var eo("eo");
    f.block_acc.compute_at(walk, eo).bound_extent(f.block_acc.args()[1], 1);
    gpu_live_blocks(f);

    Var hb("hb"), eo2("eo2"), ei2("ei2"), io("io"), ii2("ii2");
    Func(f.out)
        .compute_root()
        .fuse(v.h, v.b, hb)
        .tile(v.e, v.i, eo2, io, ei2, ii2, 32, 8, kGuard)
        .gpu_blocks(eo2, io, hb)
        .gpu_threads(ei2, ii2);
    Func(f.lse)
        .compute_root()
        .fuse(v.h, v.b, hb)
        .split(v.i, io, ii2, 256, kGuard)
        .gpu_blocks(io, hb)
        .gpu_threads(ii2);
    if (with_probs) {
        Var jo("jo"), ji("ji");
        Func probs = f.probs;
        probs.compute_root()
            .fuse(v.h, v.b, hb)
            .tile(v.j, v.i, jo, io, ji, ii2, 32, 8, kGuard)
            .gpu_blocks(jo, io, hb)
            .gpu_threads(ji, ii2);
        Func(f.probs_scores.dot).compute_at(probs, ji);
    }
}

bool CudaFused::uses_online_softmax(const Context &) const {
    return true;
}

Schedule::OnlineLayout CudaFused::online_layout(const Context &ctx) const {
    const CudaFusedParams p(ctx);
    OnlineLayout layout;
    layout.key_block = p.key_block;
    layout.query_group = p.query_group;
    // Blocks that a per-key test (segments, a user's mask) allows for no query of a group are
    // skipped, as in cpu_fused: packed documents then cost their documents' blocks.
    layout.skip_empty_blocks = true;
    if (ctx.variant.max_queries > 0) {
        layout.query_group = std::min(ctx.variant.max_queries, p.query_group);
        layout.key_splits = p.decode_key_splits;
    }
    // A CPU entry runs cpu_fused's key-block path (online_attention, below), in its tiles.
    if (!targets_gpu(ctx)) {
        const OnlineLayout cpu = schedule_or_error("cpu_fused").online_layout(without_params(ctx));
        layout.value_tile = cpu.value_tile;
        layout.value_vector = cpu.value_vector;
    }
    return layout;
}

void CudaFused::online_attention(algorithm::OnlineAttentionFuncs &f, bool with_probs,
                                 const Context &ctx) const {
    if (targets_gpu(ctx)) {
        gpu_online(f, with_probs, CudaFusedParams(ctx));
    } else {
        // A CPU entry walks the GPU kernel's key blocks and query groups (online_layout) with
        // the register tiles of cpu_fused's key-block path and cpu_fused's default tile sizes,
        // rather than its former schedule, one query's key block at a time in vectors of value
        // features. B1 H8 N2048, d_k read at run time, 2 threads: with an AVX2 floor 105 against
        // 588 ms; with SSE4.1, this project's floor, 236 against 241 ms, since a group of 32
        // queries is 8 SSE vectors and its score tiles spill the 16 registers. cpu_fused's block
        // path takes 52 and 137 ms, but with it the CPU entry would no longer check the GPU
        // kernel's algorithm and blocking on machines without a GPU.
        schedule_or_error("cpu_fused").online_attention(f, with_probs, without_params(ctx));
    }
}

SearchSpace CudaFused::attention_search_space(const Context &ctx) const {
    SearchSpace space;
    if (!targets_gpu(ctx)) return space;
    const CudaFusedParams d(without_params(ctx));
    // Key blocks up to 32 (staging a block's K and V rows takes 32 threads per row), groups from
    // one warp of queries to 128, and 4 to 32 threads per query's value features.
    space.params = {{"key_block", {8, 16, 32}, d.key_block},
                    {"query_group", {8, 16, 32, 64, 128}, d.query_group},
                    {"value_threads", {4, 8, 16, 32}, d.value_threads}};
    if (ctx.variant.max_queries > 0) {
        space.params.push_back({"decode_key_splits", {4, 8, 16, 32, 64}, d.decode_key_splits});
        // A decode kernel groups at most max_queries queries: larger groups are one kernel.
        const int max_queries = ctx.variant.max_queries, fallback = d.query_group;
        space.irrelevant_to_defaults = [max_queries, fallback](std::map<std::string, int> &p) {
            auto group = p.find("query_group");
            if (group != p.end() &&
                std::min(group->second, max_queries) == std::min(fallback, max_queries)) {
                group->second = fallback;
            }
        };
    }
    space.constraint = [](const std::map<std::string, int> &p, const Context &) {
        return CudaFusedParams::limits_violated(p.at("key_block"), p.at("query_group"),
                                                p.at("value_threads"));
    };
    return space;
}

// The attention generator never calls this (uses_online_softmax is always true); the composed
// formulation gets cuda_tiled's schedule for completeness.
}  // namespace

const Schedule &registered_cuda_fused() {
    static const CudaFused schedule;
    return schedule;
}

}  // namespace attngen::schedules
