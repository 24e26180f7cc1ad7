// The kernels with the project's own modifiers (modifiers/): the same modifiers on the fused
// schedule, which skips blocks of keys by them, and on the reference schedule, checked against
// the plain C++ rules; then the errors of a call that misses or misshapes the extra input.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "attngen/attngen.h"
#include "check.h"
#include "modifiers/t5_buckets.h"
#include "reference.h"
#include "t5_dilated_kernel.h"
#include "t5_strided_reference_kernel.h"

namespace {

constexpr int64_t kHeadDim = 32;

// modifiers/dilated_mask.cpp's rules, by their definitions.
bool dilated_allows(int64_t p, int64_t j) {
    const int64_t distance = p - j;
    return distance >= 0 && distance < 3 * 40 && distance % 3 == 0;
}
bool strided_allows(int64_t p, int64_t j) {
    const int64_t distance = p - j;
    return distance >= 0 && (distance < 16 || j % 16 == 15);
}

bool run_user_case(const char *label, const attngen::Kernel &kernel, const Shape &s,
                   bool (*allows)(int64_t p, int64_t j)) {
    Problem problem(s, 4);
    const auto table = random_values(s.heads * kT5Buckets, 7);
    attngen::AttentionArgs args = problem.args();
    args.modifiers.inputs.emplace("t5_table",
                                  attngen::TensorView::f32(table.data(), {s.heads, kT5Buckets}));
    Rules rules;
    rules.allowed = [&](int64_t, int64_t i, int64_t j) { return allows(i + s.nk - s.nq, j); };
    rules.bias = [&](int64_t, int64_t h, int64_t i, int64_t j) {
        return double(table[h * kT5Buckets + t5_bucket(j - (i + s.nk - s.nq))]);
    };
    return run_and_check(label, kernel, args, problem, rules);
}

// A call that the kernel must refuse with this code and a message that names `words`, writing
// nothing; `table` is passed as the extra input `input`.
bool refused(const char *label, const attngen::Kernel &kernel, attngen::StatusCode code,
             const std::string &words, std::optional<attngen::TensorView> table,
             const char *input = "t5_table") {
    std::vector<float> q(2 * 5 * kHeadDim), kv(2 * 9 * kHeadDim), out(2 * 5 * kHeadDim, -1.0f);
    attngen::AttentionArgs args;
    args.q = attngen::TensorView::f32(q.data(), {1, 2, 5, kHeadDim});
    args.k = args.v = attngen::TensorView::f32(kv.data(), {1, 2, 9, kHeadDim});
    args.out = attngen::TensorView::f32(out.data(), {1, 2, 5, kHeadDim});
    if (table) args.modifiers.inputs.emplace(input, *table);
    const attngen::Status status = attngen::attention(args, kernel);
    bool untouched = true;
    for (float x : out) untouched &= x == -1.0f;
    const bool ok =
        status.code() == code && status.message().find(words) != std::string::npos && untouched;
    std::printf("%-44s refused: %s\n", label, status.message().c_str());
    if (!ok) std::fprintf(stderr, "%s: expected an error naming '%s'\n", label, words.c_str());
    return ok;
}

}  // namespace

bool check_user_modifiers() {
    const attngen::Kernel dilated = t5_dilated_kernel();
    const attngen::Kernel strided = t5_strided_reference_kernel();
    bool ok = true;
    // Sizes around the fused schedule's blocks and query groups, up to a sequence where most
    // blocks lie outside each group's window, and a decode step.
    for (const auto &[nq, nk] :
         {std::pair<int64_t, int64_t>{1, 1}, {17, 17}, {40, 300}, {333, 333}, {1, 700}}) {
        const Shape s{1, 2, 2, nq, nk, kHeadDim, kHeadDim};
        const std::string size = " Nq " + std::to_string(nq) + " Nk " + std::to_string(nk);
        ok &= run_user_case(("t5 bias + dilated mask," + size).c_str(), dilated, s, dilated_allows);
        ok &= run_user_case(("t5 bias + strided mask, reference," + size).c_str(), strided, s,
                            strided_allows);
    }
    const std::vector<float> table(4 * kT5Buckets, 0.0f);
    const attngen::StatusCode invalid = attngen::StatusCode::kInvalidArgument;
    ok &= refused("t5 kernel without its table", dilated, invalid, "t5_table", std::nullopt);
    ok &= refused("t5 kernel with a table of rank 1", dilated, invalid, "t5_table",
                  attngen::TensorView::f32(table.data(), {2 * kT5Buckets}));
    // The runtime knows the table's type and rank, not the extents that the modifier reads:
    // the kernel's own bounds check refuses a table of one head for a call of two.
    ok &= refused("t5 kernel with a table of 1 head for 2", dilated,
                  attngen::StatusCode::kKernelError, "t5_table",
                  attngen::TensorView::f32(table.data(), {1, kT5Buckets}));
    // An input named after one of the kernel's own arguments, of its type and rank, must not take
    // that argument's place.
    const std::vector<float> other_q(2 * 5 * kHeadDim, 1.0f);
    ok &= refused("t5 kernel with an input named q", dilated, invalid,
                  "input 'q' takes the name of one of kernel",
                  attngen::TensorView::f32(other_q.data(), {1, 2, 5, kHeadDim}), "q");
    return ok;
}
