// A kernel variant: everything that tells one compiled kernel from another. The build's table
// (kernels/variants.txt), attngen_add_kernel, the generators, the registry, the dispatch, the
// tuner and `attngen list` all describe a kernel by this one value, written as a spec:
//
//   op:attention,storage:f32,mask:causal,d_k:64,d_v:64,max_queries:8,schedule:cpu_fused
//   op:attention,storage:f32,mask:causal+window,score:softcap+alibi,schedule:cpu_fused
//   op:attention,storage:f32,mask:causal,score_mod:t5_bias,mask_mod:strided,schedule:cpu_fused
//
// Items are key:value pairs separated by commas, in any order; keys left out take their
// defaults (below). tuning comes last and holds the schedule's parameters joined by '+'
// (tuning:key_block:1024+value_rows:4). A spec has no spaces and no '=', so that it passes
// unchanged through CMake lists, generator arguments and file names.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "attngen/status.h"
#include "attngen/tensor.h"

namespace attngen {

// What a kernel computes: the composed attention, the multi-head layer, or one stage alone.
enum class Op { kAttention, kMha, kProjection, kScores, kSoftmax, kWeightedSum };

// "attention", "mha", "projection", "scores", "softmax", "weighted_sum".
const char *op_name(Op op);

// The storage types' short names in specs and on the command line: "f32", "bf16", "f16".
const char *storage_name(DType storage);
// The storage type of a short name; false for a name that is none.
bool parse_storage_name(const std::string &name, DType *storage);
// The short names, in the order above, joined by ", " (for messages).
std::string storage_names();

// Which keys a query may see besides the keys within each batch element's key_lengths, which
// every kernel honours (docs/design.md section 1 has the exact rules). Each kind is a field here;
// generators/algorithm/mask.cpp turns the spec into the range of keys of each query and a per-key
// test. The run-time values of a kind (window sizes, prefix lengths, segment ids) are inputs of
// the kernel, so one kernel serves every window size.
struct MaskSpec {
    // Bottom-right aligned causal mask: query i sees key j iff j <= p(i) = i + Nk - Nq.
    bool causal = false;
    // Sliding window: p(i) - L <= j <= p(i) + R (inputs window_left L, window_right R).
    bool window = false;
    // Prefix-LM (with causal only): query i of batch element b also sees every j < P[b] (input
    // prefix_lengths).
    bool prefix = false;
    // Packed documents: query i sees key j iff q_segments[b, i] == kv_segments[b, j].
    bool segments = false;

    // Whether the allowed keys depend on the query, not only on its batch element: reductions
    // over keys then get bands of per-query bounds (generators/algorithm/mask.h), and schedules
    // that vectorize across queries lay them out apart from the dense part.
    bool varies_by_query() const { return causal || window || prefix; }
    // Whether a kernel with this mask computes a call with mask `call`: the same causal rule, and
    // every other kind of the call among its own (a kind the call lacks is given its neutral
    // value by the runtime: an unbounded window, prefixes of 0, one segment).
    bool covers(const MaskSpec &call) const;
    // How many kinds it has beyond causal (the dispatch prefers the kernel with the fewest).
    int extra_kinds() const { return window + prefix + segments; }

    bool operator==(const MaskSpec &o) const { return to_string() == o.to_string(); }
    bool operator!=(const MaskSpec &o) const { return !(*this == o); }
    // "none", or the mask kinds joined by '+' in the order above: "causal+window".
    std::string to_string() const;
};

// How each allowed key's score s = scale * dot(q_i, k_j) is modified, in this order: softcap C
// (s = C tanh(s / C), input softcap), ALiBi (s += -m[h] |p(i) - j|, input alibi_slopes [H]),
// and an additive bias (s += bias[b, h, i, j], input bias, broadcast by the runtime).
struct ScoreSpec {
    bool softcap = false, alibi = false, bias = false;

