#include "mha.h"

#include "dims.h"
#include "storage.h"

namespace attngen::algorithm {

using Halide::Expr;
using Halide::Func;

namespace {

// Splits the columns of a projection y(o, n, b) into heads: heads(d, n, h, b) = y(h * width + d),
// with rows past last_row (where defined) read at last_row.
Func split_heads(const Func &y, const Expr &width, const std::string &name,
                 const Expr &last_row = Expr()) {
    const Dims &x = dims();
    Func heads(name);
    const Expr row = last_row.defined() ? Halide::min(x.n, last_row) : Expr(x.n);
    heads(x.d, x.n, x.h, x.b) = y(x.h * width + x.d, row, x.b);
    return heads;
}

}  // namespace

MhaFuncs define_mha(const Func &x, const Func &memory, const MhaWeights &w, const KeyMask &mask,
                    const MhaShape &shape, const Expr &scale, const ScoreModifier &modifier,
                    const OnlineBlocking *online, bool clamp_query_rows) {
    const Dims &v = dims();
    const AttentionShape &a = shape.attention;
    MhaFuncs f;
    f.q_proj = define_projection(x, w.w_q, w.b_q, shape.d_model, "q_");
    f.k_proj = define_projection(memory, w.w_k, w.b_k, shape.d_mem, "k_");
    f.v_proj = define_projection(memory, w.w_v, w.b_v, shape.d_mem, "v_");
    f.q_heads = split_heads(f.q_proj.y, a.d_k, "q_heads", clamp_query_rows ? a.nq - 1 : Expr());
    f.k_heads = split_heads(f.k_proj.y, a.d_k, "k_heads");
    f.v_heads = split_heads(f.v_proj.y, a.d_v, "v_heads");
    Func attention_out;
    if (online != nullptr) {
        f.online = true;
        f.online_attention = define_online_attention(f.q_heads, f.k_heads, f.v_heads, mask, a,
                                                     scale, *online, modifier);
        attention_out = f.online_attention.out;
    } else {
        f.attention = define_attention(f.q_heads, f.k_heads, f.v_heads, mask, a, scale, modifier);
        attention_out = f.attention.out;
    }

    f.concat = Func("concat");
    f.concat(v.o, v.n, v.b) = attention_out(v.o % a.d_v, v.n, v.o / a.d_v, v.b);
    // The layer's output is named y, as the generator's output (the runtime passes it by name);
    // with 16-bit storage, y is the projection rounded to it.
    const bool narrowed = shape.storage != DType::kFloat32;
    f.out_proj =
        define_projection(f.concat, w.w_o, w.b_o, a.heads * a.d_v, "o_", narrowed ? "o_y" : "y");
    f.y = f.out_proj.y;
    if (narrowed) {
        f.y = Func("y");
        f.y(v.o, v.n, v.b) = narrow(f.out_proj.y(v.o, v.n, v.b), shape.storage);
    }
    return f;
}

}  // namespace attngen::algorithm
