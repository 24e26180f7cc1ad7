#include "online_attention.h"

#include <limits>

#include "dims.h"
#include "numerics.h"
#include "storage.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Tuple;
using Halide::Var;

OnlineAttentionFuncs define_online_attention(const Func &q, const Func &k, const Func &v,
                                             const KeyMask &mask, const AttentionShape &shape,
                                             const Expr &scale, const OnlineBlocking &blocking,
                                             const ScoreModifier &modifier) {
    const int key_block = blocking.key_block, query_group = blocking.query_group,
              key_splits = blocking.key_splits, value_tile = blocking.value_tile,
              value_vector = blocking.value_vector;
    const bool skip_empty_blocks = blocking.skip_empty_blocks;
    const Dims &x = dims();
    const Var t("t");
    const int T = key_block;
    // A group g of G queries walks the blocks together; ii is a query of the group.
    const Var ii("ii"), g("g"), c("c");
    const int G = query_group;
    const Expr row = g * G + ii;
    const float lowest = std::numeric_limits<float>::lowest();
    OnlineAttentionFuncs f;
    f.q = q;
    f.k = k;
    f.v = v;
    f.key_block = T;
    f.shape = shape;
    f.mask = mask;
    // Keys promised to lie in [0, nk). The walk computes scores only in the blocks it visits,
    // each holding a key below nk, and a schedule's score tile shifted inward from the end of
    // such a block stays at or above key 0 (cpu_fused shifts tiles only where nk is at least a
    // tile). Bounds inference does not see the walk's predicate: for a block that no group
    // visits (no key in range, as in a window with Nq > Nk: Nq 40, Nk 8, causal, window_left 2)
    // it bounds a tile before key 0, and k's bounds check stopped such calls. The promise
    // states what holds; a clamp on every key did too, but LLVM then computed four of a score
    // tile's six key rows in vector registers and extracted them on every multiply-add step
    // (B1 H8 N16384 d64, causal window L = 1024: 4-5% of the kernel's time).
    Func k_keys("k_keys");
    k_keys(x.d, x.j, x.h, x.b) =
        k(x.d, Halide::unsafe_promise_clamped(x.j, 0, shape.nk - 1), x.h, x.b);
    f.k_for_head = for_query_heads(k_keys, shape, "k_for_head");
    f.v_for_head = for_query_heads(v, shape, "v_for_head");
    // Query rows past Nq read the last query: a schedule may then compute whole groups of rows
    // (vector lanes past Nq included) without reading outside q; those rows are never output.
    Func q_rows("q_rows");
    q_rows(x.d, x.i, x.h, x.b) = q(x.d, Halide::min(x.i, shape.nq - 1), x.h, x.b);
    // Scores in base 2, as in the block algorithm (softmax.h): every exponential is exp2.
    const Expr scale_base_two = base_two_scale(scale);
    // Unmasked (scores.h): every reduction below visits allowed keys only, and the probabilities
    // select their own zeros.
    f.scores = define_scores(q_rows, f.k_for_head, shape.d_k, scale_base_two, f.mask,
                             /*masked=*/false, modifier, scale);
    const Func &s = f.scores.scores;
    const Expr end = f.mask.end(x.i, x.b);

    // The group's range of keys: from its first query's begin to its last query's end.
    const Expr group_first = g * G, group_last = g * G + (G - 1);
    const Expr dense_end = f.mask.end(group_first, x.b);
    Expr dense_begin;
    if (f.mask.begin.defined()) {
        dense_begin = Halide::min(f.mask.begin(group_last, x.b), dense_end);
    }
    const Expr group_last_query = Halide::min(group_last, shape.nq - 1);
    f.query_group = G;
    f.key_splits = key_splits;
    // A user's mask modifier may bound each query's keys too (mask.h, bound_begin and bound_end,
    // non-decreasing in the query like the mask's own range).
    Expr group_end = f.mask.end(group_last_query, x.b), group_begin;
    if (f.mask.bound_end.defined()) {
        group_end = Halide::min(group_end, f.mask.bound_end(group_last_query, x.b));
    }
    if (f.mask.begin.defined()) group_begin = f.mask.begin(g * G, x.b);
    if (f.mask.bound_begin.defined()) {
        const Expr bound = f.mask.bound_begin(g * G, x.b);
        group_begin = group_begin.defined() ? Halide::max(group_begin, bound) : bound;
    }
    f.group_end = Func("group_end");
    f.group_end(g, x.b) = group_end;
    if (group_begin.defined()) {
        f.group_begin = Func("group_begin");
        f.group_begin(g, x.b) = group_begin;
    }
    // The keys of block t in group g's range, [first, last]: only these get scores, weights and
    // a place in the block's maximum and sum, since the others are allowed for none of the
    // group's queries. Walked whole, blocks of 256 keys computed 1.25x the scores that a causal
    // window needs (L = 1024, groups of 32: five blocks for 1056 keys in range). Both bounds lie
    // in the block and below nk, even where the group's range is empty (a block that the walk
    // does not visit, or a key length before a window's begin): every key read is in [0, nk).
    auto block_keys = [&](const Expr &begin, const Expr &end) {
        const Expr block_first = t * T, block_last = Halide::min(block_first + T, shape.nk) - 1;
        const Expr first =
            begin.defined() ? Halide::clamp(begin, block_first, block_last) : block_first;
        return std::make_pair(first, Halide::clamp(end - 1, first, block_last));
    };
    // block_range(t, g, b) = Tuple(first, count), from the group's bounds as computed once
    // (group_begin, group_end): the walk's loops compare their keys with these values, which
    // Halide does not look into, and so takes as loop bounds. Bounds inference, which does not
    // read predicates, takes a Func's value as any value its definition can take (here, a whole
    // block): each key read is promised to lie in the same bounds written out (first_key,
    // last_key), which it reads as they are. Generation took 6-7 s longer for a causal window
    // (AVX-512), where clamps instead of promises took 19 s longer.
    const std::pair<Expr, Expr> range =
        block_keys(f.group_begin.defined() ? f.group_begin(g, x.b) : Expr(), f.group_end(g, x.b));
    f.block_range = Func("block_range");
    f.block_range(t, g, x.b) = Tuple(range.first, range.second - range.first + 1);
    const Expr in_range_first = f.block_range(t, g, x.b)[0];
    const Expr in_range_count = f.block_range(t, g, x.b)[1];
    const std::pair<Expr, Expr> written_out = block_keys(group_begin, group_end);
    const Expr first_key = written_out.first, last_key = written_out.second;

    // Per block: the maximum, the weights relative to it and their sum over the allowed keys of
    // the block's range, for query g * G + ii: indexed by the group, not the query, so that the
    // range is the same for a vector of the group's queries. The maximum and the sum choose
    // their identity for a key the query may not see, rather than guarding the key with a
    // predicate: a schedule that vectorizes them across queries then keeps each vector of
    // queries in a register over the block's keys, where a predicate masked the loads and stores
    // of every key (the choice also keeps a refused key's score, even NaN, out).
    auto key_of = [&](const RDom &r) {
        return Halide::unsafe_promise_clamped(in_range_first + r, first_key, last_key);
    };
    auto allowed = [&](const RDom &r) { return f.mask.allows(key_of(r), row, x.b); };

    f.block_keys_max = RDom(0, T, "block_keys_max");
    f.block_keys_max.where(f.block_keys_max < in_range_count);
    f.block_max = Func("block_max");
    f.block_max(t, ii, g, x.h, x.b) = lowest;
    f.block_max(t, ii, g, x.h, x.b) =
        Halide::max(f.block_max(t, ii, g, x.h, x.b),
                    Halide::select(allowed(f.block_keys_max),
                                   s(key_of(f.block_keys_max), row, x.h, x.b), lowest));
    // The maximum rounded up to a whole number (lowest, and +-inf, are whole already): every
    // maximum the merge meets is then whole, and its factors 2^(m - m') and 2^(bm - m') are exact
    // powers of two (exp2_of_integral), computed for each value feature in about half the
    // instructions of exp2_nonpositive (8 against 16-19 on AVX-512). The block's largest weight is
    // then in (1/2, 1] instead of exactly 1, which costs no precision: a float's relative rounding
    // is the same over [1/2, 1].
    f.block_max(t, ii, g, x.h, x.b) = Halide::ceil(f.block_max(t, ii, g, x.h, x.b));

    f.block_weights = Func("block_weights");
    f.block_weights(x.j, ii, g, x.h, x.b) =
        exp2_nonpositive(s(x.j, row, x.h, x.b) - f.block_max(x.j / T, ii, g, x.h, x.b));

    f.block_keys_sum = RDom(0, T, "block_keys_sum");
    f.block_keys_sum.where(f.block_keys_sum < in_range_count);
    f.block_sum = Func("block_sum");
    f.block_sum(t, ii, g, x.h, x.b) = 0.0f;
    f.block_sum(t, ii, g, x.h, x.b) +=
        Halide::select(allowed(f.block_keys_sum),
                       f.block_weights(key_of(f.block_keys_sum), ii, g, x.h, x.b), 0.0f);

    // A block is walked if it starts before the group's last allowed key and ends after its first.
    // The walk reads the bounds from group_begin and group_end (a schedule may compute them once);
    // the test of the blocks' keys below writes them out, so that Halide hoists the test out of
    // its loops over keys (read from a buffer, it stayed on every fold).
    auto in_range_of = [&](const Expr &block, const Expr &first, const Expr &last) {
        const Expr starts_before_end = block * T < last;
        if (!first.defined()) return starts_before_end;
        return starts_before_end && (block + 1) * T > first;
    };
    auto in_range = [&](const Expr &block) {
        return in_range_of(block, f.group_begin.defined() ? f.group_begin(g, x.b) : Expr(),
                           f.group_end(g, x.b));
    };
    // With a per-key test (segments, a user's mask) and a schedule that asks for it, the walk
    // also skips the in-range blocks that hold no allowed key of the group's queries: packed
    // documents and user masks then cost what their allowed blocks do. Each block in range is
    // tested once per group for every head, G x T cheap comparisons (vectorized over folds of
    // kFold keys) against the G x T x (d_k + d_v) multiply-adds that walking it costs each head.
    // The test is a predicate of the walk, so that the block's index stays the walk's own: an
    // index read from a list of live blocks would hide from bounds inference which block an
    // iteration computes, and every iteration would compute all of them (measured: 12x slower).
    //
    // The same pass finds the blocks whose keys below nk the per-key test allows for every query
    // of the group (block_live's kWhole flag): a block inside one packed document. Their weighted
    // values need no per-key test (block_common below).
    if (skip_empty_blocks && f.mask.allowed.defined()) {
        // Folds of 16 keys fill a vector of any of the CPU targets; a block of another size
        // is tested a key at a time.
        const int kFold = T % 16 == 0 ? 16 : 1;
        const Var lane("lane");
        f.key_live_fold = RDom(0, T / kFold, 0, G, "key_live_fold");
        const RDom &fold = f.key_live_fold;
        f.key_live_fold.where(g * G + fold.y < shape.nq && in_range_of(t, group_begin, group_end));
        // Both flags in one byte (a Tuple here met an internal error of Halide 14's code
        // generation): kLive is set by any allowed key, kWhole cleared by any refused one.
        const Expr key = t * T + fold.x * kFold + lane, query = g * G + fold.y;
        const Expr live_bit(kLive), keep_whole(uint8_t{0xFF}), clear_whole(uint8_t(~kWhole));
        f.key_live = Func("key_live");
        f.key_live(lane, t, g, x.b) = Expr(kWhole);
        f.key_live(lane, t, g, x.b) =
            (f.key_live(lane, t, g, x.b) |
             Halide::select(f.mask.allows(key, query, x.b), live_bit, Expr(uint8_t{0}))) &
            Halide::select(key >= shape.nk || f.mask.allowed(key, query, x.b), keep_whole,
                           clear_whole);
        // Over the lanes: kLive of any lane, kWhole of all.
        const RDom lanes(0, kFold, "block_live_lanes");
        const Expr lane_flags = f.key_live(lanes, t, g, x.b);
        f.block_live = Func("block_live");
        f.block_live(t, g, x.b) = Expr(kWhole);
        f.block_live(t, g, x.b) =
            (f.block_live(t, g, x.b) | (lane_flags & live_bit)) & (lane_flags | clear_whole);
    }
    // The weighted values, indexed by the walk's group g of G queries and the query ii within it
    // (row g * G + ii), as reduce_over_keys (mask.h) splits a reduction: the block's keys that
    // every query of the group sees are a range whose bounds depend on the group alone, so the
    // loop over them carries no per-query test and a schedule's register tile of several queries
    // runs it as plain multiply-adds (with a per-query test on every key, the key-block path took
    // 4.8x the block path's time per allowed pair); each query's remaining keys of the block, at
    // most G - 1 after the range and G - 1 before it because begin and end grow by at most one per
    // query, are bands tested per query. A per-key test (segments, a user's mask) chooses 0 for
    // a key it refuses rather than guarding the sum, so a refused key's value, even NaN, is never
    // added.
    f.block_acc = Func("block_acc");
    const std::vector<Expr> acc_args{x.e, t, ii, g, x.h, x.b};
    f.block_acc(acc_args) = 0.0f;
    // Every part visits keys of the block's range (block_range) only. The key tested is clamped
    // into the block and below nk, which changes no key and bounds the mask's reads for bounds
    // inference, which does not look at the predicates; the key read is promised to lie in the
    // range, as block_sum's are.
    //
    // With tiles of value features (value_tile), a feature past d_v reads another one, which
    // changes no feature of the output, and only where d_v is not a multiple of the tile. Where
    // d_v is a multiple of the vector (value_vector), each whole vector past d_v reads the last
    // vector below d_v (min of two ramps of the same stride is a ramp: the load stays dense);
    // else each feature past d_v reads the last one. A schedule that specializes on the two
    // conditions keeps the loads dense in both common cases: with the last clamp for a d_v of 32
    // or 80 (tiles of 64), each load of a value was a gather, 1.6x and 1.3x the time of the
    // guarded walk this replaced. Bounds inference takes the union of the branches, and the
    // vector branch's alone would reach below 0 or past d_v for a d_v below the vector; the
    // promise states what holds for the branch taken.
    f.value_tile = value_tile;
    Expr feature = x.e;
    if (value_tile > 0) {
        const int V = value_vector;
        const Expr whole_tiles = shape.d_v % value_tile == 0, whole_vectors = shape.d_v % V == 0;
        feature =
            Halide::select(whole_tiles, x.e,
                           Halide::select(whole_vectors, Halide::min(x.e, shape.d_v - V + x.e % V),
                                          Halide::min(x.e, shape.d_v - 1)));
        feature = Halide::unsafe_promise_clamped(feature, 0, shape.d_v - 1);
        f.feature_cases = {whole_tiles};
        if (V != value_tile) f.feature_cases.push_back(whole_vectors);
    }
    auto add_weighted_value = [&](const Expr &unclamped, bool tested) {
        const Expr key = Halide::min(unclamped, Halide::min((t + 1) * T, shape.nk) - 1);
        const Expr read = Halide::unsafe_promise_clamped(key, first_key, last_key);
        Expr term = f.block_weights(read, ii, g, x.h, x.b) * f.v_for_head(feature, read, x.h, x.b);
        if (tested) term = Halide::select(f.mask.allowed(key, row, x.b), term, 0.0f);
        f.block_acc(acc_args) += term;
    };
    const bool per_key_test = f.mask.allowed.defined();
    // The common range within the block: block_common(t, g, b) = (its first key relative to the
    // block, its number of keys). A Func, so that the loop's predicate compares the key with a
    // value Halide does not look into: it then turns the predicate into the loop's bound and
    // leaves no test in the loop (with the expression written out, a test stayed on every key).
    // Where block_live says which blocks the per-key test allows whole, the range is walked by
    // one of two domains: block_keys_acc without the test in such a block (block_common's second
    // value is the count there, else 0) and block_keys_acc_tested with it in the others (its
    // third value). With the test on every key of packed documents, LLVM branched on it per key
    // and query and kept the register tile of P V in memory: twice the time per walked block.
    // The common range is cut to the block's range: with a user's bounds narrower than the
    // mask's own range, its keys outside are refused anyway.
    const Expr in_range_end = in_range_first + in_range_count;
    const Expr dense_from =
        dense_begin.defined() ? Halide::max(dense_begin, in_range_first) : in_range_first;
    const Expr dense_first = dense_from - t * T;
    const Expr dense_count = Halide::max(Halide::min(dense_end, in_range_end) - dense_from, 0);
    f.block_common = Func("block_common");
    if (f.block_live.defined()) {
        const Expr whole = (f.block_live(t, g, x.b) & kWhole) != 0;
        const Expr untested = Halide::select(whole, dense_count, 0);
        f.block_common(t, g, x.b) = Tuple(dense_first, untested, dense_count - untested);
    } else {
        f.block_common(t, g, x.b) = Tuple(dense_first, dense_count);
    }
    const Expr common_first = t * T + f.block_common(t, g, x.b)[0];
    f.block_keys_acc = RDom(0, T, "block_keys_acc");
    f.block_keys_acc.where(f.block_keys_acc < f.block_common(t, g, x.b)[1]);
    add_weighted_value(common_first + f.block_keys_acc, per_key_test && !f.block_live.defined());
    if (f.block_live.defined()) {
        f.block_keys_acc_tested = RDom(0, T, "block_keys_acc_tested");
        f.block_keys_acc_tested.where(f.block_keys_acc_tested < f.block_common(t, g, x.b)[2]);
        add_weighted_value(common_first + f.block_keys_acc_tested, /*tested=*/true);
    }
    if (f.mask.has_band()) {
        // A band of the keys in [first, last) and in the block's range, at most G of them.
        auto band = [&](const Expr &first, const Expr &last, const std::string &name) {
            const Expr band_first = Halide::max(first, in_range_first);
            RDom r(0, G, name);
            r.where(r < Halide::min(last, in_range_end) - band_first);
            add_weighted_value(band_first + r, per_key_test);
            return r;
        };
        const Expr begin = f.mask.begin_at(row, x.b), end = f.mask.end(row, x.b);
        f.block_acc_band = band(Halide::max(dense_end, begin), end, "block_acc_band");
        if (dense_begin.defined()) {
            f.block_acc_lower_band =
                band(begin, Halide::min(dense_begin, end), "block_acc_lower_band");
        }
    }

    // The merge, block after block, over groups of query_group queries: a group walks the blocks
    // that hold an allowed key of its last query, the one that sees the most keys, so the bound
    // of the walk depends on the group alone and a schedule that keeps a group together skips the
    // fully masked blocks of causal attention. For the group's other queries such a block holds
    // no allowed key (block_max is lowest, block_sum and block_acc are 0), and merging it changes
    // nothing. Rows past Nq in the last group read the last query (q_rows above); they are never
    // output, and leaving their index unclamped keeps a group's rows one dense vector.
    auto walks = [&](const Expr &block) {
        if (!f.block_live.defined()) return in_range(block);
        return in_range(block) && (f.block_live(block, g, x.b) & kLive) != 0;
    };
    // Folds a partial result (its maximum, sum and weighted values) into a running state.
    auto merge = [&](const Tuple &state, const Expr &bm, const Expr &bl, const Expr &bacc) {
        const Expr m = state[0], l = state[1], acc = state[2];
        const Expr m_new = Halide::max(m, bm);
        const Expr alpha = exp2_of_integral(m - m_new), beta = exp2_of_integral(bm - m_new);
        return Tuple(m_new, l * alpha + bl * beta, acc * alpha + bacc * beta);
    };
    const Tuple empty(lowest, 0.0f, 0.0f);
    const Expr num_blocks = (shape.nk + T - 1) / T;
    f.running_grouped = Func("running_grouped");
    f.running_grouped(x.e, ii, g, x.h, x.b) = empty;
    if (key_splits <= 1) {
        f.blocks = RDom(0, num_blocks, "blocks");
        f.blocks.where(walks(f.blocks));
        f.running_grouped(x.e, ii, g, x.h, x.b) = merge(
            f.running_grouped(x.e, ii, g, x.h, x.b), f.block_max(f.blocks, ii, g, x.h, x.b),
            f.block_sum(f.blocks, ii, g, x.h, x.b), f.block_acc(x.e, f.blocks, ii, g, x.h, x.b));
    } else {
        // Split keys (flash-decoding): split c merges its own run of blocks from an empty state,
        // and the splits' results are merged in order. The merge is the same operation in both
        // places, so the result is the one of a single walk up to rounding.
        const Expr blocks_per_split = (num_blocks + key_splits - 1) / key_splits;
        f.blocks = RDom(0, blocks_per_split, "blocks");
        const Expr block = c * blocks_per_split + f.blocks;
        f.blocks.where(walks(block));
        f.split_state = Func("split_state");
        f.split_state(x.e, ii, c, g, x.h, x.b) = empty;
        f.split_state(x.e, ii, c, g, x.h, x.b) =
            merge(f.split_state(x.e, ii, c, g, x.h, x.b), f.block_max(block, ii, g, x.h, x.b),
                  f.block_sum(block, ii, g, x.h, x.b), f.block_acc(x.e, block, ii, g, x.h, x.b));
        f.splits = RDom(0, key_splits, "splits");
        const Tuple part = f.split_state(x.e, ii, f.splits, g, x.h, x.b);
        f.running_grouped(x.e, ii, g, x.h, x.b) =
            merge(f.running_grouped(x.e, ii, g, x.h, x.b), part[0], part[1], part[2]);
    }
    f.running = Func("running");
    f.running(x.e, x.i, x.h, x.b) = f.running_grouped(x.e, x.i % G, x.i / G, x.h, x.b);

    // A row is empty when it has no allowed key, or when every allowed score is -inf (a bias or
    // an input of -inf): its maximum then never rose above the lowest float, and its weights,
    // 0 each after exp2_nonpositive's clamp, must not divide 0 by 0. A row of NaN
    // scores may keep that maximum too (float max ignores NaN under LLVM's no-NaNs flag); its
    // sum is NaN, and it is a NaN row, not an empty one. Both tests are made on the bits.
    const Expr running_sum = f.running(0, x.i, x.h, x.b)[1];
    const Expr empty_row =
        end <= f.mask.begin_at(x.i, x.b) ||
        (Halide::reinterpret<uint32_t>(f.running(0, x.i, x.h, x.b)[0]) == lowest_bits() &&
         magnitude_bits(running_sum) <= Expr(uint32_t{0x7f800000}));
    const Expr l = f.running(x.e, x.i, x.h, x.b)[1];
    f.out = Func("out");
    f.out(x.e, x.i, x.h, x.b) = narrow(
        Halide::select(empty_row, 0.0f, f.running(x.e, x.i, x.h, x.b)[2] / l), shape.storage);
    // Every value feature carries the same m and l; the first one's serve the row. m is the
    // exponent of a power of two: lse = (m + log2 l) ln 2, summed in base 2 first. m is a whole
    // number above the row's largest score y (block_max), and where one key dominates the row
    // (huge logits) l = 2^(y - m) and m + log2 l gives back y, so that lse = y ln 2 has one
    // rounding at its magnitude, as before maxima were whole. Written m ln 2 + ln l instead, ln l
    // added a second one, which the probabilities below (recomputed from lse) showed: 3.4e-4 off
    // on a probability of 1 at scores near 4000 (AttentionTest.HugeLogitsStayFinite). A NaN sum
    // (a NaN or +inf among the allowed scores) gives a NaN lse, which Halide's log would not.
    const Expr m0 = f.running(0, x.i, x.h, x.b)[0], l0 = f.running(0, x.i, x.h, x.b)[1];
    f.lse = Func("lse");
    f.lse(x.i, x.h, x.b) = Halide::select(empty_row, Expr(-std::numeric_limits<float>::infinity()),
                                          keep_nan(l0, (m0 + Halide::log(l0) * kLog2e) * kLn2));
    // The probabilities recompute the scores: the merge's scores live only inside a key block.
    // p = 2^(y - lse log2(e)); the exponent is at most a rounding error above 0.
    f.probs_scores = define_scores(q, for_query_heads(k, shape, "probs_k"), shape.d_k,
                                   scale_base_two, f.mask, /*masked=*/false, modifier, scale);
    f.probs = Func("probs");
    f.probs(x.j, x.i, x.h, x.b) = Halide::select(
        f.mask.allows(x.j, x.i, x.b),
        exp2_nonpositive(f.probs_scores.scores(x.j, x.i, x.h, x.b) - f.lse(x.i, x.h, x.b) * kLog2e),
        0.0f);
    return f;
}

}  // namespace attngen::algorithm
