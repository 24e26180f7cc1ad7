// An attention shape to tune for, and the kernel bucket that serves it.
//
// A shape is written "b=1,h=8,kv=2,nq=17,nk=30000,d=64,dv=96,causal": b batch elements (1), h
// query heads (8), kv key/value heads (h), nq queries, nk keys (nq), d head dim of queries and
// keys (64), dv head dim of values (d); causal is a flag. The bucket is what a compiled kernel
// specializes: the mask, the head dims, and how many queries it serves (decode steps, short
// query runs, or any). Shapes of one bucket are tuned together, for one kernel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attngen::tuner {

struct Bucket {
    bool causal = false;
    int d_k = 0, d_v = 0;
    int max_queries = 0;  // 0: any number of queries.

    // "attention_causal_dk64_dv64_q8": stable, used as the key in tuning databases.
    std::string key() const;
    bool operator<(const Bucket &o) const { return key() < o.key(); }
    bool operator==(const Bucket &o) const { return key() == o.key(); }
};

struct TuneShape {
    int64_t batch = 1, heads = 8, kv_heads = 0, nq = 0, nk = 0, d_k = 64, d_v = 0;
    bool causal = false;

    // Parses a spec; on failure returns false and sets *error to what is wrong.
    static bool parse(const std::string &spec, TuneShape *shape, std::string *error);
    // The spec with every field, e.g. "b=1,h=8,kv=8,nq=512,nk=512,d=64,dv=64".
    std::string spec() const;
    // Floating-point operations of one call (4 B H Nq Nk d, half when causal).
    double flops() const;
    Bucket bucket() const;
};

// The kernel that the default build (kernels/CMakeLists.txt) runs for a shape with cpu_fused:
// head dims 64 and 128 are specialized, others generic (0); decode steps have their own kernels.
// It is the "hand default" that tuned kernels are measured against.
Bucket default_build_bucket(const TuneShape &shape);

// The parameters that the default build compiles that kernel with beyond the schedule's
// defaults: its kernels for long sequences (long_sequence_keys) walk the
// keys in blocks of 1024 (key_block).
std::map<std::string, int> default_build_params(const TuneShape &shape);

// Query counts that get their own kernels: decode steps (one to a few tokens against a cache)
// and short runs of queries (a chunk of a prompt, speculative decoding).
constexpr int kDecodeQueries = 8;
constexpr int kShortQueries = 64;
// The key count from which the default build runs its kernel for long sequences of a head dim
// (MIN_KEYS in kernels/CMakeLists.txt), or 0 where it has none.
int long_sequence_keys(int64_t head_dim);

// The shapes that `attngen tune` and the build tune by default: head dims the hand-written
// defaults were not written for (80, 96, 256), a short run of queries against a long cache,
// grouped-query attention 8:1, and many short sequences.
std::vector<std::string> default_shape_specs();

}  // namespace attngen::tuner
