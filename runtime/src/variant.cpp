#include "attngen/variant.h"

#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

namespace attngen {

namespace {

constexpr std::pair<Op, const char *> kOps[] = {
    {Op::kAttention, "attention"}, {Op::kMha, "mha"},         {Op::kProjection, "projection"},
    {Op::kScores, "scores"},       {Op::kSoftmax, "softmax"}, {Op::kWeightedSum, "weighted_sum"}};

// The storage types a kernel can be compiled for, by the short names of specs.
constexpr std::pair<DType, const char *> kStorage[] = {
    {DType::kFloat32, "f32"}, {DType::kBFloat16, "bf16"}, {DType::kFloat16, "f16"}};

Status bad(const std::string &spec, const std::string &what) {
    return Status::InvalidArgument("variant '" + spec + "': " + what);
}

// A positive decimal integer that fits an int, else false.
bool parse_count(const std::string &text, int *value) {
    if (text.empty() || text.size() > 9 || text[0] == '0') return false;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
    }
    *value = std::atoi(text.c_str());
    return true;
}

// A C identifier: the name of a user-written modifier.
bool is_identifier(const std::string &text) {
    if (text.empty() || (text[0] >= '0' && text[0] <= '9')) return false;
    for (char c : text) {
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!letter && c != '_' && !(c >= '0' && c <= '9')) return false;
    }
    return true;
}

// The kinds of a mask and the modifiers of a score, by their names in specs, in spec order.
constexpr std::pair<const char *, bool MaskSpec::*> kMaskKinds[] = {
    {"causal", &MaskSpec::causal},
    {"window", &MaskSpec::window},
    {"prefix", &MaskSpec::prefix},
    {"segments", &MaskSpec::segments}};
constexpr std::pair<const char *, bool ScoreSpec::*> kScoreKinds[] = {
    {"softcap", &ScoreSpec::softcap}, {"alibi", &ScoreSpec::alibi}, {"bias", &ScoreSpec::bias}};

// "none", or the set kinds of `spec` joined by '+'.
template <typename Spec, std::size_t N>
std::string kinds_string(const Spec &spec,
                         const std::pair<const char *, bool Spec::*> (&kinds)[N]) {
    std::string s;
    for (const auto &[name, field] : kinds) {
        if (spec.*field) s += (s.empty() ? "" : "+") + std::string(name);
    }
    return s.empty() ? "none" : s;
}

// Parses "none" or kinds joined by '+' (each at most once, in any order) of the item `key`.
template <typename Spec, std::size_t N>
Status parse_kinds(const std::string &spec, const std::string &key, const std::string &text,
                   const std::pair<const char *, bool Spec::*> (&kinds)[N], Spec *out) {
    *out = Spec{};
    if (text == "none") return Status::Ok();
    std::string known;
    for (const auto &[name, field] : kinds)
        known += (known.empty() ? "" : ", ") + std::string(name);
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('+', start);
        if (end == std::string::npos) end = text.size();
        const std::string kind = text.substr(start, end - start);
        bool found = false;
        for (const auto &[name, field] : kinds) {
            if (kind == name && !(out->*field)) {
                out->*field = true;
                found = true;
            }
        }
        if (!found) {
            return bad(spec, key + " '" + text + "' is not 'none' or a '+'-list of: " + known);
        }
        start = end + 1;
    }
    return Status::Ok();
}

}  // namespace

const char *storage_name(DType storage) {
    for (const auto &[type, name] : kStorage) {
        if (type == storage) return name;
    }
    return "?";
}

bool parse_storage_name(const std::string &name, DType *storage) {
    for (const auto &[type, n] : kStorage) {
        if (name == n) {
            *storage = type;
            return true;
        }
    }
    return false;
}

std::string storage_names() {
    std::string names;
    for (const auto &[type, name] : kStorage)
        names += (names.empty() ? "" : ", ") + std::string(name);
    return names;
}

const char *op_name(Op op) {
    for (const auto &[o, name] : kOps) {
        if (o == op) return name;
    }
    return "?";
}

std::string MaskSpec::to_string() const {
    return kinds_string(*this, kMaskKinds);
}

bool MaskSpec::covers(const MaskSpec &call) const {
    return causal == call.causal && (window || !call.window) && (prefix || !call.prefix) &&
           (segments || !call.segments);
}

