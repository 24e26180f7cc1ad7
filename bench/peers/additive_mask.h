// The modifiers of a shape (shapes.h) as the dense additive mask that the composed peers add to
// their scores: 0 where a query may see a key and -inf where the causal mask, the window or the
// documents hide it, plus ALiBi's -m[h] |p(i) - j| and the bias tensor where it sees it. The
// softcap is not in it: it applies to the scores before the mask is added (docs/modifiers.md),
// so each peer runs it as a pass of its own.
//
// A whole mask of (w) or (p), [Nq, Nk] at N = 16384, would take 1 GiB (8 GiB per head with
// ALiBi), and so would their score matrices, so the peers compute blocks of query rows
// (chunk_rows) and build each block's mask as they reach it, as a framework user without a
// fused kernel would; where the whole problem is one block (N = 2048), it is built once, when
// the computation is prepared, and reused by every call.
#pragma once

#include <cstdint>

#include "aligned_floats.h"
#include "problem_data.h"
#include "shapes.h"

namespace attngen::bench {

// Query rows per block: Nq halved until the scores of one block for all (batch, head) pairs,
// [B, H, rows, Nk] float32, fit in 256 MiB (all of Nq for the 2048-query shapes, 512 rows at
// N = 16384). A power-of-two fraction of Nq, so every block has the same rows.
int64_t chunk_rows(const BenchShape &shape);

class AdditiveMask {
  public:
    AdditiveMask(const BenchShape &shape, const ProblemData &data);

    // The heads of the mask: H with ALiBi or a bias that varies by head, else 1 (broadcast).
    int64_t heads() const { return heads_; }
    // Floats of one block of `rows` rows: [B, heads(), rows, Nk].
    int64_t size(int64_t rows) const;
    // Writes the mask of query rows [first_row, first_row + rows) as [B, heads(), rows, Nk],
    // on `threads` OpenMP threads.
    void fill(int64_t first_row, int64_t rows, float *mask, int threads) const;

  private:
    const BenchShape &shape_;
    const ProblemData &data_;
    int64_t heads_;
};

// The mask of one computation by blocks of chunk_rows() query rows: built once, when the
// computation is prepared, where the problem is a single block, and otherwise block by block
// on every call into one block's buffer.
class MaskBlocks {
  public:
    MaskBlocks(const BenchShape &shape, const ProblemData &data, int threads);

    int64_t rows() const { return rows_; }
    int64_t count() const { return count_; }
    int64_t heads() const { return mask_.heads(); }
    // The mask of rows [index * rows(), (index + 1) * rows()), [B, heads(), rows(), Nk]; valid
    // until the next call.
    float *block(int64_t index);

  private:
    AdditiveMask mask_;
    int64_t rows_, count_;
    int threads_;
    Floats buffer_;
};

}  // namespace attngen::bench
