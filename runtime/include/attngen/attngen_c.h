/* The attngen runtime from C, and from any language that binds C functions (Python's ctypes,
 * Rust, Go, Julia, ...): attention and the multi-head layer with the same validation, dispatch
 * and semantics as the C++ API (attngen/attention.h, attngen/mha.h), which it calls.
 *
 * Every call returns an attngen_status; on failure nothing was written and
 * attngen_last_error() gives the message, which names the tensor and the problem. Tensors are
 * views of caller-owned memory: shape and strides in elements, outermost first, the innermost
 * stride 1. attngen_tensor_contiguous() fills in C-order strides. Link attngen::runtime (a C++
 * library: link with the C++ compiler, or add the C++ standard library).
 */
#ifndef ATTNGEN_ATTNGEN_C_H
#define ATTNGEN_ATTNGEN_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values of attngen::StatusCode. */
typedef enum attngen_status {
    ATTNGEN_OK = 0,
    ATTNGEN_INVALID_ARGUMENT = 1, /* A shape, stride, dtype or value the call cannot accept. */
    ATTNGEN_NOT_FOUND = 2,        /* No compiled kernel matches (schedule, variant). */
    ATTNGEN_KERNEL_ERROR = 3,     /* A generated kernel reported an error while running. */
    ATTNGEN_OUT_OF_MEMORY = 4,    /* An allocation failed. */
    ATTNGEN_UNAVAILABLE = 5       /* A device or driver that the call needs is missing. */
} attngen_status;

/* The values of attngen::DType. */
typedef enum attngen_dtype {
    ATTNGEN_FLOAT32 = 0,
    ATTNGEN_INT32 = 1,
    ATTNGEN_INT64 = 2,
    ATTNGEN_BFLOAT16 = 3, /* Storage of q, k, v and out: bit patterns in uint16_t. */
    ATTNGEN_FLOAT16 = 4   /* IEEE binary16 (_Float16 where the compiler has it). */
} attngen_dtype;

#define ATTNGEN_MAX_RANK 4

typedef struct attngen_tensor {
    void *data;
    attngen_dtype dtype;
    int rank; /* 1 .. ATTNGEN_MAX_RANK */
    int64_t shape[ATTNGEN_MAX_RANK];
    int64_t strides[ATTNGEN_MAX_RANK]; /* In elements. */
} attngen_tensor;

/* A C-order (row-major, contiguous) view of rank dimensions. A rank outside
 * 1 .. ATTNGEN_MAX_RANK gives a view that every call refuses. */
attngen_tensor attngen_tensor_contiguous(void *data, attngen_dtype dtype, int rank,
                                         const int64_t *shape);

/* The message of the calling thread's last failed call; "" when its last call succeeded. Valid
 * until the thread's next attngen call. */
const char *attngen_last_error(void);

/* attngen::Modifiers (attngen/modifiers.h states each one exactly). Zero-initialize, then set
 * the modifiers the call uses; NULL tensors and zero has_ flags leave a modifier out. */
typedef struct attngen_modifiers {
    int has_softcap;                       /* Nonzero: s = softcap tanh(s / softcap). */
    float softcap;                         /* Finite, > 0. */
    const attngen_tensor *alibi_slopes;    /* float32 [H]. */
    const attngen_tensor *bias;            /* float32 rank 4, broadcastable to [B, H, Nq, Nk]. */
    int has_window_left, has_window_right; /* Nonzero: that side of the window is bounded. */
    int64_t window_left, window_right;     /* >= 0. */
    const attngen_tensor *prefix_lengths;  /* int32/int64 [B]; needs causal. */
    const attngen_tensor *q_segments;      /* int32/int64 [B, Nq], with kv_segments. */
    const attngen_tensor *kv_segments;     /* int32/int64 [B, Nk], with q_segments. */
} attngen_modifiers;

/* attngen::attention: q [B, H, Nq, d_k], k [B, H_kv, Nk, d_k], v [B, H_kv, Nk, d_v] ->
 * out [B, H, Nq, d_v]. Zero-initialize, then set the tensors and options. */
typedef struct attngen_attention_args {
    attngen_tensor q, k, v;            /* float32 inputs. */
    attngen_tensor out;                /* float32 output. */
    const attngen_tensor *key_lengths; /* int32 or int64 [B]; NULL: every key. */
    const attngen_tensor *lse;         /* float32 output [B, H, Nq]; NULL: not computed. */
    const attngen_tensor *probs;       /* float32 output [B, H, Nq, Nk]; NULL: not computed. */
    int causal;                        /* Nonzero: bottom-right aligned causal mask. */
    int has_scale;                     /* Zero: scale = 1 / sqrt(d_k). */
    float scale;
    const char *schedule;               /* A schedule name; NULL or "": the fastest one compiled. */
    const attngen_modifiers *modifiers; /* NULL: none. */
} attngen_attention_args;

attngen_status attngen_attention(const attngen_attention_args *args);

/* A multi-head attention layer that owns a copy of its weights (attngen::MultiHeadAttention). */
typedef struct attngen_mha attngen_mha;

typedef struct attngen_mha_weights {
    /* Input dim first; all float32, or all ATTNGEN_BFLOAT16 or ATTNGEN_FLOAT16 (the layer's
     * storage type, which x, memory and y then have). */
    attngen_tensor w_q, w_k, w_v, w_o;
    const attngen_tensor *b_q, *b_k, *b_v, *b_o; /* float32 or the weights' type; NULL: zero. */
} attngen_mha_weights;

typedef struct attngen_mha_config {
    int64_t heads;
    int64_t kv_heads; /* 0: heads (no grouping). */
    int causal;
    int has_scale; /* Zero: scale = 1 / sqrt(d_k). */
    float scale;
    const char *schedule; /* NULL or "": the fastest one compiled. */
} attngen_mha_config;

/* Validates and copies the weights; on success *layer is a new layer for attngen_mha_destroy. */
attngen_status attngen_mha_create(const attngen_mha_weights *weights,
                                  const attngen_mha_config *config, attngen_mha **layer);

/* x [B, Nq, d_model] -> y [B, Nq, d_out]. memory [B, Nk, d_mem] for cross-attention, or NULL
 * for self-attention; key_lengths int32 or int64 [B], or NULL. Safe from many threads at once. */
attngen_status attngen_mha_forward(const attngen_mha *layer, const attngen_tensor *x,
                                   const attngen_tensor *memory, const attngen_tensor *y,
                                   const attngen_tensor *key_lengths);
/* The same with score and mask modifiers (NULL: none) of the attention inside the layer: the
 * rows of x are its queries, those of memory its keys, the layer's query heads its heads. */
attngen_status attngen_mha_forward_modified(const attngen_mha *layer, const attngen_tensor *x,
                                            const attngen_tensor *memory, const attngen_tensor *y,
                                            const attngen_tensor *key_lengths,
                                            const attngen_modifiers *modifiers);

/* Frees the layer; NULL is ignored. */
void attngen_mha_destroy(attngen_mha *layer);

/* Threads the kernels may use; 0 restores the default. Returns the previous value. */
int attngen_set_num_threads(int threads);

/* Microseconds an idle worker spins before it sleeps; 0 sleeps at once, negative restores the
 * default (1000). Returns the previous value. */
int attngen_set_spin_wait_microseconds(int microseconds);

#ifdef __cplusplus
}
#endif

#endif /* ATTNGEN_ATTNGEN_C_H */
