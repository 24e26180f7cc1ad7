// The storage type of q, k, v and out (a variant's storage, attngen/tensor.h) inside the
// algorithm: the Halide type of those buffers, and the conversions to and from the float32 in
// which every stage computes and accumulates. lse and the probabilities stay float32.
//
// bfloat16 is held as its 16-bit patterns (uint16): widening is a shift into the high half of a
// float32, which every backend compiles (Halide 14's LLVM crashes on bf16 in PTX), and narrowing
// is integer arithmetic. float16 buffers are Halide's Float(16), converted by integer arithmetic
// on their bits too (storage.cpp says why), on every target alike.
#pragma once

#include <string>

#include "Halide.h"
#include "attngen/tensor.h"

namespace attngen::algorithm {

// The element type of a buffer of this storage type.
Halide::Type storage_type(DType storage);

// A stored value as float32 (exact: both 16-bit types are subsets of float32).
Halide::Expr widen(const Halide::Expr &stored, DType storage);

// A float32 value rounded to the storage type: to nearest, ties to even, as the hardware
// conversions do; NaN stays NaN, and values beyond the type's range become infinities (for
// float16 above 65504; the outputs of attention are weighted means of the values, so no finite
// output can get there).
Halide::Expr narrow(const Halide::Expr &value, DType storage);

// f(args) = widen(stored(args)) with the name given; stored itself for float32, so that a
// float32 kernel's pipeline is the one it always was.
Halide::Func widened(const Halide::Func &stored, DType storage, const std::string &name);

// stored(args) as Halide's BFloat(16) values, from a buffer that holds bfloat16 as its bits
// (uint16): the type whose products Halide compiles to bfloat16 dot-product instructions.
Halide::Func as_bfloat16(const Halide::Func &stored, const std::string &name);

// A float32 Func whose values are bfloat16 values widened (widened(stored, kBFloat16)) as Halide's
// BFloat(16) values again: the upper 16 bits, exact. Reading a staged float32 copy instead of the
// 16-bit input turns a transposition's gathers of 16-bit elements into gathers of 32-bit ones.
Halide::Func bfloat16_of_widened(const Halide::Func &widened, const std::string &name);

}  // namespace attngen::algorithm