    bool any() const { return softcap || alibi || bias; }
    // Whether a kernel with these modifiers computes a call with `call`'s: each of the call's
    // among its own (a softcap of 0, zero slopes and a zero bias are neutral).
    bool covers(const ScoreSpec &call) const;
    int extra_kinds() const { return softcap + alibi + bias; }

    bool operator==(const ScoreSpec &o) const { return to_string() == o.to_string(); }
    bool operator!=(const ScoreSpec &o) const { return !(*this == o); }
    // "none", or the modifiers joined by '+' in the order above: "softcap+alibi".
    std::string to_string() const;
};

struct Variant {
    Op op = Op::kAttention;
    // The element type of q and out (of x, memory, the weights and y for mha).
    DType storage = DType::kFloat32;
    // The element type of k and v: storage's unless the spec names another (kv_storage:bf16 with
    // storage:f32 is a decode kernel for a bfloat16 KV cache, which CPU inference engines keep).
    DType kv_storage = DType::kFloat32;
    MaskSpec mask;
    ScoreSpec score;
    // User-written modifiers (docs/modifiers.md): the names under which a downstream project's
    // attngen_add_kernel(SCORE_MOD file.cpp:function, MASK_MOD file.cpp:function) compiled a
    // score and a mask modifier into the kernel, applied after the built-in ones; empty for
    // none. Their extra inputs are kernel arguments that the call passes by name
    // (Modifiers::inputs). Such a kernel serves only calls that name it: the dispatch never
    // picks it, since no other call knows its modifiers.
    std::string score_mod, mask_mod;
    // Whether an attention kernel also writes the probabilities.
    bool probs = false;
    // 0 where the kernel takes any value, read from the buffers at run time; otherwise the value
    // the kernel is specialized to (a call with another value goes to another kernel).
    int heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
    // 0 where the kernel serves any number of queries; otherwise the most it is meant for (a
    // decode kernel). The dispatch prefers such a kernel for calls it fits.
    int max_queries = 0;
    // 0 where the kernel serves any number of keys; otherwise the fewest it is meant for (a
    // kernel for long sequences). The dispatch prefers such a kernel for calls it fits.
    int min_keys = 0;
    // The key count that one of Halide's autoschedulers plans the kernel for (0: 1024).
    int keys_estimate = 0;
    // A schedule of schedules/, or one of Halide's autoschedulers.
    std::string schedule;
    // Schedule parameters that override the schedule's defaults, by name.
    std::map<std::string, int> tuning;
    // The Halide target the tuning was measured for: in a kernel compiled for several targets,
    // only that target's code takes it, and the others keep the schedule's defaults. Empty: all.
    std::string tuned_for;

    // Whether it has a user-written modifier.
    bool user_modified() const { return !score_mod.empty() || !mask_mod.empty(); }

    // Whether q, k, v and out are not all float32.
    bool low_precision() const {
        return storage != DType::kFloat32 || kv_storage != DType::kFloat32;
    }

    // The spec, with every item that differs from the defaults (op, storage, mask and schedule
    // always, score where it is not none, kv_storage where it is not storage), in the order of
    // the fields above.
    std::string to_string() const;
    // Parses a spec; on failure an InvalidArgument status that names the item.
    static Status parse(const std::string &spec, Variant *variant);

    // How many properties of a call the kernel is specialized to (heads, head dims, query and
    // key bounds): the dispatch prefers the kernel specialized to more of them.
    int specialization() const;

    bool operator==(const Variant &o) const;
    bool operator!=(const Variant &o) const { return !(*this == o); }
};

// "key_block:1024+value_rows:4" (the spec's form of tuning) and back. parse_tuning also takes
// "key_block=1024,value_rows=4", the form attngen_add_kernel's TUNING and the tuner print.
std::string format_tuning(const std::map<std::string, int> &tuning);
Status parse_tuning(const std::string &text, std::map<std::string, int> *tuning);

}  // namespace attngen
