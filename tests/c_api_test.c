/* The C API (attngen/attngen_c.h) from a C program: attention and the multi-head layer against a
 * double-precision reference written here, and the errors a caller sees for bad calls. Compiled
 * as C, so that the header is checked to be valid C. Exits with 0 when every check passes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attngen/attngen_c.h"

static int failures = 0;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
            failures++;                                                              \
        }                                                                            \
    } while (0)

/* Uniform values in [-1, 1) from a fixed-seed linear congruential generator. */
static void fill_random(float *x, int64_t n, uint32_t seed) {
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) / 8388608.0 - 1.0);
    }
}

/* float32 results may differ from the double reference by rounding only. */
static int close_to(float got, double want) {
    return fabs(got - want) <= 1e-5 + 1e-5 * fabs(want);
}

/* Attention for one (query row, head): q [d_k] against k and v rows of stride d_k and d_v,
 * keys 0 .. visible - 1; writes out [d_v] and returns the log-sum-exp. */
static double attend_row(const float *q, const float *k, const float *v, int64_t visible,
                         int64_t d_k, int64_t d_v, double scale, double *out) {
    double max_score = -INFINITY, sum = 0;
    double *scores = malloc(sizeof(double) * (size_t)visible);
    for (int64_t j = 0; j < visible; j++) {
        double dot = 0;
        for (int64_t d = 0; d < d_k; d++) dot += (double)q[d] * k[j * d_k + d];
        scores[j] = dot * scale;
        if (scores[j] > max_score) max_score = scores[j];
    }
    for (int64_t d = 0; d < d_v; d++) out[d] = 0;
    for (int64_t j = 0; j < visible; j++) sum += exp(scores[j] - max_score);
    for (int64_t j = 0; j < visible; j++) {
        const double p = exp(scores[j] - max_score) / sum;
        for (int64_t d = 0; d < d_v; d++) out[d] += p * v[j * d_v + d];
    }
    free(scores);
    return max_score + log(sum);
}

/* Causal grouped-query attention (4 query heads, 2 key/value heads, Nq 5 < Nk 9) with its LSE. */
static void test_attention(void) {
    enum { B = 1, H = 4, HKV = 2, NQ = 5, NK = 9, DK = 8, DV = 6 };
    static float q[B * H * NQ * DK], k[B * HKV * NK * DK], v[B * HKV * NK * DV];
    static float out[B * H * NQ * DV], lse[B * H * NQ];
    fill_random(q, B * H * NQ * DK, 1);
    fill_random(k, B * HKV * NK * DK, 2);
    fill_random(v, B * HKV * NK * DV, 3);
    const int64_t q_shape[] = {B, H, NQ, DK}, k_shape[] = {B, HKV, NK, DK},
                  v_shape[] = {B, HKV, NK, DV}, out_shape[] = {B, H, NQ, DV},
                  lse_shape[] = {B, H, NQ};

    attngen_attention_args args;
    memset(&args, 0, sizeof args);
    args.q = attngen_tensor_contiguous(q, ATTNGEN_FLOAT32, 4, q_shape);
    args.k = attngen_tensor_contiguous(k, ATTNGEN_FLOAT32, 4, k_shape);
    args.v = attngen_tensor_contiguous(v, ATTNGEN_FLOAT32, 4, v_shape);
    args.out = attngen_tensor_contiguous(out, ATTNGEN_FLOAT32, 4, out_shape);
    attngen_tensor lse_view = attngen_tensor_contiguous(lse, ATTNGEN_FLOAT32, 3, lse_shape);
    args.lse = &lse_view;
    args.causal = 1;
    attngen_status status = attngen_attention(&args);
    CHECK(status == ATTNGEN_OK, "status %d: %s", (int)status, attngen_last_error());
    CHECK(strcmp(attngen_last_error(), "") == 0, "message after success: %s", attngen_last_error());

    for (int64_t h = 0; h < H; h++) {
        const int64_t kv = h / (H / HKV);
        for (int64_t i = 0; i < NQ; i++) {
            double want[DV];
            /* Bottom-right aligned: query i sees keys 0 .. i + NK - NQ. */
            const double want_lse =
                attend_row(&q[(h * NQ + i) * DK], &k[kv * NK * DK], &v[kv * NK * DV],
                           i + NK - NQ + 1, DK, DV, 1.0 / sqrt((double)DK), want);
            for (int64_t d = 0; d < DV; d++) {
                const float got = out[(h * NQ + i) * DV + d];
                CHECK(close_to(got, want[d]), "out[h %lld, i %lld, d %lld] = %.7g, reference %.7g",
                      (long long)h, (long long)i, (long long)d, got, want[d]);
            }
            CHECK(close_to(lse[h * NQ + i], want_lse), "lse[h %lld, i %lld] = %.7g, reference %.7g",
                  (long long)h, (long long)i, lse[h * NQ + i], want_lse);
        }
    }

    /* A v whose head dim differs from out's is refused, and out is left as it was. */
    const float sentinel = 12345.0f;
    for (int64_t i = 0; i < B * H * NQ * DV; i++) out[i] = sentinel;
    const int64_t wrong_shape[] = {B, H, NQ, DV - 1};
    args.out = attngen_tensor_contiguous(out, ATTNGEN_FLOAT32, 4, wrong_shape);
    status = attngen_attention(&args);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT, "status %d", (int)status);
    CHECK(strstr(attngen_last_error(), "out") != NULL, "message: %s", attngen_last_error());
    CHECK(out[0] == sentinel, "a refused call wrote out");

    /* Values that C cannot keep out of the structs: a dtype outside the enum, a rank above 4. */
    args.out = attngen_tensor_contiguous(out, ATTNGEN_FLOAT32, 4, out_shape);
    args.k.dtype = (attngen_dtype)7;
    status = attngen_attention(&args);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT, "status %d", (int)status);
    CHECK(strstr(attngen_last_error(), "k has dtype 7") != NULL, "message: %s",
          attngen_last_error());
    args.k.dtype = ATTNGEN_FLOAT32;
    args.q.rank = 5;
    status = attngen_attention(&args);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT, "status %d", (int)status);
    CHECK(strstr(attngen_last_error(), "q has rank 5") != NULL, "message: %s",
          attngen_last_error());

    status = attngen_attention(NULL);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT, "status %d", (int)status);
    CHECK(strstr(attngen_last_error(), "NULL") != NULL, "message: %s", attngen_last_error());
}

