// Runs the kernels that CMakeLists.txt generates through the attngen runtime, which validates
// each call exactly as for its own kernels, and checks the results against reference.cpp.
#include <cstdio>
#include <string>
#include <vector>

#include "attngen/attngen.h"
#include "check.h"
#include "cross_dk64_dv32_kernel.h"
#include "encoder_d256_tuned_kernel.h"
#include "gqa_causal_d96_kernel.h"
#include "reference.h"

namespace {

// One call of a generated kernel through attngen::attention, checked against the reference.
bool run_case(const char *label, const attngen::Kernel &kernel, const Shape &s, bool causal,
              const std::vector<int32_t> &key_lengths) {
    Problem problem(s, 1);
    attngen::AttentionArgs args = problem.args();
    if (!key_lengths.empty())
        args.key_lengths = attngen::TensorView::i32(key_lengths.data(), {s.batch});
    args.causal = causal;
    return run_and_check(label, kernel, args, problem, causal_rules(s, causal, key_lengths));
}

}  // namespace

int main() {
    bool ok = true;
    const attngen::Kernel gqa = gqa_causal_d96_kernel();
    const attngen::Kernel cross = cross_dk64_dv32_kernel();
    const attngen::Kernel encoder = encoder_d256_tuned_kernel();

    // Causal grouped-query self-attention, then a decode-like call with fewer queries than keys
    // (the mask is aligned bottom-right) and padded keys.
    ok &= run_case("gqa causal d96, Nq = Nk = 37", gqa, {2, 8, 2, 37, 37, 96, 96}, true, {});
    ok &= run_case("gqa causal d96, Nq 3 < Nk 40, key lengths", gqa, {2, 8, 2, 3, 40, 96, 96}, true,
                   {40, 25});
    // Cross-attention: another sequence length for the memory, d_v != d_k.
    ok &=
        run_case("cross d_k 64 d_v 32, Nq 11, Nk 29", cross, {1, 4, 4, 11, 29, 64, 32}, false, {});
    // The tuned d256 kernel, with query and key counts that its register tiles and key chunks
    // do not divide, so that every loop has a remainder.
    ok &= run_case("encoder d256 tuned, Nq 75, Nk 150, key lengths", encoder,
                   {2, 2, 2, 75, 150, 256, 256}, false, {150, 101});

    // The kernels with the project's own modifiers.
    ok &= check_user_modifiers();

    // The runtime checks that a call fits the kernel's specialization before it runs: this
    // kernel is causal with head dim 96, so a head dim of 64 is refused with the reason.
    std::vector<float> q(8 * 4 * 64), kv(2 * 4 * 64), out(8 * 4 * 64);
    attngen::AttentionArgs wrong;
    wrong.q = attngen::TensorView::f32(q.data(), {1, 8, 4, 64});
    wrong.k = wrong.v = attngen::TensorView::f32(kv.data(), {1, 2, 4, 64});
    wrong.out = attngen::TensorView::f32(out.data(), {1, 8, 4, 64});
    wrong.causal = true;
    attngen::Status refused = attngen::attention(wrong, gqa);
    if (refused.code() != attngen::StatusCode::kInvalidArgument) {
        std::fprintf(stderr, "a head dim of 64 for a d96 kernel gave: %s\n",
                     refused.to_string().c_str());
        ok = false;
    } else {
        std::printf("%-44s refused: %s\n", "gqa causal d96 called with d 64",
                    refused.message().c_str());
    }

    std::printf(ok ? "downstream: all checks passed\n" : "downstream: FAILED\n");
    return ok ? 0 : 1;
}
