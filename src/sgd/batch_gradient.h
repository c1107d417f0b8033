#pragma once
// The mini-batch gradient of one rank (thesis Algorithm 1, line 8), computed by T OpenMP
// threads into a sparse update sorted by index:
//   u = scale * sum_{r in batch} f'(w^T x_r, y_r) x_r
// Phase 1 splits the rows over the threads (the dot products: random reads of w).
// Phase 2 splits the index space: thread t owns [lo_t, hi_t) (multiples of 64, so bitmap
// words are never shared) and adds every row's entries in that range into a dense
// accumulator, marking them in a bitmap. Phase 3 walks the bitmap words of each range in
// order, so the output comes out sorted with no sort, in O(N/64 + nnz) per batch.
// Each index sums its rows in batch order whatever T is: the result does not depend on T.
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

  BatchLoss compute(const Dataset& data, std::span<const uint64_t> rows, const Weights& w, const Loss& loss,
                    float scale, SparseVector& out);

 private:
  uint32_t range_begin(int t, int nt) const;

  uint32_t dim_;
  int threads_;
  std::vector<float> accumulator_;  // all zero between calls
  std::vector<uint64_t> touched_;   // bitmap over indices, all zero between calls
  std::vector<float> coef_;         // scale * f'(p_r) per batch row
  std::vector<double> thread_loss_;
  std::vector<size_t> thread_offset_;
};

}  // namespace mpisgd