/* y = concat_h(attention(x W_Q, x W_K, x W_V)_h) W_O for one batch element, by definition. */
static void reference_mha(const float *x, const float *w_q, const float *w_k, const float *w_v,
                          const float *w_o, int64_t n, int64_t d_model, int64_t heads, double *y) {
    const int64_t d = d_model / heads;
    float *qkv[3];
    const float *w[3] = {w_q, w_k, w_v};
    for (int m = 0; m < 3; m++) {
        qkv[m] = malloc(sizeof(float) * (size_t)(n * d_model));
        for (int64_t i = 0; i < n; i++) {
            for (int64_t c = 0; c < d_model; c++) {
                double acc = 0;
                for (int64_t r = 0; r < d_model; r++)
                    acc += (double)x[i * d_model + r] * w[m][r * d_model + c];
                qkv[m][i * d_model + c] = (float)acc;
            }
        }
    }
    /* Each head's rows are strided by d_model: gather them into contiguous rows first. */
    double *o = calloc((size_t)(n * d_model), sizeof(double));
    float *hq = malloc(sizeof(float) * (size_t)(n * d)),
          *hk = malloc(sizeof(float) * (size_t)(n * d)),
          *hv = malloc(sizeof(float) * (size_t)(n * d));
    for (int64_t h = 0; h < heads; h++) {
        for (int64_t i = 0; i < n; i++) {
            for (int64_t c = 0; c < d; c++) {
                hq[i * d + c] = qkv[0][i * d_model + h * d + c];
                hk[i * d + c] = qkv[1][i * d_model + h * d + c];
                hv[i * d + c] = qkv[2][i * d_model + h * d + c];
            }
        }
        for (int64_t i = 0; i < n; i++) {
            attend_row(&hq[i * d], hk, hv, n, d, d, 1.0 / sqrt((double)d), &o[i * d_model + h * d]);
        }
    }
    for (int64_t i = 0; i < n; i++) {
        for (int64_t c = 0; c < d_model; c++) {
            double acc = 0;
            for (int64_t r = 0; r < d_model; r++) acc += o[i * d_model + r] * w_o[r * d_model + c];
            y[i * d_model + c] = acc;
        }
    }
    for (int m = 0; m < 3; m++) free(qkv[m]);
    free(o);
    free(hq);
    free(hk);
    free(hv);
}

