#pragma once
// Random rows, weights and batches for the gradient tests (the CPU path's in tests/unit,
// the GPU path's in tests/device), built to reach the kernels' edges.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "data/dataset.h"
#include "model/weights.h"

namespace mpisgd {

inline std::vector<uint32_t> random_subset(std::mt19937_64& rng, uint32_t dim, uint32_t k) {
  std::vector<uint32_t> all(dim);
  for (uint32_t i = 0; i < dim; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<uint32_t> s(all.begin(), all.begin() + std::min(k, dim));
  std::sort(s.begin(), s.end());
  return s;
}

inline float nonzero_uniform(std::mt19937_64& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  float x = u(rng);
  return x == 0 ? 0.5f : x;
}

// Random CSR rows: some empty, one holding every index, the rest up to max_nnz entries,
// and some rows forced to touch the 64-index word boundaries and the last index.
inline Dataset random_dataset(std::mt19937_64& rng, uint64_t rows, uint32_t dim, uint32_t max_nnz, bool regression) {
  Dataset d;
  d.dim = dim;
  for (uint64_t r = 0; r < rows; ++r) {
    std::vector<uint32_t> idx;
    if (r == 3) {
      for (uint32_t i = 0; i < dim; ++i) idx.push_back(i);
    } else if (r % 11 != 5) {
      idx = random_subset(rng, dim, static_cast<uint32_t>(rng() % (max_nnz + 1)));
      if (r % 4 == 0) {
        for (uint32_t b : {0u, 63u, 64u, 127u, 128u, dim - 1})
          if (b < dim) idx.push_back(b);
        std::sort(idx.begin(), idx.end());
        idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
      }
    }
    for (uint32_t i : idx) {
      d.index.owned().push_back(i);
      d.value.owned().push_back(nonzero_uniform(rng, -1, 1));
    }
    d.row_ptr.push_back(d.index.size());
    d.label.push_back(regression ? nonzero_uniform(rng, -3, 3) : (rng() % 2 ? 1.0f : -1.0f));
  }
  d.global_rows = rows;
  return d;
}

inline Weights random_weights(std::mt19937_64& rng, uint32_t dim) {
  Weights w(dim, 1e-3, false);
  for (int s = 0; s < 3; ++s) {
    auto idx = random_subset(rng, dim, std::max(1u, dim / 3));
    std::vector<float> g;
    for (size_t j = 0; j < idx.size(); ++j) g.push_back(nonzero_uniform(rng, -0.4f, 0.4f));
    w.step_sparse(0.5, idx, g);
  }
  return w;
}

inline std::vector<uint64_t> random_batch(std::mt19937_64& rng, uint64_t rows, size_t size) {
  std::vector<uint64_t> b(size);
  for (auto& r : b) r = rng() % rows;  // unsorted, repeats allowed
  return b;
}

}  // namespace mpisgd
