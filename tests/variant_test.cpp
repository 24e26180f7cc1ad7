// The variant spec (attngen/variant.h): what the build writes, the generators and the runtime
// read back, and every mistake a hand-written spec (a table row, a tuning database) can hold.
#include "attngen/variant.h"

#include <gtest/gtest.h>

namespace attngen {
namespace {

Variant Parsed(const std::string &spec) {
    Variant v;
    const Status s = Variant::parse(spec, &v);
    EXPECT_TRUE(s.ok()) << spec << ": " << s.to_string();
    return v;
}

std::string Refusal(const std::string &spec) {
    Variant v;
    const Status s = Variant::parse(spec, &v);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << spec;
    return s.message();
}

TEST(Variant, ParsesEveryKey) {
    const Variant v = Parsed(
        "op:attention,storage:f32,mask:causal,probs:yes,heads:8,kv_heads:2,d_k:64,d_v:32,"
        "max_queries:8,min_keys:4096,schedule:cpu_fused,tuned_for:x86-64-linux-sse41,"
        "tuning:key_tile:5+query_vectors:2");
    EXPECT_EQ(v.op, Op::kAttention);
    EXPECT_EQ(v.storage, DType::kFloat32);
    EXPECT_TRUE(v.mask.causal);
    EXPECT_TRUE(v.probs);
    EXPECT_EQ(v.heads, 8);
    EXPECT_EQ(v.kv_heads, 2);
    EXPECT_EQ(v.d_k, 64);
    EXPECT_EQ(v.d_v, 32);
    EXPECT_EQ(v.max_queries, 8);
    EXPECT_EQ(v.min_keys, 4096);
    EXPECT_EQ(v.schedule, "cpu_fused");
    EXPECT_EQ(v.tuned_for, "x86-64-linux-sse41");
    EXPECT_EQ(v.tuning, (std::map<std::string, int>{{"key_tile", 5}, {"query_vectors", 2}}));
    EXPECT_EQ(v.specialization(), 6);
}

TEST(Variant, PrintsWhatItParsesInOneCanonicalOrder) {
    const std::string canonical =
        "op:mha,storage:f32,mask:causal,heads:4,d_k:16,d_v:16,schedule:cpu_tiled,tuning:rows:4";
    EXPECT_EQ(Parsed(canonical).to_string(), canonical);
    // Any order (but tuning, whose items follow it, last), defaults left out: the same variant.
    const Variant shuffled =
        Parsed("schedule:cpu_tiled,d_v:16,heads:4,mask:causal,d_k:16,op:mha,tuning:rows:4");
    EXPECT_EQ(shuffled.to_string(), canonical);
    EXPECT_EQ(shuffled, Parsed(canonical));
    EXPECT_EQ(Parsed("op:attention,schedule:reference").to_string(),
              "op:attention,storage:f32,mask:none,schedule:reference");
}

TEST(Variant, KvStorageIsStoragesUnlessNamed) {
    // Float32 queries with a bfloat16 KV cache: kv_storage printed after storage.
    const Variant mixed = Parsed("op:attention,kv_storage:bf16,max_queries:8,schedule:cpu_fused");
    EXPECT_EQ(mixed.storage, DType::kFloat32);
    EXPECT_EQ(mixed.kv_storage, DType::kBFloat16);
    EXPECT_TRUE(mixed.low_precision());
    EXPECT_EQ(
        mixed.to_string(),
        "op:attention,storage:f32,kv_storage:bf16,mask:none,max_queries:8,schedule:cpu_fused");
    // Left out, it is storage's, and naming storage's type is the same variant.
    const Variant f16 = Parsed("op:attention,storage:f16,schedule:reference");
    EXPECT_EQ(f16.kv_storage, DType::kFloat16);
    EXPECT_EQ(f16, Parsed("op:attention,storage:f16,kv_storage:f16,schedule:reference"));
    EXPECT_EQ(f16.to_string(), "op:attention,storage:f16,mask:none,schedule:reference");
    EXPECT_FALSE(Parsed("op:attention,schedule:reference").low_precision());
    DType type;
    ASSERT_TRUE(parse_storage_name("bf16", &type));
    EXPECT_EQ(type, DType::kBFloat16);
    EXPECT_STREQ(storage_name(type), "bf16");
    EXPECT_FALSE(parse_storage_name("bfloat16", &type));
    EXPECT_EQ(storage_names(), "f32, bf16, f16");
}

TEST(Variant, TuningTakesBothForms) {
    std::map<std::string, int> a, b;
    ASSERT_TRUE(parse_tuning("key_block:1024+value_rows:4", &a).ok());
    ASSERT_TRUE(parse_tuning("key_block=1024,value_rows=4", &b).ok());
    EXPECT_EQ(a, b);
    EXPECT_EQ(format_tuning(a), "key_block:1024+value_rows:4");
    EXPECT_NE(Refusal("op:attention,schedule:x,tuning:key_tile").find("not name:integer"),
              std::string::npos);
    EXPECT_NE(Refusal("op:attention,schedule:x,tuning:a:1+a:2").find("sets a twice"),
              std::string::npos);
}

TEST(Variant, RefusesWhatItCannotRead) {
    const std::pair<const char *, const char *> cases[] = {
        {"schedule:cpu_fused", "names no op"},
        {"op:attention", "names no schedule"},
        {"op:atention,schedule:x", "unknown op 'atention'"},
        {"op:attention,schedule:x,storage:f64", "unknown storage type 'f64'"},
        {"op:attention,schedule:x,kv_storage:i8", "unknown storage type 'i8' (known: f32, bf16"},
        {"op:mha,schedule:x,kv_storage:bf16", "kv_storage applies to op attention only"},
        {"op:attention,schedule:x,mask:casual", "mask 'casual' is not 'none'"},
        {"op:attention,schedule:x,mask:causal+causal", "mask 'causal+causal'"},
        {"op:attention,schedule:x,heads:0", "heads must be a positive integer, got '0'"},
        {"op:attention,schedule:x,d_k:064", "d_k must be a positive integer"},
        {"op:attention,schedule:x,d_k:9999999999", "d_k must be a positive integer"},
        {"op:attention,schedule:x,window:4", "unknown key 'window'"},
        {"op:attention,schedule:x,d_k:4,d_k:4", "'d_k' is given twice"},
        {"op:attention,schedule:x,d_k", "'d_k' is not key:value"},
        {"op:mha,schedule:x,probs:yes", "probs applies to op attention only"},
        {"op:attention,schedule:x,probs:maybe", "probs must be yes or no"},
        {"op:scores,schedule:x,d_k:64", "heads and head dims apply to ops attention and mha"},
        {"op:mha,schedule:x,max_queries:8", "apply to op attention only"},
        {"op:projection,schedule:x,mask:causal", "a projection has no mask"},
        {"op:attention,schedule:x,heads:8,kv_heads:3", "kv_heads 3 does not divide heads 8"},
        {"op:attention,tuning:key_tile:5,schedule:x", "'schedule:x' is not name:integer"},
        {"op:attention,schedule:x,score:tanh",
         "score 'tanh' is not 'none' or a '+'-list of: "
         "softcap, alibi, bias"},
        {"op:attention,schedule:x,mask:prefix", "mask kind prefix widens the causal mask"},
        {"op:softmax,schedule:x,mask:causal+window", "apply to ops attention and mha only"},
        {"op:scores,schedule:x,score:bias", "apply to ops attention and mha only"},
        {"op:attention,schedule:x,score_mod:t5-bias", "score_mod must name a C++ function"},
        {"op:attention,schedule:x,mask_mod:9lives", "mask_mod must name a C++ function"},
        {"op:mha,schedule:x,mask_mod:dilated", "apply to op attention only"},
    };
    for (const auto &[spec, why] : cases) {
        const std::string message = Refusal(spec);
        EXPECT_NE(message.find(why), std::string::npos) << spec << ": " << message;
        EXPECT_NE(message.find(spec), std::string::npos) << "the message names the spec";
    }
}

TEST(Variant, MaskNamesItsKinds) {
    EXPECT_EQ(MaskSpec{}.to_string(), "none");
    EXPECT_EQ(MaskSpec{true}.to_string(), "causal");
    EXPECT_FALSE(MaskSpec{}.varies_by_query());
    EXPECT_TRUE(MaskSpec{true}.varies_by_query());
    EXPECT_EQ((MaskSpec{true, true, true, true}.to_string()), "causal+window+prefix+segments");
    EXPECT_TRUE((MaskSpec{false, true}.varies_by_query()));
    EXPECT_FALSE((MaskSpec{false, false, false, true}.varies_by_query()));
}

TEST(Variant, ModifiersRoundTripInOneOrder) {
    const Variant v =
        Parsed("op:attention,score:bias+softcap,mask:segments+window+causal,schedule:cpu_fused");
    EXPECT_EQ(v.to_string(),
              "op:attention,storage:f32,mask:causal+window+segments,score:softcap+bias,"
              "schedule:cpu_fused");
    EXPECT_EQ(Parsed(v.to_string()), v);
    EXPECT_FALSE(Parsed("op:attention,schedule:x,score:none").score.any());
}

TEST(Variant, UserModifiersAreNamedAfterTheBuiltInOnes) {
    const Variant v = Parsed(
        "op:attention,mask_mod:dilated,schedule:cpu_fused,score_mod:t5_bias,mask:causal,"
        "score:softcap");
    EXPECT_EQ(v.score_mod, "t5_bias");
    EXPECT_EQ(v.mask_mod, "dilated");
    EXPECT_TRUE(v.user_modified());
    EXPECT_EQ(v.to_string(),
              "op:attention,storage:f32,mask:causal,score:softcap,score_mod:t5_bias,"
              "mask_mod:dilated,schedule:cpu_fused");
    EXPECT_EQ(Parsed(v.to_string()), v);
    EXPECT_FALSE(Parsed("op:attention,schedule:x").user_modified());
}

}  // namespace
}  // namespace attngen