/* A self-attention layer with two heads, then a config the weights do not fit. */
static void test_mha(void) {
    enum { N = 6, D_MODEL = 8, HEADS = 2 };
    static float w_q[D_MODEL * D_MODEL], w_k[D_MODEL * D_MODEL], w_v[D_MODEL * D_MODEL],
        w_o[D_MODEL * D_MODEL], x[N * D_MODEL], y[N * D_MODEL];
    fill_random(w_q, D_MODEL * D_MODEL, 11);
    fill_random(w_k, D_MODEL * D_MODEL, 12);
    fill_random(w_v, D_MODEL * D_MODEL, 13);
    fill_random(w_o, D_MODEL * D_MODEL, 14);
    fill_random(x, N * D_MODEL, 15);
    const int64_t w_shape[] = {D_MODEL, D_MODEL}, x_shape[] = {1, N, D_MODEL};

    attngen_mha_weights weights;
    memset(&weights, 0, sizeof weights);
    weights.w_q = attngen_tensor_contiguous(w_q, ATTNGEN_FLOAT32, 2, w_shape);
    weights.w_k = attngen_tensor_contiguous(w_k, ATTNGEN_FLOAT32, 2, w_shape);
    weights.w_v = attngen_tensor_contiguous(w_v, ATTNGEN_FLOAT32, 2, w_shape);
    weights.w_o = attngen_tensor_contiguous(w_o, ATTNGEN_FLOAT32, 2, w_shape);
    attngen_mha_config config;
    memset(&config, 0, sizeof config);
    config.heads = HEADS;

    attngen_mha *layer = NULL;
    attngen_status status = attngen_mha_create(&weights, &config, &layer);
    CHECK(status == ATTNGEN_OK && layer != NULL, "create: status %d: %s", (int)status,
          attngen_last_error());
    if (layer == NULL) return;
    const attngen_tensor x_view = attngen_tensor_contiguous(x, ATTNGEN_FLOAT32, 3, x_shape);
    const attngen_tensor y_view = attngen_tensor_contiguous(y, ATTNGEN_FLOAT32, 3, x_shape);
    status = attngen_mha_forward(layer, &x_view, NULL, &y_view, NULL);
    CHECK(status == ATTNGEN_OK, "forward: status %d: %s", (int)status, attngen_last_error());
    double want[N * D_MODEL];
    reference_mha(x, w_q, w_k, w_v, w_o, N, D_MODEL, HEADS, want);
    for (int64_t i = 0; i < N * D_MODEL; i++) {
        CHECK(close_to(y[i], want[i]), "y[%lld] = %.7g, reference %.7g", (long long)i, y[i],
              want[i]);
    }
    /* Cross-attention with the layer's own input as the memory is the same computation. */
    static float y_cross[N * D_MODEL];
    const attngen_tensor y_cross_view =
        attngen_tensor_contiguous(y_cross, ATTNGEN_FLOAT32, 3, x_shape);
    status = attngen_mha_forward(layer, &x_view, &x_view, &y_cross_view, NULL);
    CHECK(status == ATTNGEN_OK, "forward with memory: status %d: %s", (int)status,
          attngen_last_error());
    CHECK(memcmp(y, y_cross, sizeof y) == 0,
          "cross-attention on x itself differs from self-attention");
    /* Modifiers of the inner attention: a window wider than the sequence changes nothing (it
     * runs a kernel with modifiers), and slopes for 3 heads of a 2-head layer are refused. */
    attngen_modifiers modifiers;
    memset(&modifiers, 0, sizeof modifiers);
    modifiers.has_window_left = 1;
    modifiers.window_left = N;
    status = attngen_mha_forward_modified(layer, &x_view, NULL, &y_cross_view, NULL, &modifiers);
    CHECK(status == ATTNGEN_OK, "forward with a window: status %d: %s", (int)status,
          attngen_last_error());
    for (int64_t i = 0; i < N * D_MODEL; i++) {
        CHECK(close_to(y_cross[i], want[i]), "with a window: y[%lld] = %.7g, reference %.7g",
              (long long)i, y_cross[i], want[i]);
    }
    static float slopes[3];
    const int64_t slopes_shape[] = {3};
    const attngen_tensor slopes_view =
        attngen_tensor_contiguous(slopes, ATTNGEN_FLOAT32, 1, slopes_shape);
    modifiers.alibi_slopes = &slopes_view;
    status = attngen_mha_forward_modified(layer, &x_view, NULL, &y_cross_view, NULL, &modifiers);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT &&
              strstr(attngen_last_error(), "the head count H of the layer") != NULL,
          "slopes of the wrong length: status %d: %s", (int)status, attngen_last_error());
    attngen_mha_destroy(layer);
    attngen_mha_destroy(NULL);

    /* Three heads cannot split a width of 8. */
    config.heads = 3;
    layer = NULL;
    status = attngen_mha_create(&weights, &config, &layer);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT, "status %d", (int)status);
    CHECK(layer == NULL, "a refused create returned a layer");
    CHECK(strlen(attngen_last_error()) > 0, "no message for a refused create");
}

