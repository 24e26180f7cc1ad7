// An attention shape to tune for, and the kernel bucket that serves it.
//
// A shape is written "b=1,h=8,kv=2,nq=17,nk=30000,d=64,dv=96,causal": b batch elements (1), h
// query heads (8), kv key/value heads (h), nq queries, nk keys (nq), d head dim of queries and
// keys (64), dv head dim of values (d); causal is a flag. Modifiers (docs/modifiers.md), whose
// values the candidates are timed with: window_left=L and window_right=R (a sliding window; an
// omitted side is unbounded), docs=N (packed documents of N keys each, as segments: query i in
// the document of its position p(i)), prefix=P (with causal: every query sees the first P
// keys), softcap=C, and the flags alibi (slopes 2^(-8 (h + 1) / H), as in ALiBi's paper) and
// bias (a zero bias of [1, H, Nq, Nk]). dtype=bf16 or f16 stores q, k, v and out in that type,
// kv_dtype another type for k and v (a 16-bit KV cache with float32 queries:
// dtype=f32,kv_dtype=bf16); float32 (f32) by default. A bucket is what a compiled kernel is
// specialized to, as a variant without schedule or tuning (attngen/variant.h); shapes of one bucket
// are tuned together, for one kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attngen/variant.h"
#include "reference.h"

namespace attngen::tuner {

struct TuneShape {
    int64_t batch = 1, heads = 8, kv_heads = 0, nq = 0, nk = 0, d_k = 64, d_v = 0;
    bool causal = false;
    // The modifiers: -1 for an unbounded side of the window, 0 for no documents, prefix or
    // softcap.
    int64_t window_left = -1, window_right = -1, doc_length = 0, prefix = 0, softcap = 0;
    bool alibi = false, bias = false;
    // The storage types of q and out, and of k and v (attngen/variant.h).
    DType storage = DType::kFloat32, kv_storage = DType::kFloat32;

    // Parses a spec; on failure returns false and sets *error to what is wrong.
    static bool parse(const std::string &spec, TuneShape *shape, std::string *error);
    // The spec with every field, e.g. "b=1,h=8,kv=8,nq=512,nk=512,d=64,dv=64" (and the
    // modifiers that the shape has).
    std::string spec() const;
    MaskSpec mask() const;
    ScoreSpec score() const;
    // The values of the shape's modifiers for a call of its extents, as the reference takes them.
    reference::ModifierValues modifier_values() const;
    // ALiBi's slope for head h of `heads`: 2^(-8 (h + 1) / heads).
    static double alibi_slope(int64_t h, int64_t heads);
    // The document of query i (that of its position p(i)) and of key j, with documents of
    // doc_length keys; 0 for every query and key of a shape without documents.
    int64_t query_document(int64_t i) const;
    int64_t key_document(int64_t j) const;
};

// Queries up to which a run of queries (a chunk of a prompt, speculative decoding) gets a tuned
// kernel of its own, apart from the kernel for any number of queries: such calls fill few of a
// block's query rows, and what wins for them (the key-block path at Nq 17 against 30000 keys) can
// lose on long prompts.
constexpr int kShortQueries = 64;

// The variant of the kernel that the default build runs for the shape on `target` (a CUDA
// target picks among the CUDA schedules): the dispatch's own rules (runtime/src/kernel_choice.h)
// over the build's variant table (kernels/variants.txt) and its schedules, without the kernels of
// tuning databases. It is the "hand default" that tuned kernels are measured against. Empty
// schedule if the table has none.
Variant default_kernel(const TuneShape &shape, const std::string &target);

// The bucket of a shape: its default kernel's variant specialized to the shape's head dims, with
// the query bound of that kernel, else kShortQueries for a short run of queries; no schedule, no
// tuning.
Variant bucket_of(const TuneShape &shape, const std::string &target);

// "attention_causal_dk64_dv64_q8": stable, the bucket's name in progress lines and caches.
std::string bucket_key(const Variant &bucket);

// The shapes that `attngen tune` and the build tune by default: head dims the hand-written
// defaults were not written for (80, 96, 256), a short run of queries against a long cache,
// grouped-query attention 8:1, and many short sequences.
std::vector<std::string> default_shape_specs();

}  // namespace attngen::tuner
