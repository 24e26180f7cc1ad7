// Kernels compiled by another project with attngen_add_kernel() (see the attngen CMake package):
// they are not in this library's registry, so a call names the kernel to run. The runtime
// validates the call as for its own kernels, checks that the kernel's specialization fits the
// call, and turns the kernel's errors into a Status.
//
// attngen_add_kernel() generates, next to each kernel's header, a function returning its
// descriptor: `attngen::KernelDescriptor my_kernel_descriptor();` in my_kernel_descriptor.h.
#pragma once

struct halide_buffer_t;

namespace attngen {

// The C signatures of generated attention and mha kernels (user context first).
using AttentionKernelFn = int (*)(const void *, halide_buffer_t *, halide_buffer_t *,
                                  halide_buffer_t *, halide_buffer_t *, float, halide_buffer_t *,
                                  halide_buffer_t *);
using AttentionProbsKernelFn = int (*)(const void *, halide_buffer_t *, halide_buffer_t *,
                                       halide_buffer_t *, halide_buffer_t *, float,
                                       halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
using MhaKernelFn = int (*)(const void *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                            halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                            halide_buffer_t *, halide_buffer_t *, halide_buffer_t *,
                            halide_buffer_t *, halide_buffer_t *, int, int, float,
                            halide_buffer_t *);

// What a compiled kernel is specialized to (0: any value) and how to call it. Exactly one of the
// functions is set: attention or attention_probs for an attention kernel (with or without the
// probabilities output), mha for a multi-head layer.
struct KernelDescriptor {
    const char *name = "";
    bool causal = false;
    bool probs = false;
    int heads = 0, kv_heads = 0, d_k = 0, d_v = 0;
    int max_queries = 0;
    AttentionKernelFn attention = nullptr;
    AttentionProbsKernelFn attention_probs = nullptr;
    MhaKernelFn mha = nullptr;
};

}  // namespace attngen