/* The pool's settings: each setter returns the previous value; negative values restore the
 * defaults. */
static void test_thread_settings(void) {
    const int default_threads = attngen_set_num_threads(3);
    CHECK(default_threads >= 1, "default thread count %d", default_threads);
    CHECK(attngen_set_num_threads(0) == 3, "the count set before was not returned");
    CHECK(attngen_set_spin_wait_microseconds(0) == 1000, "the default spin time is not 1000 us");
    CHECK(attngen_set_spin_wait_microseconds(-1) == 0, "the spin time set before was not returned");
    CHECK(attngen_set_spin_wait_microseconds(-1) == 1000,
          "a negative time did not restore 1000 us");
}

/* bfloat16 storage from C: the 16-bit patterns of the inputs (the high halves of floats, here
 * truncated) in uint16_t arrays, out in the same type, against the reference on the values they
 * hold; out may be off by its own rounding, half an ulp of bfloat16 (2^-8 relative). */
static float widen_bf16(uint16_t bits) {
    const uint32_t word = (uint32_t)bits << 16;
    float x;
    memcpy(&x, &word, sizeof x);
    return x;
}

static void test_bfloat16_attention(void) {
    enum { B = 1, H = 2, NQ = 7, NK = 11, D = 16 };
    static float qf[B * H * NQ * D], kf[B * H * NK * D], vf[B * H * NK * D];
    static uint16_t q[B * H * NQ * D], k[B * H * NK * D], v[B * H * NK * D], out[B * H * NQ * D];
    fill_random(qf, B * H * NQ * D, 4);
    fill_random(kf, B * H * NK * D, 5);
    fill_random(vf, B * H * NK * D, 6);
    float *const floats[3] = {qf, kf, vf};
    uint16_t *const halves[3] = {q, k, v};
    const int64_t counts[3] = {B * H * NQ * D, B * H * NK * D, B * H * NK * D};
    for (int t = 0; t < 3; t++) {
        for (int64_t i = 0; i < counts[t]; i++) {
            uint32_t word;
            memcpy(&word, &floats[t][i], sizeof word);
            halves[t][i] = (uint16_t)(word >> 16);
            floats[t][i] = widen_bf16(halves[t][i]);
        }
    }
    const int64_t q_shape[] = {B, H, NQ, D}, kv_shape[] = {B, H, NK, D};
    attngen_attention_args args;
    memset(&args, 0, sizeof args);
    args.q = attngen_tensor_contiguous(q, ATTNGEN_BFLOAT16, 4, q_shape);
    args.k = attngen_tensor_contiguous(k, ATTNGEN_BFLOAT16, 4, kv_shape);
    args.v = attngen_tensor_contiguous(v, ATTNGEN_BFLOAT16, 4, kv_shape);
    args.out = attngen_tensor_contiguous(out, ATTNGEN_BFLOAT16, 4, q_shape);
    attngen_status status = attngen_attention(&args);
    CHECK(status == ATTNGEN_OK, "status %d: %s", (int)status, attngen_last_error());
    for (int64_t h = 0; h < H; h++) {
        for (int64_t i = 0; i < NQ; i++) {
            double want[D];
            attend_row(&qf[(h * NQ + i) * D], &kf[h * NK * D], &vf[h * NK * D], NK, D, D,
                       1.0 / sqrt((double)D), want);
            for (int64_t d = 0; d < D; d++) {
                const float got = widen_bf16(out[(h * NQ + i) * D + d]);
                CHECK(fabs(got - want[d]) <= 1.0 / 256 * fabs(want[d]) + 1e-6,
                      "out[h %lld, i %lld, d %lld] = %.7g, reference %.7g", (long long)h,
                      (long long)i, (long long)d, got, want[d]);
            }
        }
    }
    /* Values of another type than the keys are refused. */
    args.v = attngen_tensor_contiguous(vf, ATTNGEN_FLOAT32, 4, kv_shape);
    status = attngen_attention(&args);
    CHECK(status == ATTNGEN_INVALID_ARGUMENT, "status %d", (int)status);
    CHECK(strstr(attngen_last_error(), "v has dtype float32 but k has bfloat16") != NULL,
          "message: %s", attngen_last_error());
}

int main(void) {
    test_thread_settings();
    test_attention();
    test_bfloat16_attention();
    test_mha();
    if (failures != 0) {
        fprintf(stderr, "c_api_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("c_api_test: every check passed\n");
    return 0;
}