std::string ScoreSpec::to_string() const {
    return kinds_string(*this, kScoreKinds);
}

bool ScoreSpec::covers(const ScoreSpec &call) const {
    return (softcap || !call.softcap) && (alibi || !call.alibi) && (bias || !call.bias);
}

std::string format_tuning(const std::map<std::string, int> &tuning) {
    std::string text;
    for (const auto &[name, value] : tuning) {
        text += (text.empty() ? "" : "+") + name + ":" + std::to_string(value);
    }
    return text;
}

Status parse_tuning(const std::string &text, std::map<std::string, int> *tuning) {
    tuning->clear();
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find_first_of("+,", start);
        if (end == std::string::npos) end = text.size();
        const std::string item = text.substr(start, end - start);
        const std::size_t sep = item.find_first_of(":=");
        char *rest = nullptr;
        const char *digits = sep == std::string::npos ? nullptr : item.c_str() + sep + 1;
        const long value = digits == nullptr ? 0 : std::strtol(digits, &rest, 10);
        if (digits == nullptr || sep == 0 || rest == digits || *rest != '\0') {
            return Status::InvalidArgument("tuning '" + text + "': '" + item +
                                           "' is not name:integer (or name=integer)");
        }
        const std::string name = item.substr(0, sep);
        if (tuning->count(name) != 0) {
            return Status::InvalidArgument("tuning '" + text + "' sets " + name + " twice");
        }
        (*tuning)[name] = static_cast<int>(value);
        start = end + 1;
    }
    return Status::Ok();
}

std::string Variant::to_string() const {
    std::string s = std::string("op:") + op_name(op) + ",storage:" + storage_name(storage);
    if (kv_storage != storage) s += std::string(",kv_storage:") + storage_name(kv_storage);
    s += ",mask:" + mask.to_string();
    if (score.any()) s += ",score:" + score.to_string();
    if (!score_mod.empty()) s += ",score_mod:" + score_mod;
    if (!mask_mod.empty()) s += ",mask_mod:" + mask_mod;
    if (probs) s += ",probs:yes";
    const std::pair<const char *, int> counts[] = {{"heads", heads},
                                                   {"kv_heads", kv_heads},
                                                   {"d_k", d_k},
                                                   {"d_v", d_v},
                                                   {"max_queries", max_queries},
                                                   {"min_keys", min_keys},
                                                   {"keys_estimate", keys_estimate}};
    for (const auto &[key, value] : counts) {
        if (value > 0) s += std::string(",") + key + ":" + std::to_string(value);
    }
    s += ",schedule:" + schedule;
    if (!tuned_for.empty()) s += ",tuned_for:" + tuned_for;
    if (!tuning.empty()) s += ",tuning:" + format_tuning(tuning);
    return s;
}

