#pragma once
// The mini-batch gradient of one rank (thesis Algorithm 1, line 8), computed by T OpenMP
// threads into a sparse update sorted by index:
//   u = scale * sum_{r in batch} f'(w^T x_r, y_r) x_r
// The sum builds up in the weights' scratch lane (see Weights), each touched index marked
// in a bitmap; walking the bitmap words in order then yields the update sorted, with no
// sort, in O(N/64 + nnz) per batch.
// With one thread a row's entries are added right after its dot product, while its
// cache lines are loaded. With T > 1, phase 1 splits the rows over the threads (the dot
// products) and phase 2 splits the index space: thread t owns [lo_t, hi_t) (multiples of
// 64, so bitmap words are never shared) and adds every row's entries in that range.
// Either way each index sums its rows in batch order: the result does not depend on T.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "data/dataset.h"
#include "model/loss.h"
#include "model/weights.h"
#include "sparse/sparse_vector.h"

namespace mpisgd {

struct BatchLoss {
  double loss_sum = 0;  // sum of the rows' losses at the weights they were computed with
  uint64_t rows = 0;
};

class BatchGradient {
 public:
  BatchGradient(uint32_t dim, int threads);

  // Reads w and uses its scratch lane, which it leaves zero again.
  BatchLoss compute(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                    float scale, SparseVector& out);

 private:
  uint32_t range_begin(int t, int nt) const;
  BatchLoss compute_one_thread(const Dataset& data, std::span<const uint64_t> rows, Weights& w, const Loss& loss,
                               float scale);
  // Adds c * x_row for the row's entries in [lo, hi) into the scratch lane.
  void accumulate(Weights& w, float c, std::span<const uint32_t> index, std::span<const float> value, uint32_t lo,
                  uint32_t hi) {
    size_t j = lo == 0 ? 0 : static_cast<size_t>(std::lower_bound(index.begin(), index.end(), lo) - index.begin());
    for (; j < index.size() && index[j] < hi; ++j) {
      uint32_t i = index[j];
      w.scratch(i) += c * value[j];
      touched_[i >> 6] |= uint64_t{1} << (i & 63);
    }
  }
  // Shuffled rows lie anywhere in the CSR and their weights anywhere in w: while row r of
  // rows[.. end) is worked on, fetch the row after next, and the next row's weights.
  // Always inlined: GCC 12 drops calls to an out-of-line function that does nothing but
  // prefetch (ipa-modref finds no side effect).
  [[gnu::always_inline]] static void prefetch_ahead(const Dataset& data, std::span<const uint64_t> rows, size_t r,
                                                    size_t end, const Weights& w) {
    if (r + 2 < end) {
      __builtin_prefetch(data.index.data() + data.row_ptr[rows[r + 2]]);
      __builtin_prefetch(data.value.data() + data.row_ptr[rows[r + 2]]);
    }
    if (r + 1 < end) w.prefetch(data.row_index(rows[r + 1]));
  }
  size_t touched_count(size_t w0, size_t w1) const;
  // Moves the marked sums of bitmap words [w0, w1) to out[at...], zeroing scratch and bitmap.
  void extract(Weights& w, size_t w0, size_t w1, size_t at, SparseVector& out);

  uint32_t dim_;
  int threads_;
  std::vector<uint64_t> touched_;  // bitmap over indices, all zero between calls
  std::vector<float> coef_;        // scale * f'(p_r) per batch row
  std::vector<double> thread_loss_;
  std::vector<size_t> thread_offset_;
};

}  // namespace mpisgd