Status Variant::parse(const std::string &spec, Variant *variant) {
    Variant v;
    // tuning holds '+'-joined items and comes last; everything after it is its value.
    std::string items = spec, tuning_text;
    const std::size_t tuning_at = spec.rfind("tuning:");
    if (tuning_at != std::string::npos && (tuning_at == 0 || spec[tuning_at - 1] == ',')) {
        items = spec.substr(0, tuning_at == 0 ? 0 : tuning_at - 1);
        tuning_text = spec.substr(tuning_at + 7);
        Status parsed = parse_tuning(tuning_text, &v.tuning);
        if (!parsed.ok()) return bad(spec, parsed.message());
    }
    std::set<std::string> seen;
    bool has_op = false;
    std::size_t start = 0;
    while (start < items.size()) {
        std::size_t end = items.find(',', start);
        if (end == std::string::npos) end = items.size();
        const std::string item = items.substr(start, end - start);
        start = end + 1;
        const std::size_t colon = item.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
            return bad(spec, "'" + item + "' is not key:value");
        }
        const std::string key = item.substr(0, colon), value = item.substr(colon + 1);
        if (!seen.insert(key).second) return bad(spec, "'" + key + "' is given twice");
        int *count = key == "heads"           ? &v.heads
                     : key == "kv_heads"      ? &v.kv_heads
                     : key == "d_k"           ? &v.d_k
                     : key == "d_v"           ? &v.d_v
                     : key == "max_queries"   ? &v.max_queries
                     : key == "min_keys"      ? &v.min_keys
                     : key == "keys_estimate" ? &v.keys_estimate
                                              : nullptr;
        if (count != nullptr) {
            if (!parse_count(value, count)) {
                return bad(spec, key + " must be a positive integer, got '" + value + "'");
            }
        } else if (key == "op") {
            has_op = false;
            for (const auto &[o, name] : kOps) {
                if (value == name) {
                    v.op = o;
                    has_op = true;
                }
            }
            if (!has_op) return bad(spec, "unknown op '" + value + "'");
        } else if (key == "storage" || key == "kv_storage") {
            DType type;
            if (!parse_storage_name(value, &type)) {
                return bad(spec,
                           "unknown storage type '" + value + "' (known: " + storage_names() + ")");
            }
            (key == "storage" ? v.storage : v.kv_storage) = type;
        } else if (key == "mask") {
            Status parsed = parse_kinds(spec, key, value, kMaskKinds, &v.mask);
            if (!parsed.ok()) return parsed;
        } else if (key == "score") {
            Status parsed = parse_kinds(spec, key, value, kScoreKinds, &v.score);
            if (!parsed.ok()) return parsed;
        } else if (key == "score_mod" || key == "mask_mod") {
            if (!is_identifier(value)) {
                return bad(spec, key +
                                     " must name a C++ function (letters, digits and '_'), got '" +
                                     value + "'");
            }
            (key == "score_mod" ? v.score_mod : v.mask_mod) = value;
        } else if (key == "probs") {
            if (value != "yes" && value != "no") return bad(spec, "probs must be yes or no");
            v.probs = value == "yes";
        } else if (key == "schedule") {
            v.schedule = value;
        } else if (key == "tuned_for") {
            v.tuned_for = value;
        } else {
            return bad(
                spec,
                "unknown key '" + key +
                    "' (known: op, storage, kv_storage, mask, score, score_mod, mask_mod, probs, "
                    "heads, kv_heads, d_k, d_v, "
                    "max_queries, min_keys, keys_estimate, schedule, tuned_for, "
                    "tuning)");
        }
    }
    if (!has_op) return bad(spec, "it names no op");
    if (seen.count("kv_storage") == 0) v.kv_storage = v.storage;
    if (v.kv_storage != v.storage && v.op != Op::kAttention) {
        return bad(spec, "kv_storage applies to op attention only");
    }
    if (v.schedule.empty()) return bad(spec, "it names no schedule");
    if (v.probs && v.op != Op::kAttention) return bad(spec, "probs applies to op attention only");
    const bool composed = v.op == Op::kAttention || v.op == Op::kMha;
    if (!composed && (v.heads || v.kv_heads || v.d_k || v.d_v)) {
        return bad(spec, "heads and head dims apply to ops attention and mha only");
    }
    if (v.op != Op::kAttention && (v.max_queries || v.min_keys || v.keys_estimate)) {
        return bad(spec, "max_queries, min_keys and keys_estimate apply to op attention only");
    }
    if (v.op == Op::kProjection && v.mask != MaskSpec{}) {
        return bad(spec, "a projection has no mask");
    }
    if (v.mask.prefix && !v.mask.causal) {
        return bad(spec, "mask kind prefix widens the causal mask and needs causal");
    }
    const bool modified = v.mask.window || v.mask.prefix || v.mask.segments || v.score.any();
    if (modified && !composed) {
        return bad(spec,
                   "mask kinds other than causal and score modifiers apply to ops attention and "
                   "mha only");
    }
    if (v.user_modified() && v.op != Op::kAttention) {
        return bad(spec, "user modifiers (score_mod, mask_mod) apply to op attention only");
    }
    if (v.heads > 0 && v.kv_heads > 0 && v.heads % v.kv_heads != 0) {
        return bad(spec, "kv_heads " + std::to_string(v.kv_heads) + " does not divide heads " +
                             std::to_string(v.heads));
    }
    *variant = v;
    return Status::Ok();
}

int Variant::specialization() const {
    return (heads > 0) + (kv_heads > 0) + (d_k > 0) + (d_v > 0) + (max_queries > 0) +
           (min_keys > 0);
}

bool Variant::operator==(const Variant &o) const {
    return to_string() == o.to_string();
}

}  // namespace attngen
